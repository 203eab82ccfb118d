"""`nbgrader validate` on the command line prints a failing part's message whole (wrapped at 90
columns, where nbgrader would cut it): course_lib/grading/validation.py, from nbgrader_config.py.

It replaces a private method of nbgrader's (validation.PRIVATE): the tests check that the installed
nbgrader still has it, still cuts with it, and that an nbgrader without it is refused loudly."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.grading import validation
from course_lib.grading.validation import NbgraderChanged, wrapped

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


def test_the_installed_nbgrader_has_the_private_method_and_still_cuts_with_it():
    """In a fresh process: nbgrader's own ``Validator._indent(self, val)`` is there and cuts the message
    of a failed cell in the report (if it stopped cutting, the replacement could go); replaced, the
    same report holds the message whole."""
    code = f"""
import inspect, io
from nbgrader.validator import Validator
from course_lib.grading.validation import wrap_long_lines
print(list(inspect.signature(Validator._indent).parameters), Validator._indent.__module__)
def report():
    v = Validator()
    v.stream = io.StringIO()
    v._print_error("check_multi_head_attention(MultiHeadAttention)", {MESSAGE!r})
    return v.stream.getvalue().split("The error was:")[1]
print(repr(report()))
wrap_long_lines()
print(repr(report()))
"""
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    signature, cut, whole = proc.stdout.splitlines()
    assert signature == "['self', 'val'] nbgrader.validator"
    cut, whole = eval(cut), eval(whole)
    assert "..." in cut and MESSAGE not in " ".join(line.strip() for line in cut.splitlines())
    assert " ".join(line.strip() for line in whole.splitlines() if line.strip()) == MESSAGE


@pytest.mark.parametrize("change", ["gone", "new signature"])
def test_an_nbgrader_without_the_private_method_is_refused(monkeypatch, change):
    from nbgrader.validator import Validator

    if change == "gone":
        monkeypatch.delattr(Validator, "_indent")
    else:
        monkeypatch.setattr(Validator, "_indent", lambda self, val, width: val)
    with pytest.raises(NbgraderChanged, match=r"expected nbgrader\.validator\.Validator\._indent\(self, val\)"):
        validation.wrap_long_lines()
    assert getattr(Validator, "_indent", None) is not validation._indent


def test_the_course_config_still_applies_when_nbgrader_changed(monkeypatch, capsys):
    """traitlets ignores a config file that raises: nbgrader_config.py reports the change on stderr and
    goes on, so the course directory, the timeouts and the feedback settings still hold."""
    from nbgrader.validator import Validator
    from traitlets.config.loader import PyFileConfigLoader

    monkeypatch.delattr(Validator, "_indent")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    assert config.CourseDirectory.course_id == "transformer-encoder-hands-on"
    assert config.OverwriteCells.add_missing_cells is True
    assert "nbgrader_config.py: nbgrader " in capsys.readouterr().err


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
