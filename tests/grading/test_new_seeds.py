"""`python -m course_grader new-seeds`: an instructor's own hidden seeds, nothing else changed."""

import shutil
import subprocess
import sys

import nbformat
from attack_kit import SOURCE

from course_lib.grading.cases import hidden_seeds, make_cases
from course_lib.grading.parts import PARTS


def test_new_seeds_change_only_the_seeds(tmp_path):
    path = tmp_path / "source.ipynb"
    shutil.copy(SOURCE, path)
    proc = subprocess.run([sys.executable, "-m", "course_grader", "new-seeds", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    old, new = nbformat.read(SOURCE, as_version=4), nbformat.read(path, as_version=4)
    old_seeds, new_seeds = hidden_seeds(old), hidden_seeds(new)
    assert set(old_seeds) == set(new_seeds) == set(PARTS)
    assert all(old_seeds[p] != new_seeds[p] and 0 <= new_seeds[p] < 2 ** 64 for p in PARTS)
    assert len(set(new_seeds.values())) == len(PARTS)
    changed = [(a, b) for a, b in zip(SOURCE.read_text().splitlines(), path.read_text().splitlines()) if a != b]
    assert len(changed) == len(PARTS) and all("hidden_seed=" in b for _, b in changed)     # a diff of seeds only
    hidden = [c for c in make_cases("attention", new_seeds["attention"]) if c.hidden]
    assert hidden and not any(c.hidden for c in make_cases("attention"))

