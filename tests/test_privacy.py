"""Student data stays out of git: every file the instructor's docs have you create or download in the
course directory (class lists, grades, LMS files, reports) is ignored, so `git add -A` leaves it alone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["docs/customising.md", "docs/instructors.md", "docs/teachers-guide.md", "docs/jupyterhub.md"]
# a file name the docs make or download: student data by its extension
NAME = re.compile(r"(?<![\w/.-])([\w-]+(?:\.[\w-]+)*\.(?:csv|zip|json|db))\b")
NOT_DATA = {"jupyter_server_config.json",    # configuration the docs show, not student data
            "x.zip"}                         # a file inside a student's upload, quoted from a log line


def named_in_docs() -> set[str]:
    names = set()
    for doc in DOCS:
        names |= set(NAME.findall((ROOT / doc).read_text(encoding="utf-8")))
    return names - NOT_DATA


def test_the_docs_name_student_files():
    assert {"students.csv", "grades.csv", "lms_upload.csv", "moodle_feedback.zip", "gradebook.db"} <= named_in_docs()


def test_every_student_file_the_docs_name_is_ignored():
    names = sorted(named_in_docs())
    proc = subprocess.run(["git", "check-ignore", "--no-index", *names], cwd=ROOT, capture_output=True, text=True)
    ignored = set(proc.stdout.split())
    assert not (missing := [n for n in names if n not in ignored]), f"not ignored by git: {missing}"
