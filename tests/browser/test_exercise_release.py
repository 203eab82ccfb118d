"""The exercise as a student gets it: nbgrader's student release in JupyterLab, and its Validate button.

The release is made by `nbgrader generate_assignment` in the throw-away copy of the course. Validate
on the fresh release must list every part (and the written answers) as unfinished, with one short
line per part and none of course_lib's frames (a screenshot of the dialog goes to
screenshots/encoder_from_scratch_release_validate.png); a part filled with its solution then
validates while the others stay open.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import a11y_tree
import lab_page
import lab_server
from course_lib.grading.parts import PARTS as GRADED_PARTS

pytestmark = pytest.mark.browser

REPO = lab_server.REPO
EXERCISE_DIR = REPO / "notebooks" / "07_exercise"
EXERCISE_NOTEBOOK = "encoder_from_scratch.ipynb"
SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$", re.M)
PART_TO_FILL = "positional_encoding"
# the autograded parts (their grade_ids): the six of docs/exercise-contract.md and two more
PARTS = GRADED_PARTS
# "one short line per unfinished part": at most this many characters
SHORT_LINE = 160
HTML_TAG = re.compile(r"<[^>]+>")


def _nbgrader_cells(nb: dict) -> dict[str, dict]:
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")}


def _source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _part_of(test_id: str) -> str:
    for part in sorted(PARTS, key=len, reverse=True):
        if test_id == f"test_{part}" or test_id.startswith(f"test_{part}_"):
            return part
    return test_id


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


@pytest.fixture(scope="module")
def exercise_release(lab_root) -> Path:
    """The student release, made by `nbgrader generate_assignment` in the throw-away copy."""
    source = EXERCISE_DIR / EXERCISE_NOTEBOOK
    assert source.exists(), f"the exercise notebook {source} is missing"
    assert lab_server.NBGRADER_CONFIG.exists(), f"{lab_server.NBGRADER_CONFIG} is missing"
    cmd = [str(Path(sys.executable).parent / "nbgrader"), "generate_assignment", EXERCISE_DIR.name, "--force"]
    env = lab_server.isolated_env(lab_root.parent / "nbgrader_env")
    proc = subprocess.run(cmd, cwd=lab_root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    copies = [p for p in lab_root.rglob(EXERCISE_NOTEBOOK)
              if (lab_root / "notebooks") not in p.parents and ".ipynb_checkpoints" not in p.parts]
    assert len(copies) == 1, f"expected one generated {EXERCISE_NOTEBOOK} under {lab_root}, found {copies}"
    return copies[0]


@pytest.fixture(scope="module")
def release_cells(exercise_release) -> dict[str, dict]:
    return _nbgrader_cells(json.loads(exercise_release.read_text()))


def cell_editors(page, path: str) -> list[dict]:
    """Each code cell of the open notebook as JupyterLab shows it (js/cell_editors.js) and as
    Chromium's accessibility tree exposes its editor (role, name, readonly)."""
    cells = lab_page.run_js(page, "cell_editors", path)
    tree = a11y_tree.Tree(page)
    try:
        for cell in cells:
            found = tree.nodes(f'[data-course-cell="{cell["index"]}"] .cm-content')
            node = tree.node(found[0]) if found else {}
            cell["tree"] = {"role": a11y_tree.role(node), "name": a11y_tree.name(node),
                            "readonly": a11y_tree.prop(node, "readonly")}
    finally:
        tree.close()
    return cells


@pytest.fixture(scope="module")
def first_validate(lab, lab_root, exercise_release, browser_context) -> dict:
    """Validate pressed once on the fresh release (a screenshot of its dialog is taken)."""
    path = exercise_release.relative_to(lab_root).as_posix()
    shot = lab_server.SCREENSHOTS / "encoder_from_scratch_release_validate.png"
    page = browser_context.new_page()
    try:
        lab_page.open_notebook(page, lab.url, path, token=lab.token)
        editors = cell_editors(page, path)
        result = lab_page.run_validate(page, screenshot=shot)
        result["editors"] = editors
    finally:
        page.close()
        lab.shutdown_kernels(wait=False)
    print(f"screenshot: {shot} (the Validate dialog on the release)")
    result["screenshot"] = shot
    return result


