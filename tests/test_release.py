"""The course's version is one number everywhere, and every release the changelog lists can be pinned
in a fresh clone: its commit is in the history and carries that version."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

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


def test_readme_and_changelog_pin_by_commit_and_name_make_release():
    """Issue 43 item 4: a clone brings no tags, so no doc tells a class to check one out."""
    for name in ("README.md", "CHANGELOG.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "git checkout v" not in text, f"{name}: a tag a clone does not bring"
        assert "make release" in text, name
    assert re.search(r"^release:", (ROOT / "Makefile").read_text(), re.M)
    ignored = subprocess.run(["git", "check-ignore", "-q", "dist/course-0.5.0-abcdef0/x.whl"], cwd=ROOT)
    assert ignored.returncode == 0, "dist/ must be git-ignored"


def test_the_course_directory_is_private_from_the_first_command():
    """Issue 49 item 8: `make instructor` makes the course directory 0700 before anything private is in
    it, and `make release` writes for its owner alone (its archive holds the seeds)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^instructor:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe and re.search(r"^\tchmod 700 \.$", recipe.group(1), re.M)
    assert "os.umask(0o077)" in (ROOT / "tools" / "release.py").read_text(encoding="utf-8")


@pytest.mark.slow
def test_make_release_builds_a_versioned_set_from_the_commit(tmp_path):
    """`make release` (tools/release.py): the commit's tracked files as an archive, the two wheels built from
    it at the version the commit carries, RELEASE.txt naming the commit, and checksums that verify."""
    untracked = ROOT / "course_lib" / "_untracked_release_probe.py"
    assert not untracked.exists()
    untracked.write_text("SECRET = 1\n")                    # in the working tree, never in a release
    try:
        proc = subprocess.run([sys.executable, str(ROOT / "tools" / "release.py"), "--out", str(tmp_path)],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
    finally:
        untracked.unlink()
    assert proc.returncode == 0, proc.stderr
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    version = tomllib.loads(subprocess.run(["git", "show", "HEAD:pyproject.toml"], cwd=ROOT, capture_output=True,
                                           text=True).stdout)["project"]["version"]
    (out,) = tmp_path.iterdir()
    stem = f"transformer-encoder-hands-on-{version}-{commit[:7]}"
    assert out.name == f"course-{version}-{commit[:7]}"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["RELEASE.txt", "SHA256SUMS", f"{stem}.tar.gz", f"course_lib-{version}-py3-none-any.whl",
         f"course_grader-{version}-py3-none-any.whl"])
    assert f"commit {commit}" in (out / "RELEASE.txt").read_text()
    tracked = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True).stdout.split()
    with tarfile.open(out / f"{stem}.tar.gz") as tar:
        names = sorted(m.name.removeprefix(f"{stem}/") for m in tar.getmembers() if m.isfile())
    assert names == sorted(tracked)
    with zipfile.ZipFile(out / f"course_lib-{version}-py3-none-any.whl") as whl:
        assert "course_lib/__init__.py" in whl.namelist()
        assert not any("_untracked_release_probe" in n for n in whl.namelist())
    with zipfile.ZipFile(out / f"course_grader-{version}-py3-none-any.whl") as whl:
        assert "course_grader/lms.py" in whl.namelist()
    assert out.stat().st_mode & 0o077 == 0 and all(p.stat().st_mode & 0o077 == 0 for p in out.iterdir()), \
        "the release holds the seeds: its owner's alone"
    sums = (out / "SHA256SUMS").read_text().splitlines()
    assert len(sums) == 4
    for line in sums:
        digest, name = line.split("  ", 1)
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name
