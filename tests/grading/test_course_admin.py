"""What docs/customising.md and docs/rubric.md tell an instructor to run, run: a class list imported
with names and e-mails, a due date, a late-submission penalty applied by the sandboxed grader, the
written answers graded by hand before the feedback and the export, and the export an LMS upload is
made from. In a temporary course directory (a copy of notebooks/07_exercise and
nbgrader_config.py), as tests/grading/test_exercise_roundtrip.py does."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"
BIN = Path(sys.executable).parent
AUTOGRADED_POINTS = 20
WRITTEN = ("answer_scores_shape", "answer_finite_min", "answer_transpose", "answer_parameters", "answer_reverser")

pytestmark = pytest.mark.slow

DOCS = REPO / "docs" / "customising.md"


def docs_block(after: str, language: str) -> str:
    """The first ```language block of docs/customising.md after the text ``after``."""
    text = DOCS.read_text()
    start = text.index(f"```{language}\n", text.index(after)) + len(language) + 4
    return text[start:text.index("```", start)]


# docs/customising.md, "Due dates and late penalties": one point per started hour late
LATE_PLUGIN = docs_block("Anything else is a small plugin", "python")

CLASS_LIST = docs_block("Import the list from a CSV file", "text")          # Ada 1001 and Bob 1002


def _run(args, cwd):
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")   # nbgrader runs alembic
    env.pop("JUPYTER_CONFIG_DIR", None)
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc


def test_class_list_due_date_late_penalty_and_export(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(REPO / "notebooks" / ASSIGNMENT, root / "notebooks" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    config = (REPO / "nbgrader_config.py").read_text() + LATE_PLUGIN
    (root / "nbgrader_config.py").write_text(config)
    (root / "students.csv").write_text(CLASS_LIST)
    nbgrader = str(BIN / "nbgrader")

    _run([nbgrader, "db", "student", "import", "students.csv"], cwd=root)
    _run([nbgrader, "generate_assignment", ASSIGNMENT], cwd=root)
    _run([nbgrader, "db", "assignment", "add", ASSIGNMENT, "--duedate=2026-01-15 12:00:00 UTC"], cwd=root)
    for student, stamp in (("1001", "2026-01-15 11:59:00.000000 UTC"),      # on time
                           ("1002", "2026-01-15 14:30:00.000000 UTC")):     # 2.5 hours late: 3 points
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        shutil.copy(root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", folder / f"{NOTEBOOK}.ipynb")
        (folder / "timestamp.txt").write_text(stamp)
    _run([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--jobs", "2", "--allow-public-seeds"],
         cwd=root)

    # docs/rubric.md: which submissions still wait for a hand grade (the written answers), then the
    # grades the formgrader would save (2 of 2 on each answer here), before feedback and export
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        assert sorted(s.student.id for s in gb.assignment_submissions(ASSIGNMENT) if s.needs_manual_grade) == [
            "1001", "1002"]
        for student in ("1001", "1002"):
            for answer in WRITTEN:
                grade = gb.find_grade(answer, NOTEBOOK, ASSIGNMENT, student)
                grade.manual_score, grade.needs_manual_grade = 2.0, False
        gb.db.commit()
        assert not any(s.needs_manual_grade for s in gb.assignment_submissions(ASSIGNMENT))
    _run([nbgrader, "generate_feedback", ASSIGNMENT], cwd=root)
    page = (root / "feedback" / "1002" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    assert '<a href="#answer_finite_min">Question 9.2</a> (Score: 2.0 / 2.0)' in page
    assert "Late submission penalty (Score: -3.0)" in page
    _run([nbgrader, "export", "--to", "grades.csv"], cwd=root)

    rows = {row["student_id"]: row for row in csv.DictReader((root / "grades.csv").open())}
    ada, bob = rows["1001"], rows["1002"]
    assert (ada["first_name"], ada["last_name"], ada["email"]) == ("Ada", "Lovelace", "ada@example.org")
    assert ada["duedate"].startswith("2026-01-15 12:00:00")
    assert float(ada["raw_score"]) == float(ada["score"]) == AUTOGRADED_POINTS + 10 == float(ada["max_score"])
    assert float(ada["late_submission_penalty"]) == 0
    assert float(bob["raw_score"]) == AUTOGRADED_POINTS + 10 and float(bob["late_submission_penalty"]) == 3
    assert float(bob["score"]) == AUTOGRADED_POINTS + 10 - 3

    # docs/customising.md, "Grades back to the LMS": the upload file, matched by e-mail
    _run(["bash", "-c", docs_block("This writes a two-column file", "bash")], cwd=root)
    upload = list(csv.reader((root / "lms_upload.csv").open()))
    assert upload[0] == ["Email address", "Exercise 07"]
    assert sorted(upload[1:]) == [["ada@example.org", ada["score"]], ["bob@example.org", bob["score"]]]


def test_the_formgraders_plain_autograde_and_collect_name_the_sandboxed_commands():
    """Issue 41 item 8: loading the course's nbgrader_config.py (as the formgrader's server does) turns
    the formgrader's per-submission Autograde and its Collect into a refusal that names the command to
    run, instead of plain nbgrader with the grading account's rights."""
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader
    PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    answer = NbGraderAPI.autograde(None, ASSIGNMENT, "alice")
    assert answer["success"] is False and "python -m course_grader autograde" in answer["error"]
    answer = NbGraderAPI.collect(None, ASSIGNMENT)
    assert answer["success"] is False and "python -m course_grader collect" in answer["error"]


def test_nbgraders_own_collect_commands_go_through_the_course_s_gates(tmp_path, monkeypatch):
    """Issue 48 item 2, one route in: with the course's nbgrader_config.py, ``nbgrader collect`` is the
    server-side collect (course_grader.collect.ServerCollect), and ``nbgrader zip_collect`` names
    ``lms-collect`` and exits 1 before it unpacks anything (it would unpack an archive a student uploaded
    and hand a file named as another participant's to them)."""
    from nbgrader.apps.zipcollectapp import ZipCollectApp
    from nbgrader.exchange import ExchangeFactory
    from traitlets.config.loader import PyFileConfigLoader

    from course_grader.collect import ServerCollect
    from course_grader.lms_in import ZIP_COLLECT_OFF
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    assert ExchangeFactory(config=config).collect is ServerCollect
    monkeypatch.chdir(tmp_path)
    app = ZipCollectApp(config=config)
    said = []
    monkeypatch.setattr(app.log, "error", lambda text, *args: said.append(text % args if args else text))
    with pytest.raises(SystemExit) as stop:
        app.start()
    assert stop.value.code == 1 and said == [ZIP_COLLECT_OFF]
    assert os.listdir(tmp_path) == []
