"""Shared pieces of the sandbox and attack tests: a zygote, the source notebook's solutions, one part run.

``run_part`` sends a part straight to the zygote, *without* the static policy (the attacks must be
stopped even when the policy is bypassed); ``layers`` switches the seccomp filter and the guard off
to test what the namespaces, the file-system view and the rlimits hold on their own.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from course_grader import runner, sandbox
from course_lib.grading.seeds import hidden_seeds

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"
LEVEL = sandbox.detect_level()
OUTSIDE = ("/run/lock", "/dev/shm", "/tmp", "/var/tmp", "/srv")
MARK = "course-attack"

_NB = nbformat.read(SOURCE, as_version=4)
GOOD = runner.solution_sources(_NB)
CASES = runner.make_all_cases(hidden_seeds(_NB))
WANTS = runner.expected_answers(CASES)
OFF = {"seccomp": False, "guard": False, "landlock": False}


# the attacks run at this machine's level and, as root, also at the level of a root grader whose
# container refuses namespaces ("rlimits": no view, so the guard and seccomp alone must stop them)
LEVELS = [LEVEL] + (["rlimits"] if LEVEL == "root" else [])


@pytest.fixture(scope="module")
def zygote():
    z = sandbox.Zygote(LEVEL)
    z.ready()
    yield z
    z.close()


@pytest.fixture(scope="module", params=LEVELS)
def any_zygote(request):
    z = sandbox.Zygote(request.param)
    z.ready()
    yield z
    z.close()


def options(**kw) -> sandbox.SandboxOptions:
    return sandbox.SandboxOptions(**{"timeout": 10.0, **kw})


def grade_here(sources: dict, z, opts) -> dict:
    """{part: PartResult} for one notebook's solution sources, run by ``z`` and judged in this process."""
    return runner.grade_with(sources, z, lambda part, outcome: runner.judge(part, CASES[part], WANTS[part], outcome),
                             opts, cases=CASES)


def run_part(z, part: str, source: str, opts=None, **extra):
    """(PartResult, Outcome) for ``source`` as the cell of ``part``; no static policy."""
    header, arrays = runner.request(part, source, CASES[part], opts or options(), z.read_roots, **extra)
    outcome = z.run(header, arrays)
    return runner.judge(part, CASES[part], WANTS[part], outcome), outcome


def probe(z, source: str, opts=None, layers=None) -> dict:
    """What ``probe()`` defined in ``source`` returns inside a part process (JSON)."""
    header, arrays = runner.request("attention", source, CASES["attention"][:1], opts or options(), z.read_roots,
                                    probe=True, layers=layers or {})
    outcome = z.run(header, arrays)
    assert outcome.status == "ok", outcome.failure
    return outcome.header["probe"]


def with_prologue(part: str, prologue: str) -> str:
    """The correct solution of ``part`` with ``prologue`` run first (at the cell's top level)."""
    return prologue.strip("\n") + "\n" + GOOD[part]


def processes_of(uid: int, under: int) -> list[int]:
    """The processes below ``under`` (a zygote's process: its parts, and any orphan of theirs, which the
    zygote adopts as their subreaper) that have ``uid``; never another process of the machine."""
    found = []
    for pid in descendants(under):
        try:
            with open(f"/proc/{pid}/status") as f:
                uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
        except (OSError, StopIteration):
            continue
        if str(uid) in uids:
            found.append(pid)
    return found


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def started_by(pid: int, ancestor: int) -> bool:
    """Whether ``ancestor`` is ``pid`` or one of its ancestors (False for a process gone meanwhile)."""
    try:
        while pid > 1:
            if pid == ancestor:
                return True
            pid = _parent(pid)
    except (OSError, ValueError, IndexError):
        return False
    return False


def running(script: str, ancestor: int | None = None) -> list[int]:
    """Processes whose command line names ``script``: zygotes, and anything their parts forked. With
    ``ancestor``, only those it started (a test asserts on what it made: another test's zygotes may run
    beside it), and the orphans (parent 1) a dead grader leaves."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if script.encode() in f.read().split(b"\0"):
                    pid = int(entry)
                    if ancestor is None or started_by(pid, ancestor) or _parent(pid) == 1:
                        found.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, theirs, ...), from /proc."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found += [int(entry)] + descendants(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def marks_outside() -> list[str]:
    """Files the attacks try to leave behind, anywhere they could have written."""
    found = []
    for d in OUTSIDE:
        try:
            found += [os.path.join(d, n) for n in os.listdir(d) if n.startswith(MARK)]
        except OSError:
            pass
    return found


PART_UID = sandbox.SandboxOptions().uid        # the parts' uid when the grader is root (nobody)


def assert_contained(z, outcome=None, uid: int = PART_UID) -> None:
    """Nothing of the part survives, nothing was left outside, the zygote still serves a correct part."""
    if outcome is not None:
        assert outcome.survivors == 0
    if LEVEL == "root":
        deadline = time.monotonic() + 3
        while processes_of(uid, z.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_of(uid, z.proc.pid) == []
    assert marks_outside() == []
    assert z.proc.poll() is None
    result, _ = run_part(z, "feed_forward", GOOD["feed_forward"])
    assert result.passed, result.message


def kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def released_course(root: Path):
    """A course directory at ``root`` (the exercise's source and the course's nbgrader_config.py) with
    the exercise released by ``nbgrader generate_assignment``; returns the source's solutions filled
    into the released notebook, the submission of a student who solved everything."""
    from exercise_corpus.submissions import solved  # noqa: PLC0415

    assignment = SOURCE.parent.name
    shutil.copytree(SOURCE.parent, root / "notebooks" / assignment, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    subprocess.run([str(bin_dir / "nbgrader"), "generate_assignment", assignment], cwd=root, env=env,
                   check=True, capture_output=True, timeout=900)
    release = nbformat.read(root / "release" / assignment / SOURCE.name, as_version=4)
    return solved(release, nbformat.read(root / "notebooks" / assignment / SOURCE.name, as_version=4))
