"""Verdicts and captions that a screen reader speaks where the student is.

A practice check, a visible test of the exercise and a hint each answer in one line. In JupyterLab a
line printed to stdout lands in an output area that no screen reader announces, and a line that starts
with ✓, ✗ or ○ is read without its mark (speech engines skip those symbols). So a verdict is

- said in words: ``"✓ correct: ..."``, ``"✗ wrong: ..."``, ``"○ not done yet: ..."``, ``"hint: ..."``
  (the mark stays for sighted readers; the word is what is heard);
- shown as one output with two representations: ``text/html``, a ``<div role="status">`` (a polite
  live region: JupyterLab renders it and the accessibility tree exposes it as a status the reader can
  announce and find again), and ``text/plain``, the same line, which nbval compares and a terminal prints.

``caption`` does the same for the text that stands beside a figure (a ``role="note"`` paragraph
that names itself "figure description"): JupyterLab reads no alt text from an output's metadata.

Outside IPython (a script, pytest's capture) both print the plain line, so ``capsys`` sees exactly
the text a notebook stores as ``text/plain``.
"""

from __future__ import annotations

import html

__all__ = ["VERDICTS", "verdict_line", "verdict", "caption", "caption_bundle", "verdict_bundle"]

#: kind -> (mark, the word a screen reader says). The mark is never the only signal.
VERDICTS = {
    "correct": ("✓", "correct"),
    "wrong": ("✗", "wrong"),
    "not done": ("○", "not done yet"),
    "hint": ("", "hint"),
}
VERDICT_CLASS = "course-verdict"
CAPTION_CLASS = "course-figure-caption"


def verdict_line(kind: str, text: str) -> str:
    """``"✗ wrong: text"``: the mark, the word, the text (the word once when ``text`` starts with
    ``"word:"``)."""
    if kind not in VERDICTS:
        raise ValueError(f"kind: expected one of {', '.join(map(repr, VERDICTS))}, got {kind!r}")
    mark, word = VERDICTS[kind]
    text = str(text).strip()
    if text.lower().startswith(f"{word}:") or text.lower() == word:      # "not done yet: ..." says it once
        text = text[len(word):].lstrip(" :")
    said = f"{word}: {text}" if text else word
    return f"{mark} {said}" if mark else said


def verdict_bundle(kind: str, text: str) -> dict:
    """The output of one verdict: ``text/plain`` (the line) and ``text/html`` (a status region)."""
    line = verdict_line(kind, text)
    mark, word = VERDICTS[kind]
    rest = html.escape(line.removeprefix(f"{mark} ").removeprefix(word).lstrip(":").strip())
    body = (f'<span aria-hidden="true">{mark}</span> ' if mark else "") + f"<strong>{word}</strong>"
    body += f": {rest}" if rest else ""
    kind_class = kind.replace(" ", "-")
    return {
        "text/plain": line,
        "text/html": (f'<div role="status" aria-live="polite" aria-atomic="true" '
                      f'class="{VERDICT_CLASS} {VERDICT_CLASS}-{kind_class}">{body}</div>'),
    }


def caption_bundle(text: str, label: str = "figure description") -> dict:
    """The output of a figure's caption: ``text/plain`` ``"Figure: ..."`` and a named ``role="note"``."""
    text = " ".join(str(text).split())
    return {
        "text/plain": f"Figure: {text}",
        "text/html": (f'<p role="note" aria-label="{html.escape(label)}" class="{CAPTION_CLASS}">'
                      f"<strong>Figure:</strong> {html.escape(text)}</p>"),
    }


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:                                  # pragma: no cover - IPython is a dependency
        return False
    return get_ipython() is not None


def _show(bundle: dict, display_id: str | None = None, update: bool = False) -> None:
    if not _in_ipython():
        print(bundle["text/plain"])
        return
    from IPython.display import display

    display(bundle, raw=True, display_id=display_id, update=update)


def verdict(kind: str, text: str) -> str:
    """Show one verdict line (``kind``: ``"correct"``, ``"wrong"``, ``"not done"`` or ``"hint"``) as a
    status a screen reader announces; returns the plain line."""
    bundle = verdict_bundle(kind, text)
    _show(bundle)
    return bundle["text/plain"]


def caption(text: str, display_id: str | None = None, update: bool = False) -> None:
    """Show ``text`` as a figure's visible caption (or replace the caption shown under ``display_id``).

    Returns nothing: a cell that ends with ``caption(...)`` must not echo it as its result (a trailing
    ``;`` hides the echo under one kernel's history and not under another's, nbval's among them)."""
    _show(caption_bundle(text), display_id=display_id, update=update)
