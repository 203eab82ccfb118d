"""The LMS round trip with no hand work: submission times in, a score table, feedback files out.

Command line (from the course root, after ``lms-collect`` or the exchange put the submissions in
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
  student id that ``lms-collect`` takes from Moodle's file names.
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
import hashlib
import json
import os
import re
import sys
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from . import uploads
from .submissions import plain_id, quoted

MOODLE_TIME = "%A, %d %B %Y, %I:%M %p"            # "Friday, 5 December 2026, 1:30 AM"
NBGRADER_TIME = "%Y-%m-%d %H:%M:%S.%f UTC"        # what nbgrader writes and reads in timestamp.txt
PARTICIPANT = re.compile(r"Participant\s+(\d+)")
MOODLE_EXTENSION = re.compile(r"Extension granted until:?\s*([^\n]+?, \d{1,2}:\d\d [AP]M)")


@dataclass
class Handed:
    """What the LMS says of one student's submission: the time it was handed in (UTC), the student's own
    due date (an extension or a user override; None: the assignment's), the seconds late by the LMS's
    own count (None: it gives none; the time against the due date then), excused (no penalty), and, for
    Canvas, the attachment id of the notebook, the name its download files carry and the names of the
    files handed in (the latest attempt's attachments)."""

    when: datetime | None
    due: datetime | None = None
    seconds_late: float | None = None
    excused: bool = False
    attachment: str | None = None
    name: str = ""
    files: tuple[str, ...] = ()

    def late_by(self) -> float | None:
        """Seconds late as the LMS counts them; None when only the assignment's due date can tell."""
        if self.excused:
            return 0.0
        if self.seconds_late is not None:
            return max(0.0, float(self.seconds_late))
        if self.due is not None and self.when is not None:
            return max(0.0, (self.when - self.due).total_seconds())
        return None


def _utc(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC) if text else None


def _canvas(row: dict) -> Handed:
    """One object of Canvas's submissions API: ``submitted_at``, ``cached_due_date`` (the student's own due
    date, extensions and overrides included), ``late``, ``seconds_late`` (Canvas's count, its late-policy
    status applied), ``excused``, ``late_policy_status`` and the latest attempt's ``attachments``."""
    seconds = row.get("seconds_late")
    if row.get("late_policy_status") == "none" or row.get("late") is False:
        seconds = 0
    notebooks = [a for a in row.get("attachments") or [] if str(a.get("display_name") or a.get("filename") or "")
                 .lower().endswith(".ipynb")] or list(row.get("attachments") or [])
    user = row.get("user") if isinstance(row.get("user"), dict) else {}
    files = tuple(str(a.get("display_name") or a.get("filename") or "") for a in row.get("attachments") or [])
    return Handed(_utc(row.get("submitted_at")), _utc(row.get("cached_due_date")),
                  None if seconds is None else float(seconds), bool(row.get("excused")),
                  str(notebooks[0]["id"]) if notebooks and "id" in notebooks[0] else None,
                  str(user.get("sortable_name") or user.get("name") or ""), files)


def _moodle_time(text: str, zone: ZoneInfo) -> datetime | None:
    text = (text or "").strip()
    return None if text in ("", "-") else datetime.strptime(text, MOODLE_TIME).replace(tzinfo=zone).astimezone(UTC)


def read_lms(paths: str | list[str], tz: str = "UTC") -> dict[str, Handed]:
    """``{student id: Handed}`` from Moodle's grading worksheet (.csv) or Canvas's submissions list (.json,
    one file per page of the API's answer: give every page). A student listed twice with different data
    (pages fetched at different times) is refused."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    out: dict[str, Handed] = {}
    for path in paths:
        if path.lower().endswith(".json"):
            with open(path, encoding="utf-8") as f:
                rows = json.load(f)
            if not isinstance(rows, list):
                raise ValueError(f"{path}: not a list of submissions, as Canvas's API answers")
            found = {str(row["user_id"]): _canvas(row) for row in rows}
        else:
            zone = ZoneInfo(tz)
            found = {}
            for row in _worksheet(path):
                due = row.get("Due date") or ""                    # Moodle adds it when there are overrides
                extension = MOODLE_EXTENSION.search(row.get("Status") or "")
                found[row["id"]] = Handed(_moodle_time(row.get("Last modified (submission)"), zone),
                                          _moodle_time(extension.group(1) if extension else due, zone),
                                          name=row.get("Full name") or "")
        for student, handed in found.items():
            if student in out and out[student] != handed:
                raise ValueError(f"{path}: {quoted(student)} is listed again with other data: fetch every page "
                                 "of the list at once")
            out[student] = handed
    return out


def read_times(path: str, tz: str = "UTC") -> dict[str, datetime | None]:
    """``{student id: submission time (UTC) or None}`` from a Moodle worksheet (.csv) or a Canvas
    submissions list (.json)."""
    return {student: handed.when for student, handed in read_lms(path, tz).items()}


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


def notebook_digest(folder: str) -> str | None:
    """SHA-256 over the names and bytes of the notebooks in a submission's folder (read without following
    links): which notebook a time was taken for. None when there is none."""
    digest, found = hashlib.sha256(), False
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    for name in names:
        path = os.path.join(folder, name)
        if not name.endswith(".ipynb") or os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            digest.update(name.encode() + b"\0" + hashlib.sha256(f.read()).digest())
        found = True
    return digest.hexdigest() if found else None


def write_times(root: str, assignment: str, times: dict[str, Handed | datetime | None]) -> dict[str, list[str]]:
    """Write ``submitted/<id>/<assignment>/timestamp.txt`` for every student with a time and a folder, and
    keep what the LMS said of it (its lateness, excused, the notebook's digest) in
    ``lms_times_<assignment>.json``, where the penalty is computed from at the end.

    Returns what it did, by outcome: ``written``, ``no time`` (the LMS has no submission time),
    ``no folder`` (in the export, not in ``submitted/``: nothing collected), ``invalid notebook`` and
    ``not the notebook`` (no folder because the upload was refused or was a ``.py``: :mod:`.uploads`),
    ``not listed`` (a folder the export does not name), ``refused`` (an id that is not a plain name, or a
    folder or file that is a symbolic link)."""
    times = {s: h if isinstance(h, Handed) else Handed(h) for s, h in times.items()}
    done = {"written": [], "no time": [], "no folder": [], "invalid notebook": [], "not the notebook": [],
            "not listed": [], "refused": []}
    found = uploads.problems(root, assignment)
    base = os.path.join(root, "submitted")
    present = set(os.listdir(base)) if os.path.isdir(base) else set()
    done["not listed"] = sorted(present - set(times))
    kept = {}
    for student, handed in sorted(times.items()):
        folder = os.path.join(base, student, assignment)
        if not plain_id(student):
            done["refused"].append(student)
        elif student not in present or not os.path.isdir(folder):
            why = uploads.missing(root, assignment, student, handed.files, found) if handed.when else None
            done[why[0] if why else "no folder"].append(student)
        elif os.path.islink(os.path.join(base, student)) or os.path.islink(folder):
            done["refused"].append(student)
        elif handed.when is None:
            done["no time"].append(student)
        else:
            path = os.path.join(folder, "timestamp.txt")
            if os.path.islink(path):
                done["refused"].append(student)
                continue
            with open(path, "w", encoding="utf-8") as f:
                f.write(handed.when.strftime(NBGRADER_TIME) + "\n")
            kept[student] = {"timestamp": handed.when.strftime(NBGRADER_TIME), "seconds_late": handed.late_by(),
                             "excused": handed.excused, "notebook": notebook_digest(folder)}
            done["written"].append(student)
    _keep_times(root, assignment, kept)
    return done


def _times_file(root: str, assignment: str) -> str:
    return os.path.join(root, f"lms_times_{assignment}.json")


def _keep_times(root: str, assignment: str, written: dict[str, dict]) -> None:
    """The times written, kept in ``lms_times_<assignment>.json`` too: ``lms-collect --force`` replaces a
    student's folder whole, ``timestamp.txt`` included, and :func:`restore_times` writes them again from
    it (for the same notebook only)."""
    kept = kept_times(root, assignment)
    kept.update(written)
    with open(_times_file(root, assignment), "w", encoding="utf-8") as f:
        json.dump(kept, f, indent=1, sort_keys=True)


def kept_times(root: str, assignment: str) -> dict[str, dict]:
    """What ``lms-times`` kept: ``{student: {"timestamp", "seconds_late", "excused", "notebook"}}``; a
    record of an older version (a time alone, no digest) matches no notebook."""
    try:
        with open(_times_file(root, assignment), encoding="utf-8") as f:
            kept = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(kept, dict):
        return {}
    return {k: (v if isinstance(v, dict) else {"timestamp": v, "notebook": None}) for k, v in kept.items()
            if isinstance(k, str) and isinstance(v, (str, dict))}


def time_for(root: str, assignment: str, student: str, kept: dict[str, dict]) -> dict | None:
    """The kept record of ``student`` if it was taken for the notebook now in ``submitted/``, else None."""
    record = kept.get(student)
    folder = os.path.join(root, "submitted", student, assignment)
    if record is None or not record.get("notebook") or record["notebook"] != notebook_digest(folder):
        return None
    return record


def restore_times(root: str, assignment: str) -> list[str]:
    """Write again the ``timestamp.txt`` that ``lms-times`` wrote and ``lms-collect --force`` deleted (the
    autograder calls it before grading, so no late penalty silently disappears), only where the notebook
    is the one the time was taken for; returns the students."""
    restored = []
    kept = kept_times(root, assignment)
    for student in sorted(kept):
        folder = os.path.join(root, "submitted", student, assignment)
        path = os.path.join(folder, "timestamp.txt")
        if not plain_id(student) or not os.path.isdir(folder) or os.path.islink(folder) or os.path.lexists(path):
            continue
        record = time_for(root, assignment, student, kept)
        if record is not None:
            with open(path, "x", encoding="utf-8") as f:
                f.write(record["timestamp"] + "\n")
            restored.append(student)
    return restored


def stale_times(root: str, assignment: str) -> list[str]:
    """Students with a folder whose notebook is not the one ``lms-times`` took the time for (downloaded
    again since): their time must come from a fresh export."""
    kept = kept_times(root, assignment)
    return sorted(s for s in kept if plain_id(s) and os.path.isdir(os.path.join(root, "submitted", s, assignment))
                  and time_for(root, assignment, s, kept) is None)


def score_rows(root: str, assignment: str) -> list[dict]:
    """One row per submission in the gradebook: id, autograded and hand-graded points, the raw score
    (their sum), the late penalty (computed now, from that total and the LMS's lateness: :mod:`.late`),
    the score (after the penalty, never below 0: what ``nbgrader export`` and the feedback page give),
    the maximum, how many answers still wait for hand grading, and ``time``: ``on time``, ``late``,
    ``excused``, ``stale`` or ``no LMS time`` (the last two: no score goes out)."""
    from nbgrader.api import Gradebook

    from .late import course_config, policy, settle

    assign = policy(course_config(root))
    rows = []
    with Gradebook(f"sqlite:///{os.path.join(root, 'gradebook.db')}") as gb:
        status = settle(gb, root, assignment, assign)
        for sub in sorted(gb.assignment_submissions(assignment), key=lambda s: s.student.id):
            grades = [g for nb in sub.notebooks for g in nb.grades]
            auto = sum(g.auto_score or 0 for g in grades if g.manual_score is None)
            manual = sum(g.manual_score for g in grades if g.manual_score is not None)
            penalty = sum(nb.late_submission_penalty or 0 for nb in sub.notebooks)
            rows.append({"student": sub.student.id, "autograded": auto, "by hand": manual, "raw": sub.score,
                         "penalty": penalty, "score": max(0.0, sub.score - penalty),    # as nbgrader export
                         "max": sub.max_score, "pending": sum(1 for g in grades if g.needs_manual_grade),
                         "time": status[sub.student.id][0], "hours late": status[sub.student.id][1] / 3600})
    return rows


def format_scores(rows: list[dict]) -> str:
    head = ["student", "autograded", "by hand", "raw", "penalty", "score", "max", "pending", "hours late"]
    table = [head] + [[quoted(r["student"])[1:-1]] + [f"{r[k]:g}" for k in head[1:-1]]
                      + [r["time"] if r["time"] not in ("late", "on time") else f"{r['hours late']:.2f}"]
                      for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in table]
    pending = sum(r["pending"] for r in rows)
    lines.append(f"{len(rows)} submissions; {pending} written answers not graded by hand yet"
                 + (" (grade them before feedback and export)" if pending else ""))
    lines.append("score: raw (autograded + by hand) minus the late penalty, as the export and the feedback give it")
    unknown = [quoted(r["student"]) for r in rows if r["time"] not in ("late", "on time", "excused")]
    if unknown:
        lines.append(f"no LMS time for the notebook now in submitted/: {len(unknown)} ({', '.join(unknown)}): "
                     "run lms-times on a fresh export; their scores do not go out until then")
    return "\n".join(lines)


def moodle_feedback(root: str, assignment: str, worksheet: str, out: str) -> dict[str, list[str]]:
    """Zip ``feedback/<id>/<assignment>/*.html`` as Moodle's feedback-files upload expects:
    ``<Full name>_<participant>_assignsubmission_file_/<file>``. Returns ``packed`` and ``no feedback``."""
    done = {"packed": [], "no feedback": []}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for row in _worksheet(worksheet):
            student = row["id"]
            pages = _feedback_pages(root, assignment, student)
            if not pages:
                done["no feedback"].append(student)
                continue
            name = re.sub(r"[/\\\x00-\x1f]", "_", row.get("Full name") or "")
            for page in pages:
                z.write(page, f"{name}_{student}_assignsubmission_file_/{os.path.basename(page)}")
            done["packed"].append(student)
    return done


CANVAS_FIXED = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section")
CANVAS_COLUMN = re.compile(r".+ \(\d+\)")       # an assignment's column: "Exercise 07 (12345)"
TEST_STUDENT = ("Student, Test", "Test Student")     # Canvas's Test Student, in every course (Student View)


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


def _ready(student: str, scores: dict[str, dict], listed: set, done: dict[str, list[str]],
           why_missing=None) -> dict | None:
    """The student's score row when it can go to the LMS; else None, with the reason noted in ``done``
    (``why_missing(student)``: the kind of upload that is not graded, :func:`.uploads.missing`)."""
    listed.add(student)
    row = scores.get(student)
    if row is None:
        why = why_missing(student) if why_missing else None
        done[why[0] if why else "no submission"].append(student)
    elif row["time"] in ("stale", "no LMS time"):
        done["no LMS time"].append(student)
    elif row["pending"]:
        done["pending"].append(student)
    elif row["time"] == "excused" and "excused" in done:
        done["excused"].append(student)
    else:
        return row
    return None


#: a listed student with no graded submission, by why (:mod:`.uploads`): never "no submission" for a refused upload
NOT_GRADED = ("invalid notebook", "not the notebook", "no submission")


def _why_missing(root: str, assignment: str):
    """``student -> (kind, why) or None``, from :mod:`.uploads` (its records read once)."""
    found = uploads.problems(root, assignment)
    return lambda student: uploads.missing(root, assignment, student, (), found)


def moodle_grades(root: str, assignment: str, worksheet: str, out: str, scale: bool = False) -> dict[str, list[str]]:
    """Moodle's grading worksheet (as downloaded) with ``Grade`` and ``Feedback comments`` filled in for
    every participant with a complete submission in the gradebook, written to ``out`` for *Upload grading
    worksheet*; every other cell as Moodle wrote it, every cell quoted as Moodle quotes them.

    Returns ``filled``, ``pending`` (written answers not graded by hand yet: left as they were),
    ``locked`` (``Grade can be changed`` is No), ``invalid notebook`` and ``not the notebook`` (an upload
    refused, or a ``.py`` handed in: :mod:`.uploads`), ``no submission`` (listed, nothing handed in or
    collected) and ``not listed`` (in the gradebook, not in the worksheet)."""
    rows, bom = _read_csv(worksheet)
    head = rows[0]
    for name in ("Identifier", "Grade", "Maximum Grade"):
        if name not in head:
            raise ValueError(f"{worksheet}: no column {quoted(name)}: not Moodle's grading worksheet")
    col = {name: i for i, name in enumerate(head)}
    scores = {r["student"]: r for r in score_rows(root, assignment)}
    done = {"filled": [], "pending": [], "no LMS time": [], "locked": [], **{k: [] for k in NOT_GRADED},
            "not listed": []}
    listed = set()
    for cells in rows[1:]:
        if len(cells) < len(head):
            cells += [""] * (len(head) - len(cells))
        m = PARTICIPANT.fullmatch(cells[col["Identifier"]].strip())
        if not m:
            raise ValueError(f"{worksheet}: {quoted(cells[col['Identifier']])} is not Moodle's 'Participant N'")
        student = m.group(1)
        row = _ready(student, scores, listed, done, _why_missing(root, assignment))
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

    Returns ``filled``, ``pending``, ``excused``, ``invalid notebook``, ``not the notebook``, ``no submission``
    and ``not listed``, as :func:`moodle_grades`, and ``test student`` (Canvas's Test Student, left as it is)."""
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
    at, ident, who = len(keep) - 1, keep.index(head.index("ID")), keep.index(head.index("Student"))
    table = [[(cells + [""] * len(head))[i] for i in keep] for cells in rows]
    maximum = None
    for cells in table[1:]:
        if cells[0].strip() == "Points Possible":
            maximum = _number(cells[at])
    scores = {r["student"]: r for r in score_rows(root, assignment)}
    done = {"filled": [], "pending": [], "no LMS time": [], "excused": [], **{k: [] for k in NOT_GRADED},
            "not listed": [], "test student": []}
    listed = set()
    for cells in table[1:]:
        student = cells[ident].strip()
        if not student.isdigit() or not student.isascii():
            continue                                      # "Points Possible", "Manual Posting"
        if cells[who].strip() in TEST_STUDENT:
            done["test student"].append(student)          # Canvas's own, in every course: never graded
            continue
        row = _ready(student, scores, listed, done, _why_missing(root, assignment))
        if row is not None:
            cells[at] = _grade(_fitted(row, maximum, scale, f"Canvas's {quoted(column)}"))
            done["filled"].append(student)
    done["not listed"] = sorted(set(scores) - listed)
    _write_csv(out, table, bom)
    return done


def _feedback_pages(root: str, assignment: str, student: str) -> list[str]:
    """The student's feedback pages (``feedback/<id>/<assignment>/*.html``), links left out."""
    folder = os.path.join(root, "feedback", student, assignment)
    files = sorted(f for f in os.listdir(folder) if f.endswith(".html")) if os.path.isdir(folder) else []
    return [os.path.join(folder, f) for f in files if not os.path.islink(os.path.join(folder, f))]


def canvas_feedback(root: str, assignment: str, submissions: list[str], out: str) -> dict[str, list[str]]:
    """Zip ``feedback/<id>/<assignment>/*.html`` for Canvas's *Re-Upload Submissions*: each file named
    ``<name>_<user id>_<attachment id>_<file>`` as in Canvas's own download (Canvas reads the first two
    all-digit parts of the name as the user and the attachment, which must be the submission's, and adds
    the file to its comments). The ids come from the submissions list (``lms-times``' JSON pages).
    Returns ``packed``, ``no feedback`` and ``no attachment`` (the submission has no file to attach to)."""
    handed = read_lms(submissions)
    done = {"packed": [], "no feedback": [], "no attachment": []}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for student, h in sorted(handed.items()):
            pages = _feedback_pages(root, assignment, student) if plain_id(student) else []
            if not pages:
                if h.when is not None:
                    done["no feedback"].append(student)
                continue
            if not (h.attachment or "").isdigit() or not student.isdigit():
                done["no attachment"].append(student)
                continue
            name = re.sub(r"[^a-z]", "", h.name.lower()) or "student"
            for page in pages:
                file = re.sub(r"(?:^|_)\d+(?=_|\.|$)", "", os.path.basename(page)) or "feedback.html"
                z.write(page, f"{name}_{student}_{h.attachment}_{file}")
            done["packed"].append(student)
    return done


def handout(root: str, assignment: str, out: str) -> list[str]:
    """``release/<assignment>/`` as one zip for the LMS (the notebook with its ``figures/``, under a folder
    named after the assignment): the files packed. Hidden files, checkpoints and links are left out."""
    folder = os.path.join(root, "release", assignment)
    if not os.path.isdir(folder) or os.path.islink(folder):
        raise ValueError(f"{folder}: no released assignment (run nbgrader generate_assignment {assignment})")
    packed = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for top, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(top, d)))
            for name in sorted(files):
                path = os.path.join(top, name)
                if name.startswith(".") or os.path.islink(path):
                    continue
                arc = os.path.join(assignment, os.path.relpath(path, folder))
                z.write(path, arc)
                packed.append(arc)
    return packed


def _report(done: dict[str, list[str]], root: str | None = None, assignment: str = "",
            handed: dict[str, Handed] | None = None) -> None:
    """Each outcome, its count and its students; with ``root``, a line for each student whose upload was
    not graded saying why (:func:`.uploads.missing`: "handed in a .py, not the notebook", the refusal)."""
    for outcome, students in done.items():
        if students:
            print(f"{outcome}: {len(students)} ({', '.join(quoted(s) for s in students)})")
    if root is None:
        return
    found = uploads.problems(root, assignment)
    for student in done.get("invalid notebook", []) + done.get("not the notebook", []):
        files = handed[student].files if handed and student in handed else ()
        why = uploads.missing(root, assignment, student, files, found)
        if why:
            print(f"  {quoted(student)}: {why[1]}")


def canvas_roster(export: str, out: str) -> dict[str, list[str]]:
    """nbgrader's class list (``id,first_name,last_name,email,lms_user_id``, for ``nbgrader db student
    import``) from Canvas's gradebook export: a row for each student, ``id`` and ``lms_user_id`` the
    ``ID`` column (Canvas's user id: the number in the download's file names, in the submissions list and
    in the gradebook import), the names from ``Student`` (Canvas's sortable name, "Last, First"), the
    e-mail from ``SIS Login ID`` when it is an address (else empty). Left out: the rows without a numeric
    ``ID`` ("Points Possible", "Manual Posting") and Canvas's Test Student ("Student, Test", which every
    course has). Returns ``students``, ``test student`` and ``left out`` (other rows, by their first cell)."""
    rows, _ = _read_csv(export)
    head = rows[0] if rows else []
    for name in ("Student", "ID"):
        if name not in head:
            raise ValueError(f"{export}: no column {quoted(name)}: not Canvas's gradebook export")
    col = {name: i for i, name in enumerate(head)}
    done = {"students": [], "test student": [], "left out": []}
    table = [["id", "first_name", "last_name", "email", "lms_user_id"]]
    for cells in rows[1:]:
        cells = cells + [""] * (len(head) - len(cells))
        name, ident = cells[col["Student"]].strip(), cells[col["ID"]].strip()
        if not (ident.isdigit() and ident.isascii()):
            if any(c.strip() for c in cells) and name not in ("Points Possible", "Manual Posting"):
                done["left out"].append(name or ident)
            continue
        if name in TEST_STUDENT:
            done["test student"].append(ident)
            continue
        if ident in done["students"]:
            continue                                     # listed once per section in some exports
        last, comma, first = name.partition(",")
        if not comma:
            first, _, last = name.rpartition(" ")
        login = cells[col["SIS Login ID"]].strip() if "SIS Login ID" in col else ""
        email = login if re.fullmatch(r"[^@\s,]+@[^@\s,]+\.[^@\s,]+", login) else ""
        table.append([ident, first.strip(), last.strip(), email, ident])
        done["students"].append(ident)
    _write_csv(out, table, False)
    return done


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_grader")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("lms-times", help="write timestamp.txt from the LMS's submission times")
    t.add_argument("assignment")
    t.add_argument("export", nargs="+", help="Moodle's grading worksheet (.csv), or Canvas's submissions (.json): "
                   "every page of the API's list, one file each")
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
    k = sub.add_parser("canvas-feedback", help="feedback/ as a zip for Canvas's Re-Upload Submissions")
    k.add_argument("assignment")
    k.add_argument("submissions", nargs="+", help="Canvas's submissions list (.json), every page, as for lms-times")
    k.add_argument("--out", default="canvas_feedback.zip")
    r = sub.add_parser("roster-from-canvas", help="nbgrader's class list from Canvas's gradebook export")
    r.add_argument("export", help="Canvas's gradebook export (.csv), as downloaded")
    r.add_argument("--out", default="students.csv")
    h = sub.add_parser("handout", help="release/ASSIGNMENT/ as one zip for the LMS, figures included")
    h.add_argument("assignment")
    h.add_argument("--out", help="default: ASSIGNMENT.zip")
    args = parser.parse_args(argv)
    root = os.getcwd()
    try:
        if args.command == "lms-times":
            handed = read_lms(args.export, args.timezone)
            done = write_times(root, args.assignment, handed)
            _report(done, root, args.assignment, handed)
            if done["not listed"]:
                print(f"lms-times: {len(done['not listed'])} folder(s) in submitted/ the LMS's list does not name: "
                      f"{', '.join(quoted(s) for s in done['not listed'])}; their late penalty is unknown. Give "
                      "every page of Canvas's list (or the whole worksheet) and run lms-times again", file=sys.stderr)
            return 1 if done["refused"] or done["not listed"] else 0
        if args.command == "scores":
            rows = score_rows(root, args.assignment)
            print(format_scores(rows))
            return 1 if any(r["time"] in ("stale", "no LMS time") for r in rows) else 0
        if args.command == "roster-from-canvas":
            if os.path.realpath(args.out) == os.path.realpath(args.export):
                raise ValueError(f"--out {quoted(args.out)}: the LMS's own file; write to another")
            done = canvas_roster(args.export, args.out)
            _report(done)
            print(f"wrote {args.out}: import it with nbgrader db student import {args.out}")
            return 0 if done["students"] else 1
        if args.command == "handout":
            out = args.out or f"{args.assignment}.zip"
            packed = handout(root, args.assignment, out)
            print(f"wrote {out}: {len(packed)} files ({', '.join(packed)}); hand it out as one file: the notebook "
                  "shows figures/ beside it")
            return 0
        if args.command == "canvas-feedback":
            done = canvas_feedback(root, args.assignment, args.submissions, args.out)
            _report(done)
            print(f"wrote {args.out}: upload it under the assignment's 'Re-Upload Submissions' (each file becomes a "
                  "comment on the student's submission)")
            return 1 if done["no attachment"] else 0
        if args.command in ("moodle-grades", "canvas-grades"):
            if os.path.realpath(args.out) == os.path.realpath(getattr(args, "worksheet", None) or args.export):
                raise ValueError(f"--out {quoted(args.out)}: the LMS's own file; write to another")
            done = (moodle_grades(root, args.assignment, args.worksheet, args.out, args.scale)
                    if args.command == "moodle-grades" else
                    canvas_grades(root, args.assignment, args.export, args.out, args.column, args.scale))
            _report(done, root, args.assignment)
            where = ("Grading action > Upload grading worksheet" if args.command == "moodle-grades"
                     else "Grades > Import")
            print(f"wrote {args.out}: upload it under '{where}'")
            return 1 if done["pending"] or done["no LMS time"] else 0
        done = moodle_feedback(root, args.assignment, args.worksheet, args.out)
        _report(done)
        print(f"wrote {args.out}: upload it under 'Upload multiple feedback files in a zip'")
        return 0
    except (OSError, ValueError, KeyError) as e:
        print(f"{args.command}: {e}", file=sys.stderr)
        return 2
