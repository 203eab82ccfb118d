"""The lectures' practice exercises (course_lib.practice): each is stored unsolved, each has a check
and a solution one click away, and its check answers both the solution and a typical mistake.

One kernel per lecture runs the notebook top to bottom as stored; at each exercise it first runs the
solution, then the mistake (each followed by the exercise's check), then the stored cell as it is, so
the rest of the lecture runs as a student who skipped the exercise would see it.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_lib.practice import FAIL, PASS

ROOT = Path(__file__).resolve().parents[1]
LECTURES = sorted((ROOT / "notebooks").glob("0[1-68]_*.ipynb"))
MINIMUM = {"08": 2}          # exercises per lecture: 3, and 2 in the capstone
KINDS = {"write", "predict", "change"}
FENCE = re.compile(r"```python\n(.*?)```", re.S)


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def exercises(nb) -> list[tuple[int, int, str]]:
    """(exercise index, check index, solution source) for every exercise of ``nb``; asserts the shape."""
    found = []
    cells = nb.cells
    for i, cell in enumerate(cells):
        if "exercise" not in tags(cell):
            continue
        assert cell.cell_type == "code", f"cell {i}: an exercise is a code cell"
        practice = cell.metadata.get("practice", {})
        assert practice.get("kind") in KINDS, f"cell {i}: metadata practice.kind must be one of {KINDS}"
        assert practice.get("mistake") and practice.get("says"), f"cell {i}: practice.mistake/says missing"
        check = next((j for j in range(i + 1, len(cells)) if "check" in tags(cells[j])), None)
        assert check is not None and cells[check].cell_type == "code", f"cell {i}: no check cell after it"
        assert not any("exercise" in tags(c) for c in cells[i + 1:check]), f"cell {i}: its check comes late"
        sol = next((j for j in range(check + 1, len(cells)) if "solution" in tags(cells[j])), None)
        assert sol is not None and cells[sol].cell_type == "markdown", f"cell {i}: no solution cell"
        text = cells[sol].source
        assert "<details>" in text and "</details>" in text, f"cell {sol}: the solution is not collapsed"
        code = FENCE.search(text)
        assert code, f"cell {sol}: the solution has no ```python block"
        found.append((i, check, code.group(1)))
    return found


def stream_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem[:2])
def test_lecture_has_practice(path):
    nb = nbformat.read(path, as_version=4)
    found = exercises(nb)
    assert len(found) >= MINIMUM.get(path.stem[:2], 3), f"{path.name}: {len(found)} practice exercises"
    for _, check, _ in found:
        stored = stream_text(nb.cells[check]).strip()
        assert stored.startswith(FAIL), f"{path.name} cell {check}: stored solved, or its check printed {stored!r}"
        assert len(stored.splitlines()) == 1, f"{path.name} cell {check}: feedback is not one line"


def test_practice_mixes_the_three_kinds():
    kinds = {}
    for path in LECTURES:
        nb = nbformat.read(path, as_version=4)
        for i, _, _ in exercises(nb):
            kinds.setdefault(nb.cells[i].metadata["practice"]["kind"], []).append(path.stem[:2])
    assert set(kinds) == KINDS, kinds


@pytest.mark.slow
@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem[:2])
def test_solution_and_mistake_get_their_feedback(path):
    nb = nbformat.read(path, as_version=4)
    found = {i: (check, solution) for i, check, solution in exercises(nb)}
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    problems = []

    def run(source: str, index: int) -> str:
        cell = nbformat.v4.new_code_cell(source)
        client.execute_cell(cell, index)
        return stream_text(cell).strip()

    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if i in found:
                check, solution = found[i]
                practice = cell.metadata["practice"]
                for label, source in (("solution", solution), ("mistake", practice["mistake"])):
                    run(source, i)
                    said = run(nb.cells[check].source, check)
                    lines = said.splitlines()
                    if len(lines) != 1:
                        problems.append(f"cell {i} {label}: the check printed {len(lines)} lines: {said!r}")
                    elif label == "solution" and not said.startswith(PASS):
                        problems.append(f"cell {i}: the solution gets {said!r}")
                    elif label == "mistake" and not (said.startswith(FAIL) and practice["says"] in said):
                        problems.append(f"cell {i}: the mistake gets {said!r}, expected {practice['says']!r}")
            client.execute_cell(copy.deepcopy(cell), i)
    assert not problems, "\n".join(problems)


def test_a_check_prints_one_line_returns_nothing_and_never_raises(capsys):
    from course_lib.practice import check, passed

    @check
    def fine():
        return passed("right")

    @check
    def broken(answer):
        return answer.shape                          # the student's answer is not what the check expects

    assert fine() is None and capsys.readouterr().out == f"{PASS} right\n"
    assert broken(3) is None
    said = capsys.readouterr().out
    assert said.startswith(f"{FAIL} the check could not read your answer (AttributeError") and said.count("\n") == 1
