"""The lecture sections that hints and verdicts point to: a place (lecture, section number), its title read
from the lecture notebook's own ``## N. Title`` heading when the notebook is at hand.

A title is never written here by hand: renaming a heading renames every hint that points to it, and
tests/grading/test_exercise_parts.py checks that each place still is a heading about its ``topic``
(a section renumbered or moved away fails there). Where the notebooks cannot be read (course_lib installed
alone, or the grader's judge inside its sandbox view) the titles come from :mod:`.section_titles`, which
``python -m course_lib.grading.sections`` writes from the notebooks and the same test compares with them
(a heading renamed without rewriting it fails there). Standard library only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

#: key -> (lecture, section, a word of its topic the heading must contain: what the test checks)
PLACES = {
    "cost": (1, 3, "cost"),
    "encoder_stack": (1, 4, "encoder"),
    "qkv": (2, 1, "queries"),
    "sdpa": (2, 3, "scaled dot-product"),
    "scaling": (2, 4, "divide"),
    "heads": (2, 5, "multi-head"),
    "causal": (2, 7, "causal"),
    "ffn": (3, 1, "feed-forward"),
    "gelu": (3, 2, "gelu"),
    "residual": (3, 3, "residual"),
    "training_loop": (3, 3, "residual"),        # its train_stack: the course's first training loop written out
    "layernorm": (3, 4, "layernorm"),
    "dropout": (3, 5, "dropout"),
    "pre_post": (3, 6, "pre-ln"),
    "embedding": (4, 2, "embedding"),
    "sqrt_d_model": (4, 3, "multiply"),
    "logits": (4, 4, "logits"),
    "order": (5, 1, "order"),
    "table": (5, 2, "sinusoidal"),
    "added": (5, 4, "added"),
    "padding": (6, 2, "padding"),
    "padded_attention": (6, 3, "padding"),
    "conventions": (6, 7, "mask"),
}

#: what to read in a section whose heading alone does not say it
NOTES = {"training_loop": "its train_stack is a training loop written out"}

_HEADING = re.compile(r"^## (\d+)\. (.+?)\s*$", re.M)


def notebooks_dir() -> Path | None:
    """Where the lecture notebooks are: $COURSE_NOTEBOOKS, the repository's notebooks/ (course_lib installed
    from a clone), or the working directory or its parent (a notebook of notebooks/07_exercise running)."""
    here = Path(__file__).resolve().parents[2] / "notebooks"
    for folder in (os.environ.get("COURSE_NOTEBOOKS"), here, Path.cwd(), Path.cwd().parent):
        if folder and any(Path(folder).glob("0[1-6]_*.ipynb")):
            return Path(folder)
    return None


@cache
def headings(lecture: int, folder: str | None = None) -> dict[int, str]:
    """{section number: title} of lecture ``lecture``'s ``## N. Title`` headings ({} without the notebook)."""
    root = Path(folder) if folder else notebooks_dir()
    paths = sorted(root.glob(f"{lecture:02d}_*.ipynb")) if root else []
    if not paths:
        return {}
    try:
        cells = json.loads(paths[0].read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    text = "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "markdown")
    return {int(n): plain(title) for n, title in _HEADING.findall(text)}


def plain(title: str) -> str:
    """A heading's LaTeX as text: ``$\\sqrt{d_{model}}$`` -> ``√d_model``."""
    title = re.sub(r"\\sqrt\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", r"√\1", title)
    title = re.sub(r"_\{([^{}]*)\}", r"_\1", title)
    return title.replace("$", "").replace("\\", "")


def title(key: str, folder: str | None = None) -> str:
    """"02 §5 Multi-head attention": the place of ``key`` and its heading as the notebook has it now."""
    lecture, number, _ = PLACES[key]
    found = headings(lecture, folder).get(number)
    if found is None and folder is None:
        from .section_titles import TITLES
        found = TITLES.get(f"{lecture:02d} §{number}")
    text = f"{lecture:02d} §{number}" + (f" {found}" if found else "")
    return f"{text} ({NOTES[key]})" if key in NOTES else text


class Titles(Mapping):
    """A read-only {name: title} whose titles are read from the notebooks when first asked for."""

    def __init__(self, keys: dict[str, str]):
        self._keys = keys

    def __getitem__(self, name: str) -> str:
        return title(self._keys[name])

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


#: every place, by key: ``SECTIONS["heads"] == "02 §5 Multi-head attention"``
SECTIONS = Titles({k: k for k in PLACES})


def snapshot(folder: str | None = None) -> str:
    """The text of :mod:`.section_titles`: the title of every place, read from the notebooks now."""
    found = {f"{lecture:02d} §{number}": headings(lecture, folder).get(number)
             for lecture, number, _ in sorted(set(PLACES.values()))}
    lines = "".join(f"    {k!r}: {v!r},\n" for k, v in found.items())
    return ('"""The lecture headings the hints point to, as the notebooks had them when this file was written: '
            'generated by\n``python -m course_lib.grading.sections`` (used where the notebooks cannot be read; '
            'tests/grading/\ntest_exercise_parts.py fails when a heading changed since)."""\n\n'
            f"TITLES = {{\n{lines}}}\n")


if __name__ == "__main__":
    out = Path(__file__).with_name("section_titles.py")
    out.write_text(snapshot(), encoding="utf-8")
    print(f"wrote {out}")
