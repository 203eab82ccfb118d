"""Links and folded answers as a screen reader names them, in the notebooks' markdown.

    python tools/name_links.py NOTEBOOK...            # rewrite each notebook in place, then list what is left
    python tools/name_links.py --check NOTEBOOK...    # list the problems only; exit 1 if there are any

A screen reader lists a page's links by their names and its folded blocks by their <summary>. A link
named by its URL is read out character by character ("h t t p s colon slash slash a r x i v ..."), one
named "here" or "how" says nothing out of its sentence, and ten blocks all called "Solution" cannot be
told apart. The problems (``problems``): a markdown link ``[text](url)`` or an HTML ``<a>`` whose text is
a URL or a word such as "here", "how", "link"; an autolink ``<https://...>``; a URL written in the prose;
a <summary> whose text another <summary> of the same notebook has too. Code (fenced and inline) is not
prose and is left alone.

The rewrite (``rewrite``) changes markdown only, so no output changes and nothing needs re-running:

* a URL in the prose, or an autolink, becomes a link named by the title it cites, the first *italic* title
  before it in its list item (the first after the last ";"), and the words between them stay as they were:
  "Vaswani et al. (2017), *Attention Is All You Need*: https://arxiv.org/abs/1706.03762 (section 3.5)"
  becomes "Vaswani et al. (2017), [*Attention Is All You Need*](https://arxiv.org/abs/1706.03762)
  (section 3.5)". With no italic title the words before it name it ("the data set: URL" becomes
  "[the data set](URL)"), when they are a short phrase; otherwise it is listed, for a person to name;
* a repeated <summary> is numbered in page order ("Solution" becomes "Solution 1", "Solution 2", ...),
  skipping any number the notebook already uses for that word.

tests/test_notebook_accessibility.py checks the stored notebooks with ``problems``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

#: link texts that name nothing out of their sentence
VAGUE = {"here", "click here", "how", "link", "this link", "this", "more", "read more", "see here", "source",
         "url", "website", "page", "this page", "there", "go"}
FENCE = re.compile(r"^([ \t]*)(```|~~~).*?^\1\2[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
IMAGE = re.compile(r"!\[(?:[^\[\]]|\[[^\]]*\])*\]\([^)]*\)")
MD_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
AUTOLINK = re.compile(r"<((?:https?|ftp)://[^>\s]+)>")
ANCHOR = re.compile(r"<a\b[^>]*>(.*?)</a>", re.S | re.I)
TAG = re.compile(r"<[^>]+>")
RAW_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]`]*[^\s<>()\[\]`.,;:!?'\"*]")
URLISH = re.compile(r"^(?:https?://|www\.)|^[\w-]+(?:\.[\w-]+)+(?:/\S*)?$", re.I)
SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S | re.I)
ITALIC = re.compile(r"(?<![*\w])\*(?![*\s])([^*]+?)(?<!\s)\*(?![*\w])")
ITEM_START = re.compile(r"\n[ \t]*\n|^[ \t]*(?:[*+-]|\d+[.)])[ \t]+", re.M)    # a paragraph's or list item's start
#: the words before a URL may name it when it cites no italic title: a short phrase, not a sentence
SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n\s*\n")


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def prose(text: str) -> str:
    """``text`` with its code and comments blanked out (same length, same line breaks)."""
    for pattern in (COMMENT, FENCE, INLINE_CODE):
        text = pattern.sub(_blank, text)
    return text


def spoken(name: str) -> str:
    """A link text as a screen reader says it: without tags, emphasis and code marks."""
    return " ".join(re.sub(r"[*_`]", "", TAG.sub("", name)).split())


def bad_name(name: str) -> str | None:
    """Why a link named ``name`` tells a listener nothing (None when it names its target)."""
    said = spoken(name)
    if not said:
        return "no text"
    if URLISH.search(said):
        return "a bare URL"
    if said.lower().strip(".:!") in VAGUE:
        return f"the word {said!r}"
    return None


def raw_urls(text: str) -> list[tuple[int, int]]:
    """(start, end) of each URL written in the prose of ``text``: not in code, in a link, an image,
    an autolink or an HTML tag."""
    masked = prose(text)
    for pattern in (IMAGE, MD_LINK, AUTOLINK, TAG):
        masked = pattern.sub(_blank, masked)
    return [m.span() for m in RAW_URL.finditer(masked)]


def link_problems(text: str) -> list[str]:
    """A line for each link of one markdown text that a screen reader cannot name."""
    masked = prose(text)
    found = []
    plain = IMAGE.sub(_blank, masked)
    for m in MD_LINK.finditer(plain):
        why = bad_name(text[m.start(1):m.end(1)])
        if why:
            found.append(f"a link named by {why}: {text[m.start():m.end()][:100]!r}")
    for m in AUTOLINK.finditer(plain):
        found.append(f"a link named by a bare URL (autolink): {m.group(0)[:100]!r}")
    for m in ANCHOR.finditer(plain):
        why = bad_name(text[m.start(1):m.end(1)])
        if why:
            found.append(f"an <a> named by {why}: {text[m.start():m.end()][:100]!r}")
    found += [f"a URL in the prose, read as its characters: {text[s:e][:100]!r}" for s, e in raw_urls(text)]
    return found


def markdown(nb: dict) -> list[tuple[int, dict, str]]:
    """(index, cell, source) of each markdown cell of a notebook read as JSON."""
    return [(k, c, "".join(c["source"])) for k, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"]


def set_source(cell: dict, text: str) -> None:
    cell["source"] = text.splitlines(keepends=True)            # as Jupyter stores it: a list of lines


def summaries(nb: dict) -> list[str]:
    """The text of each <summary> of the notebook's markdown, in page order."""
    return [spoken(m.group(1)) for _, _, text in markdown(nb) for m in SUMMARY.finditer(prose(text))]


