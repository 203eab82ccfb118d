"""Issue 49, item 10 and the TA route: every step names an upload that was not graded for what it was (a
``.py`` handed in, an invalid notebook), never "no folder" or "no submission"; the class report lists
them; the class list comes from Canvas's gradebook export; a TA's sheet carries nothing but the answers
to their questions, and reading it back changes nothing but their scores and comments."""

from __future__ import annotations

import csv
import json
import os
import re
import zipfile
from pathlib import Path

from course_grader import handgrades, lms, lms_in, report, uploads
from test_lms import ASSIGNMENT, gradebook

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "encoder_from_scratch"
GOOD = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _canvas_download(root: Path) -> None:
    """Canvas's download of five students: 1001 and 1004 a notebook, 1002 a .py, 1003 a notebook that is
    not JSON, 1005 nothing."""
    (root / "source" / ASSIGNMENT).mkdir(parents=True)
    (root / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_text(GOOD)
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as z:
        z.writestr(f"lovelaceada_1001_51_{NOTEBOOK}.ipynb", GOOD)
        z.writestr(f"babbagebob_1002_52_{NOTEBOOK}.py", "def f(): pass\n")
        z.writestr(f"hoppereve_LATE_1003_53_{NOTEBOOK}.ipynb", "{not json")
        z.writestr(f"curiemarie_1004_54_{NOTEBOOK}.ipynb", GOOD)


def _submissions(path: Path) -> Path:
    files = {1001: f"{NOTEBOOK}.ipynb", 1002: f"{NOTEBOOK}.py", 1003: f"{NOTEBOOK}.ipynb", 1004: f"{NOTEBOOK}.ipynb"}
    rows = [{"user_id": u, "submitted_at": "2026-12-04T20:00:00Z", "cached_due_date": "2026-12-04T23:59:00Z",
             "late": False, "seconds_late": 0, "attachments": [{"id": 50 + u - 1000, "display_name": name}]}
            for u, name in files.items()]
    rows.append({"user_id": 1005, "submitted_at": None, "workflow_state": "unsubmitted", "attachments": []})
    path.write_text(json.dumps(rows))
    return path


def command(main, argv, root, monkeypatch, capsys):
    """A command of the grader run in this process (its own ``main``, from the course root): (exit code,
    what it printed)."""
    monkeypatch.chdir(root)
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().out


def test_an_upload_not_graded_is_named_for_what_it_was_in_every_step(tmp_path, monkeypatch, capsys):
    """A .py is "handed in a .py, not the notebook" (lms-collect, lms-times), a notebook refused at the
    gate or by autograde is an "invalid notebook" (lms-times, canvas-grades), never "no folder" or "no
    submission"; the class report lists each, with the reason, in its page and uploads.csv."""
    _canvas_download(tmp_path)
    code, said = command(lms_in.main, [ASSIGNMENT, "--lms", "canvas"], tmp_path, monkeypatch, capsys)
    assert code == 0
    assert "1002: handed in a .py, not the notebook: 'encoder_from_scratch.py' left out" in said
    assert "1003: 'encoder_from_scratch.ipynb' refused: " in said
    kept = uploads.read(str(tmp_path), ASSIGNMENT)
    assert os.stat(tmp_path / f"uploads_{ASSIGNMENT}.json").st_mode & 0o777 == 0o600      # whatever the umask
    assert [k for k, _ in kept["1002"]] == ["not the notebook"] and [k for k, _ in kept["1003"]] == ["invalid notebook"]
    gradebook(tmp_path, {"1001": (20, 9)})                          # 1004's notebook: refused by autograde
    with open(tmp_path / f"verdicts_{ASSIGNMENT}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "notebook", "status", "passed", "parts", "failed", "guard_tampered", "why"])
        w.writerow(["1004", NOTEBOOK, "invalid", "0", "0", "", "", "a grade cell whose metadata is not nbgrader's"])

    code, said = command(lms.main, ["lms-times", ASSIGNMENT, str(_submissions(tmp_path / "submissions_1.json"))],
                         tmp_path, monkeypatch, capsys)
    assert code == 0
    assert "not the notebook: 1 ('1002')" in said and "invalid notebook: 1 ('1003')" in said
    assert "'1002': handed in a .py, not the notebook" in said and "no folder: 1 ('1005')" in said
    record = (tmp_path / f"uploads_{ASSIGNMENT}.json").read_bytes()
    (tmp_path / f"uploads_{ASSIGNMENT}.json").unlink()                # zip_collect's route keeps no record:
    done = lms.write_times(str(tmp_path), ASSIGNMENT, lms.read_lms(str(tmp_path / "submissions_1.json")))
    assert done["not the notebook"] == ["1002"]                      # Canvas's attachment names say it
    assert uploads.missing(str(tmp_path), ASSIGNMENT, "1002", ("encoder_from_scratch.py",))[1] == \
        "handed in a .py (encoder_from_scratch.py), not the notebook"
    (tmp_path / f"uploads_{ASSIGNMENT}.json").write_bytes(record)

    export = tmp_path / "canvas_gradebook.csv"
    export.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Exercise 07 (4321)\n"
                      "    Points Possible,,,,,30.00\n" + "".join(f"S{u},{u},,,T,\n" for u in range(1001, 1006)))
    code, said = command(lms.main, ["canvas-grades", ASSIGNMENT, str(export), "--out", "canvas_grades.csv"],
                         tmp_path, monkeypatch, capsys)
    assert code == 0
    assert "filled: 1 ('1001')" in said
    assert "invalid notebook: 2 ('1003', '1004')" in said and "not the notebook: 1 ('1002')" in said
    assert "no submission: 1 ('1005')" in said
    assert "'1004': not graded: encoder_from_scratch.ipynb: a grade cell whose metadata" in said

    graded = [report.Student("1001")]                 # the page's other sections need a graded class: none here
    data = {"assignment": ASSIGNMENT, "students": graded, "parts": [], "mistakes": [], "disagreements": [],
            "hints": [], "written": [], "answers": [], "pairs": [], "library": [], "groups": [], "copy_note": "",
            "any_mistake_named": False, "any_hints": False, "any_kind": False,
            "uploads": report.upload_table(tmp_path, ASSIGNMENT, graded)}
    html = report.render(data)
    report.write_csvs(tmp_path, data)
    assert 'id="uploads"' in html
    rows = {(r["student"], r["kind"], r["graded"]) for r in csv.DictReader(open(tmp_path / "uploads.csv"))}
    assert rows == {("1002", "not the notebook", "no"), ("1003", "invalid notebook", "no"),
                    ("1004", "invalid notebook", "no")}
    for student in ("1002", "1003", "1004"):
        assert f'data-student="{student}"' in html


# Canvas's gradebook export as it writes it: its own header (Integration ID, the score columns), the Manual
# Posting and Points Possible rows, a student in two sections, one whose login is no address, the Test Student
CANVAS_EXPORT = "\ufeff" + "\n".join([
    "Student,ID,SIS User ID,SIS Login ID,Integration ID,Section,Exercise 07 (4321),Current Points,Final Points,"
    "Current Score,Unposted Current Score,Final Score,Unposted Final Score",
    "    Manual Posting,,,,,,Manual Posting,,,,,,",
    "    Points Possible,,,,,,30.00,(read only),(read only),(read only),(read only),(read only),(read only)",
    '"Lovelace, Ada",1001,s1001,ada@example.org,,"Transformers 2026, Lab A",,0.00,0.00,,,0.00,0.00',
    '"Babbage, Bob",1002,s1002,bbabbage,,Transformers 2026,,0.00,0.00,,,0.00,0.00',
    '"Hopper, Grace Brewster",1003,,grace@example.org,,Transformers 2026,,0.00,0.00,,,0.00,0.00',
    '"Student, Test",1099,,4f1c2e9ab07d,,Transformers 2026,,0.00,0.00,,,0.00,0.00',
]) + "\n"


def test_the_class_list_from_canvas_gradebook_export(tmp_path, monkeypatch, capsys):
    """roster-from-canvas: nbgrader's class list, one row per student (Canvas's user id as the id), the
    rows Canvas adds and its Test Student left out; nbgrader imports it, and canvas-grades then matches
    the same ids."""
    export = tmp_path / "canvas_gradebook.csv"
    export.write_text(CANVAS_EXPORT, encoding="utf-8")
    code, said = command(lms.main, ["roster-from-canvas", str(export), "--out", "students.csv"], tmp_path,
                         monkeypatch, capsys)
    assert code == 0
    assert "students: 3 ('1001', '1002', '1003')" in said and "test student: 1 ('1099')" in said
    with open(tmp_path / "students.csv", newline="") as f:
        got = list(csv.reader(f))
    assert got == [["id", "first_name", "last_name", "email", "lms_user_id"],
                   ["1001", "Ada", "Lovelace", "ada@example.org", "1001"],
                   ["1002", "Bob", "Babbage", "", "1002"],
                   ["1003", "Grace Brewster", "Hopper", "grace@example.org", "1003"]]
    from nbgrader.api import Gradebook
    from nbgrader.apps.dbapp import DbStudentImportApp  # `nbgrader db student import students.csv`

    gradebook(tmp_path, {})                      # nbgrader's migrations made once for the module, then copied
    app = DbStudentImportApp()
    app.initialize(["students.csv", f"--CourseDirectory.root={tmp_path}"])
    app.start()
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        assert sorted((s.id, s.first_name, s.last_name, s.email) for s in gb.students) == [
            ("1001", "Ada", "Lovelace", "ada@example.org"), ("1002", "Bob", "Babbage", None),
            ("1003", "Grace Brewster", "Hopper", "grace@example.org")]
    assert command(lms.main, ["roster-from-canvas", str(export), "--out", str(export)], tmp_path, monkeypatch,
                   capsys)[0] == 2


# ------------------------------------------------------------------ what a TA without an account can and cannot do

def test_a_ta_sheet_holds_the_answers_to_their_questions_and_nothing_else(tmp_path):
    """The TA's sheet is made from the autograded notebook, which holds every hidden test with its seed, the
    students' code and the other answers: the sheet carries none of it, only the answers to the questions
    named. Read back, a row changes one score and comment: raising the points, moving a grade to another
    student or grading a question not on the sheet is refused."""
    from nbgrader.api import Gradebook

    from course_lib.grading.seeds import hidden_seeds

    source = json.loads((REPO / "notebooks" / "07_exercise" / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    seeds = hidden_seeds(source)
    answers = [c["metadata"]["nbgrader"]["grade_id"] for c in source["cells"]
               if c["cell_type"] == "markdown" and c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    assert len(seeds) == 8 and len(answers) == 5 and answers[-1] == "answer_reverser"
    gradebook(tmp_path, {})
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        for q in answers[:-1]:                                      # the last, answer_reverser, is there
            gb.add_grade_cell(q, NOTEBOOK, ASSIGNMENT, max_score=2, cell_type="markdown")
        for student in ("1001", "1002"):
            gb.add_student(student)
            gb.add_submission(ASSIGNMENT, student)
        for student in ("1001", "1002"):
            folder = tmp_path / "autograded" / student / ASSIGNMENT
            folder.mkdir(parents=True)
            nb = json.loads(json.dumps(source))
            for cell in nb["cells"]:
                q = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                if cell["cell_type"] == "markdown" and q in answers:
                    cell["source"] = f"{student} says {q}."
            (folder / f"{NOTEBOOK}.ipynb").write_text(json.dumps(nb))
    sheet = tmp_path / "ta1.csv"
    assert handgrades.make_sheet(str(tmp_path), ASSIGNMENT, answers[:2], str(sheet)) == 4
    text = sheet.read_text(encoding="utf-8")
    for part, seed in seeds.items():
        assert str(seed) not in text and f"{seed:x}" not in text.lower(), part
    assert not re.search(r"hidden_seed|BEGIN (HIDDEN TESTS|SOLUTION)|def |import |torch", text)
    for q in answers[2:]:
        assert q not in text                                        # other TAs' questions, not even named
    with open(sheet, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["student"], r["question"], r["answer"]) for r in rows] == [
        (s, q, f"{s} says {q}.") for s in ("1001", "1002") for q in answers[:2]]
    rows[0].update(score="2")
    rows[1].update(points="100", score="50")                       # points are the gradebook's, not the sheet's
    rows[2].update(student="1001", score="2")                      # 1002's answer, moved to 1001: not 1001's
    rows[3].update(question=answers[4], score="2")                 # a question not on the sheet
    with open(sheet, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=handgrades.HEAD)
        w.writeheader()
        w.writerows(rows)
    done = handgrades.read_sheet(str(tmp_path), ASSIGNMENT, str(sheet))
    assert done["graded"] == [f"1001/{answers[0]}"] and len(done["refused"]) == 3
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        given = {(g.notebook.assignment.student.id, g.cell.name): g.manual_score
                 for s in gb.assignment_submissions(ASSIGNMENT) for g in s.notebooks[0].grades if g.manual_score}
    assert given == {("1001", answers[0]): 2}
