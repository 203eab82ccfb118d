"""The LMS round trip (course_grader.lms): submission times from Moodle's grading worksheet and from
Canvas's submissions list into timestamp.txt, the score table, feedback packed for Moodle's upload."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from course_grader import lms

ASSIGNMENT = "07_exercise"
MOODLE_HEAD = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
               "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments"]


def moodle_worksheet(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(MOODLE_HEAD)
        for ident, name, when in rows:
            w.writerow([f"Participant {ident}", name, f"{ident}@example.org", "Submitted for grading", "",
                        "30.00", "Yes", when, "-", ""])
    return path


def course(tmp_path, students):
    for s in students:
        folder = tmp_path / "submitted" / s / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "encoder_from_scratch.ipynb").write_text("{}")
    return tmp_path


def run(args, cwd):
    return subprocess.run([sys.executable, "-m", "course_grader", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_moodle_times_become_timestamps_in_utc(tmp_path):
    root = course(tmp_path, ["1001", "1002", "1004"])
    sheet = moodle_worksheet(tmp_path / "worksheet.csv", [
        ("1001", "Ada Lovelace", "Friday, 4 December 2026, 11:30 PM"),     # on time, Berlin = UTC+1
        ("1002", "Bob Babbage", "Saturday, 5 December 2026, 2:30 AM"),     # late
        ("1003", "Eve Hopper", "-"),                                        # nothing submitted
    ])
    proc = run(["lms-times", ASSIGNMENT, str(sheet), "--timezone", "Europe/Berlin"], root)
    assert proc.returncode == 1 and "the LMS's list does not name: '1004'" in proc.stderr   # issue 49 item 5
    stamp = (root / "submitted/1001" / ASSIGNMENT / "timestamp.txt").read_text().strip()
    assert stamp == "2026-12-04 22:30:00.000000 UTC"
    assert (root / "submitted/1002" / ASSIGNMENT / "timestamp.txt").read_text().strip() == \
        "2026-12-05 01:30:00.000000 UTC"
    assert "written: 2" in proc.stdout and "no folder: 1 ('1003')" in proc.stdout
    assert "not listed: 1 ('1004')" in proc.stdout                       # a folder the LMS does not know
    assert not (root / "submitted/1004" / ASSIGNMENT / "timestamp.txt").exists()
    from nbgrader.coursedir import CourseDirectory  # nbgrader reads what we wrote
    read = CourseDirectory(root=str(root)).get_existing_timestamp(str(root / "submitted/1002" / ASSIGNMENT))
    assert read == datetime(2026, 12, 5, 1, 30)                          # nbgrader keeps UTC, naive


def test_canvas_submissions_list(tmp_path):
    root = course(tmp_path, ["501", "502"])
    export = tmp_path / "submissions.json"
    export.write_text(json.dumps([{"user_id": 501, "submitted_at": "2026-12-05T01:30:00Z", "late": True},
                                  {"user_id": 502, "submitted_at": None, "workflow_state": "unsubmitted"}]))
    done = lms.write_times(str(root), ASSIGNMENT, lms.read_times(str(export)))
    assert done["written"] == ["501"] and done["no time"] == ["502"]
    assert (root / "submitted/501" / ASSIGNMENT / "timestamp.txt").read_text().startswith("2026-12-05 01:30:00")


def test_links_and_odd_ids_are_refused(tmp_path):
    root = course(tmp_path, ["1001"])
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    os.symlink(outside, root / "submitted/1001" / ASSIGNMENT / "timestamp.txt")
    when = datetime(2026, 12, 1, tzinfo=UTC)
    done = lms.write_times(str(root), ASSIGNMENT, {"1001": when, "../1001": when})
    assert sorted(done["refused"]) == ["../1001", "1001"] and outside.read_text() == "keep"


def test_a_worksheet_that_is_not_moodles_is_refused(tmp_path):
    sheet = tmp_path / "other.csv"
    sheet.write_text("Identifier,Last modified (submission)\nada,-\n")
    with pytest.raises(ValueError, match="Participant N"):
        lms.read_times(str(sheet))
    assert run(["lms-times", ASSIGNMENT, str(sheet)], tmp_path).returncode == 2


def test_feedback_is_packed_for_moodle(tmp_path):
    sheet = moodle_worksheet(tmp_path / "worksheet.csv", [("1001", "Ada Lovelace", "-"),
                                                          ("1002", "Bob Babbage", "-")])
    page = tmp_path / "feedback/1001" / ASSIGNMENT / "encoder_from_scratch.html"
    page.parent.mkdir(parents=True)
    page.write_text("<html lang='en'></html>")
    out = tmp_path / "moodle_feedback.zip"
    proc = run(["lms-feedback", ASSIGNMENT, str(sheet), "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(out) as z:
        assert z.namelist() == ["Ada Lovelace_1001_assignsubmission_file_/encoder_from_scratch.html"]
    assert "no feedback: 1 ('1002')" in proc.stdout


def test_score_table_from_the_gradebook(tmp_path):
    gradebook(tmp_path, {"ada": (3, 2), "bob": (1, None)}, maxima=(3, 2))
    rows = lms.score_rows(str(tmp_path), ASSIGNMENT)
    assert [(r["student"], r["autograded"], r["by hand"], r["score"], r["max"], r["pending"]) for r in rows] == \
        [("ada", 3, 2, 5, 5, 0), ("bob", 1, 0, 1, 5, 1)]
    proc = run(["scores", ASSIGNMENT], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "2 submissions; 1 written answers not graded by hand yet" in proc.stdout
    assert proc.stdout.splitlines()[0].split() == ["student", "autograded", "by", "hand", "raw", "penalty", "score",
                                                   "max", "pending", "hours", "late"]
    assert proc.stdout.splitlines()[1].split() == ["ada", "3", "2", "5", "0", "5", "5", "0", "0.00"]


# ------------------------------------------------------------------ grades back, in each LMS's own format

REPO = Path(__file__).resolve().parents[2]
DUE = datetime(2026, 12, 4, 23, 59)                 # the gradebook's due date (UTC, naive as nbgrader keeps it)


def docs_block(after: str, language: str = "python") -> str:
    """The first ```language block of docs/customising.md after the text ``after``."""
    text = (REPO / "docs" / "customising.md").read_text(encoding="utf-8")
    start = text.index(f"```{language}\n", text.index(after)) + len(language) + 4
    return text[start:text.index("```", start)]


