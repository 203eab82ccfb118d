"""The similarity report: a copy of course_lib and a copy of another student are flagged, none of
three students who solved the exercise on their own is."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import course_lib
from course_grader import similarity
from course_grader.similarity import compare, normalize, skeletons, solution_cells, summary

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from exercise_corpus.honest import BODIES, fill, notebook  # noqa: E402

SOURCE = Path(__file__).resolve().parents[2] / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"
HONEST = tuple(BODIES)


def _disguise(code: str, renames: dict) -> str:
    """What a copier does: other names, comments dropped or added, blank lines moved."""
    for old, new in renames.items():
        code = re.sub(rf"\b{old}\b", new, code)
    lines = [line.split("  #")[0].rstrip() for line in code.split("\n")]
    return "\n\n".join(line + ("  # my own step" if i % 3 == 0 and line.strip() else "") for i, line in enumerate(lines))


@pytest.fixture(scope="module")
def source():
    return nbformat.read(SOURCE, as_version=4)


@pytest.fixture(scope="module")
def submissions(source):
    subs = {s: solution_cells(notebook(source, s)) for s in HONEST}
    # copies course_lib's MultiHeadAttention.forward and split/merge, renamed, into the skeleton
    mha = inspect.getsource(course_lib.MultiHeadAttention)
    body = "\n".join(mha.split("\n")[mha.split("\n").index("    def split_heads(self, x: torch.Tensor) -> torch.Tensor:"):])
    cell = solution_cells(source)["multi_head_attention"]
    copied = fill(cell, [BODIES["honest_c"]["multi_head_attention"][0], "        return self._go(query, key, value, key_padding_mask)"])
    copied += "\n" + _disguise(body, {"split_heads": "to_heads", "merge_heads": "from_heads", "forward": "_go", "b": "n"})
    subs["copies_course_lib"] = dict(subs["honest_b"], multi_head_attention=copied)
    # copies honest_a's encoder layer and encoder, renamed
    subs["copies_a_student"] = dict(subs["honest_c"], **{
        p: _disguise(subs["honest_a"][p], {"h": "hidden", "a": "att", "f": "ff", "mask": "pad_mask", "pre": "prenorm"})
        for p in ("encoder_layer", "encoder")})
    return subs


def _flags(matches, student):
    return {(m.part, m.other) for m in matches if m.student == student and m.flagged}


def test_copies_are_flagged_honest_work_is_not(source, submissions):
    matches = compare(submissions, skeletons(source))
    assert ("multi_head_attention", "course_lib") in _flags(matches, "copies_course_lib")
    assert {("encoder_layer", "honest_a"), ("encoder", "honest_a")} <= _flags(matches, "copies_a_student")
    flagged_honest = {s: _flags(matches, s) - {(p, o) for p, o in _flags(matches, s)
                                               if o in ("copies_a_student", "copies_course_lib")} for s in HONEST}
    assert flagged_honest == {s: set() for s in HONEST}


def test_normalize_ignores_names_comments_docstrings_and_layout():
    a = 'def f(x, y):\n    """Doc."""\n    z = x @ y  # product\n    return torch.softmax(z, dim=-1)\n'
    b = "def g(q,k):\n\n    out=q@k\n    return torch.softmax(out,\n                         dim=-1)\n"
    assert normalize(a) == normalize(b)
    assert "softmax" in normalize(a) and "dim" in normalize(a) and "x" not in normalize(a)
    assert normalize("def f(x):\n    return x.transpose(1, 2)\n") != normalize("def f(x):\n    return x.view(1, 2)\n")


def test_summary_and_command_line(source, tmp_path):
    root = tmp_path / "course"
    for s in (*HONEST, "copy_of_a"):
        folder = root / "submitted" / s / "07_exercise"
        folder.mkdir(parents=True)
        nbformat.write(notebook(source, "honest_a" if s == "copy_of_a" else s), folder / SOURCE.name)
    (root / "notebooks" / "07_exercise").mkdir(parents=True)
    nbformat.write(source, root / "notebooks" / "07_exercise" / SOURCE.name)
    text = summary({s: root / "submitted" / s / "07_exercise" / SOURCE.name for s in ("honest_a", "copy_of_a")},
                   source=SOURCE, csv_path=tmp_path / "pair.csv")
    assert "copy_of_a" in text and "multi_head_attention ~ honest_a (100%)" in text
    assert "1 of" not in text and "2 of 2 submissions have flagged parts" in text
    proc = subprocess.run([sys.executable, "-m", "course_grader.similarity", "07_exercise"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = (root / "similarity_07_exercise.csv").read_text().splitlines()
    assert rows[0] == "student,part,compared_with,score,ngrams,flagged"
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