def problems(nb: dict) -> list[str]:
    """Every link named by a URL or a vague word, and every <summary> that is not unique, of one notebook
    (read as JSON)."""
    found = [f"cell {k}: {line}" for k, _, text in markdown(nb) for line in link_problems(text)]
    counts = Counter(summaries(nb))
    found += [f"<summary>{text}</summary> {n} times: number them or say what each folds"
              for text, n in counts.items() if n > 1]
    return found


def _outside_parentheses(text: str, char: str) -> list[int]:
    """Where ``char`` stands in ``text`` outside any parentheses."""
    depth, found = 0, []
    for k, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if c == char and depth <= 0:
            found.append(k)
    return found


def _name_url(text: str, start: int, end: int, segment_start: int) -> tuple[int, str] | None:
    """The edit that names the URL at text[start:end]: (where it starts, what replaces text[there:end]),
    or None when nothing before it can name it."""
    url = text[start:end]
    if text[start - 1:start] == "<" and text[end:end + 1] == ">":     # an autolink: its brackets go too
        start, end = start - 1, end + 1
    before = text[segment_start:start]
    head = before[:re.search(r"\s*:?\s*$", before).start()]   # without the "...: " or ":\n  " before the URL
    plain = prose(head)                                          # code blanked: its ";" and "." are no marks
    semi = max(_outside_parentheses(plain, ";"), default=-1) + 1
    titles = list(ITALIC.finditer(plain, semi))
    if titles:
        t = titles[0]                                            # "*nanoGPT* and *Let's build GPT*": the first
        between = head[t.end():]                                 # ", ICML" or " (the GRU)": kept
        return segment_start + t.start(), f"[{head[t.start():t.end()]}]({url}){between}"
    lead = semi + len(plain[semi:]) - len(plain[semi:].lstrip(" \t\n,"))
    cut = next((k for k in range(lead, len(plain)) if plain[k] == "(" and plain[k - 1] == " "), len(plain))
    name, rest = head[lead:cut].rstrip(), head[lead:][len(head[lead:cut].rstrip()):]
    if not 3 <= len(name) <= 80 or SENTENCE_END.search(prose(name)) or bad_name(name):
        return None
    return segment_start + lead, f"[{name}]({url}){rest}"


def rewrite_markdown(text: str) -> tuple[str, int]:
    """``text`` with each URL of its prose (and each autolink) made a named link; (new text, URLs named)."""
    urls = raw_urls(text) + [m.span(1) for m in AUTOLINK.finditer(IMAGE.sub(_blank, prose(text)))]
    edits, previous_end = [], 0
    for s, e in sorted(urls):
        item = max((m.end() for m in ITEM_START.finditer(text, 0, s)), default=0)
        edit = _name_url(text, s, e, max(item, previous_end))
        previous_end = e + (text[e:e + 1] == ">")
        if edit:
            edits.append((edit[0], previous_end, edit[1]))
    for a, b, new in reversed(edits):
        text = text[:a] + new + text[b:]
    return text, len(edits)


def number_summaries(nb: dict) -> int:
    """Number each <summary> whose text repeats in the notebook, in page order; returns how many changed."""
    counts = Counter(summaries(nb))
    taken = {text for text in counts}
    next_number: dict[str, int] = {}
    changed = 0

    def numbered(m: re.Match) -> str:
        nonlocal changed
        text = spoken(m.group(1))
        if counts[text] < 2:
            return m.group(0)
        n = next_number.get(text, 1)
        while f"{text} {n}" in taken:
            n += 1
        next_number[text] = n + 1
        taken.add(f"{text} {n}")
        changed += 1
        return m.group(0).replace(m.group(1), f"{m.group(1).rstrip()} {n}", 1)

    for _, cell, text in markdown(nb):
        if SUMMARY.search(text):
            set_source(cell, SUMMARY.sub(numbered, text))
    return changed


def rewrite(nb: dict) -> tuple[int, int]:
    """Name the URLs of the notebook's prose and number its repeated summaries, in place; returns
    (URLs named, summaries numbered)."""
    named = 0
    for _, cell, text in markdown(nb):
        new, n = rewrite_markdown(text)
        if n:
            set_source(cell, new)
            named += n
    return named, number_summaries(nb)


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def write(nb: dict, path: Path) -> None:
    """As Jupyter writes a notebook (one space of indent, the keys in their order, UTF-8)."""
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="list the problems, change nothing")
    args = parser.parse_args(argv)
    left = 0
    for path in args.notebooks:
        nb = read(path)
        if not args.check:
            named, numbered = rewrite(nb)
            if named or numbered:
                write(nb, path)
            print(f"{path}: {named} URLs named, {numbered} summaries numbered")
        for line in problems(nb):
            print(f"{path}: {line}")
            left += 1
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
