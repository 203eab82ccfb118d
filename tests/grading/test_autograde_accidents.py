"""What an ordinary class does by accident, end to end through the sandboxed ``autograde`` command
(issue 21): an extra notebook, ids nbgrader would mangle, malformed metadata, a hard link. Each is
that submission's problem, said in the log, and never anyone else's."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attack_kit import REPO, released_course

ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"
BIN = Path(sys.executable).parent
ESCAPE = "eve\x1b[2J"


def _run(args, cwd):
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def _submit(root: Path, student: str, nb, name: str = NOTEBOOK) -> Path:
    folder = root / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path) if not isinstance(nb, str) else path.write_text(nb)
    return folder


def _test_cell(nb, name="test_attention") -> dict:
    return next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == name)


def _duplicate(nb) -> None:
    cell = _test_cell(nb)
    nb["cells"].insert(nb["cells"].index(cell), json.loads(json.dumps(cell)))


TERMINAL = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred"
THIRD_ROUND = {
    "gradefalse": lambda nb: _test_cell(nb)["metadata"]["nbgrader"].update(grade=False),
    "lots": lambda nb: _test_cell(nb)["metadata"]["nbgrader"].update(points="lots"),
    "emptymeta": lambda nb: nb["cells"][3]["metadata"].update(nbgrader={}),
    "duplicate": _duplicate,
    "escapes": lambda nb: _test_cell(nb)["metadata"]["nbgrader"].update(grade_id="test_attention" + TERMINAL),
}


def _bonus(nb) -> None:
    """Issue 41 item 5: every test cell worth 1000 points, and an extra grade cell of the student's own; a
    written answer retyped as a raw cell (issue 48)."""
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade") and str(meta.get("grade_id", "")).startswith("test_"):
            meta["points"] = 1000
    written = next(c for c in nb["cells"]
                   if c["cell_type"] == "markdown" and c["metadata"].get("nbgrader", {}).get("solution"))
    written["cell_type"] = "raw"                              # a written answer handed in as a raw cell
    extra = json.loads(json.dumps(_test_cell(nb)))
    extra["metadata"]["nbgrader"].update(grade_id="test_bonus", points=50)
    extra["id"] = "bonus"
    nb["cells"].append(extra)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("accidents") / "course"
    good = released_course(root)
    # "aaron" hands in a second notebook, which sorts first: it must not be taken for the assignment
    _submit(root, "aaron", good)
    _submit(root, "aaron", nbformat.v4.new_notebook(), name="aaa_scratch")
    _submit(root, "carol", good)
    broken = json.loads(nbformat.writes(good))
    broken["cells"][0]["metadata"]["nbgrader"] = None
    _submit(root, "carol ", good)                       # nbgrader would record it as "carol"
    _submit(root, "w[v]*?", good)
    _submit(root, ESCAPE, good)
    _submit(root, "nullmeta", json.dumps(broken))
    secret = root.parent / "root-only.txt"
    secret.write_text("ROOT-ONLY SECRET")
    os.chmod(secret, 0o600)
    folder = _submit(root, "linker", good)
    os.link(secret, folder / "notes.txt")
    for student, edit in THIRD_ROUND.items():                 # metadata nbgrader rejects (issue 30 items 5, 6)
        nb = json.loads(nbformat.writes(good))
        edit(nb)
        _submit(root, student, json.dumps(nb))
    (_submit(root, "badtime", good) / "timestamp.txt").write_text("the 31st of Smarch, late\n")
    bonus = json.loads(nbformat.writes(good))
    _bonus(bonus)
    folder = _submit(root, "bonus", json.dumps(bonus))
    for name in (f"data{TERMINAL}.csv", f"extra{TERMINAL}.ipynb", f"hint{TERMINAL}.json"):   # item 6
        (folder / name).write_text("{}")
    proc = _run([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--jobs", "2", "--allow-public-seeds",
                 "--part-timeout", "10"], root)
    return {"root": root, "proc": proc}


def _scores(root, student):
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        nb = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student)
        return {g.name: (g.auto_score, g.max_score) for g in nb.grades if g.name.startswith("test_")}


def _recorded(root) -> set:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        return {s.student.id for s in gb.find_assignment(ASSIGNMENT).submissions}


def test_one_bad_submission_is_its_own_failure(course):
    proc = course["proc"]
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Could not grade" not in proc.stderr
    assert "nullmeta/encoder_from_scratch is not a valid submission" in proc.stderr
    assert _recorded(course["root"]) == {"aaron", "carol", "bonus"}


def test_points_and_extra_grade_cells_change_nothing(course):
    """Issue 41 item 5: test cells worth 1000 points and an extra grade cell (``test_bonus``) crashed
    nbgrader's OverwriteCells; checked against the released notebook, the submission is graded on the
    released points, the extra cell is ungraded, and the run exits 0. Issue 48: each difference from the
    release (points, a cell's type) is a line of the log naming the student."""
    scores = _scores(course["root"], "bonus")
    assert "test_bonus" not in scores and scores == _scores(course["root"], "carol")
    assert all(a == m and m < 1000 for a, m in scores.values())
    err = course["proc"].stderr
    assert "'bonus': cell" in err and "'test_bonus' is not one of the assignment's" in err
    assert re.search(r"'bonus': cell \d+ \('test_attention'\) claimed 1000 points: graded on the release's \d", err)
    assert re.search(r"'bonus': cell \d+ \('\w+'\) was a 'raw' cell: graded as the release's markdown cell", err)


def test_metadata_nbgrader_rejects_is_that_submission_alone(course):
    """Issue 30 item 6: a test cell with grade false, points "lots", an empty "nbgrader": {}, a duplicated
    test cell, an unparsable timestamp.txt: each is that submission's problem (not valid, not recorded,
    said in the log), checked before nbgrader sees it; the class goes on and the run exits 0."""
    err = course["proc"].stderr
    assert course["proc"].returncode == 0 and "Could not grade" not in err and "Replacing" not in err, err[-3000:]
    for student in (*THIRD_ROUND, "badtime"):
        assert f"{student}/encoder_from_scratch is not a valid submission" in err, student
        assert not (course["root"] / "autograded" / student).exists()
    assert "timestamp.txt is not a time nbgrader can read" in err and "used by two cells" in err
    assert "is not a grade cell" in err


def test_a_grade_id_with_control_codes_never_reaches_the_terminal(course):
    """Issue 30 item 5: a grade_id holding escape sequences (window title, clear screen, colours) is
    refused before nbgrader logs it; the log quotes it with ascii()."""
    err = course["proc"].stderr
    assert "\x1b" not in err and "\x07" not in err and "pwned\x07" not in err
    assert "escapes/encoder_from_scratch is not a valid submission" in err and "not a plain name" in err
    assert "pwned" in err                                    # quoted, escapes as text


def test_an_extra_notebook_does_not_switch_the_hidden_tests_off(course):
    root = course["root"]
    assert "aaa_scratch" in course["proc"].stderr and "not a notebook of the assignment" in course["proc"].stderr
    assert all(a == m for a, m in _scores(root, "aaron").values())
    graded = nbformat.read(root / "autograded" / "aaron" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    said = " ".join(o.get("text", "") for c in graded.cells for o in c.get("outputs", []))
    assert " 0 hidden" not in said and "1 hidden" in said


def test_ids_that_are_not_plain_names_are_refused_and_quoted(course):
    err = course["proc"].stderr
    assert "\x1b" not in err                                      # the escape reaches no terminal
    for student in ("carol ", "w[v]*?", ESCAPE):
        assert f"the student id {ascii(student)} is not a plain name" in err
    assert all(a == m for a, m in _scores(course["root"], "carol").values())   # carol keeps her marks


def test_a_hard_link_is_not_handed_to_the_instructor(course):
    root = course["root"]
    assert "linker/encoder_from_scratch is not a valid submission" in course["proc"].stderr
    assert "hard link" in course["proc"].stderr
    assert not (root / "autograded" / "linker").exists()
    assert not any("ROOT-ONLY" in p.read_text(errors="replace") for p in (root / "autograded").rglob("*.txt"))


def test_no_checksum_false_alarms(course):
    assert "Attribute 'checksum'" not in course["proc"].stderr


def test_a_part_without_hidden_tests_stops_the_run(tmp_path):
    """A gradebook and source whose hidden blocks are gone: the run refuses, loudly, unless told."""
    root = tmp_path / "course"
    shutil.copytree(REPO / "notebooks" / ASSIGNMENT, root / "notebooks" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    path = root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if "BEGIN HIDDEN TESTS" in cell.source and "test_attention" in json.dumps(cell.metadata):
            head, _, rest = cell.source.partition("### BEGIN HIDDEN TESTS")
            cell.source = head + rest.partition("### END HIDDEN TESTS")[2]
    nbformat.write(nb, path)
    assert _run([str(BIN / "nbgrader"), "generate_assignment", ASSIGNMENT], root).returncode == 0
    _submit(root, "alice", nbformat.read(root / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4))
    proc = _run([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--jobs", "1",
                 "--allow-public-seeds"], root)
    assert proc.returncode == 1 and "No hidden tests for attention" in proc.stderr, proc.stderr[-3000:]
    assert not (root / "autograded").exists()


def test_the_similarity_report_is_not_committed():
    """The report names students: the checkout ignores it wherever an autograde run writes it (issue 24)."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    for path in ("similarity_07_exercise.csv", "similarity_any.csv"):
        assert subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO).returncode == 0, path


def test_what_the_grader_writes_is_private(course):
    """Issue 41 item 9: the autograded notebooks and folders, the verdicts CSV and the gradebook are the
    instructor's alone (the grader's umask is 077, nbgrader's Autograde.permissions 600)."""
    root = course["root"]
    written = [root / "verdicts_07_exercise.csv", root / "autograded" / "carol",
               root / "autograded" / "carol" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"]
    for path in written:
        assert os.stat(path).st_mode & 0o077 == 0, (path, oct(os.stat(path).st_mode))
