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


@pytest.fixture(scope="module")
def first_validate(lab, lab_root, exercise_release, browser_context) -> dict:
    """Validate pressed once on the fresh release (a screenshot of its dialog is taken)."""
    path = exercise_release.relative_to(lab_root).as_posix()
    shot = lab_server.SCREENSHOTS / "encoder_from_scratch_release_validate.png"
    page = browser_context.new_page()
    try:
        lab_page.open_notebook(page, lab.url, path, token=lab.token)
        result = lab_page.run_validate(page, screenshot=shot)
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
