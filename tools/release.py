"""`make release`: a copy of one version of the course that a class can keep, built from a commit.

Into ``dist/course-<version>-<commit>/`` (git-ignored):

* ``transformer-encoder-hands-on-<version>-<commit>.tar.gz``: the commit's tracked files (``git archive``:
  nothing untracked, no student data), under one folder of the same name;
* ``course_lib-<version>-py3-none-any.whl`` and ``course_grader-<version>-py3-none-any.whl``: the student's
  package and the instructor's grader, built from that archive (not from the working tree);
* ``RELEASE.txt``: the version, the full commit id and how to install from the folder;
* ``SHA256SUMS``: ``sha256sum -c SHA256SUMS`` checks the files.

Everything is written for its owner alone (files 0600, folders 0700): the archive holds the source
notebook, and with it a class's hidden seeds.

The commit is ``HEAD`` unless ``--commit`` names another; a working tree with uncommitted changes to tracked
files is reported (they are not in the release). Needs git and pip (which fetches setuptools to build the
wheels, as ``pip install`` does).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "transformer-encoder-hands-on"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def version_at(commit: str) -> str:
    return tomllib.loads(git("show", f"{commit}:pyproject.toml"))["project"]["version"]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build(commit: str, out_root: Path) -> Path:
    """The release folder of ``commit`` under ``out_root``; returns its path."""
    full = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    short = full[:7]
    version = version_at(full)
    stem = f"{NAME}-{version}-{short}"
    out = out_root / f"course-{version}-{short}"
    if out.exists():
        raise SystemExit(f"{out} exists already: remove it to build the release again")
    out.mkdir(parents=True)
    archive = out / f"{stem}.tar.gz"
    subprocess.run(["git", "archive", "--format=tar.gz", f"--prefix={stem}/", "-o", str(archive), full],
                   cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        source = Path(tmp) / stem
        for package in (source, source / "grader"):
            subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(package)],
                           check=True)
    student, grader = (next(out.glob(f"{name}-{version}-*.whl")).name for name in ("course_lib", "course_grader"))
    (out / "RELEASE.txt").write_text(
        f"The Transformer encoder, hands-on {version}\n"
        f"commit {full}\n\n"
        f"{archive.name}: the course (notebooks, docs, course_lib, grader) at that commit.\n"
        f"{student}: what a student installs; {grader}: the instructor's grader.\n\n"
        "Install from this folder, with PyTorch 2.13.0 installed first (the course's tools/install_torch.py):\n"
        f"    a student's environment:   pip install './{student}[lab]'\n"
        f"    an instructor's:           pip install './{student}[lab]' ./{grader}\n"
        "Check the files: sha256sum -c SHA256SUMS\n", encoding="utf-8")
    files = sorted(p for p in out.iterdir() if p.name != "SHA256SUMS")
    (out / "SHA256SUMS").write_text("".join(f"{sha256(p)}  {p.name}\n" for p in files), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    os.umask(0o077)              # the archive holds the source notebook and its seeds: files 0600, folders 0700
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default="HEAD", help="the commit to release (default HEAD)")
    parser.add_argument("--out", default=str(ROOT / "dist"), help="where the release folder goes (default dist/)")
    args = parser.parse_args(argv)
    changed = git("status", "--porcelain", "--untracked-files=no")
    if changed and args.commit == "HEAD":
        print("note: uncommitted changes to tracked files are not in the release (it is built from the commit)",
              file=sys.stderr)
    out = build(args.commit, Path(args.out))
    print(f"{out}:")
    for line in (out / "SHA256SUMS").read_text().splitlines():
        print("  " + line.split("  ", 1)[1])
    print("Keep the folder with the course's records; RELEASE.txt names the commit.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
