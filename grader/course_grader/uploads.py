"""What happened to each student's upload before it was graded, read from one place by every step that
reports on a student: ``lms-times``, ``moodle-grades``, ``canvas-grades`` and the class report.

Two steps decide it and keep what they decided in the course root:

* ``lms-collect`` (:mod:`.lms_in`) keeps the lines of its log about each student in
  ``uploads_<assignment>.json`` (:func:`keep`): a notebook refused at the gate (not JSON, too large), a
  ``.py`` or another file handed in instead of the notebook, an archive or a folder inside the upload,
  several files of which one was taken, a notebook repaired;
* ``autograde`` writes ``verdicts_<assignment>.csv``, where a notebook it refused to grade has the status
  ``invalid`` and the reason.

:func:`problems` joins both, per student; :func:`missing` says why a student the LMS lists has no graded
submission ("invalid notebook", "not the notebook"), so that no step calls that "no submission".
Standard library only.
"""

from __future__ import annotations

import csv
import json
import os
import re

from .submissions import plain_id

#: the kinds of note, the first whose pattern a line of lms-collect's log matches (after "<student>: ")
KINDS = (
    ("invalid notebook", re.compile(r".* refused: ")),
    ("not the notebook", re.compile(r"handed in (?:a \.py|no notebook)")),
    ("skipped", re.compile(r".*(?: is not a notebook of the assignment| inside the upload|more than \d+ files)")),
    ("repaired", re.compile(r".* repaired: ")),
    ("chosen", re.compile(r".*(?: files for .*; took | taken as )")),
)
#: the kinds that, when the student has no notebook collected, say why there is no submission
MISSING = ("invalid notebook", "not the notebook")
_STUDENT = re.compile(r"(?P<student>[^\s:]+): (?P<text>.*)", re.S)


def _record(root: str, assignment: str) -> str:
    return os.path.join(root, f"uploads_{assignment}.json")


def kind_of(text: str) -> str | None:
    """The kind of one note of lms-collect's log about a student (the text after ``<student>: ``)."""
    return next((kind for kind, pattern in KINDS if pattern.match(text)), None)


def keep(root: str, assignment: str, lines: list[str]) -> dict[str, list[list[str]]]:
    """Keep lms-collect's notes on each student it read (``[[kind, text], ...]``, in the log's order) in
    ``uploads_<assignment>.json``: a student of this download replaces what an earlier one said of them
    (a student left as collected before, ``already in submitted/``, keeps it); returns this run's notes."""
    notes: dict[str, list[list[str]]] = {}
    kept_as_was = set()
    for line in lines:
        m = _STUDENT.fullmatch(line)
        if m is None or not plain_id(m.group("student")):
            continue
        student, text = m.group("student"), m.group("text")
        if text.startswith("already in submitted/"):
            kept_as_was.add(student)
        elif kind_of(text):
            notes.setdefault(student, []).append([kind_of(text), text])
    for line in lines:                                  # a student collected with nothing to say: a clean slate
        m = re.fullmatch(r"(?:Collecting|Updating) submission: (\S+) .*", line)
        if m and plain_id(m.group(1)):
            notes.setdefault(m.group(1), [])
    record = read(root, assignment)
    record.update({s: n for s, n in notes.items() if s not in kept_as_was})
    path = _record(root, assignment)
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)                                # student data: the instructor's alone, whatever the umask
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({s: n for s, n in sorted(record.items()) if n}, f, indent=1)
    os.replace(path + ".tmp", path)
    return notes


def read(root: str, assignment: str) -> dict[str, list[list[str]]]:
    """What :func:`keep` kept: ``{student: [[kind, text], ...]}`` (nothing when there is no record)."""
    path = _record(root, assignment)
    if not os.path.isfile(path) or os.path.islink(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return {s: [list(n) for n in notes if isinstance(n, list) and len(n) == 2]
            for s, notes in (data.items() if isinstance(data, dict) else ()) if isinstance(notes, list)}


def invalid(root: str, assignment: str) -> dict[str, str]:
    """``{student: why}`` of the notebooks autograde refused to grade (``verdicts_<assignment>.csv``)."""
    path = os.path.join(root, f"verdicts_{assignment}.csv")
    if not os.path.isfile(path) or os.path.islink(path):
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {r["student"]: f"{r.get('notebook') or ''}.ipynb: {r.get('why') or 'invalid'}"
                for r in csv.DictReader(f) if r.get("status") == "invalid" and r.get("student")}


def problems(root: str, assignment: str) -> dict[str, list[list[str]]]:
    """Per student, every note on their upload: lms-collect's (:func:`read`) and autograde's refusals
    (kind ``invalid notebook``, the text ``not graded: <why>``)."""
    out = {s: list(n) for s, n in read(root, assignment).items()}
    for student, why in invalid(root, assignment).items():
        out.setdefault(student, []).append(["invalid notebook", f"not graded: {why}"])
    return out


def handed_in(root: str, assignment: str, student: str) -> bool:
    """Whether ``submitted/<student>/<assignment>/`` holds a notebook."""
    folder = os.path.join(root, "submitted", student, assignment)
    return os.path.isdir(folder) and any(n.endswith(".ipynb") for n in os.listdir(folder))


def missing(root: str, assignment: str, student: str, files: tuple[str, ...] = (),
            found: dict | None = None) -> tuple[str, str] | None:
    """Why a student the LMS lists has no graded notebook, when the record knows: ``("invalid notebook",
    why)`` or ``("not the notebook", why)``; else None (nothing handed in, or not collected yet). ``files``:
    the names the LMS gives for the student's upload (Canvas's attachments), read when the record has
    nothing (``zip_collect``'s route keeps none). ``found``: :func:`problems`, read once for a class."""
    found = problems(root, assignment) if found is None else found
    for kind, text in found.get(student, []):
        if kind in MISSING and (kind == "invalid notebook" or not handed_in(root, assignment, student)):
            return kind, text
    others = [f for f in files if not f.lower().endswith(".ipynb")]
    if files and len(others) == len(files):
        py = [f for f in others if f.lower().endswith(".py")]
        what = "a .py" if py else "no notebook"
        return "not the notebook", f"handed in {what} ({', '.join(others)}), not the notebook"
    return None
