"""The LMS round trip (course_grader.lms): submission times from Moodle's grading worksheet and from
Canvas's submissions list into timestamp.txt, the score table, feedback packed for Moodle's upload."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import zipfile
from datetime import UTC, datetime

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
    assert proc.returncode == 0, proc.stderr
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
                                                   "max", "pending"]
    assert proc.stdout.splitlines()[1].split() == ["ada", "3", "2", "5", "0", "5", "5", "0"]


# ------------------------------------------------------------------ grades back, in each LMS's own format

def gradebook(root, marks, late=None, maxima=(20, 10)):
    """A gradebook with one autograded cell (20 points) and one written answer (10 points), the way
    autograde and the formgrader leave it: ``marks`` is {student: (auto, manual or None)}, ``late``
    {student: penalty}, ``maxima`` the two cells' points."""
    from nbgrader.api import Gradebook

    late = late or {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.add_assignment(ASSIGNMENT)
        gb.add_notebook("encoder_from_scratch", ASSIGNMENT)
        gb.add_grade_cell("test_encoder", "encoder_from_scratch", ASSIGNMENT, max_score=maxima[0], cell_type="code")
        gb.add_grade_cell("answer_reverser", "encoder_from_scratch", ASSIGNMENT, max_score=maxima[1],
                          cell_type="markdown")
        for student, (auto, manual) in marks.items():
            gb.add_student(student)
            sub = gb.add_submission(ASSIGNMENT, student)
            tested = gb.find_grade("test_encoder", "encoder_from_scratch", ASSIGNMENT, student)
            tested.auto_score, tested.needs_manual_grade = auto, False
            written = gb.find_grade("answer_reverser", "encoder_from_scratch", ASSIGNMENT, student)
            written.manual_score, written.needs_manual_grade = manual, manual is None
            sub.notebooks[0].late_submission_penalty = late.get(student, 0)
        gb.db.commit()


def test_scores_are_after_the_late_penalty_as_the_export_gives_them(tmp_path):
    """Issue 43 item 3: ``scores`` showed 23 where the export and the feedback said 21."""
    gradebook(tmp_path, {"1001": (16, 7), "1002": (1, 0)}, late={"1001": 2, "1002": 5})
    rows = {r["student"]: r for r in lms.score_rows(str(tmp_path), ASSIGNMENT)}
    assert (rows["1001"]["raw"], rows["1001"]["penalty"], rows["1001"]["score"]) == (23, 2, 21)
    assert rows["1002"]["score"] == 0                               # never below zero, as nbgrader export
    assert run(["scores", ASSIGNMENT], tmp_path).stdout.splitlines()[1].split() == \
        ["1001", "16", "7", "23", "2", "21", "30", "0"]
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


def documented_canvas_pattern() -> str:
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "instructors.md").read_text(encoding="utf-8")
    found = [p for p in re.findall(r"--FileNameCollectorPlugin\.named_regexp='([^']+)'", text) if "LATE" in p]
    assert len(found) == 1, "docs/instructors.md: one zip_collect pattern for Canvas"
    return found[0]


def test_the_documented_canvas_pattern_takes_canvas_names_and_no_claims():
    from nbgrader.plugins import FileNameCollectorPlugin
    plugin = FileNameCollectorPlugin(named_regexp=documented_canvas_pattern())

    def collect(name):
        got = plugin.collect("/course/downloaded/07_exercise/extracted/" + name)
        return None if got is None else (got["student_id"], got["file_id"])
    assert collect("lovelaceada_1001_555001_encoder_from_scratch.ipynb") == ("1001", "encoder_from_scratch")
    assert collect("babbagebob_LATE_1002_555002_encoder_from_scratch-1.ipynb") == ("1002", "encoder_from_scratch")
    for claim in ("hopper_eve_1003_555003_x_1001_555001_encoder_from_scratch.ipynb",   # a file named to claim 1001
                  "hoppereve_1003_555003_1001_555001_encoder_from_scratch.ipynb",
                  "hoppereve_1003_555003_gradebook.ipynb",
                  "hoppereve_1003_555003_encoder_from_scratch.ipynb.ipynb"):
        assert collect(claim) is None or collect(claim)[0] == "1003", claim


def test_canvas_round_trip_download_in_gradebook_import_out(tmp_path):
    """Issue 43 item 7: Canvas's submissions download collected with the documented pattern, then the
    gradebook export filled in as Canvas's import reads it: the student columns, the exercise's column,
    the Points Possible row, rows matched by ID."""
    release = tmp_path / "release" / ASSIGNMENT
    release.mkdir(parents=True)
    (release / "encoder_from_scratch.ipynb").write_text("{}")
    archive = tmp_path / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    canvas_zip(archive / "submissions.zip", ["lovelaceada_1001_555001_encoder_from_scratch.ipynb",
                                              "babbagebob_LATE_1002_555002_encoder_from_scratch-1.ipynb"])
    env = dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")
    collected = subprocess.run(
        [sys.executable, "-m", "nbgrader", "zip_collect", ASSIGNMENT,
         f"--FileNameCollectorPlugin.named_regexp={documented_canvas_pattern()}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
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
    assert "filled: 2 ('1001', '1002')" in proc.stdout and "no submission: 2 ('1003', '1099')" in proc.stdout
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
