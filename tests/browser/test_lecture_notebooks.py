"""The lecture notebooks as a student sees them: JupyterLab in a real (headless) Chromium.

For each lecture notebook: open it, "Restart Kernel and Run All Cells", wait until the kernel is
idle; no error output on the page; every figure is a loaded image; every figure the markdown shows
from res/ (``![...](../res/NAME.svg)``) is on the page and loaded; a widget control changed in the
browser redraws its figure; Tab from just before a widget's controls reaches every part of them
that takes the focus (slider handle and readout, text field, select), each with a 2 px focus
outline (``lab_page.keyboard_walk``, docs/accessibility.md); in 02 and 05, what a screen reader finds
in the outputs (``a11y_tree.notebook_problems``: verdicts announced, figures captioned, controls
named). A full-notebook screenshot per
notebook goes to screenshots/ (git-ignored); the test prints its name and records it as the
`screenshot` property (junit XML).

Run:  .venv/bin/python -m pytest tests/browser/test_lecture_notebooks.py -rA
Needs Debian's Chromium at /usr/bin/chromium (`make browser-deps`); never downloads a browser.
BROWSER_TEST_NOTEBOOKS=<dir> points these tests at another folder of notebooks (used to check that
they fail on a broken notebook).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import PurePosixPath

import pytest

import a11y_tree
import lab_page
from lab_server import NOTEBOOKS

pytestmark = pytest.mark.browser

LECTURES = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
# Read as a screen reader finds them after the run (a11y_tree.notebook_problems): every verdict in a
# polite live region and in words, every image captioned, every control of the outputs named.
SPOKEN = ("02", "05")
RUN_TIMEOUT = float(os.environ.get("BROWSER_TEST_RUN_TIMEOUT", 150))  # per notebook, seconds
WIDGET_TIMEOUT = 30.0
# The controls of course_lib.widgets, in the order tried when a cell has several (the first one
# whose value can change is used): attention head/layer, positional-encoding dims/length, temperature.
PREFERRED_CONTROLS = ("head", "dims", "temperature", "layer", "length", "layout")
# A figure from res/ in markdown: ![alt](../res/NAME.svg) or <img src="../res/NAME.svg">
RES_IMAGE = re.compile(r"""(?:!\[[^\]]*\]\(\s*<?|<img\b[^>]*\bsrc\s*=\s*["'])((?:\.\./)+res/[^)\s"'>]+)""")


def test_lecture_notebooks_exist():
    assert LECTURES, f"no lecture notebooks [0-9][0-9]_*.ipynb in {NOTEBOOKS}"


def res_images(notebook: dict) -> dict[int, list[str]]:
    """{cell index: [file names under res/ its markdown shows]} from the .ipynb itself."""
    found = {}
    for i, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        names = [PurePosixPath(m).name for m in RES_IMAGE.findall(src)]
        if names:
            found[i] = names
    return found


def missing_res_images(page, path: str, wanted: dict[int, list[str]], timeout: float = 20.0) -> list[str]:
    """The res/ figures of `wanted` that the page does not show as a loaded markdown image."""
    deadline = time.monotonic() + timeout
    problems = ["(not checked)"]
    while problems and time.monotonic() < deadline:
        shown = lab_page.markdown_images(page, path)
        problems = []
        for cell, names in wanted.items():
            imgs = [im for im in shown if im["cell"] == cell]
            for name in names:
                hits = [im for im in imgs if f"res/{name}" in im["src"] or f"res/{name}" in im["currentSrc"]]
                if not hits:
                    problems.append(f"cell {cell}: markdown figure res/{name} is not on the page "
                                    f"(images there: {[im['src'] for im in imgs]})")
                elif not all(im["complete"] and im["naturalWidth"] > 0 for im in hits):
                    problems.append(f"cell {cell}: markdown figure res/{name} did not load "
                                    f"(src {hits[0]['currentSrc'] or hits[0]['src']!r})")
        if problems:
            time.sleep(0.5)
    return problems


def _control_rank(description: str) -> int:
    for rank, word in enumerate(PREFERRED_CONTROLS):
        if word in description.lower():
            return rank
    return len(PREFERRED_CONTROLS)


def _check_widgets(page, path: str, cells: list[int]) -> tuple[list[str], list[str]]:
    """Tab through each widget cell's controls (every part reached, focus shown); change one
    control per widget cell; its figure (an <img> of that cell) must be replaced."""
    problems, done = [], []
    for index in cells:
        info = lab_page.widget_controls(page, path, index)
        controls = [c for c in info["controls"] if not c["disabled"]]
        if not controls:
            continue  # e.g. a progress bar: nothing to drive
        kbd_problems, reached = lab_page.keyboard_walk(page, path, index)
        problems += [f"cell {index}: keyboard: {line}" for line in kbd_problems]
        if not kbd_problems:
            done.append(f"cell {index}: Tab reached, with a focus outline: {reached}")
        if not info["srcs"]:
            problems.append(f"cell {index}: widget with controls {[c['description'] for c in controls]} "
                            "shows no figure")
            continue
        controls.sort(key=lambda c: _control_rank(c["description"]))
        before = set(info["srcs"])
        tried = []
        for control in controls:
            changed, action = lab_page.change_control(page, control)
            tried.append(f"{control['description'] or control['kind']!r}: {action}")
            if changed:
                break
        else:
            problems.append(f"cell {index}: could not change any control ({'; '.join(tried)})")
            continue
        deadline = time.monotonic() + WIDGET_TIMEOUT
        while time.monotonic() < deadline:
            images = lab_page.cell_images(page, path, index)
            if images and {im["src"] for im in images} != before and all(im["ok"] for im in images):
                break
            time.sleep(0.3)
        else:
            shown = lab_page.cell_output_text(page, path, index)
            problems.append(f"cell {index}: {tried[-1]}, but the figure was not redrawn within "
                            f"{WIDGET_TIMEOUT:.0f} s; the cell now shows: {shown[-500:]!r}")
            continue
        done.append(f"cell {index}: {tried[-1]}: figure redrawn")
    return problems, done


@pytest.mark.parametrize("name", LECTURES)
def test_lecture_notebook_runs_in_jupyterlab(name, lab, page, notebook_screenshot, record_property):
    path = f"notebooks/{name}"
    wanted_res = res_images(json.loads((NOTEBOOKS / name).read_text()))
    t0 = time.monotonic()
    lab_page.open_notebook(page, lab.url, path, token=lab.token)
    t_open = time.monotonic() - t0
    try:
        run = lab_page.restart_and_run_all(page, path, timeout=RUN_TIMEOUT)
    except Exception as exc:  # the kernel died or the run did not finish: still leave a screenshot
        try:
            shot = notebook_screenshot(page, path)
        except Exception as shot_exc:  # noqa: BLE001
            shot = f"not written: {shot_exc}"
        raise AssertionError(f"{exc}\n(screenshot {shot})") from exc
    bad_images = lab_page.wait_images_loaded(page, path)
    res_problems = missing_res_images(page, path, wanted_res)
    found = lab_page.page_problems(page, path)
    t1 = time.monotonic()
    shot = notebook_screenshot(page, path)
    t_shot = time.monotonic() - t1
    n_res = sum(len(v) for v in wanted_res.values())
    print(f"{name}: ran {run.state['executed']}/{run.state['code']} code cells in {run.seconds:.1f} s "
          f"(open {t_open:.1f} s, screenshot {t_shot:.1f} s); {len(found['images'])} images, "
          f"{n_res} of them figures from res/")
    record_property("run_seconds", round(run.seconds, 1))

    problems = list(res_problems)
    for err in run.state["errors"]:
        problems.append(f"cell {err['cell']}: {err['ename']}: {err['evalue']}\n{err['traceback'][-1500:]}")
    if run.state["executed"] != run.state["code"]:
        problems.append(f"only {run.state['executed']} of {run.state['code']} code cells ran")
    error_cells = {err["cell"] for err in run.state["errors"]}
    for tb in found["tracebacks"]:
        if tb["cell"] not in error_cells:
            problems.append(f"cell {tb['cell']}: error text on stderr:\n{tb['text'][-1500:]}")
    for fr in found["figureReprs"]:
        problems.append(f"cell {fr['cell']}: a figure shows as text {fr['text']!r}, not as an image")
    for im in bad_images:
        problems.append(f"cell {im['cell']}: {im['where']} image did not load (src {im['src']!r})")
    for st in found["stderr"]:
        print(f"{name}: stderr in cell {st['cell']}: {st['text'][:300]!r}")

    if not run.state["errors"] and found["widgetCells"]:
        widget_problems, done = _check_widgets(page, path, found["widgetCells"])
        problems += widget_problems
        for line in done:
            print(f"{name}: widget {line}")
        after = lab_page.page_problems(page, path)
        for tb in after["tracebacks"]:
            if tb not in found["tracebacks"]:
                problems.append(f"cell {tb['cell']}: error after changing a widget:\n{tb['text'][-1500:]}")

    if name[:2] in SPOKEN and not run.state["errors"]:
        tree = a11y_tree.Tree(page)
        try:
            spoken_problems, heard = a11y_tree.notebook_problems(page, tree)
        finally:
            tree.close()
        problems += [f"screen reader: {line}" for line in spoken_problems]
        print(f"{name}: a screen reader hears {len(heard)} verdicts and captions (Chromium's tree):\n  "
              + "\n  ".join(heard))

    if problems and page.js_errors:
        problems.append("JavaScript errors on the page: " + " | ".join(page.js_errors[-5:]))
    assert not problems, f"{name} in JupyterLab (screenshot {shot}):\n" + "\n".join(problems)
