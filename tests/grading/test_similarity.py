"""The similarity report (copydetect's winnowed fingerprints, containment in all of course_lib and in
other students' cells): every copy in four disguises is flagged on every copied part, none of
fourteen students who solved the exercise on their own is; and those fourteen are correct solutions."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_grader import similarity
from course_grader.runner import solution_sources
from course_grader.similarity import (
    compare,
    normalize,
    skeletons,
    summary,
)
from exercise_corpus import honest, styles
from exercise_corpus.honest import notebook
from exercise_corpus.styles import DISGUISES, two_edits, with_helpers

SOURCE = Path(__file__).resolve().parents[2] / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"
honest.BODIES.update(styles.BODIES)              # notebook() fills any of the fourteen
HONEST = tuple(honest.BODIES)
COPIED_PEER = "typed"                            # the student whose cells the peer copies take


@pytest.fixture(scope="module")
def source():
    return nbformat.read(SOURCE, as_version=4)


@pytest.fixture(scope="module")
def submissions(source):
    subs = {s: solution_sources(notebook(source, s)) for s in HONEST}
    for name, disguise in DISGUISES.items():
        # course_lib's graded definitions with the helpers they call, two small edits, then the disguise
        subs[f"lib_{name}"] = {p: disguise(two_edits(with_helpers(p))) for p in styles.GRADED}
        # another student's cells, in the same disguise
        subs[f"peer_{name}"] = {p: disguise(text) for p, text in subs[COPIED_PEER].items()}
    return subs


@pytest.fixture(scope="module")
def matches(source, submissions):
    return compare(submissions, skeletons(source))


def _flags(matches, student):
    return {(m.part, m.other) for m in matches if m.student == student and m.flagged}


def test_the_copies_are_valid_python_and_really_disguised(submissions):
    for name in DISGUISES:
        for text in submissions[f"lib_{name}"].values():
            ast.parse(text)
    assert submissions["lib_renamed"]["attention"] != submissions["lib_verbatim"]["attention"]
    assert "my_" in submissions["lib_renamed"]["multi_head_attention"]
    assert "\n\n" in submissions["lib_reformatted"]["encoder"]


@pytest.mark.parametrize("disguise", list(DISGUISES))
def test_a_copy_of_course_lib_with_its_helpers_is_flagged_on_every_part(matches, disguise):
    """Issue 29: a verbatim copy with the helpers and two edits was flagged for no part (19-50 % per part
    against the part's own definition); against all of course_lib it is found on every part."""
    flagged = {p for p, other in _flags(matches, f"lib_{disguise}") if other == "course_lib"}
    assert flagged == set(styles.GRADED)


@pytest.mark.parametrize("disguise", list(DISGUISES))
def test_a_copy_of_another_student_is_flagged_on_every_part_that_can_be(matches, submissions, disguise):
    """Every part with enough code of its own (MIN_TOKENS) is flagged against the student copied, or
    against another copy of the same cells."""
    copiers = {COPIED_PEER} | {f"peer_{d}" for d in DISGUISES}
    sized = {m.part for m in matches if m.student == f"peer_{disguise}" and m.other != "course_lib"
             and m.size >= similarity.MIN_TOKENS}
    flagged = {p for p, other in _flags(matches, f"peer_{disguise}") if other in copiers}
    assert sized >= {"multi_head_attention", "encoder_layer", "encoder", "attention", "positional_encoding"}
    assert flagged == sized
    assert any(o.startswith("peer_") for _, o in _flags(matches, COPIED_PEER))   # the copied student too


def test_no_honest_solution_is_flagged(matches):
    copiers = {m.student for m in matches if m.student.startswith(("lib_", "peer_"))}
    flagged = {s: {(p, o) for p, o in _flags(matches, s) if o not in copiers} for s in HONEST}
    assert flagged == {s: set() for s in HONEST}
    worst = max(m.score for m in matches if m.student in HONEST and m.other not in copiers)
    assert worst < similarity.THRESHOLD


@pytest.mark.slow
@pytest.mark.parametrize("student", list(styles.BODIES))
def test_every_style_is_a_correct_solution(source, student):
    """Each style passes the notebook's visible checks and the hidden ones (the source's seeds), every
    part (the Reverser is trained, as the check does)."""
    from course_lib.grading.cases import hidden_seeds
    from course_lib.grading.checks import check
    from course_lib.grading.parts import NAMES, PARTS
    from exercise_corpus.submissions import define

    nb = notebook(source, student)
    seeds = hidden_seeds(source)
    for part in PARTS:
        candidate = define(nb, part, NAMES[part], as_cell=True)
        check(part, candidate)
        if part in seeds and part != "reverse_task":
            check(part, candidate, hidden_seed=seeds[part])


def test_normalize_ignores_names_comments_docstrings_and_layout():
    a = 'def f(x, y):\n    """Doc."""\n    z = x @ y  # product\n    return torch.softmax(z, dim=-1)\n'
    b = "def g(q,k):\n\n    out=q@k\n    return torch.softmax(out,\n                         dim=-1)\n"
    assert normalize(a) == normalize(b)
    assert "softmax" in normalize(a) and "dim" in normalize(a) and "x" not in normalize(a)
    assert normalize("def f(x):\n    return x.transpose(1, 2)\n") != normalize("def f(x):\n    return x.view(1, 2)\n")


def test_summary_and_command_line(source, tmp_path):
    root = tmp_path / "course"
    for s in ("honest_a", "honest_b", "honest_c", "copy_of_a"):
        folder = root / "submitted" / s / "07_exercise"
        folder.mkdir(parents=True)
        nbformat.write(notebook(source, "honest_a" if s == "copy_of_a" else s), folder / SOURCE.name)
    (root / "notebooks" / "07_exercise").mkdir(parents=True)
    nbformat.write(source, root / "notebooks" / "07_exercise" / SOURCE.name)
    text = summary({s: root / "submitted" / s / "07_exercise" / SOURCE.name for s in ("honest_a", "copy_of_a")},
                   source=SOURCE, csv_path=tmp_path / "pair.csv")
    assert "copy_of_a" in text and "multi_head_attention ~ honest_a (100%)" in text
    assert "2 of 2 submissions have flagged parts" in text
    proc = subprocess.run([sys.executable, "-m", "course_grader.similarity", "07_exercise"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = (root / "similarity_07_exercise.csv").read_text().splitlines()
    assert rows[0] == "student,part,compared_with,score,tokens,flagged"
    flagged = {tuple(r.split(",")[:3]) for r in rows[1:] if r.endswith(",1")}
    assert ("copy_of_a", "encoder", "honest_a") in flagged and ("honest_a", "encoder", "copy_of_a") in flagged
    assert not {f for f in flagged if "copy_of_a" not in f}
    assert "honest_b" in proc.stdout and similarity.THRESHOLD > 0.5


def test_summary_from_the_autograder(source, tmp_path):
    """autograde calls summary(coursedir, assignment_id) with nbgrader's CourseDirectory."""
    from nbgrader.coursedir import CourseDirectory

    for s in ("honest_a", "honest_b"):
        folder = tmp_path / "submitted" / s / "07_exercise"
        folder.mkdir(parents=True)
        nbformat.write(notebook(source, s), folder / SOURCE.name)
    (tmp_path / "notebooks" / "07_exercise").mkdir(parents=True)
    nbformat.write(source, tmp_path / "notebooks" / "07_exercise" / SOURCE.name)
    coursedir = CourseDirectory(root=str(tmp_path), source_directory="notebooks")
    text = summary(coursedir, "07_exercise")
    assert "honest_a" in text and "0 of 2 submissions have flagged parts" in text
    assert (tmp_path / "similarity_07_exercise.csv").exists()


def test_links_are_not_followed(source, tmp_path):
    """A submission that is a symbolic link (to another student's notebook, or a student folder that
    links elsewhere) is reported and skipped, as the grader does; a path given to summary() too."""
    outside = tmp_path / "elsewhere" / "07_exercise"
    outside.mkdir(parents=True)
    nbformat.write(notebook(source, "honest_b"), outside / SOURCE.name)
    course = tmp_path / "course"
    folder = course / "submitted" / "honest_a" / "07_exercise"
    folder.mkdir(parents=True)
    nbformat.write(notebook(source, "honest_a"), folder / SOURCE.name)
    (course / "submitted" / "mallory" / "07_exercise").mkdir(parents=True)
    (course / "submitted" / "mallory" / "07_exercise" / SOURCE.name).symlink_to(folder / SOURCE.name)
    (course / "submitted" / "trudy").symlink_to(tmp_path / "elsewhere")
    text, _ = similarity.report(course, "07_exercise", SOURCE.parent)
    skipped = dict(re.findall(r"not compared: (\w+): (.*)", text))
    assert set(skipped) == {"mallory", "trudy"}, text
    assert all("symbolic link" in why for why in skipped.values())
    assert "1 of 1 submissions" in text or "0 of 1 submissions" in text
    text = summary({"a": folder / SOURCE.name, "m": course / "submitted" / "mallory" / "07_exercise" / SOURCE.name},
                   source)
    assert re.search(r"not compared: m: .*symbolic link", text) and "of 1 submissions" in text
