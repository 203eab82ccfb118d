"""The LMS round trip with no hand work: submission times in, a score table, feedback files out.

Command line (from the course root, after ``zip_collect`` or the exchange put the submissions in
``submitted/``)::

    python -m course_grader lms-times 07_exercise EXPORT [--timezone Europe/Berlin]
    python -m course_grader scores 07_exercise
    python -m course_grader lms-feedback 07_exercise WORKSHEET [--out moodle_feedback.zip]
    python -m course_grader moodle-grades 07_exercise WORKSHEET [--out moodle_grades.csv]
    python -m course_grader canvas-grades 07_exercise GRADEBOOK [--column NAME] [--out canvas_grades.csv]

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
``scores`` shows the gradebook's scores after the late penalty (as ``nbgrader export`` and the feedback
give them), the raw score beside it; ``lms-feedback`` packs ``feedback/`` as Moodle's *Upload multiple
feedback files in a zip* expects (one folder per participant, named as in Moodle's own download).

The grades go back in each LMS's own import format, written from the file the LMS itself exported, so
that every column it needs is there as it wrote it:

* ``moodle-grades``: the same grading worksheet with ``Grade`` (after the late penalty) and
  ``Feedback comments`` filled in, every other column as downloaded (*Grading action → Upload grading
  worksheet*);
* ``canvas-grades``: Canvas's gradebook export (*Grades → Export → Export Entire Gradebook*: the
  columns ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per
  assignment named ``Name (assignment id)``, and a ``Points Possible`` row) cut to those columns and the
  exercise's, its scores filled in, rows matched by ``ID`` (the Canvas user id in the download's file
  names), for *Grades → Import*.

A submission whose written answers still wait for a hand grade is left out of both (its row as the
LMS wrote it) and named, and an assignment whose maximum in the LMS is not the gradebook's is refused
unless ``--scale`` asks for the score scaled to it. Standard library and nbgrader only.
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
    """One row per submission in the gradebook: id, autograded and hand-graded points, the raw score
    (their sum), the late penalty, the score (after the penalty, never below 0: what ``nbgrader export``
    and the feedback page give), the maximum, and how many answers still wait for hand grading."""
    from nbgrader.api import Gradebook

    rows = []
    with Gradebook(f"sqlite:///{os.path.join(root, 'gradebook.db')}") as gb:
        for sub in sorted(gb.assignment_submissions(assignment), key=lambda s: s.student.id):
            grades = [g for nb in sub.notebooks for g in nb.grades]
            auto = sum(g.auto_score or 0 for g in grades if g.manual_score is None)
            manual = sum(g.manual_score for g in grades if g.manual_score is not None)
            penalty = sub.late_submission_penalty or 0
            rows.append({"student": sub.student.id, "autograded": auto, "by hand": manual, "raw": sub.score,
                         "penalty": penalty, "score": max(0.0, sub.score - penalty),    # as nbgrader export
                         "max": sub.max_score, "pending": sum(1 for g in grades if g.needs_manual_grade)})
    return rows


def format_scores(rows: list[dict]) -> str:
    head = ["student", "autograded", "by hand", "raw", "penalty", "score", "max", "pending"]
    table = [head] + [[quoted(r["student"])[1:-1]] + [f"{r[k]:g}" for k in head[1:]] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in table]
    pending = sum(r["pending"] for r in rows)
    lines.append(f"{len(rows)} submissions; {pending} written answers not graded by hand yet"
                 + (" (grade them before feedback and export)" if pending else ""))
    lines.append("score: raw (autograded + by hand) minus the late penalty, as the export and the feedback give it")
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


CANVAS_FIXED = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section")
CANVAS_COLUMN = re.compile(r".+ \(\d+\)")       # an assignment's column: "Exercise 07 (12345)"


def _read_csv(path: str) -> tuple[list[list[str]], bool]:
    """The rows of a CSV file an LMS wrote, and whether it began with a byte-order mark (kept on writing)."""
    with open(path, "rb") as f:
        bom = f.read(3) == b"\xef\xbb\xbf"
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: empty")
    return rows, bom


def _write_csv(path: str, rows: list[list[str]], bom: bool, quoting: int = csv.QUOTE_MINIMAL) -> None:
    with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
        csv.writer(f, quoting=quoting).writerows(rows)


def _number(text: str) -> float | None:
    try:
        return float(text.strip().replace(",", "."))
    except ValueError:
        return None


def _fitted(row: dict, maximum: float | None, scale: bool, where: str) -> float:
    """The row's score (after the penalty) on the LMS's scale: the same maximum, or scaled when asked."""
    if maximum is None or abs(maximum - row["max"]) < 1e-9:
        return row["score"]
    if not scale:
        raise ValueError(f"{where} is out of {maximum:g}, the gradebook's assignment out of {row['max']:g}: "
                         f"set its points in the LMS to {row['max']:g}, or pass --scale")
    return row["score"] * maximum / row["max"] if row["max"] else 0.0


def _grade(value: float) -> str:
    return f"{round(value, 2):.2f}"


def feedback_comment(row: dict) -> str:
    """One line for the LMS's comment box: the points by kind, the penalty and the score."""
    late = f"; late penalty {row['penalty']:g}" if row["penalty"] else ""
    return (f"Autograded parts {row['autograded']:g}, written answers {row['by hand']:g}{late}: "
            f"{row['score']:g} of {row['max']:g}. The feedback page shows each part.")