# docs/customising.md's plugin: one point per started hour late, never more than the score
PER_HOUR = "c = get_config()  # noqa: F821\n" + docs_block("Anything else is a small plugin")
ZERO = "c = get_config()  # noqa: F821\n" + docs_block("Built in are no penalty")


EMPTY: dict = {}


def gradebook(root, marks, late=None, maxima=(20, 10), policy=PER_HOUR):
    """A gradebook with one autograded cell (20 points) and one written answer (10 points), the way
    autograde and the formgrader leave it: ``marks`` is {student: (auto, manual or None)}, ``late``
    {student: hours late, as timestamp.txt gave it to autograde} (the docs' one point per started hour,
    written into the course's nbgrader_config.py), ``maxima`` the two cells' points."""
    from nbgrader.api import Gradebook

    late = late or {}
    (root / "nbgrader_config.py").write_text(policy, encoding="utf-8")
    if maxima not in EMPTY:                            # made once (nbgrader's migrations take seconds), then copied
        EMPTY.setdefault("dir", tempfile.TemporaryDirectory())         # removed when the tests end
        EMPTY[maxima] = Path(EMPTY["dir"].name) / f"gradebook_{maxima[0]}_{maxima[1]}.db"
        with Gradebook(f"sqlite:///{EMPTY[maxima]}") as gb:
            gb.add_assignment(ASSIGNMENT, duedate=DUE)
            gb.add_notebook("encoder_from_scratch", ASSIGNMENT)
            gb.add_grade_cell("test_encoder", "encoder_from_scratch", ASSIGNMENT, max_score=maxima[0],
                              cell_type="code")
            gb.add_grade_cell("answer_reverser", "encoder_from_scratch", ASSIGNMENT, max_score=maxima[1],
                              cell_type="markdown")
    shutil.copyfile(EMPTY[maxima], root / "gradebook.db")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for student, (auto, manual) in marks.items():
            gb.add_student(student)
            gb.add_submission(ASSIGNMENT, student,
                              timestamp=DUE + timedelta(hours=late[student] - 0.5 if student in late else -1))
            tested = gb.find_grade("test_encoder", "encoder_from_scratch", ASSIGNMENT, student)
            tested.auto_score, tested.needs_manual_grade = auto, False
            written = gb.find_grade("answer_reverser", "encoder_from_scratch", ASSIGNMENT, student)
            written.manual_score, written.needs_manual_grade = manual, manual is None
        gb.db.commit()


def test_scores_are_after_the_late_penalty_as_the_export_gives_them(tmp_path):
    """Issue 43 item 3: ``scores`` showed 23 where the export and the feedback said 21."""
    gradebook(tmp_path, {"1001": (16, 7), "1002": (1, 0)}, late={"1001": 2, "1002": 5})
    rows = {r["student"]: r for r in lms.score_rows(str(tmp_path), ASSIGNMENT)}
    assert (rows["1001"]["raw"], rows["1001"]["penalty"], rows["1001"]["score"]) == (23, 2, 21)
    assert rows["1002"]["score"] == 0                               # never below zero, as nbgrader export
    assert run(["scores", ASSIGNMENT], tmp_path).stdout.splitlines()[1].split() == \
        ["1001", "16", "7", "23", "2", "21", "30", "0", "1.50"]
    env = dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")
    exported = subprocess.run([sys.executable, "-m", "nbgrader", "export", "--to", "grades.csv"], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    with open(tmp_path / "grades.csv", newline="") as f:
        export = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f)}
    assert export == {s: r["score"] for s, r in rows.items()}


