"""Two audiences, two packages: what a student installs (course_lib) holds nothing of the instructor's
grader (course_grader, in grader/), and nothing in course_lib imports it."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GRADER = "course_grader"


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_course_lib_never_imports_the_grader():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "course_lib").rglob("*.py") if GRADER in imports(p)]
    assert not offenders, offenders
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "course_lib").rglob("*.py"))
    assert "import_module(\"course_grader" not in text and "import_module('course_grader" not in text


def test_the_grader_imports_course_lib_and_not_the_other_way():
    assert any("course_lib" in imports(p) for p in (ROOT / "grader" / GRADER).glob("*.py"))


@pytest.mark.slow
def test_the_student_wheel_holds_no_grader(tmp_path):
    """The wheel `pip install .[lab]` builds from the repository: course_lib only, no sandbox code."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(tmp_path.glob("course_lib-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("course_lib/grading/checks.py") for n in names)        # the visible checks ship
    sandbox = ("sandbox", "seccomp", "confine", "zygote", "landlock", "autograde", "runner", "judge")
    leaked = [n for n in names if n.startswith(GRADER) or "autograder" in n
              or Path(n).stem in sandbox]
    assert not leaked, leaked