def _ready(student: str, scores: dict[str, dict], listed: set, done: dict[str, list[str]]) -> dict | None:
    """The student's score row when it can go to the LMS; else None, with the reason noted in ``done``."""
    listed.add(student)
    row = scores.get(student)
    if row is None:
        done["no submission"].append(student)
    elif row["pending"]:
        done["pending"].append(student)
    return None if row is None or row["pending"] else row


def moodle_grades(root: str, assignment: str, worksheet: str, out: str, scale: bool = False) -> dict[str, list[str]]:
    """Moodle's grading worksheet (as downloaded) with ``Grade`` and ``Feedback comments`` filled in for
    every participant with a complete submission in the gradebook, written to ``out`` for *Upload grading
    worksheet*; every other cell as Moodle wrote it, every cell quoted as Moodle quotes them.

    Returns ``filled``, ``pending`` (written answers not graded by hand yet: left as they were),
    ``locked`` (``Grade can be changed`` is No), ``no submission`` (listed, not in the gradebook) and
    ``not listed`` (in the gradebook, not in the worksheet)."""
    rows, bom = _read_csv(worksheet)
    head = rows[0]
    for name in ("Identifier", "Grade", "Maximum Grade"):
        if name not in head:
            raise ValueError(f"{worksheet}: no column {quoted(name)}: not Moodle's grading worksheet")
    col = {name: i for i, name in enumerate(head)}
    scores = {r["student"]: r for r in score_rows(root, assignment)}
    done = {"filled": [], "pending": [], "locked": [], "no submission": [], "not listed": []}
    listed = set()
    for cells in rows[1:]:
        if len(cells) < len(head):
            cells += [""] * (len(head) - len(cells))
        m = PARTICIPANT.fullmatch(cells[col["Identifier"]].strip())
        if not m:
            raise ValueError(f"{worksheet}: {quoted(cells[col['Identifier']])} is not Moodle's 'Participant N'")
        student = m.group(1)
        row = _ready(student, scores, listed, done)
        if row is None:
            continue
        if "Grade can be changed" in col and cells[col["Grade can be changed"]].strip().lower() == "no":
            done["locked"].append(student)
        else:
            maximum = _number(cells[col["Maximum Grade"]])
            cells[col["Grade"]] = _grade(_fitted(row, maximum, scale, f"Moodle's 'Maximum Grade' of {student}"))
            if "Feedback comments" in col:
                cells[col["Feedback comments"]] = feedback_comment(row)
            done["filled"].append(student)
    done["not listed"] = sorted(set(scores) - listed)
    _write_csv(out, rows, bom, csv.QUOTE_ALL)
    return done