# Moodle's grading worksheet as Moodle writes it: every cell quoted, its own header, local times.
MOODLE_SHEET = "".join(",".join(f'"{cell}"' for cell in row) + "\n" for row in [
    MOODLE_HEAD,
    ["Participant 1001", "Ada Lovelace", "ada@example.org", "Submitted for grading", "", "30.00", "Yes",
     "Friday, 4 December 2026, 11:30 PM", "-", ""],
    ["Participant 1002", "Bob Babbage", "bob@example.org", "Submitted for grading", "", "30.00", "Yes",
     "Saturday, 5 December 2026, 2:30 AM", "-", ""],
    ["Participant 1003", "Eve Hopper", "eve@example.org", "No submission", "", "30.00", "Yes", "-", "-", ""],
    ["Participant 1004", "Kim Noether", "kim@example.org", "Submitted for grading", "", "30.00", "Yes",
     "Friday, 4 December 2026, 9:00 PM", "-", ""],
])


def test_moodle_round_trip_times_in_grades_and_comments_out(tmp_path):
    """Issue 43 item 7: the worksheet Moodle exports gives the times; the same worksheet goes back with
    Grade (after the late penalty) and Feedback comments filled in, every other cell as Moodle wrote it."""
    root = course(tmp_path, ["1001", "1002", "1004"])
    sheet = tmp_path / "grading_worksheet.csv"
    sheet.write_text(MOODLE_SHEET, encoding="utf-8")
    assert run(["lms-times", ASSIGNMENT, str(sheet), "--timezone", "Europe/Berlin"], root).returncode == 0
    gradebook(root, {"1001": (20, 9), "1002": (16, 7), "1004": (12, None)}, late={"1002": 2})
    proc = run(["moodle-grades", ASSIGNMENT, str(sheet), "--out", "moodle_grades.csv"], root)
    assert proc.returncode == 1, proc.stderr                       # one submission still waits for a hand grade
    assert "filled: 2 ('1001', '1002')" in proc.stdout and "pending: 1 ('1004')" in proc.stdout
    assert "no submission: 1 ('1003')" in proc.stdout
    back = (root / "moodle_grades.csv").read_text(encoding="utf-8")
    assert back.splitlines()[0] == MOODLE_SHEET.splitlines()[0]      # Moodle's header, quoted as Moodle quotes
    rows = {r["Identifier"]: r for r in csv.DictReader(back.splitlines())}
    assert rows["Participant 1001"]["Grade"] == "29.00" and rows["Participant 1002"]["Grade"] == "21.00"
    assert rows["Participant 1002"]["Feedback comments"] == (
        "Autograded parts 16, written answers 7; late penalty 2: 21 of 30. The feedback page shows each part.")
    assert rows["Participant 1004"]["Grade"] == "" and rows["Participant 1003"]["Grade"] == ""
    original = {r["Identifier"]: r for r in csv.DictReader(MOODLE_SHEET.splitlines())}
    for ident, row in rows.items():                                 # nothing else changed
        for name in MOODLE_HEAD:
            if name not in ("Grade", "Feedback comments"):
                assert row[name] == original[ident][name], (ident, name)


def test_moodle_refuses_another_maximum_unless_scaled(tmp_path):
    gradebook(tmp_path, {"1001": (20, 9)})
    sheet = tmp_path / "grading_worksheet.csv"
    sheet.write_text(MOODLE_SHEET.replace('"30.00"', '"100.00"'), encoding="utf-8")
    proc = run(["moodle-grades", ASSIGNMENT, str(sheet)], tmp_path)
    assert proc.returncode == 2 and "out of 100, the gradebook's assignment out of 30" in proc.stderr
    assert run(["moodle-grades", ASSIGNMENT, str(sheet), "--scale"], tmp_path).returncode == 0
    with open(tmp_path / "moodle_grades.csv", newline="", encoding="utf-8") as f:
        assert next(r for r in csv.DictReader(f) if r["Identifier"] == "Participant 1001")["Grade"] == "96.67"
    assert run(["moodle-grades", ASSIGNMENT, str(sheet), "--out", str(sheet)], tmp_path).returncode == 2


# Canvas's gradebook export as Canvas writes it: "Last, First" names quoted, the Points Possible row,
# other assignments and read-only totals, a test student.
CANVAS_EXPORT = "\ufeff" + "\n".join([
    "Student,ID,SIS User ID,SIS Login ID,Section,Exercise 07 (4321),Quiz 1 (4322),"
    "Current Score,Unposted Current Score,Final Score,Unposted Final Score",
    "    Points Possible,,,,,30.00,10.00,(read only),(read only),(read only),(read only)",
    '"Lovelace, Ada",1001,s1001,ada@example.org,Transformers 2026,,8.00,80.00,80.00,20.00,20.00',
    '"Babbage, Bob",1002,s1002,bob@example.org,Transformers 2026,,7.00,70.00,70.00,17.50,17.50',
    '"Hopper, Eve",1003,s1003,eve@example.org,Transformers 2026,,,,,,',
    '"Student, Test",1099,,a1b2c3,Transformers 2026,,,,,,',
]) + "\n"


