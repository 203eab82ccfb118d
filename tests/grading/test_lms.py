"""The LMS round trip (course_grader.lms): submission times from Moodle's grading worksheet and from
Canvas's submissions list into timestamp.txt, the score table, feedback packed for Moodle's upload."""

from __future__ import annotations

import csv
import json
import os
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
                        "29.00", "Yes", when, "-", ""])
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
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        gb.add_assignment(ASSIGNMENT)
        gb.add_notebook("encoder_from_scratch", ASSIGNMENT)
        gb.add_grade_cell("test_attention", "encoder_from_scratch", ASSIGNMENT, max_score=3, cell_type="code")
        gb.add_grade_cell("answer_reverser", "encoder_from_scratch", ASSIGNMENT, max_score=2,
                          cell_type="markdown")
        for student in ("ada", "bob"):
            gb.add_student(student)
            gb.add_submission(ASSIGNMENT, student)
        for student, auto, manual in (("ada", 3, 2), ("bob", 1, None)):
            tested = gb.find_grade("test_attention", "encoder_from_scratch", ASSIGNMENT, student)
            tested.auto_score, tested.needs_manual_grade = auto, False
            written = gb.find_grade("answer_reverser", "encoder_from_scratch", ASSIGNMENT, student)
            written.manual_score = manual
            written.needs_manual_grade = manual is None
        gb.db.commit()
    rows = lms.score_rows(str(tmp_path), ASSIGNMENT)
    assert [(r["student"], r["autograded"], r["by hand"], r["score"], r["max"], r["pending"]) for r in rows] == \
        [("ada", 3, 2, 5, 5, 0), ("bob", 1, 0, 1, 5, 1)]
    proc = run(["scores", ASSIGNMENT], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "2 submissions; 1 written answers not graded by hand yet" in proc.stdout
    assert proc.stdout.splitlines()[1].split() == ["ada", "3", "2", "0", "5", "5", "0"]