def canvas_grades(root: str, assignment: str, export: str, out: str, column: str | None = None,
                  scale: bool = False) -> dict[str, list[str]]:
    """Canvas's gradebook import file, from its gradebook export: the student columns (``Student``,
    ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Integration ID`` where there is one, ``Section``) and the
    exercise's column (``column``: its header as Canvas wrote it, ``"Exercise 07 (12345)"``; default the
    export's only assignment column), every row kept, the score (after the late penalty) filled in for
    each student whose ``ID`` has a complete submission in the gradebook. The ``Points Possible`` row
    and any other row without a numeric ``ID`` are copied as they are.

    Returns ``filled``, ``pending``, ``no submission`` and ``not listed``, as :func:`moodle_grades`."""
    rows, bom = _read_csv(export)
    head = rows[0]
    for name in ("Student", "ID"):
        if name not in head:
            raise ValueError(f"{export}: no column {quoted(name)}: not Canvas's gradebook export")
    if column is None:
        found = [h for h in head if CANVAS_COLUMN.fullmatch(h)]
        if len(found) != 1:
            raise ValueError(f"{export}: {len(found)} assignment columns ('Name (id)'); name the exercise's "
                             "with --column")
        column = found[0]
    if column not in head:
        raise ValueError(f"{export}: no column {quoted(column)}")
    keep = [i for i, h in enumerate(head) if h in CANVAS_FIXED] + [head.index(column)]
    at, ident = len(keep) - 1, keep.index(head.index("ID"))
    table = [[(cells + [""] * len(head))[i] for i in keep] for cells in rows]
    maximum = None
    for cells in table[1:]:
        if cells[0].strip() == "Points Possible":
            maximum = _number(cells[at])
    scores = {r["student"]: r for r in score_rows(root, assignment)}
    done = {"filled": [], "pending": [], "no submission": [], "not listed": []}
    listed = set()
    for cells in table[1:]:
        student = cells[ident].strip()
        if not student.isdigit() or not student.isascii():
            continue                                      # "Points Possible", "Manual Posting", a test student
        row = _ready(student, scores, listed, done)
        if row is not None:
            cells[at] = _grade(_fitted(row, maximum, scale, f"Canvas's {quoted(column)}"))
            done["filled"].append(student)
    done["not listed"] = sorted(set(scores) - listed)
    _write_csv(out, table, bom)
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
    m = sub.add_parser("moodle-grades", help="Moodle's grading worksheet with Grade and Feedback comments filled in")
    m.add_argument("assignment")
    m.add_argument("worksheet", help="Moodle's grading worksheet (.csv), as downloaded")
    m.add_argument("--out", default="moodle_grades.csv")
    m.add_argument("--scale", action="store_true", help="scale scores to the LMS's maximum when it differs")
    c = sub.add_parser("canvas-grades", help="Canvas's gradebook import file, from its gradebook export")
    c.add_argument("assignment")
    c.add_argument("export", help="Canvas's gradebook export (.csv), as downloaded")
    c.add_argument("--column", help="the exercise's column in it, as Canvas names it: 'Exercise 07 (12345)'")
    c.add_argument("--out", default="canvas_grades.csv")
    c.add_argument("--scale", action="store_true", help="scale scores to the LMS's maximum when it differs")
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
        if args.command in ("moodle-grades", "canvas-grades"):
            if os.path.realpath(args.out) == os.path.realpath(getattr(args, "worksheet", None) or args.export):
                raise ValueError(f"--out {quoted(args.out)}: the LMS's own file; write to another")
            done = (moodle_grades(root, args.assignment, args.worksheet, args.out, args.scale)
                    if args.command == "moodle-grades" else
                    canvas_grades(root, args.assignment, args.export, args.out, args.column, args.scale))
            _report(done)
            where = ("Grading action > Upload grading worksheet" if args.command == "moodle-grades"
                     else "Grades > Import")
            print(f"wrote {args.out}: upload it under '{where}'")
            return 1 if done["pending"] else 0
        done = moodle_feedback(root, args.assignment, args.worksheet, args.out)
        _report(done)
        print(f"wrote {args.out}: upload it under 'Upload multiple feedback files in a zip'")
        return 0
    except (OSError, ValueError, KeyError) as e:
        print(f"{args.command}: {e}", file=sys.stderr)
        return 2
