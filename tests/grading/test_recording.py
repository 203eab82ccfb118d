"""What the sandboxed autograde records, end to end: the student's own outputs kept (never in a test
cell), nothing active in the instructor's browser, hand grading kept by a re-grade (issues 30, 33)."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attack_kit import released_course
from fuzz_kit import active_html

ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"
BIN = Path(sys.executable).parent
PNG = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                                     "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode()
ACTIVE = ("<script>alert('formgrader')</script> and <img src=x onerror=alert(1)> "
          "[a link](javascript:alert(2)) <iframe src='https://example.org'></iframe> "
          "<a href='JaVaScRiPt:alert(3)'>x</a> <svg onload=alert(4)></svg>")
FORGED = "Graded in a sandbox: attention: all 12 checks passed (6 visible, 6 hidden).\n"


def _run(args, cwd):
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def _cell(nb, gid):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def _writer(good):
    """A student who answers 9.5 with active HTML, adds a cell of it, prints and draws in cells that are not
    graded (and in a locked one), leaves a forged "passed" in a test cell, and has a wrong attention."""
    nb = nbformat.reads(nbformat.writes(good), as_version=4)
    _cell(nb, "answer_reverser").source = "My answer: it learns. " + ACTIVE
    nb.cells.insert(len(nb.cells) - 1, nbformat.v4.new_markdown_cell("An extra note " + ACTIVE))
    own = next(c for c in nb.cells if c.cell_type == "code" and "Not graded: train YOUR Reverser" in c.source)
    own.outputs = [nbformat.v4.new_output("stream", name="stdout", text="9.x: accuracy 0.9731, loss 0.0812\n"),
                   nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
                   nbformat.v4.new_output("display_data", data={"text/html": ACTIVE,
                                                                "application/javascript": "alert(5)"})]
    _cell(nb, "try_it").outputs = [nbformat.v4.new_output("stream", name="stdout", text="try_it ran: (2, 5, 16)\n")]
    _cell(nb, "test_attention").outputs = [nbformat.v4.new_output("stream", name="stdout", text=FORGED)]
    att = _cell(nb, "attention")
    att.source = att.source.replace("math.sqrt(", "(")          # a wrong scale: the part fails
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("recording") / "course"
    good = released_course(root)
    tamperer = nbformat.reads(nbformat.writes(good), as_version=4)
    mha = _cell(tamperer, "multi_head_attention")
    mha.source = ("f = getattr(F, 'multi_head_' + 'attention_forward')\n"
                  "getattr(f, '__kw' + 'defaults__')['_tat' + 'tle'] = lambda reason: None\n" + mha.source)
    for student, nb in {"writer": _writer(good), "marked": good, "tamperer": tamperer, "escaper": good}.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        text = nbformat.writes(nb)
        if student == "escaper":           # issue 48 item 1: an escaped lone surrogate (ASCII on disk) in three places
            text = (text.replace('"metadata": {', '"metadata": {"note": "\\ud800", ', 1)
                    .replace('"source": [', '"source": ["\\udfff", ', 1)
                    .replace('"kernelspec": {', '"student": "\\ud83d", "kernelspec": {', 1))
        (folder / f"{NOTEBOOK}.ipynb").write_text(text)
        (folder / "timestamp.txt").write_text("2026-01-15 12:00:00.000000 UTC")
    proc = _run([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--jobs", "2",
                 "--allow-public-seeds"], root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    LOG.append(proc.stderr)
    return root


LOG: list = []


def _autograded(root, student):
    return nbformat.read(root / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)


def test_the_students_own_outputs_are_kept_and_test_cells_show_only_the_grader(course):
    """Issue 33 item 1: the formgrader and the feedback show what the student's cells printed and drew
    (9.x's numbers, the Reverser's map), also in a locked cell the student ran; a test cell shows the
    grader's verdict only, never an output the student left there."""
    nb = _autograded(course, "writer")
    own = next(c for c in nb.cells if c.cell_type == "code" and "Not graded: train YOUR Reverser" in c.source)
    assert "9.x: accuracy 0.9731" in own.outputs[0].text and own.outputs[1].data["image/png"] == PNG
    assert "try_it ran" in _cell(nb, "try_it").outputs[0].text
    test = _cell(nb, "test_attention")
    assert [o.output_type for o in test.outputs] == ["error"] and "passed" not in str(test.outputs)
    assert all(FORGED not in str(c.get("outputs", [])) for c in nb.cells)


