"""The grader told to end (SIGTERM) ends everything it started at once; a grader killed outright (SIGKILL)
takes its slots, its sandbox and their parts with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from attack_kit import descendants, released_course
from exercise_corpus.submissions import apply

ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"
BIN = Path(sys.executable).parent
ENV = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A class of four whose parts loop forever: grading it takes a while."""
    root = tmp_path_factory.mktemp("term") / "course"
    good = released_course(root)
    loops = apply(good, [("prepend", p, "while True:\n    pass\n") for p in ("encoder", "encoder_layer")])
    for student in ("a", "b", "c", "d"):
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(loops, folder / f"{NOTEBOOK}.ipynb")
    return root


def _start(root: Path, log: Path):
    proc = subprocess.Popen([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--jobs", "2",
                             "--allow-public-seeds", "--part-timeout", "30"],
                            cwd=root, env=ENV, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    deadline = time.monotonic() + 120
    while "Grading 4 notebook(s)" not in log.read_text() and time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        time.sleep(0.2)
    time.sleep(2.0)                                          # the slots are mid-part
    started = descendants(proc.pid)
    assert len(started) >= 6, started                       # the sandbox, two zygotes, two slots of two forks
    return proc, started


def _alive(pids) -> list:
    left = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    left.append(pid)
        except OSError:
            continue
    return left


def test_sigterm_ends_everything_at_once(course, tmp_path):
    proc, started = _start(course, tmp_path / "log")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 15
    while _alive(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(started) == [], (tmp_path / "log").read_text()[-2000:]
    assert "Received SIGTERM" in (tmp_path / "log").read_text()


def test_sigkill_takes_the_slots_along(course, tmp_path):
    proc, started = _start(course, tmp_path / "log")
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 15
    while _alive(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(started) == []                            # parent-death signals: no slot outlives it
