"""The course's version is one number everywhere, and every release the changelog lists can be pinned
in a fresh clone: its commit is in the history and carries that version."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import course_lib

ROOT = Path(__file__).resolve().parents[1]
ENTRY = re.compile(r"^## (\d+\.\d+\.\d+) \((\d{4}-\d\d-\d\d)\)\n\n(?:Commit: `([0-9a-f]{7,40})`)?", re.M)


def releases() -> list[tuple[str, str, str | None]]:
    return ENTRY.findall((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))


def test_one_version_everywhere():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    grader = tomllib.loads((ROOT / "grader" / "pyproject.toml").read_text())["project"]["version"]
    citation = (ROOT / "CITATION.cff").read_text()
    top, date, _ = releases()[0]
    assert course_lib.__version__ == version == grader == top
    assert re.search(rf"^version: {re.escape(version)}$", citation, re.M)
    assert re.search(rf'^date-released: "{date}"$', citation, re.M)


def test_every_earlier_release_names_a_commit_that_carries_its_version():
    listed = releases()
    assert len(listed) >= 2
    for version, _, commit in listed[1:]:                # the top entry may be the commit being made
        assert commit, f"{version}: no commit listed"
        shown = subprocess.run(["git", "show", f"{commit}:pyproject.toml"], cwd=ROOT, capture_output=True,
                               text=True)
        assert shown.returncode == 0, f"{version}: commit {commit} is not in this clone's history"
        assert tomllib.loads(shown.stdout)["project"]["version"] == version, (version, commit)
