"""What a blind student hears in JupyterLab: a check's verdict, a visible test of the exercise, a hint, a
figure and the explorer, read from Chromium's accessibility tree (CDP) after the cells ran in a real kernel.

One small notebook (written into the server's copy of notebooks/) runs what every lecture and the
exercise use: practice checks that answer wrong, correct and not done; cells of the exercise taken from
the server's copy of notebooks/07_exercise (its setup cell, Part 1 with its solution and its visible
test, Part 2 with a wrong body in place of its solution and its visible test, hidden tests stripped as
the release strips them), so the real checks run and the one of Part 2 fails; then ``hint("attention")``
run on its own, as a student runs it after that failure (Run All stops at the failing cell); a figure
drawn by a plot helper, an attention explorer. Its outputs must give each verdict in words inside a
polite live region (role status): "wrong: Part 2: ..." with the failing test's own line, "hint: Part 2,
hint 1 of 3: ...", "correct: Part 1: ..."; a named caption beside the image (JupyterLab gives an output
image no alt text), a name to every control of the outputs (the explorer's slider handle "head" with its
value, its readout), and after the slider moves by keyboard the explorer's read-out must say the new head
and what its map shows. The only error of the run is Part 2's failure.

Lecture 02's and 05's own outputs are checked the same way by tests/browser/test_lecture_notebooks.py
(``a11y_tree.notebook_problems``) after they run there.
"""

from __future__ import annotations

import json
import re
import time

import pytest

import a11y_tree
import lab_page
from course_lib.grading.hints import HINTS_FILE

pytestmark = pytest.mark.browser

NAME = "zz_accessibility_tree.ipynb"         # sorts after the lectures; not a lecture (no NN_ prefix)
EXERCISE = "notebooks/07_exercise/encoder_from_scratch.ipynb"
HIDDEN_TESTS = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS\n?", re.S)
SOLUTION = re.compile(r"( *)### BEGIN SOLUTION.*?### END SOLUTION", re.S)
#: Part 2 as a student may get it wrong: no division by √d_k, the mask ignored
WRONG_ATTENTION = ["weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)", "return weights @ v, weights"]
CELLS = [
    "exercise:setup",
    "from course_lib import practice\nfrom course_lib.plots import plot_attention\n"
    "from course_lib.widgets import attention_explorer",
    'practice.number(3.0, 16.0, "sixteen", low="too small: divide by the variance", where="section 4")',
    'practice.number(16.0, 16.0, "the variance of the score")',
    'practice.number(None, 16.0, "sixteen", name="score_divisor")',
    "exercise:positional_encoding",
    "exercise:test_positional_encoding",
    'fig, ax = plot_attention(torch.tensor([[0.9, 0.1], [0.64, 0.36]]), ["animal", "it"])',
    'attention_explorer(torch.tensor([[[0.9, 0.1], [0.2, 0.8]], [[0.3, 0.7], [0.6, 0.4]]]), ["animal", "it"])',
    "exercise:attention:wrong",
    "exercise:test_attention",                  # fails: Run All stops here
    'hint("attention")',                         # run on its own after the failure
]
FAILING, HINT, EXPLORER = CELLS.index("exercise:test_attention"), len(CELLS) - 1, 8
HEARD = ["wrong: too small: divide by the variance (section 4)", "correct: the variance of the score",
         "not done yet: set score_divisor to a number", "correct: Part 1: all 3 visible checks passed"]


def exercise_cell(cells: dict[str, str], ref: str) -> str:
    """The source of the exercise's cell ``exercise:<grade_id>[:wrong]``: hidden tests stripped; with
    ``:wrong``, WRONG_ATTENTION in place of its solution."""
    _, grade_id, *wrong = ref.split(":")
    source = HIDDEN_TESTS.sub("", cells[grade_id])
    if wrong:
        source, n = SOLUTION.subn(lambda m: "\n".join(m[1] + line for line in WRONG_ATTENTION), source)
        assert n == 1, f"{grade_id}: no solution block to replace"
    return source


