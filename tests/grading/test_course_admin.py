"""What docs/customising.md tells an instructor to run, run: a class list imported with names and
e-mails, a due date, a late-submission penalty applied by the sandboxed grader, and the export an LMS
upload is made from. In a temporary course directory (a copy of notebooks/07_exercise and
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
AUTOGRADED_POINTS = 19

pytestmark = pytest.mark.slow

# docs/customising.md, "Due dates and late penalties": one point per started hour late
LATE_PLUGIN = '''
import math

from nbgrader.plugins import LateSubmissionPlugin


class OnePointPerHourLate(LateSubmissionPlugin):
    """One point off per started hour after the due date, never more than the score."""

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        return min(score, math.ceil(total_seconds_late / 3600))


c.AssignLatePenalties.plugin_class = OnePointPerHourLate
'''

CLASS_LIST = """id,first_name,last_name,email
1001,Ada,Lovelace,ada@example.org
1002,Bob,Babbage,bob@example.org
"""


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
    _run([sys.executable, "-m", "course_lib.grading", "autograde", ASSIGNMENT, "--jobs", "2"], cwd=root)
    _run([nbgrader, "export", "--to", "grades.csv"], cwd=root)

    rows = {row["student_id"]: row for row in csv.DictReader((root / "grades.csv").open())}
    ada, bob = rows["1001"], rows["1002"]
    assert (ada["first_name"], ada["last_name"], ada["email"]) == ("Ada", "Lovelace", "ada@example.org")
    assert ada["duedate"].startswith("2026-01-15 12:00:00")
    assert float(ada["raw_score"]) == float(ada["score"]) == AUTOGRADED_POINTS
    assert float(ada["late_submission_penalty"]) == 0
    assert float(bob["raw_score"]) == AUTOGRADED_POINTS and float(bob["late_submission_penalty"]) == 3
    assert float(bob["score"]) == AUTOGRADED_POINTS - 3
