"""The points of the exercise: read from, and written into, the source notebook's nbgrader metadata.

nbgrader grades with the ``points`` of each graded cell of the source notebook (``nbgrader
generate_assignment`` copies them into its gradebook), so that metadata is the one source of truth:
:func:`points` reads it, and :func:`set_points` changes it together with the two places the
notebook's text shows it (the table of the introduction and the heading of each part). Standard
library only.

Command line::

    python -m course_grader points [NOTEBOOK]                      # the table
    python -m course_grader points [NOTEBOOK] multi_head_attention=5 answer_reverser=3
"""

from __future__ import annotations

import json
import re
import sys

from course_lib.grading.parts import NUMBERS, PARTS, part_of_test

SOURCE = "notebooks/07_exercise/encoder_from_scratch.ipynb"
WRITTEN_PART = len(PARTS) + 1          # Part 9: the written answers, graded by hand


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _text(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _number(value: float):
    return int(value) if float(value).is_integer() else float(value)


def graded_cells(nb) -> dict[str, float]:
    """``{grade_id: points}`` of every graded cell (the autograded test cells and the written answers)."""
    return {_meta(c)["grade_id"]: _number(_meta(c).get("points", 0)) for c in nb["cells"] if _meta(c).get("grade")}


def points(nb) -> dict[str, float]:
    """``{part: points}`` of the autograded parts: the sum over each part's test cells."""
    out = {part: 0 for part in PARTS}
    for gid, value in graded_cells(nb).items():
        part = part_of_test(gid)
        if part is not None:
            out[part] = _number(out[part] + value)
    return out


def written(nb) -> dict[str, float]:
    """``{grade_id: points}`` of the answers graded by hand (the graded cells that are not tests)."""
    return {gid: v for gid, v in graded_cells(nb).items() if part_of_test(gid) is None}


def _plural(value) -> str:
    return f"{value} point" if value == 1 else f"{value} points"


def _retext(nb) -> None:
    """The introduction's table and each part's heading, from the metadata."""
    shown = dict(points(nb))
    by_number = {NUMBERS[p]: v for p, v in shown.items()}
    by_number[WRITTEN_PART] = _number(sum(written(nb).values()))
    for cell in nb["cells"]:
        if cell.get("cell_type") != "markdown":
            continue
        text = _text(cell)
        new = re.sub(r"^(\| (\d+) \| .* \| )(\d+(?:\.\d+)?)( \|)$",
                     lambda m: f"{m[1]}{by_number.get(int(m[2]), m[3])}{m[4]}", text, flags=re.M)
        new = re.sub(r"^(## Part (\d+): [^\n]*\()(\d+(?:\.\d+)?) points?",
                     lambda m: m[1] + _plural(by_number[int(m[2])]) if int(m[2]) in by_number else m[0],
                     new, flags=re.M)
        if new != text:
            cell["source"] = new.splitlines(keepends=True) if isinstance(cell.get("source"), list) else new


def text_points(nb) -> dict[int, tuple]:
    """``{part number: (points in the introduction's table, points in the part's heading)}``, as the text shows them."""
    table, heads = {}, {}
    for cell in nb["cells"]:
        if cell.get("cell_type") == "markdown":
            text = _text(cell)
            for m in re.finditer(r"^\| (\d+) \| .* \| (\d+(?:\.\d+)?) \|$", text, flags=re.M):
                table[int(m[1])] = _number(float(m[2]))
            for m in re.finditer(r"^## Part (\d+): [^\n]*\((\d+(?:\.\d+)?) points?", text, flags=re.M):
                heads[int(m[1])] = _number(float(m[2]))
    return {n: (table.get(n), heads.get(n)) for n in sorted(set(table) | set(heads))}


def set_points(nb, changes: dict) -> None:
    """Give the graded cells new points, in place: ``{part or grade_id: points}``. A part's points go to
    its one test cell. The text (table and headings) follows."""
    cells = {_meta(c).get("grade_id"): c for c in nb["cells"] if _meta(c).get("grade")}
    for name, value in changes.items():
        value = float(value)
        if value < 0:
            raise ValueError(f"{name}: points must be >= 0, got {value:g}")
        if name in PARTS:
            tests = [gid for gid in cells if part_of_test(gid) == name]
            if len(tests) != 1:
                raise ValueError(f"{name}: expected one test cell, found {tests}; name the cell's grade_id instead")
            name = tests[0]
        if name not in cells:
            raise ValueError(f"{name}: not a part ({', '.join(PARTS)}) nor a graded cell ({', '.join(cells)})")
        cells[name]["metadata"]["nbgrader"]["points"] = _number(value)
    _retext(nb)


def table(nb) -> str:
    lines = [f"{'part':<24} {'points':>6}"]
    for part, value in points(nb).items():
        lines.append(f"{NUMBERS[part]} {part:<22} {value:>6}")
    for gid, value in written(nb).items():
        lines.append(f"{WRITTEN_PART} {gid:<22} {value:>6}  (by hand)")
    auto, by_hand = sum(points(nb).values()), sum(written(nb).values())
    lines.append(f"autograded {_number(auto)}, by hand {_number(by_hand)}, total {_number(auto + by_hand)}")
    return "\n".join(lines)


def main(argv: list) -> int:
    path = argv[0] if argv and "=" not in argv[0] else SOURCE
    changes = dict(arg.split("=", 1) for arg in argv if "=" in arg)
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)                        # as stored: the diff is the points and their text only
    if changes:
        try:
            set_points(nb, changes)
        except ValueError as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 2
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    print(table(nb))
    if changes:
        print(f"{path}: updated; now run nbgrader generate_assignment (with --force if it was released)")
    return 0