def test_validate_lists_every_unfinished_part(first_validate, release_cells, record_property):
    record_property("validate_screenshot", str(first_validate["screenshot"]))
    parts = sorted({_part_of(g) for g in release_cells if g.startswith("test_")})
    assert set(parts) == set(PARTS), f"test cells for {parts}, the contract has {sorted(PARTS)}"
    n_written = sum(1 for c in release_cells.values()
                    if c["cell_type"] == "markdown" and c["metadata"]["nbgrader"].get("grade"))
    failed = _failed_parts(first_validate["failed_sources"], release_cells)
    print(f"Validate on the release: {first_validate['title']!r}; failing: {failed}")
    assert "validation-failed" in first_validate["classes"], (
        f"Validate on the unsolved release should list failed tests, got {first_validate['title']!r}:\n"
        f"{first_validate['text'][:3000]}")
    assert set(failed) - {"written"} == set(parts), (
        f"unsolved parts reported by Validate: {sorted(set(failed))}; expected the {len(parts)} parts {parts}")
    assert failed.count("written") == n_written, (
        f"Validate lists {failed.count('written')} unanswered written answers, the release has {n_written}")


def release_lock_problems(cells: list[dict]) -> list[str]:
    """A line for each locked or test cell of a release that is not "editable": false and "deletable":
    false, and for each solution cell a student cannot edit."""
    problems = []
    for k, cell in enumerate(cells):
        nb = cell["metadata"].get("nbgrader", {})
        locked = nb.get("locked") or (nb.get("grade") and not nb.get("solution"))
        if locked and (cell["metadata"].get("editable"), cell["metadata"].get("deletable")) != (False, False):
            problems.append(f"cell {k} ({nb.get('grade_id')}): locked, but not editable: false, deletable: false")
        if nb.get("solution") and cell["metadata"].get("editable") is False:
            problems.append(f"cell {k} ({nb.get('grade_id')}): a solution cell the student cannot edit")
    return problems


def editor_lock_problems(editors: list[dict]) -> list[str]:
    """A line for each locked code cell JupyterLab does not show read-only (aria-readonly on its editor,
    not deletable), and for each solution cell it does."""
    problems = []
    for e in editors:
        if e["locked"] and not (e["readOnly"] and e["ariaReadonly"] == "true" and not e["deletable"]):
            problems.append(f"cell {e['index']} ({e['gradeId']}): locked, but JupyterLab shows it as {e}")
        if e["solution"] and (e["readOnly"] or e["ariaReadonly"] == "true"):
            problems.append(f"cell {e['index']} ({e['gradeId']}): a solution cell shown read-only")
    return problems


def test_locked_cells_are_read_only_in_the_release_and_in_jupyterlab(exercise_release, first_validate):
    """nbgrader's release marks every locked cell and every test cell "editable": false and
    "deletable": false (its LockCells step; the source notebook keeps them editable for the instructor),
    and leaves the solution cells editable. JupyterLab opens those cells read-only and says so to
    assistive technology on the editor (aria-readonly="true"); the solution cells it leaves writable.
    What Chromium's tree makes of it is printed (docs/accessibility.md, "Known gaps": CodeMirror keeps
    contenteditable, so the tree exposes an editable textbox with readonly false)."""
    cells = json.loads(exercise_release.read_text())["cells"]
    editors = first_validate["editors"]
    assert editors and sum(e["locked"] for e in editors) >= 8, editors        # the 8 test cells at least
    for e in editors[:6]:
        print(f"cell {e['index']} {e['gradeId'] or '(no grade_id)'}: read-only {e['readOnly']}, "
              f"aria-readonly {e['ariaReadonly']}, contenteditable {e['contenteditable']}; tree {e['tree']}")
    assert not release_lock_problems(cells) + editor_lock_problems(editors), \
        "\n".join(release_lock_problems(cells) + editor_lock_problems(editors))