def canvas_zip(path, names):
    with zipfile.ZipFile(path, "w") as z:
        for name in names:
            z.writestr(name, json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


def test_canvas_names_claim_nobody_else():
    """Canvas names a file ``name[_LATE]_userid_attachmentid_<the student's own file name>``: ``lms-collect``
    takes the ids Canvas wrote first, so a file named to look like another student's claims nobody else."""
    from course_grader.lms_in import whose

    def collect(name):
        got = whose(name, "canvas")
        return None if got is None else (got[0], got[2])
    assert collect("lovelaceada_1001_555001_encoder_from_scratch.ipynb") == ("1001", "encoder_from_scratch.ipynb")
    assert collect("babbagebob_LATE_1002_555002_encoder_from_scratch-1.ipynb") == \
        ("1002", "encoder_from_scratch-1.ipynb")
    for claim in ("hopper_eve_1003_555003_x_1001_555001_encoder_from_scratch.ipynb",   # a file named to claim 1001
                  "hoppereve_1003_555003_1001_555001_encoder_from_scratch.ipynb",
                  "hoppereve_1003_555003_gradebook.ipynb",
                  "hoppereve_1003_555003_encoder_from_scratch.ipynb.ipynb"):
        assert collect(claim) is None or collect(claim)[0] == "1003", claim


def test_canvas_round_trip_download_in_gradebook_import_out(tmp_path):
    """Issue 43 item 7: Canvas's submissions download collected by ``lms-collect --lms canvas`` (the one
    route in, issue 48), then the gradebook export filled in as Canvas's import reads it: the student
    columns, the exercise's column, the Points Possible row, rows matched by ID."""
    source = tmp_path / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    (source / "encoder_from_scratch.ipynb").write_text("{}")
    archive = tmp_path / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    canvas_zip(archive / "submissions.zip", ["lovelaceada_1001_555001_encoder_from_scratch.ipynb",
                                              "babbagebob_LATE_1002_555002_encoder_from_scratch-1.ipynb"])
    collected = run(["lms-collect", ASSIGNMENT, "--lms", "canvas"], tmp_path)
    assert collected.returncode == 0, collected.stderr
    assert sorted(p.relative_to(tmp_path / "submitted").as_posix()
                  for p in (tmp_path / "submitted").rglob("*.ipynb")) == \
        [f"1001/{ASSIGNMENT}/encoder_from_scratch.ipynb", f"1002/{ASSIGNMENT}/encoder_from_scratch.ipynb"]
    gradebook(tmp_path, {"1001": (20, 9), "1002": (16, 7)}, late={"1002": 2})
    export = tmp_path / "canvas_gradebook.csv"
    export.write_text(CANVAS_EXPORT, encoding="utf-8")
    proc = run(["canvas-grades", ASSIGNMENT, str(export), "--column", "Exercise 07 (4321)",
                "--out", "canvas_grades.csv"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "filled: 2 ('1001', '1002')" in proc.stdout and "no submission: 1 ('1003')" in proc.stdout
    assert "test student: 1 ('1099')" in proc.stdout
    raw = (tmp_path / "canvas_grades.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")                         # as Canvas wrote it
    with open(tmp_path / "canvas_grades.csv", newline="", encoding="utf-8-sig") as f:
        table = list(csv.reader(f))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Exercise 07 (4321)"]
    assert table[1] == ["    Points Possible", "", "", "", "", "30.00"]
    assert table[2] == ["Lovelace, Ada", "1001", "s1001", "ada@example.org", "Transformers 2026", "29.00"]
    assert table[3][1:] == ["1002", "s1002", "bob@example.org", "Transformers 2026", "21.00"]
    assert table[4][-1] == "" and table[5][:2] == ["Student, Test", "1099"]


def test_canvas_asks_which_column_and_checks_the_points(tmp_path):
    gradebook(tmp_path, {"1001": (20, 9)})
    export = tmp_path / "canvas_gradebook.csv"
    export.write_text(CANVAS_EXPORT.replace("Current Score,", "Exercise 08 (4323),Current Score,")
                      .replace("(read only),(read only),(read only),(read only)",
                               "20.00,(read only),(read only),(read only),(read only)"), encoding="utf-8")
    proc = run(["canvas-grades", ASSIGNMENT, str(export)], tmp_path)
    assert proc.returncode == 2 and "name the exercise's with --column" in proc.stderr
    proc = run(["canvas-grades", ASSIGNMENT, str(export), "--column", "Exercise 08 (4323)"], tmp_path)
    assert proc.returncode == 2 and "out of 20, the gradebook's assignment out of 30" in proc.stderr
    proc = run(["canvas-grades", ASSIGNMENT, str(export), "--column", "Exercise 07 (4321)"], tmp_path)
    assert proc.returncode == 0, proc.stderr


# ------------------------------------------------------------------ a class replayed, in every order of the steps

def _stamped_autograde(root, marks, policy):
    """What ``python -m course_grader autograde --force`` leaves in the gradebook, without running the
    notebooks: the kept times restored (:func:`lms.restore_times`, as the grader calls it), each submission
    with the time of its timestamp.txt (as nbgrader reads it), the autograded points ``marks[student][0]``,
    hand grades already given kept, and nbgrader's penalty of that moment (its ``AssignLatePenalties``: from
    the autograded points and that time alone)."""
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    from course_grader import late

    lms.restore_times(str(root), ASSIGNMENT)
    coursedir = CourseDirectory(root=str(root))
    assign = late.policy(late.course_config(str(root)))
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        known = {s.id for s in gb.students}
        for student in sorted(os.listdir(root / "submitted")):
            when = coursedir.get_existing_timestamp(str(root / "submitted" / student / ASSIGNMENT))
            if student not in known:
                gb.add_student(student)
                gb.add_submission(ASSIGNMENT, student)
            sub = gb.find_submission(ASSIGNMENT, student)
            sub.timestamp = when
            notebook = sub.notebooks[0]
            for grade in notebook.grades:
                if grade.cell.name == "test_encoder":
                    grade.auto_score, grade.needs_manual_grade = marks[student][0], False
                else:
                    grade.needs_manual_grade = grade.manual_score is None
        gb.db.commit()
        for sub in gb.assignment_submissions(ASSIGNMENT):
            notebook, seconds = sub.notebooks[0], sub.total_seconds_late
            penalty = assign.plugin_inst.late_submission_penalty(sub.student.id, notebook.score, seconds) \
                if seconds else None
            notebook.late_submission_penalty = None if penalty is None else assign._check_late_penalty(notebook,
                                                                                                       penalty)
        gb.db.commit()


def _hand_grades(root, marks):
    """The formgrader's work: each written answer given ``marks[student][1]``."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for sub in gb.assignment_submissions(ASSIGNMENT):
            for grade in sub.notebooks[0].grades:
                if grade.cell.name == "answer_reverser":
                    grade.manual_score = marks[sub.student.id][1]
                    grade.needs_manual_grade = grade.manual_score is None
        gb.db.commit()


def _download(root, round_, students):
    """A download collected with ``zip_collect --force``: every notebook replaced by the round's (a student
    who handed in again gets new bytes), every timestamp.txt deleted."""
    for student, version in students.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "timestamp.txt").unlink(missing_ok=True)
        (folder / "encoder_from_scratch.ipynb").write_text(json.dumps({"v": version, "who": student}))


def _feedback_score(root, student):
    """What ``nbgrader generate_feedback`` puts at the top of the page: the course's preprocessors
    SettleLatePenalty and nbgrader's GetGrades, in the order nbgrader_config.py lists them."""
    from nbformat.v4 import new_notebook
    from nbgrader.preprocessors import GetGrades
    from traitlets.config import Config

    from course_grader import late

    config = late.course_config(str(root))
    config.merge(Config({"CourseDirectory": {"root": str(root)}}))
    resources = {"nbgrader": {"student": student, "assignment": ASSIGNMENT, "notebook": "encoder_from_scratch",
                              "db_url": f"sqlite:///{root / 'gradebook.db'}"}}
    for step in (late.SettleLatePenalty(config=config), GetGrades(config=config)):
        step.preprocess(new_notebook(), resources)
    return resources["nbgrader"]["score"]


def test_feedback_settles_the_penalty_before_it_reads_the_grades():
    config = (REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    assert re.search(r"GenerateFeedback\.preprocessors = \[SettleLatePenalty, GetGrades,", config)


ORDERS = list(__import__("itertools").permutations(("lms-times", "autograde", "hand")))


def _replay(root, order, export, marks, policy, round_):
    for step in order:
        if step == "lms-times":
            done = lms.write_times(str(root), ASSIGNMENT, lms.read_lms([str(p) for p in export]))
            assert done["not listed"] == [] and done["refused"] == []
        elif step == "autograde":
            _stamped_autograde(root, marks, policy)
        else:
            _hand_grades(root, marks)


def canvas_class(n=120):
    """Canvas's submissions API for an n-student class, two rounds: ``{round: [objects]}`` and the marks.
    Student i (user id 2000 + i) by i % 10: 0 an extension (due 48 h later) used, handed in 30 h after the
    class's due date; 1 late by 3.2 h; 2 excused; 3 on time in round 1, handed in again 33 h late in round
    2; 4 an extension of 24 h, still 2 h late; 5 late, but marked "none" by the instructor in SpeedGrader;
    others on time; the last never handed in."""
    due = datetime(2026, 12, 4, 23, 59, tzinfo=UTC)
    iso = "%Y-%m-%dT%H:%M:%SZ"
    rounds, marks, expect = {1: [], 2: []}, {}, {}
    for i in range(n):
        student = str(2000 + i)
        kind = i % 10
        own_due = due + timedelta(hours={0: 48, 4: 24}.get(kind, 0))
        when = {0: 30, 1: 3.2, 3: -5, 4: 26, 5: 6}.get(kind, -2)
        late_s = max(0.0, (due + timedelta(hours=when) - own_due).total_seconds())
        row = {"user_id": int(student), "cached_due_date": own_due.strftime(iso), "excused": kind == 2,
               "submitted_at": (due + timedelta(hours=when)).strftime(iso), "workflow_state": "submitted",
               "late": late_s > 0 and kind not in (2, 5), "seconds_late": 0 if kind in (2, 5) else int(late_s),
               "late_policy_status": "none" if kind == 5 else None, "missing": False,
               "attachments": [{"id": 900000 + i, "display_name": "encoder_from_scratch.ipynb"}],
               "user": {"sortable_name": f"Student{i:03d}, Ada"}}
        if i == n - 1:
            row.update(submitted_at=None, workflow_state="unsubmitted", late=False, seconds_late=0, attachments=[])
        rounds[1].append(row)
        again = dict(row)
        if kind == 3:
            again.update(submitted_at=(due + timedelta(hours=33)).strftime(iso), late=True, seconds_late=33 * 3600,
                         attachments=[{"id": 950000 + i, "display_name": "encoder_from_scratch.ipynb"}])
        rounds[2].append(again)
        marks[student] = ((i * 7) % 21, (i * 3) % 11)
        raw = sum(marks[student])
        final = again
        expect[student] = ("EX" if kind == 2 else None if final["submitted_at"] is None
                           else 0.0 if final["late"] else float(raw))          # the policy: late scores zero
    return rounds, marks, expect


def _pages(tmp, rows, per_page=100):
    """The API's answer saved page by page, as ?per_page=100 and its Link header give it."""
    tmp.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(0, len(rows), per_page):
        paths.append(tmp / f"submissions_{k // per_page + 1}.json")
        paths[-1].write_text(json.dumps(rows[k:k + per_page]))
    return paths


def _canvas_export(path, students, excused):
    lines = ["Student,ID,SIS User ID,SIS Login ID,Section,Exercise 07 (4321)",
             "    Points Possible,,,,,30.00"]
    lines += [f'"Student{int(s) - 2000:03d}, Ada",{s},s{s},{s}@example.org,T 2026,{"EX" if s in excused else ""}'
              for s in students]
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def canvas_round_one(tmp_path_factory):
    """The Canvas class after its first round, in the documented order (download, lms-times, autograde,
    hand grades): made once, copied for each order of the second round."""
    rounds, marks, expect = canvas_class()
    root = tmp_path_factory.mktemp("canvas")
    gradebook(root, {}, policy=ZERO)
    handed = sorted(expect)[:-1]                                   # the last never handed in
    _download(root, 1, {s: 1 for s in handed})
    pages1 = _pages(root.parent / "round1", rounds[1])
    only_first = lms.write_times(str(root), ASSIGNMENT, lms.read_lms([str(pages1[0])]))
    assert len(only_first["not listed"]) == 19                     # page 2's folders: named, not skipped
    _replay(root, ("lms-times", "autograde", "hand"), pages1, marks, ZERO, 1)
    return root, rounds, marks, expect


FORGOT = ("autograde", "hand")          # a new download graded, lms-times not run again on a fresh export
DOCUMENTED = ("lms-times", "autograde", "hand")
HAND_LATER = ("hand grading after the second download",)   # round one's hand grades not given yet


@pytest.mark.parametrize("order", [*ORDERS, FORGOT, HAND_LATER],
                         ids=[*("-".join(o) for o in ORDERS), "lms-times-forgotten", "hand-grading-later"])
def test_canvas_class_replayed_every_grade_as_canvas_rules_give_it(tmp_path, canvas_round_one, order):
    """Issue 49: 120 students over two pages of the API, extensions, late, excused, a late-policy status,
    a resubmission 33 h late after a second download, under the built-in "zero" policy: whatever the
    order of lms-times, autograde and hand grading in the second round, every grade that goes to Canvas,
    every score and every feedback page is the one Canvas's own data gives. Without lms-times on the
    second round's list, the students who handed in again get no grade (stale), the others theirs; with
    no hand grade given before the second autograde, the penalty still covers the hand-graded points."""
    check_canvas_replay(tmp_path, canvas_round_one, order)


def check_canvas_replay(tmp_path, canvas_round_one, order):
    first, rounds, marks, expect = canvas_round_one
    root = tmp_path / "course"
    shutil.copytree(first, root)
    students = sorted(expect)
    handed = students[:-1]
    again = {s for s in handed if (int(s) - 2000) % 10 == 3}
    _download(root, 2, {s: 2 if s in again else 1 for s in handed})   # zip_collect --force
    if order == HAND_LATER:
        _hand_grades(root, dict.fromkeys(marks, (0, None)))         # nothing graded by hand in round one
        order = DOCUMENTED
    _replay(root, order, _pages(tmp_path / "round2", rounds[2]), marks, ZERO, 2)
    stale = set() if "lms-times" in order else again

    rows = {r["student"]: r for r in lms.score_rows(str(root), ASSIGNMENT)}
    for s in handed:
        if s in stale:
            assert rows[s]["time"] == "stale", s
            continue
        want = 0.0 if expect[s] == "EX" else expect[s]
        assert (rows[s]["score"], rows[s]["time"]) == (
            want if expect[s] != "EX" else float(sum(marks[s])),
            "excused" if expect[s] == "EX" else "late" if expect[s] == 0 and sum(marks[s]) else rows[s]["time"]), s
    export = _canvas_export(tmp_path / "canvas_gradebook.csv", students, {s for s in students if expect[s] == "EX"})
    done = lms.canvas_grades(str(root), ASSIGNMENT, str(export), str(tmp_path / "canvas_grades.csv"))
    with open(tmp_path / "canvas_grades.csv", newline="", encoding="utf-8-sig") as f:
        got = {r["ID"]: r["Exercise 07 (4321)"] for r in csv.DictReader(f) if r["ID"]}
    for s in students:
        want = expect[s]
        assert got[s] == ("" if s in stale else "EX" if want == "EX" else "" if want is None else f"{want:.2f}"), s
    assert done["no LMS time"] == sorted(stale) and done["pending"] == [] and len(done["excused"]) == 12
    assert done["no submission"] == [students[-1]]
    for s in handed[:6]:                                           # a student of each kind: the feedback page
        if s in stale:
            with pytest.raises(ValueError, match="lms-times"):
                _feedback_score(root, s)
        else:
            assert _feedback_score(root, s) == (sum(marks[s]) if expect[s] == "EX" else expect[s]), s


def moodle_class(n=12):
    """Moodle's grading worksheet of an n-participant class whose assignment has one user override (so
    Moodle writes the "Due date" column: each participant's own) and one extension (in "Status"), local
    times in Berlin; the marks and each participant's grade under the docs' one point per started hour."""
    zone = ZoneInfo("Europe/Berlin")
    due = datetime(2026, 12, 5, 0, 59, tzinfo=zone)                   # 23:59 UTC, the gradebook's DUE
    head = MOODLE_HEAD[:8] + ["Due date"] + MOODLE_HEAD[8:]
    rows, marks, expect = [head], {}, {}
    for i in range(n):
        student = str(3000 + i)
        own_due = due + timedelta(hours=24) if i == 1 else due              # the user override
        status = "Submitted for grading"
        if i == 4:
            status += "\nExtension granted until: " + (due + timedelta(hours=12)).strftime(lms.MOODLE_TIME)
        hours = {1: 20, 2: 2.5, 3: 40, 4: 10, 5: 0.25}.get(i, -3)
        when = due + timedelta(hours=hours)
        rows.append([f"Participant {student}", f"Student {i}", f"{student}@example.org", status, "", "30.00", "Yes",
                     when.strftime(lms.MOODLE_TIME), own_due.strftime(lms.MOODLE_TIME), "-", ""])
        marks[student] = ((i * 5) % 21, (i * 4) % 11)
        raw = sum(marks[student])
        late_h = 0 if i in (1, 4) else max(0.0, hours)
        expect[student] = raw - min(raw, math.ceil(late_h))
    text = "".join(",".join('"' + c.replace('"', '""') + '"' for c in row) + "\n" for row in rows)
    return text, marks, expect


VALID = [o for o in ORDERS if o.index("autograde") < o.index("hand")]   # the formgrader needs a graded submission


@pytest.mark.parametrize("order", VALID, ids=["-".join(o) for o in VALID])
def test_moodle_class_with_a_user_override_every_order(tmp_path, order):
    """Issue 49: a participant with a user override (Moodle's "Due date" column) and one with an extension
    are on time; the others' penalties are the docs' plugin on the final total; lms-times before, between
    or after autograding and hand grading. Then a participant hands in again and the new download is
    graded before a fresh worksheet is read: their old time is not restored, no grade of theirs goes out."""
    check_moodle_replay(tmp_path, order)


def check_moodle_replay(tmp_path, order):
    text, marks, expect = moodle_class()
    sheet = tmp_path / "grading_worksheet.csv"
    sheet.write_text(text, encoding="utf-8")
    gradebook(tmp_path, {})
    _download(tmp_path, 1, dict.fromkeys(expect, 1))
    for step in order:
        if step == "lms-times":
            done = lms.write_times(str(tmp_path), ASSIGNMENT, lms.read_lms(str(sheet), "Europe/Berlin"))
            assert len(done["written"]) == len(expect) and not done["not listed"]
        elif step == "autograde":
            _stamped_autograde(tmp_path, marks, PER_HOUR)
        else:
            _hand_grades(tmp_path, marks)
    done = lms.moodle_grades(str(tmp_path), ASSIGNMENT, str(sheet), str(tmp_path / "moodle_grades.csv"))
    assert len(done["filled"]) == len(expect)
    with open(tmp_path / "moodle_grades.csv", newline="", encoding="utf-8") as f:
        got = {r["Identifier"].split()[1]: float(r["Grade"]) for r in csv.DictReader(f)}
    assert got == expect
    assert {s: _feedback_score(tmp_path, s) for s in ("3001", "3002", "3003", "3004")} == \
        {s: expect[s] for s in ("3001", "3002", "3003", "3004")}
    _download(tmp_path, 2, {"3006": 2})                            # handed in again, after the due date
    _stamped_autograde(tmp_path, marks, PER_HOUR)
    assert {r["student"]: r["time"] for r in lms.score_rows(str(tmp_path), ASSIGNMENT)}["3006"] == "stale"
    done = lms.moodle_grades(str(tmp_path), ASSIGNMENT, str(sheet), str(tmp_path / "moodle_grades.csv"))
    assert done["no LMS time"] == ["3006"] and len(done["filled"]) == len(expect) - 1


# ------------------------------------------------------------------ the replays catch a planted defect

def _plant_extensions_ignored(monkeypatch):
    """The LMS's own due date and lateness dropped: the time against the assignment's due date only."""
    monkeypatch.setattr(lms.Handed, "late_by", lambda self: 0.0 if self.excused else None)


def _plant_penalty_before_hand_grades(monkeypatch):
    """nbgrader's own behaviour: the penalty autograde fixed (from the autograded points) is never settled."""
    from course_grader import late

    real = late.settle

    def settle(gb, root, assignment, assign, students=None):
        fixed = {nb.id: nb.late_submission_penalty for sub in gb.assignment_submissions(assignment)
                 for nb in sub.notebooks}
        status = real(gb, root, assignment, assign, students)
        for sub in gb.assignment_submissions(assignment):
            for nb in sub.notebooks:
                nb.late_submission_penalty = fixed[nb.id]
        gb.db.commit()
        return status
    monkeypatch.setattr(late, "settle", settle)


def _plant_stale_time_restored(monkeypatch):
    """A kept time restored and used whatever notebook is now in submitted/ (no digest compared)."""
    from course_grader import late

    def any_notebook(root, assignment, student, kept):
        return kept.get(student)
    monkeypatch.setattr(lms, "time_for", any_notebook)
    monkeypatch.setattr(late, "time_for", any_notebook)


def _plant_first_page_only(monkeypatch):
    """Only the first page of Canvas's list read."""
    real = lms.read_lms
    monkeypatch.setattr(lms, "read_lms", lambda paths, tz="UTC": real(paths if isinstance(paths, str) else paths[:1],
                                                                      tz))


PLANTS = {"extensions ignored": _plant_extensions_ignored,
          "penalty before hand grades": _plant_penalty_before_hand_grades,
          "stale time restored": _plant_stale_time_restored,
          "first page only": _plant_first_page_only}
ORDER_FOR = {"stale time restored": FORGOT, "penalty before hand grades": HAND_LATER}


@pytest.mark.parametrize("plant", PLANTS)
def test_the_canvas_replay_catches_a_planted_defect(tmp_path, canvas_round_one, monkeypatch, plant):
    """Each defect of issue 49, planted in the second round: the replay must fail (one order each, the one
    where the defect shows: the documented order; lms-times forgotten for a stale time; no hand grade
    before the second autograde for a penalty fixed then)."""
    PLANTS[plant](monkeypatch)
    with pytest.raises(AssertionError):
        check_canvas_replay(tmp_path, canvas_round_one, ORDER_FOR.get(plant, DOCUMENTED))


@pytest.mark.parametrize("plant", [p for p in PLANTS if p != "first page only"])   # a worksheet has no pages
def test_the_moodle_replay_catches_a_planted_defect(tmp_path, monkeypatch, plant):
    PLANTS[plant](monkeypatch)
    with pytest.raises(AssertionError):
        check_moodle_replay(tmp_path, DOCUMENTED)


# ------------------------------------------------------------------ a TA without a hub: a sheet out, grades in

def test_a_ta_grades_from_a_sheet_without_reaching_the_gradebook(tmp_path):
    """Issue 49 item 7: the TA gets the answers to their questions as a CSV file (formulas made inert),
    fills in scores and comments, and the instructor reads them back; a score out of range, an unknown
    question or an answer changed since the sheet are refused and named, an empty score left pending."""
    import nbformat
    from nbformat.v4 import new_markdown_cell, new_notebook

    from course_grader import handgrades

    gradebook(tmp_path, {"1001": (20, None), "1002": (16, None), "1003": (12, None)})
    for student, answer in (("1001", "The weights sum to one."), ("1002", "=HYPERLINK(\"http://x\")"),
                            ("1003", "Because of the mask.")):
        folder = tmp_path / "autograded" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        cell = new_markdown_cell(answer, metadata={"nbgrader": {"grade": True, "solution": True,
                                                                "grade_id": "answer_reverser", "points": 10}})
        nbformat.write(new_notebook(cells=[cell]), folder / "encoder_from_scratch.ipynb")
    sheet = tmp_path / "ta1.csv"
    assert handgrades.make_sheet(str(tmp_path), ASSIGNMENT, ["answer_reverser"], str(sheet)) == 3
    with pytest.raises(ValueError, match="not a written answer"):
        handgrades.make_sheet(str(tmp_path), ASSIGNMENT, ["test_encoder"], str(tmp_path / "x.csv"))
    with open(sheet, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows[1]["answer"] == "'=HYPERLINK(\"http://x\")"          # a spreadsheet shows it, never runs it
    assert [r["points"] for r in rows] == ["10", "10", "10"]
    rows[0].update(score="7", comment="Right, but say why.")
    rows[1].update(score="11")                                      # more than the question's points
    rows.append(dict(rows[2], question="answer_transpose", score="3"))
    with open(sheet, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=handgrades.HEAD)
        w.writeheader()
        w.writerows(rows)
    (tmp_path / "autograded/1003" / ASSIGNMENT / "encoder_from_scratch.ipynb").write_text(
        (tmp_path / "autograded/1003" / ASSIGNMENT / "encoder_from_scratch.ipynb").read_text()
        .replace("mask", "padding mask"))                           # handed in again and graded since
    done = handgrades.read_sheet(str(tmp_path), ASSIGNMENT, str(sheet))
    assert done["graded"] == ["1001/answer_reverser"] and done["left pending"] == []
    assert [r.split(" ")[0] for r in done["refused"]] == ["1002/answer_reverser", "1003/answer_reverser",
                                                          "1003/answer_transpose"]
    rows = {r["student"]: r for r in lms.score_rows(str(tmp_path), ASSIGNMENT)}
    assert (rows["1001"]["by hand"], rows["1001"]["pending"], rows["1002"]["pending"]) == (7, 0, 1)
