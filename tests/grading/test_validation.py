"""`nbgrader validate` on the command line prints a failing part's message whole (wrapped at 90
columns, where nbgrader would cut it): course_lib/grading/validation.py, from nbgrader_config.py."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.grading.validation import wrapped

REPO = Path(__file__).resolve().parents[2]
MESSAGE = ("Part 3: a hidden case of the family 'cross-attention with padding': the heads are split the wrong way: "
           "head i takes features [i*d_k, (i+1)*d_k); view (B, T, d_model) as (B, T, num_heads, d_k), then "
           "transpose to (B, num_heads, T, d_k), and undo exactly that before w_o.")


def test_a_long_line_wraps_whole_and_a_short_one_is_as_before():
    out = wrapped(f"short line\n\x1b[31m{MESSAGE}\x1b[0m", indent="    ", width=90)
    lines = out.splitlines()
    assert lines[0] == "    short line"
    assert all(len(line) <= 90 for line in lines) and len(lines) >= 4
    assert lines[1].startswith("    Part 3:") and all(line.startswith("        ") for line in lines[2:])
    assert " ".join(line.strip() for line in lines[1:]) == MESSAGE


@pytest.mark.slow
def test_nbgrader_validate_prints_the_whole_message(tmp_path):
    """A notebook whose one graded test cell fails with the grader's longest kind of message."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell(f"raise AssertionError({MESSAGE!r})")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_multi_head_attention", "locked": True,
                                 "points": 4, "schema_version": 3, "solution": False}
    nb.cells.append(cell)
    nbformat.write(nb, tmp_path / "one_part.ipynb")
    shutil.copy(REPO / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    env.pop("JUPYTER_CONFIG_DIR", None)
    proc = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "validate", "one_part.ipynb"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert "VALIDATION FAILED" in out, out + proc.stderr[-2000:]
    error = out.split("The error was:")[1].split("=" * 20)[0]
    lines = [line for line in error.splitlines() if line.strip()]
    assert all(len(line) <= 90 for line in out.splitlines()), out
    assert " ".join(line.strip() for line in lines).endswith(MESSAGE), out
    assert "..." not in error, out