@pytest.fixture
def notebook(lab_root):
    exercise = json.loads((lab_root / EXERCISE).read_text())
    graded = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in exercise["cells"]
              if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")}
    sources = [exercise_cell(graded, s) if s.startswith("exercise:") else s for s in CELLS]
    path = lab_root / "notebooks" / NAME
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
             for s in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                                                            "display_name": "Python 3"}},
                                "nbformat": 4, "nbformat_minor": 5}))
    yield f"notebooks/{NAME}"
    path.unlink()
    (path.parent / HINTS_FILE).unlink(missing_ok=True)      # hint() records its climb beside the notebook


def test_verdicts_figures_and_the_explorer_speak_in_jupyterlab(lab, page, notebook):
    lab_page.open_notebook(page, lab.url, notebook, token=lab.token, timeout=180)
    run = lab_page.restart_and_run_all(page, notebook, timeout=240)
    errors = run.state["errors"]
    assert [(e["cell"], e["ename"]) for e in errors] == [(FAILING, "PartFailed")], errors
    assert run.state["counts"][FAILING + 1:] == [None] * (len(CELLS) - FAILING - 1), run.state["counts"]
    state = lab_page.run_cell(page, notebook, HINT)
    assert state["errors"] == errors, state["errors"]
    failure = " ".join(errors[0]["evalue"].split())         # "Part 2: ...  [hint("attention") for a hint]"
    tree = a11y_tree.Tree(page)
    try:
        problems, heard = a11y_tree.notebook_problems(page, tree)
        said = " | ".join(heard)
        problems += [f"not announced: {line!r}" for line in HEARD if line not in heard]
        assert failure.startswith("Part 2: ") and failure.endswith('[hint("attention") for a hint]'), failure
        told = heard.count(f"wrong: {failure}")           # once: a status said twice is heard twice
        if told != 1:
            problems.append(f"the failing visible test is announced {told} times, not once: 'wrong: {failure}'")
        told = len([h for h in heard if h.startswith("hint: Part 2, hint 1 of 3: the failing case is ")])
        if told != 1:
            problems.append(f'hint("attention") after the failure is announced {told} times, not once: '
                            '"hint: Part 2, hint 1 of 3: the failing case is ..."')
        assert "Figure: Attention map, 2 queries by 2 keys; each query's strongest key: animal: animal 0.90, " \
               "it: animal 0.64." in said, said

        # the explorer: its handle is named and says its value; a move by keyboard is told
        explorer = page.locator(".jp-Notebook .jp-Cell").nth(EXPLORER)
        handle = explorer.locator(".noUi-handle").first
        handle.wait_for(timeout=20_000)
        (slider,) = [n for n in tree.query(tree.nodes(".jp-Notebook .course-lib-explorer")[0], "slider")]
        assert (a11y_tree.name(slider), slider.get("value", {}).get("value")) == ("head", 0), slider
        handle.focus()
        page.keyboard.press("ArrowRight")
        deadline, spoken = time.monotonic() + 20, ""
        while time.monotonic() < deadline and "head 1:" not in spoken:
            (status,) = tree.nodes(".jp-Notebook .course-lib-readout")
            node = tree.node(status)
            spoken = page.locator(".jp-Notebook .course-lib-readout").first.inner_text()
            time.sleep(0.3)
        assert a11y_tree.role(node) == "status" and a11y_tree.prop(node, "live") == "polite", node
        assert spoken.startswith("head 1: Attention map head 1, 2 queries by 2 keys; each query's strongest key: "
                                 "animal: it 0.70, it: animal 0.60"), spoken
        print("heard in JupyterLab:\n  " + "\n  ".join(heard) + f"\n  after the move: {spoken}")
    finally:
        tree.close()
    assert not problems, "\n".join(problems)