def test_the_lock_checks_find_a_cell_left_editable(exercise_release, first_validate):
    cells = json.loads(exercise_release.read_text())["cells"]
    test = next(c for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") == "test_attention")
    del test["metadata"]["editable"]
    answer = next(c for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") == "attention")
    answer["metadata"]["editable"] = False
    found = "\n".join(release_lock_problems(cells))
    assert "(test_attention): locked, but not" in found and "(attention): a solution cell" in found, found
    editors = [dict(e) for e in first_validate["editors"]]
    for e in editors:
        if e["gradeId"] in ("test_attention", "attention"):
            e.update(readOnly=not e["readOnly"], ariaReadonly=None if e["readOnly"] else "true")
    found = "\n".join(editor_lock_problems(editors))
    assert "(test_attention): locked, but JupyterLab" in found and "(attention): a solution cell shown" in found, found


def test_validate_dialog_says_one_short_line_per_part(first_validate, release_cells, record_property):
    """Issue 13: "Part 1: not done yet", not a traceback through course_lib."""
    record_property("validate_screenshot", str(first_validate["screenshot"]))
    problems = []
    if "course_lib" in first_validate["text"]:
        at = first_validate["text"].index("course_lib")
        problems.append(f"the dialog mentions course_lib: ...{first_validate['text'][max(0, at - 300):at + 200]!r}...")
    parts = _failed_parts(first_validate["failed_sources"], release_cells)
    for part, failure in zip(parts, first_validate["failures"]):
        if part == "written":
            continue
        lines = [line.strip() for line in HTML_TAG.sub("", failure["error"]).splitlines() if line.strip()]
        shown = "\n".join(lines)
        if len(lines) != 1:
            problems.append(f"{part}: {len(lines)} lines under the failed cell, expected one:\n{shown[:1500]}")
        elif len(lines[0]) > SHORT_LINE:
            problems.append(f"{part}: a line of {len(lines[0])} characters (at most {SHORT_LINE}): {lines[0]!r}")
        if "Traceback" in shown or 'File "' in shown:
            problems.append(f"{part}: a traceback under the failed cell:\n{shown[:1500]}")
    assert not problems, (f"the Validate dialog on the release (screenshot {first_validate['screenshot']}):\n"
                          + "\n".join(problems))


def test_a_part_filled_with_its_solution_validates(lab, lab_root, exercise_release, release_cells, page,
                                                   notebook_screenshot):
    path = exercise_release.relative_to(lab_root).as_posix()
    source_cells = _nbgrader_cells(json.loads((EXERCISE_DIR / EXERCISE_NOTEBOOK).read_text()))
    assert PART_TO_FILL in release_cells, f"{path}: no solution cell {PART_TO_FILL!r}: {sorted(release_cells)}"
    parts = sorted({_part_of(g) for g in release_cells if g.startswith("test_")})
    lab_page.open_notebook(page, lab.url, path, token=lab.token)
    try:
        solution = SOLUTION_MARKERS.sub("", _source(source_cells[PART_TO_FILL])).strip() + "\n"
        assert lab_page.set_cell_source(page, path, PART_TO_FILL, solution), (
            f"no cell with grade_id {PART_TO_FILL!r} in the page")
        second = lab_page.run_validate(page)
        failed = _failed_parts(second["failed_sources"], release_cells)
        print(f"Validate after filling {PART_TO_FILL!r}: {second['title']!r}; failing: {failed}")
        assert "validation-failed" in second["classes"], second["text"][:3000]  # the other parts are still open
        assert PART_TO_FILL not in failed, (
            f"after filling {PART_TO_FILL!r} with its solution Validate still fails it:\n{second['text'][:3000]}")
        assert set(failed) - {"written"} == set(parts) - {PART_TO_FILL}, (
            f"after filling {PART_TO_FILL!r}: failing {sorted(set(failed))}, "
            f"expected {sorted(set(parts) - {PART_TO_FILL})}")
    finally:
        notebook_screenshot(page, path)
