"""The guides name files that exist: every repository path in `backticks` and every relative link of
docs/*.md, README.md and CONTRIBUTING.md (CHANGELOG.md is history: it may name what has gone)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
# the repository's source folders: a token that starts with one of them is a path in the repository
# (build/, reports/ and the like are what a run writes, not what the repository holds)
FOLDERS = ("benchmarks/", "course_lib/", "docs/", "grader/", "notebooks/", "res/", "site/", "tests/", "tools/")
PLACEHOLDER = re.compile(r"[<>*{}$…]|\.\.\.")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def missing(text: str, folder: Path) -> list[str]:
    """What ``text`` (a markdown file in ``folder``) names that is not in the repository, as
    "line N: name"."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)      # code blocks show commands, not paths
    found = []
    for m in CODE.finditer(text):
        word = m.group(1).strip().split()[0] if m.group(1).strip() else ""
        path = re.split(r"::|:\d", word)[0]                              # a test's node id, a line number
        if path.startswith(FOLDERS) and not PLACEHOLDER.search(path) and not (ROOT / path).exists():
            found.append((m.start(), path))
    prose = CODE.sub(lambda m: " " * len(m.group(0)), text)
    for m in LINK.finditer(prose):
        target = m.group(1).split("#")[0]
        if target and not re.match(r"[a-z][a-z+.-]*:", target) and not (folder / target).exists():
            found.append((m.start(), target))
    return [f"line {text.count(chr(10), 0, at) + 1}: {name}" for at, name in sorted(found)]


def test_the_scan_finds_a_missing_path_and_only_that():
    text = ("See `course_lib/attention.py` and `course_lib/no_such_module.py`, `tests/test_<module>.py`,\n"
            "`tests/test_masks.py::test_causal_mask`, [the contract](exercise-contract.md) and\n"
            "[a page](no-such-page.md#part), [a site](https://example.org/x.md), `build/site/`.\n"
            "```\npython tools/no_such_script.py\n```\n")
    assert missing(text, ROOT / "docs") == ["line 1: course_lib/no_such_module.py", "line 3: no-such-page.md"]


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_guide_names_exists(guide):
    assert missing(guide.read_text(), guide.parent) == [], f"{guide.relative_to(ROOT)} names what is not there"
