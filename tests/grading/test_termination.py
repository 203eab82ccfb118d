"""The grader told to end (SIGTERM) ends everything it started at once, and leaves no cgroup; a grader
killed outright (SIGKILL) takes its slots with it, and its cgroups are swept by the next start-up."""

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
from course_grader import cgroups
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


def _cgroups_of(pid: int) -> list:
    return [os.path.join(p, n) for p in cgroups.parents() for n in os.listdir(p)
            if n.startswith(f"{cgroups.PREFIX}{pid}-")]


def test_sigterm_ends_everything_at_once(course, tmp_path):
    proc, started = _start(course, tmp_path / "log")
    before = _cgroups_of(proc.pid)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 3
    while _alive(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(started) == [], (tmp_path / "log").read_text()[-2000:]
    assert _cgroups_of(proc.pid) == []
    assert "Received SIGTERM" in (tmp_path / "log").read_text()
    if os.geteuid() == 0 and cgroups.parents():
        assert before, "a root grader has cgroups"


def test_sigkill_takes_the_slots_along_and_the_next_start_sweeps(course, tmp_path):
    proc, started = _start(course, tmp_path / "log")
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 3
    while _alive(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(started) == []                            # parent-death signals: no slot outlives it
    if os.geteuid() == 0:
        left = _cgroups_of(proc.pid)
        swept = cgroups.sweep()
        assert set(left) <= set(swept) and _cgroups_of(proc.pid) == []


@pytest.mark.skipif(os.geteuid() != 0 or not cgroups.parents(), reason="cgroups need root")
def test_sweep_removes_orphans_only():
    parent = cgroups.parents()[0]
    dead = max(int(p) for p in os.listdir("/proc") if p.isdigit()) + 10_000
    orphan, live, unknown = (os.path.join(parent, f"{cgroups.PREFIX}{name}")
                             for name in (f"{dead}-0123456789ab", f"{os.getpid()}-0123456789ab", "0123456789ab"))
    for path in (orphan, live, unknown):
        os.mkdir(path)
    try:
        assert orphan in cgroups.sweep() and not os.path.exists(orphan)
        assert os.path.isdir(live) and os.path.isdir(unknown)
    finally:
        for path in (orphan, live, unknown):
            if os.path.isdir(path):
                os.rmdir(path)
