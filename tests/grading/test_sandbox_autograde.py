"""The sandboxed ``autograde`` command end to end on a tiny class: trust in text, links, one bad apple,
and (run as root) the files it wrote given back to the course's owner.

A student whose exception says "could not grade" is graded (zero for that part) and the run exits 0;
a submission that is a symbolic link (to another student's notebook) is reported, not followed and
not recorded; the attack of one student costs nobody else anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from attack_kit import REPO
from exercise_corpus.submissions import apply, solved

ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"
BIN = Path(sys.executable).parent


def _run(args, cwd):
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_autograde_trusts_structure_not_text(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(REPO / "notebooks" / ASSIGNMENT, root / "notebooks" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    assert _run([str(BIN / "nbgrader"), "generate_assignment", ASSIGNMENT], root).returncode == 0
    release = nbformat.read(root / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    source = nbformat.read(root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    good = solved(release, source)
    says = apply(good, [("prepend", "encoder", "raise RuntimeError('could not grade: grader error')\n")])
    attacker = apply(good, [("prepend", "attention", "o = getattr(torch, 'o' + 's')\no.kill(o.getppid(), 9)\n")])
    for student, nb in {"good": good, "says": says, "attacker": attacker}.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{NOTEBOOK}.ipynb")
    linked = root / "submitted" / "linked" / ASSIGNMENT
    linked.mkdir(parents=True)
    (linked / f"{NOTEBOOK}.ipynb").symlink_to(root / "submitted" / "good" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")

    instructor = 4242 if os.geteuid() == 0 else os.geteuid()     # the course belongs to someone else than root
    for path in [root, *root.rglob("*")]:
        os.lchown(path, instructor, instructor)

    proc = _run([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--jobs", "2", "--allow-public-seeds",
                 "--part-timeout", "10"], root)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "linked/encoder_from_scratch is not a valid submission" in proc.stderr
    assert "Could not grade" not in proc.stderr

    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        def scores(student):
            nb = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student)
            return {g.name: (g.auto_score, g.max_score) for g in nb.grades if g.name.startswith("test_")}
        assert all(a == m for a, m in scores("good").values())
        lost = {k for k, (a, m) in scores("says").items() if a != m}
        assert lost == {"test_encoder"}
        lost = {k for k, (a, m) in scores("attacker").items() if a != m}
        assert lost == {"test_attention"}
        try:
            gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, "linked")
            recorded = True
        except MissingEntry:
            recorded = False
        assert not recorded
    assert not (root / "autograded" / "linked").exists()
    written = [p for p in root.rglob("*") if p.is_relative_to(root / "autograded") or p.suffix in (".db", ".csv")]
    assert len(written) > 10 and all(p.lstat().st_uid == instructor for p in written)
    assert [str(p) for p in root.rglob("*") if p.lstat().st_uid != instructor] == []   # nothing left to root
