"""The LMS round trip with no hand work: submission times in, a score table, feedback files out.

Command line (from the course root, after ``zip_collect`` or the exchange put the submissions in
``submitted/``)::

    python -m course_grader lms-times 07_exercise EXPORT [--timezone Europe/Berlin]
    python -m course_grader scores 07_exercise
    python -m course_grader lms-feedback 07_exercise WORKSHEET [--out moodle_feedback.zip]

``EXPORT`` is one of two documented formats:

* Moodle's grading worksheet (*Assignment → View all submissions → Grading action → Download grading
  worksheet*): a CSV with the columns ``Identifier`` ("Participant 1001"), ``Full name`` and ``Last
  modified (submission)`` ("Friday, 5 December 2026, 1:30 AM", in the timezone of the Moodle account
  that downloaded it: ``--timezone``; "-" when nothing was submitted). The participant number is the
  student id that ``zip_collect``'s pattern takes from Moodle's file names.
* Canvas's submissions, as its REST API lists them (``GET /api/v1/courses/:course/assignments/
  :assignment/submissions``, saved as JSON): objects with ``user_id`` and ``submitted_at`` (ISO 8601,
  UTC). The user id is the number in Canvas's download file names.

``lms-times`` writes each submission's ``timestamp.txt`` (what nbgrader's late penalty reads) from it;
``lms-feedback`` packs ``feedback/`` as Moodle's *Upload multiple feedback files in a zip* expects
(one folder per participant, named as in Moodle's own download). Standard library and nbgrader only.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
import zipfile
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from .submissions import plain_id, quoted

MOODLE_TIME = "%A, %d %B %Y, %I:%M %p"            # "Friday, 5 December 2026, 1:30 AM"
NBGRADER_TIME = "%Y-%m-%d %H:%M:%S.%f UTC"        # what nbgrader writes and reads in timestamp.txt
PARTICIPANT = re.compile(r"Participant\s+(\d+)")


def read_times(path: str, tz: str = "UTC") -> dict[str, datetime | None]:
    """``{student id: submission time (UTC) or None}`` from a Moodle worksheet (.csv) or a Canvas
    submissions list (.json)."""
    if path.lower().endswith(".json"):
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)
        out = {}
        for row in rows:
            when = row.get("submitted_at")
            out[str(row["user_id"])] = (datetime.fromisoformat(when.replace("Z", "+00:00")).astimezone(UTC)
                                        if when else None)
        return out
    zone = ZoneInfo(tz)
    out = {}
    for row in _worksheet(path):
        when = (row.get("Last modified (submission)") or "").strip()
        local = None if when in ("", "-") else datetime.strptime(when, MOODLE_TIME).replace(tzinfo=zone)
        out[row["id"]] = local.astimezone(UTC) if local else None
    return out


def _worksheet(path: str) -> list[dict]:
    """The rows of a Moodle grading worksheet, each with its participant number as ``id``."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        m = PARTICIPANT.fullmatch((row.get("Identifier") or "").strip())
        if not m:
            raise ValueError(f"{path}: {quoted(row.get('Identifier') or '')} is not Moodle's 'Participant N'")
        row["id"] = m.group(1)
    return rows


def write_times(root: str, assignment: str, times: dict[str, datetime | None]) -> dict[str, list[str]]:
    """Write ``submitted/<id>/<assignment>/timestamp.txt`` for every student with a time and a folder.

    Returns what it did, by outcome: ``written``, ``no time`` (the LMS has no submission time),
    ``no folder`` (in the export, not in ``submitted/``), ``not listed`` (a folder the export does not
    name), ``refused`` (an id that is not a plain name, or a folder or file that is a symbolic link)."""
    done = {"written": [], "no time": [], "no folder": [], "not listed": [], "refused": []}
    base = os.path.join(root, "submitted")
    present = set(os.listdir(base)) if os.path.isdir(base) else set()
    done["not listed"] = sorted(present - set(times))
    for student, when in sorted(times.items()):
        folder = os.path.join(base, student, assignment)
        if not plain_id(student):
            done["refused"].append(student)
        elif student not in present or not os.path.isdir(folder):
            done["no folder"].append(student)
        elif os.path.islink(os.path.join(base, student)) or os.path.islink(folder):
            done["refused"].append(student)
        elif when is None:
            done["no time"].append(student)
        else:
            path = os.path.join(folder, "timestamp.txt")
            if os.path.islink(path):
                done["refused"].append(student)
                continue
            with open(path, "w", encoding="utf-8") as f:
                f.write(when.strftime(NBGRADER_TIME) + "\n")
            done["written"].append(student)
    _keep_times(root, assignment, {s: times[s].strftime(NBGRADER_TIME) for s in done["written"]})
    return done


def _times_file(root: str, assignment: str) -> str:
    return os.path.join(root, f"lms_times_{assignment}.json")


def _keep_times(root: str, assignment: str, written: dict[str, str]) -> None:
    """The times written, kept in ``lms_times_<assignment>.json`` too: ``nbgrader zip_collect --force``
    deletes every ``timestamp.txt``, and :func:`restore_times` writes them again from it."""
    kept = _kept_times(root, assignment)
    kept.update(written)
    with open(_times_file(root, assignment), "w", encoding="utf-8") as f:
        json.dump(kept, f, indent=1, sort_keys=True)


