"""The course as a student sees it: JupyterLab in a real (headless) Chromium.

For each lecture notebook: open it, "Restart Kernel and Run All Cells", wait until the kernel is
idle; no error output on the page; every figure is a loaded image; a widget control changed in
the browser redraws its figure. For the exercise: the student release opens, nbgrader's
Validate reports the unsolved parts, and a part filled with its solution validates.

A full-notebook screenshot per notebook goes to screenshots/ (git-ignored); the test prints its
name and records it as the `screenshot` property (junit XML).

Run:  .venv/bin/python -m pytest -m browser tests/test_browser.py -rA
Needs Debian's Chromium at /usr/bin/chromium (`make browser-deps`); never downloads a browser.
BROWSER_TEST_NOTEBOOKS=<dir> points the lecture tests at another folder of notebooks (used to
check that the tests fail on a broken notebook).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_utils as bu  # noqa: E402

pytestmark = pytest.mark.browser

REPO = bu.REPO
NOTEBOOKS = Path(os.environ.get("BROWSER_TEST_NOTEBOOKS", REPO / "notebooks")).resolve()
LECTURES = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
SCREENSHOTS = REPO / "screenshots"

EXERCISE_DIR = REPO / "notebooks" / "07_exercise"
EXERCISE_NOTEBOOK = "encoder_from_scratch.ipynb"
NBGRADER_CONFIG = REPO / "nbgrader_config.py"

RUN_TIMEOUT = float(os.environ.get("BROWSER_TEST_RUN_TIMEOUT", 150))  # per notebook, seconds
WIDGET_TIMEOUT = 30.0
# The controls of course_lib.widgets, in the order tried when a cell has several (the first one
# whose value can change is used): attention head/layer, positional-encoding dims/length, temperature.
PREFERRED_CONTROLS = ("head", "dims", "temperature", "layer", "length", "layout")


# ---- fixtures: one server and one browser for the session ---------------------------------

@pytest.fixture(scope="session")
def lab_root(tmp_path_factory) -> Path:
    """A throw-away copy of what the server needs: notebooks/, res/, nbgrader_config.py."""
    base = tmp_path_factory.mktemp("browser")
    root = base / "root"
    root.mkdir()
    bu.copy_tree(NOTEBOOKS, root / "notebooks")
    if (REPO / "res").is_dir():
        bu.copy_tree(REPO / "res", root / "res")
    if NBGRADER_CONFIG.exists():
        shutil.copy2(NBGRADER_CONFIG, root / NBGRADER_CONFIG.name)
    return root


@pytest.fixture(scope="session")
def lab(lab_root):
    server = bu.LabServer(root=lab_root, base=lab_root.parent)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory):
    if not Path(bu.CHROMIUM).exists():
        pytest.fail(
            f"Chromium is missing at {bu.CHROMIUM}: the browser tests need Debian's Chromium. "
            "Install it with `make browser-deps` (apt-get install -y chromium).",
            pytrace=False,
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.fail(f"Playwright for Python is missing ({exc}): it is in the `dev` extra of pyproject.toml",
                    pytrace=False)

    home = tmp_path_factory.mktemp("chromium-home")
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"))
    pw = sync_playwright().start()
    context = None
    try:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            env=env,
            executable_path=bu.CHROMIUM,
            headless=True,
            args=bu.CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
            timeout=60_000,
        )
        context.set_default_timeout(30_000)
        yield context
    finally:
        try:
            if context is not None:
                context.close()
        finally:
            pw.stop()


@pytest.fixture
def page(browser_context, lab):
    pg = browser_context.new_page()
    pg.js_errors = []
    pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
    try:
        yield pg
    finally:
        try:
            pg.close()
        finally:
            lab.shutdown_kernels(wait=False)


def _screenshot(page, path: str, record_property) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(path).stem) + ".png"
    shot = bu.full_notebook_screenshot(page, path, SCREENSHOTS / name)
    record_property("screenshot", str(shot))
    print(f"screenshot: {shot}")
    return shot


# ---- lecture notebooks ---------------------------------------------------------------------

def test_lecture_notebooks_exist():
    assert LECTURES, f"no lecture notebooks [0-9][0-9]_*.ipynb in {NOTEBOOKS}"


def _check_widgets(page, path: str, cells: list[int]) -> tuple[list[str], list[str]]:
    """Change one control per widget cell; its figure (an <img> of that cell) must be replaced."""
    problems, done = [], []
    for index in cells:
        info = page.evaluate(bu.JS_WIDGET_CONTROLS, [path, index])
        controls = [c for c in info["controls"] if not c["disabled"]]
        if not controls:
            continue  # e.g. a progress bar: nothing to drive
        if not info["srcs"]:
            problems.append(f"cell {index}: widget with controls {[c['description'] for c in controls]} "
                            "shows no figure")
            continue
        controls.sort(key=lambda c: _control_rank(c["description"]))
        before = set(info["srcs"])
        tried = []
        for control in controls:
            changed, action = bu.change_control(page, control)
            tried.append(f"{control['description'] or control['kind']!r}: {action}")
            if changed:
                break
        else:
            problems.append(f"cell {index}: could not change any control ({'; '.join(tried)})")
            continue
        deadline = time.monotonic() + WIDGET_TIMEOUT
        while time.monotonic() < deadline:
            images = bu.cell_images(page, path, index)
            if images and {im["src"] for im in images} != before and all(im["ok"] for im in images):
                break
            time.sleep(0.3)
        else:
            shown = page.evaluate(bu.JS_CELL_OUTPUT_TEXT, [path, index])
            problems.append(f"cell {index}: {tried[-1]}, but the figure was not redrawn within "
                            f"{WIDGET_TIMEOUT:.0f} s; the cell now shows: {shown[-500:]!r}")
            continue
        done.append(f"cell {index}: {tried[-1]}: figure redrawn")
    return problems, done


def _control_rank(description: str) -> int:
    for rank, word in enumerate(PREFERRED_CONTROLS):
        if word in description.lower():
            return rank
    return len(PREFERRED_CONTROLS)


@pytest.mark.parametrize("name", LECTURES)
def test_lecture_notebook_runs_in_jupyterlab(name, lab, page, record_property):
    path = f"notebooks/{name}"
    t0 = time.monotonic()
    bu.open_notebook(page, lab, path)
    t_open = time.monotonic() - t0
    try:
        run = bu.restart_and_run_all(page, path, timeout=RUN_TIMEOUT)
    except Exception as exc:  # the kernel died or the run did not finish: still leave a screenshot
        try:
            shot = _screenshot(page, path, record_property)
        except Exception as shot_exc:  # noqa: BLE001
            shot = f"not written: {shot_exc}"
        raise AssertionError(f"{exc}\n(screenshot {shot})") from exc
    bad_images = bu.wait_images_loaded(page, path)
    found = bu.page_problems(page, path)
    t1 = time.monotonic()
    shot = _screenshot(page, path, record_property)
    t_shot = time.monotonic() - t1
    print(f"{name}: ran {run.state['executed']}/{run.state['code']} code cells in {run.seconds:.1f} s "
          f"(open {t_open:.1f} s, screenshot {t_shot:.1f} s); {len(found['images'])} images")
    record_property("run_seconds", round(run.seconds, 1))

    problems = []
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
        after = bu.page_problems(page, path)
        for tb in after["tracebacks"]:
            if tb not in found["tracebacks"]:
                problems.append(f"cell {tb['cell']}: error after changing a widget:\n{tb['text'][-1500:]}")

    if problems and page.js_errors:
        problems.append("JavaScript errors on the page: " + " | ".join(page.js_errors[-5:]))
    assert not problems, f"{name} in JupyterLab (screenshot {shot}):\n" + "\n".join(problems)


# ---- the exercise: nbgrader's student release and its Validate button ---------------------

SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$", re.M)
PART_TO_FILL = "positional_encoding"


def _nbgrader_cells(nb: dict) -> dict[str, dict]:
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")}


def _source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _failed_parts(failed_sources: list[str], release_cells: dict[str, dict]) -> list[str]:
    """Map the sources the Validate dialog lists as failed back to the parts of the exercise.

    A failed test cell `test_<part>[_...]` gives `<part>`; an unanswered written answer (a graded
    markdown cell, which Validate lists too) gives "written"; anything else "?<first line>"."""
    tests = {_norm(_source(c)): _part_of(gid) for gid, c in release_cells.items() if gid.startswith("test_")}
    written = {_norm(_source(c)) for c in release_cells.values()
               if c["cell_type"] == "markdown" and c["metadata"]["nbgrader"].get("grade")}
    found = []
    for text in failed_sources:
        key = _norm(text)
        if key in tests:
            found.append(tests[key])
        elif key in written:
            found.append("written")
        else:  # a long source may be shortened in the dialog: match on the first line
            first = key.splitlines()[0] if key else ""
            found.append(next((p for s, p in tests.items() if first and s.startswith(first)), f"?{first[:60]}"))
    return found


# the six parts of shared/exercise-contract.md (their grade_ids)
PARTS = ("positional_encoding", "attention", "multi_head_attention", "feed_forward", "encoder_layer", "encoder")


def _part_of(test_id: str) -> str:
    for part in sorted(PARTS, key=len, reverse=True):
        if test_id == f"test_{part}" or test_id.startswith(f"test_{part}_"):
            return part
    return test_id


@pytest.fixture(scope="session")
def exercise_release(lab_root) -> Path:
    """The student release, made by `nbgrader generate_assignment` in the throw-away copy."""
    source = EXERCISE_DIR / EXERCISE_NOTEBOOK
    assert source.exists(), f"the exercise notebook {source} is missing"
    assert NBGRADER_CONFIG.exists(), f"{NBGRADER_CONFIG} is missing"
    assignment = EXERCISE_DIR.name
    cmd = [str(Path(sys.executable).parent / "nbgrader"), "generate_assignment", assignment, "--force"]
    env = bu.isolated_env(lab_root.parent / "nbgrader_env")
    proc = subprocess.run(cmd, cwd=lab_root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    copies = [p for p in lab_root.rglob(EXERCISE_NOTEBOOK)
              if (lab_root / "notebooks") not in p.parents and ".ipynb_checkpoints" not in p.parts]
    assert len(copies) == 1, f"expected one generated {EXERCISE_NOTEBOOK} under {lab_root}, found {copies}"
    return copies[0]


def test_exercise_release_validates_in_jupyterlab(lab, lab_root, exercise_release, page, record_property):
    path = exercise_release.relative_to(lab_root).as_posix()
    release_cells = _nbgrader_cells(json.loads(exercise_release.read_text()))
    source_cells = _nbgrader_cells(json.loads((EXERCISE_DIR / EXERCISE_NOTEBOOK).read_text()))
    parts = sorted({_part_of(g) for g in release_cells if g.startswith("test_")})
    assert set(parts) == set(PARTS), f"{path}: test cells for {parts}, the contract has {sorted(PARTS)}"
    assert PART_TO_FILL in release_cells, f"{path}: no solution cell {PART_TO_FILL!r}: {sorted(release_cells)}"
    n_written = sum(1 for c in release_cells.values()
                    if c["cell_type"] == "markdown" and c["metadata"]["nbgrader"].get("grade"))
    dialog_shot = SCREENSHOTS / "encoder_from_scratch_release_validate.png"

    bu.open_notebook(page, lab, path)
    try:
        # 1. The release as students get it: Validate lists every part (and the written answers).
        first = bu.run_validate(page, screenshot=dialog_shot)
        record_property("validate_screenshot", str(dialog_shot))
        print(f"screenshot: {dialog_shot} (the Validate dialog on the release)")
        failed = _failed_parts(first["failed_sources"], release_cells)
        print(f"Validate on the release: {first['title']!r}; failing: {failed}")
        assert "validation-failed" in first["classes"], (
            f"Validate on the unsolved release should list failed tests, got {first['title']!r}:\n"
            f"{first['text'][:3000]}")
        assert set(failed) - {"written"} == set(parts), (
            f"unsolved parts reported by Validate: {sorted(set(failed))}; expected the {len(parts)} parts {parts}")
        assert failed.count("written") == n_written, (
            f"Validate lists {failed.count('written')} unanswered written answers, the release has {n_written}")

        # 2. One part filled with its reference solution (from the source notebook): it passes.
        solution = SOLUTION_MARKERS.sub("", _source(source_cells[PART_TO_FILL])).strip() + "\n"
        filled = page.evaluate(
            """([path, gid, src]) => {
              const app = window.jupyterapp;
              for (const w of app.shell.widgets('main')) {
                if (!(w.context && w.context.path === path && w.content)) continue;
                for (const cell of w.content.widgets) {
                  const md = cell.model.getMetadata('nbgrader');
                  if (md && md.grade_id === gid) { cell.model.sharedModel.setSource(src); return true; }
                }
              }
              return false;
            }""",
            [path, PART_TO_FILL, solution],
        )
        assert filled, f"no cell with grade_id {PART_TO_FILL!r} in the page"
        second = bu.run_validate(page)
        failed2 = _failed_parts(second["failed_sources"], release_cells)
        print(f"Validate after filling {PART_TO_FILL!r}: {second['title']!r}; failing: {failed2}")
        assert "validation-failed" in second["classes"], second["text"][:3000]  # the other parts are still open
        assert PART_TO_FILL not in failed2, (
            f"after filling {PART_TO_FILL!r} with its solution Validate still fails it:\n{second['text'][:3000]}")
        assert set(failed2) - {"written"} == set(parts) - {PART_TO_FILL}, (
            f"after filling {PART_TO_FILL!r}: failing {sorted(set(failed2))}, "
            f"expected {sorted(set(parts) - {PART_TO_FILL})}")
    finally:
        _screenshot(page, path, record_property)