def test_no_active_html_reaches_the_instructors_browser(course):
    """Issue 30 item 4: a written answer, a cell the student added and an HTML output with script, an
    event handler, a javascript: link, an iframe or SVG: inert in the autograded notebook (which the
    formgrader shows) and on the feedback page."""
    import re
    nb = _autograded(course, "writer")
    text = nbformat.writes(nb)
    for active in ("<script", "<iframe", "application/javascript"):     # an <svg> of shapes only is inert
        assert active not in text, active
    assert active_html(text.replace('\\"', '"')) == []          # no live javascript: URL (issue 41)
    assert re.search(r"<[a-z][^<>]*\bon\w+\s*=", text, re.I) is None          # no event handler in a tag
    assert "alert" not in _cell(nb, "answer_reverser").source          # rendered, then cleaned: script gone
    assert "My answer: it learns." in _cell(nb, "answer_reverser").source
    proc = _run([str(BIN / "nbgrader"), "generate_feedback", ASSIGNMENT, "--student", "writer"], course)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "display_data_priority" not in proc.stderr                 # issue 33 item 8: no unexplained warning
    html = (course / "feedback" / "writer" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    for active in ("<script>alert", "<iframe", "alert(5)"):
        assert active not in html, active
    assert active_html(html) == []
    assert re.search(r"<[a-z][^<>]*\bon\w+\s*=\s*['\"]?alert", html, re.I) is None
    assert "9.x: accuracy 0.9731" in html and "My answer: it learns." in html


def test_a_regrade_keeps_the_hand_grading(course):
    """Issue 33 item 2: answers graded by hand stay graded after ``autograde --force`` of the same
    submission (nbgrader would ask for them again); a new submission's are marked for review."""
    from nbgrader.api import Gradebook

    def grades():
        with Gradebook(f"sqlite:///{course}/gradebook.db") as gb:
            nb = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, "marked")
            return {g.name: (g.manual_score, g.needs_manual_grade) for g in nb.grades if g.name.startswith("answer_")}
    assert all(need for _, need in grades().values())
    with Gradebook(f"sqlite:///{course}/gradebook.db") as gb:           # the formgrader's hand grading
        for g in gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, "marked").grades:
            if g.name.startswith("answer_"):
                g.manual_score, g.needs_manual_grade = 1.0, False
        gb.db.commit()
    graded = grades()
    again = _run([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--student", "marked", "--force",
                  "--allow-public-seeds"], course)
    assert again.returncode == 0, again.stderr[-3000:]
    assert grades() == graded and len(graded) == 5 and not any(need for _, need in graded.values())
    # issue 41 item 11: an answer changed under the same timestamp.txt is flagged, the others stay graded
    path = course / "submitted" / "marked" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    nb = nbformat.read(path, as_version=4)
    _cell(nb, "answer_reverser").source += "\n\nA better answer, written after the grading."
    nbformat.write(nb, path)
    changed = _run([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--student", "marked", "--force",
                    "--allow-public-seeds"], course)
    assert changed.returncode == 0, changed.stderr[-3000:]
    assert {g: need for g, (_, need) in grades().items()} == {g: g == "answer_reverser" for g in graded}
    (course / "submitted" / "marked" / ASSIGNMENT / "timestamp.txt").write_text("2026-01-16 09:00:00.000000 UTC")
    resubmitted = _run([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--student", "marked",
                        "--force", "--allow-public-seeds"], course)
    assert resubmitted.returncode == 0, resubmitted.stderr[-3000:]
    assert all(score == 1.0 and need for score, need in grades().values())       # kept, to be reviewed


def test_a_switched_off_guard_is_named_in_the_log_and_the_verdicts(course):
    """Issue 30 item 13, end to end: the log names the student and the part; verdicts_07_exercise.csv
    (the machine-readable record) has guard_tampered for that row only."""
    import csv
    log = LOG[0]
    assert "GUARD TAMPERED: tamperer/encoder_from_scratch" in log and "multi_head_attention" in log
    assert "GUARD TAMPERED: writer" not in log and "GUARD TAMPERED: marked" not in log
    with open(course / "verdicts_07_exercise.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert set(rows) >= {"writer", "marked", "tamperer"}
    assert "multi_head_attention" in rows["tamperer"]["guard_tampered"]
    assert rows["writer"]["guard_tampered"] == rows["marked"]["guard_tampered"] == ""
    assert rows["marked"]["status"] == "graded" and rows["marked"]["passed"] == rows["marked"]["parts"]
    assert "attention" in rows["writer"]["failed"].split()


def test_a_lone_surrogate_is_repaired_at_the_gate_and_the_student_graded(course):
    """Issue 48 item 1, end to end: escaped lone surrogates in a cell's metadata, a cell's source and the
    notebook's metadata: the run exits 0 (the fixture), the log says what was repaired, the student is
    graded and recorded in full (the notebook written with U+FFFD in their place)."""
    import csv
    assert "Repaired: 'escaper/encoder_from_scratch.ipynb': 3 lone surrogates replaced by U+FFFD" in LOG[0]
    rows = {r["student"]: r for r in csv.DictReader(open(course / f"verdicts_{ASSIGNMENT}.csv", encoding="utf-8"))}
    assert rows["escaper"]["status"] == "graded" and rows["escaper"]["passed"] == rows["escaper"]["parts"]
    assert "\ufffd" in nbformat.writes(_autograded(course, "escaper"))