def _kept_times(root: str, assignment: str) -> dict[str, str]:
    try:
        with open(_times_file(root, assignment), encoding="utf-8") as f:
            kept = json.load(f)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in kept.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(kept, dict) \
        else {}


def restore_times(root: str, assignment: str) -> list[str]:
    """Write again the ``timestamp.txt`` that ``lms-times`` wrote and ``zip_collect --force`` deleted (the
    autograder calls it before grading, so no late penalty silently disappears); returns the students."""
    restored = []
    for student, when in sorted(_kept_times(root, assignment).items()):
        folder = os.path.join(root, "submitted", student, assignment)
        path = os.path.join(folder, "timestamp.txt")
        if plain_id(student) and os.path.isdir(folder) and not os.path.islink(folder) and not os.path.lexists(path):
            with open(path, "x", encoding="utf-8") as f:
                f.write(when + "\n")
            restored.append(student)
    return restored


def score_rows(root: str, assignment: str) -> list[dict]:
    """One row per submission in the gradebook: id, autograded and hand-graded points, penalty,
    score, maximum, and how many answers still wait for hand grading."""
    from nbgrader.api import Gradebook

    rows = []
    with Gradebook(f"sqlite:///{os.path.join(root, 'gradebook.db')}") as gb:
        for sub in sorted(gb.assignment_submissions(assignment), key=lambda s: s.student.id):
            grades = [g for nb in sub.notebooks for g in nb.grades]
            auto = sum(g.auto_score or 0 for g in grades if g.manual_score is None)
            manual = sum(g.manual_score for g in grades if g.manual_score is not None)
            rows.append({"student": sub.student.id, "autograded": auto, "by hand": manual,
                         "penalty": sub.late_submission_penalty or 0, "score": sub.score,
                         "max": sub.max_score, "pending": sum(1 for g in grades if g.needs_manual_grade)})
    return rows


def format_scores(rows: list[dict]) -> str:
    head = ["student", "autograded", "by hand", "penalty", "score", "max", "pending"]
    table = [head] + [[quoted(r["student"])[1:-1]] + [f"{r[k]:g}" for k in head[1:]] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in table]
    pending = sum(r["pending"] for r in rows)
    lines.append(f"{len(rows)} submissions; {pending} written answers not graded by hand yet"
                 + (" (grade them before feedback and export)" if pending else ""))
    return "\n".join(lines)


def moodle_feedback(root: str, assignment: str, worksheet: str, out: str) -> dict[str, list[str]]:
    """Zip ``feedback/<id>/<assignment>/*.html`` as Moodle's feedback-files upload expects:
    ``<Full name>_<participant>_assignsubmission_file_/<file>``. Returns ``packed`` and ``no feedback``."""
    done = {"packed": [], "no feedback": []}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for row in _worksheet(worksheet):
            student = row["id"]
            folder = os.path.join(root, "feedback", student, assignment)
            files = sorted(f for f in os.listdir(folder) if f.endswith(".html")) if os.path.isdir(folder) else []
            files = [f for f in files if not os.path.islink(os.path.join(folder, f))]
            if not files:
                done["no feedback"].append(student)
                continue
            name = re.sub(r"[/\\\x00-\x1f]", "_", row.get("Full name") or "")
            for f in files:
                z.write(os.path.join(folder, f), f"{name}_{student}_assignsubmission_file_/{f}")
            done["packed"].append(student)
    return done


def _report(done: dict[str, list[str]]) -> None:
    for outcome, students in done.items():
        if students:
            print(f"{outcome}: {len(students)} ({', '.join(quoted(s) for s in students)})")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_grader")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("lms-times", help="write timestamp.txt from the LMS's submission times")
    t.add_argument("assignment")
    t.add_argument("export", help="Moodle's grading worksheet (.csv) or Canvas's submissions (.json)")
    t.add_argument("--timezone", default="UTC", help="the worksheet's timezone (Moodle writes local times)")
    s = sub.add_parser("scores", help="the score table from the gradebook, before export")
    s.add_argument("assignment")
    f = sub.add_parser("lms-feedback", help="feedback/ as a zip for Moodle's feedback-files upload")
    f.add_argument("assignment")
    f.add_argument("worksheet", help="Moodle's grading worksheet (.csv): participant numbers and names")
    f.add_argument("--out", default="moodle_feedback.zip")
    args = parser.parse_args(argv)
    root = os.getcwd()
    try:
        if args.command == "lms-times":
            done = write_times(root, args.assignment, read_times(args.export, args.timezone))
            _report(done)
            return 1 if done["refused"] else 0
        if args.command == "scores":
            print(format_scores(score_rows(root, args.assignment)))
            return 0
        done = moodle_feedback(root, args.assignment, args.worksheet, args.out)
        _report(done)
        print(f"wrote {args.out}: upload it under 'Upload multiple feedback files in a zip'")
        return 0
    except (OSError, ValueError, KeyError) as e:
        print(f"{args.command}: {e}", file=sys.stderr)
        return 2
