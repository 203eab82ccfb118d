"""What a blind student hears in JupyterLab: a check's verdict, a hint, a figure and the explorer, read
from Chromium's accessibility tree (CDP) after the cells ran in a real kernel.

One small notebook (written into the server's copy of notebooks/) runs what every lecture and the
exercise use: practice checks that answer wrong, correct and not done, a hint and a visible test's
failure (course_lib.announce.verdict), a figure drawn by a plot helper, an attention explorer. Its
outputs must give each verdict in words inside a polite live region (role status), a named caption
beside the image (JupyterLab gives an output image no alt text), a name to every control of the
outputs (the explorer's slider handle "head" with its value, its readout), and after the slider moves
by keyboard the explorer's read-out must say the new head and what its map shows.

Lecture 02's and 05's own outputs are checked the same way by tests/browser/test_lecture_notebooks.py
(``a11y_tree.notebook_problems``) after they run there.
"""

from __future__ import annotations

import json
import time

import pytest

import a11y_tree
import lab_page

pytestmark = pytest.mark.browser

NAME = "zz_accessibility_tree.ipynb"         # sorts after the lectures; not a lecture (no NN_ prefix)
CELLS = [
    "import torch\nfrom course_lib import announce, practice\nfrom course_lib.plots import plot_attention\n"
    "from course_lib.widgets import attention_explorer",
    'practice.number(3.0, 16.0, "sixteen", low="too small: divide by the variance", where="section 4")',
    'practice.number(16.0, 16.0, "the variance of the score")',
    'practice.number(None, 16.0, "sixteen", name="score_divisor")',
    'announce.verdict("wrong", "Part 2: the weights of a row do not sum to 1  [hint(\\"attention\\") for a hint]")',
    'announce.verdict("hint", "Part 2, hint 1 of 3: print the sums of the rows of your weights")',
    'fig, ax = plot_attention(torch.tensor([[0.9, 0.1], [0.64, 0.36]]), ["animal", "it"])',
    'attention_explorer(torch.tensor([[[0.9, 0.1], [0.2, 0.8]], [[0.3, 0.7], [0.6, 0.4]]]), ["animal", "it"])',
]
HEARD = ["✗ wrong: too small: divide by the variance (section 4)", "✓ correct: the variance of the score",
         "○ not done yet: set score_divisor to a number", "✗ wrong: Part 2: the weights of a row",
         "hint: Part 2, hint 1 of 3"]


@pytest.fixture
def notebook(lab_root):
    path = lab_root / "notebooks" / NAME
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
             for s in CELLS]
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                                                            "display_name": "Python 3"}},
                                "nbformat": 4, "nbformat_minor": 5}))
    yield f"notebooks/{NAME}"
    path.unlink()


def test_verdicts_figures_and_the_explorer_speak_in_jupyterlab(lab, page, notebook):
    lab_page.open_notebook(page, lab.url, notebook, token=lab.token, timeout=180)
    run = lab_page.restart_and_run_all(page, notebook, timeout=240)
    assert not run.state["errors"], run.state["errors"]
    tree = a11y_tree.Tree(page)
    try:
        problems, heard = a11y_tree.notebook_problems(page, tree)
        said = " | ".join(heard)
        problems += [f"not announced: {line!r}" for line in HEARD if line not in said]
        assert "Figure: Attention map, 2 queries by 2 keys; each query's strongest key: animal: animal 0.90, " \
               "it: animal 0.64." in said, said

        # the explorer: its handle is named and says its value; a move by keyboard is told
        explorer = page.locator(".jp-Notebook .jp-Cell").nth(len(CELLS) - 1)
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
