"""The class grader's workers: a student whose grading overruns or whose worker dies gets a grader error
(every part 0, the run would exit 1); the others are graded by fresh workers and zygotes; nothing is
left running."""

from __future__ import annotations

import os
import time

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from attack_kit import GOOD, SOURCE, running
from course_grader import sandbox
from course_grader.pool import ClassGrader
from course_lib.grading.seeds import hidden_seeds

SOURCE_NB = nbformat.read(SOURCE, as_version=4)


def _submit(root, student: str, source: str) -> tuple:
    cell = new_code_cell(source, metadata={"nbgrader": {"grade_id": "attention", "solution": True, "grade": False,
                                                        "locked": False, "schema_version": 3}})
    folder = root / student / "07_exercise"
    folder.mkdir(parents=True)
    nbformat.write(new_notebook(cells=[cell]), folder / "nb.ipynb")
    return student, "nb", str(folder / "nb.ipynb")


def test_an_overrun_or_a_dead_worker_costs_only_its_student(tmp_path):
    root = tmp_path / "submitted"
    jobs = [_submit(root, "ok1", GOOD["attention"]),
            _submit(root, "loops", GOOD["attention"] + "\nwhile True:\n    pass\n"),   # past student_timeout
            _submit(root, "boom", GOOD["attention"]),                                # its recording raises
            _submit(root, "ok2", GOOD["attention"]),
            _submit(root, "ok3", GOOD["attention"])]
    recorded = []

    def record(student, results):
        if student == "boom":
            raise RuntimeError("the gradebook is gone")
        recorded.append(student)                           # in the worker's memory: not seen here

    class Log:
        def __init__(self):
            self.lines = []

        def warning(self, msg, *args):
            self.lines.append(msg % args)
        error = warning

    log = Log()
    # student_timeout 10 s: an honest student takes well under one here, but took over 2 s (the old limit)
    # on a machine with a load of 8, and lost the part as an overrun
    grader = ClassGrader(sandbox.detect_level(), sandbox.SandboxOptions(timeout=60.0), jobs=2, student_timeout=10.0)
    try:
        grader.prepare(hidden_seeds(SOURCE_NB))
        results, invalid = grader.grade(jobs, str(root), log=log, record=record)
    finally:
        grader.close()
    assert invalid == {}
    for student in ("ok1", "ok2", "ok3"):
        assert results[(student, "nb")]["attention"]["status"] == "passed", results[(student, "nb")]["attention"]
        assert results[(student, "nb")]["encoder"]["status"] == "failed"           # no cell: the student's zero
    for student in ("loops", "boom"):
        assert {v["status"] for v in results[(student, "nb")].values()} == {"error"}, student
    # two workers replaced (the overrun: the part's own 60 s had not come), two students failed
    assert sum("Replacing the grading worker" in line for line in log.lines) == 2, log.lines
    assert sorted(line.split()[1] for line in log.lines if line.startswith("Grading ")) == ["boom/nb", "loops/nb"]
    deadline = time.monotonic() + 15
    while running(sandbox.ZYGOTE, os.getpid()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running(sandbox.ZYGOTE, os.getpid()) == [] and recorded == []


GRADER_WITHOUT_TORCH = """
import sys, nbformat
from course_grader import sandbox
from course_grader.pool import ClassGrader
from course_lib.grading.seeds import hidden_seeds
grader = ClassGrader(sandbox.detect_level(), sandbox.SandboxOptions(), jobs=1)
try:
    info = grader.ready()
    grader.prepare(hidden_seeds(nbformat.read(sys.argv[1], as_version=4)))
    results, _ = grader.grade([("s", "nb", sys.argv[2])], sys.argv[3])
finally:
    grader.close()
print(sorted(v["status"] for v in results[("s", "nb")].values()), "course_lib" in info["modules"],
      bool(info["dumpable"]), "torch" in sys.modules, "course_lib.encoder" in sys.modules)
"""


def test_the_class_graders_process_never_imports_torch(tmp_path):
    """The cases and the reference's answers are made, and outputs judged, by the sandbox's judge: the
    process that holds the class (and the gradebook) imports neither torch nor course_lib's reference,
    and the zygote forked from the judge's interpreter never held course_lib; neither is dumpable (a
    process of the same uid, a part at the rlimits level, cannot read the judge's memory)."""
    import subprocess
    import sys
    student, notebook, path = _submit(tmp_path, "s", GOOD["attention"])
    out = subprocess.run([sys.executable, "-c", GRADER_WITHOUT_TORCH, str(SOURCE), path, str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    statuses, *flags = out.stdout.strip().rsplit(" ", 4)
    assert statuses.count("passed") == 1 and statuses.count("failed") == 7, out.stdout
    assert flags == ["False", "False", "False", "False"], out.stdout
