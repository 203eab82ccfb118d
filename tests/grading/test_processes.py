"""A part sees no process but its own (issue 41 item 3), and its verdict does not depend on how the grader
was started (a grader run under ``nohup``, SIGINT ignored).

Each zygote makes a PID namespace for its parts (one at a time) with an init of its own as PID 1. Two
zygotes of one class's sandbox (a :class:`sandbox.Mother`: one bubblewrap, one PID namespace for the
mother and its zygotes) grade at the same moment: one part sleeps, the other looks for it, its own
zygote, the other zygote and the mother with ``stat``, ``open``, ``kill(pid, 0)`` and a listing of
``/proc``. With ``layers={"pidns": False}`` (the defence removed: the part in the sandbox's PID
namespace, as before) the same look finds the sleeping part.
"""

from __future__ import annotations

import signal
import threading
import time

import pytest

from attack_kit import LEVEL, LEVELS, OFF, assert_contained, options, probe, run_part, with_prologue
from course_grader import sandbox

#: the levels with a bubblewrap view (as root, ``userns`` too: bubblewrap makes the user namespace)
VIEWS = [LEVEL] + (["userns"] if LEVEL == "root" else [])

SLEEPER = "import time\ndef probe():\n    time.sleep(6)\n    return 'slept'\n"

LOOK = """
import os
def probe():
    r = {{'pid': os.getpid(), 'seen': {{}}}}
    try:
        r['proc'] = sorted(p for p in os.listdir('/proc') if p.isdigit())
    except OSError as e:
        r['proc'] = type(e).__name__
    for pid in {pids!r}:
        got = []
        for look in (lambda: os.stat(f'/proc/{{pid}}'), lambda: open(f'/proc/{{pid}}/status').close(),
                     lambda: os.kill(pid, 0)):
            try:
                look()
                got.append('there')
            except OSError as e:
                got.append(type(e).__name__)
        r['seen'][str(pid)] = got
    return r
"""
ABSENT = ["FileNotFoundError", "FileNotFoundError", "ProcessLookupError"]


def _nspids(host_pid: int) -> list[int]:
    """A process's pids, outermost first (the host's, bubblewrap's, the part's own namespace's)."""
    with open(f"/proc/{host_pid}/status") as f:
        return [int(p) for p in next(line for line in f if line.startswith("NSpid:")).split()[1:]]


def _children(host_pid: int) -> list[int]:
    with open(f"/proc/{host_pid}/task/{host_pid}/children") as f:
        return [int(p) for p in f.read().split()]


def _sleeping_part(zygote_host: int) -> int:
    """The sleeping part's pid in bubblewrap's namespace (its zygote's child that is no init)."""
    for _ in range(200):
        for child in _children(zygote_host):
            pids = _nspids(child)
            if pids[-1] != 1:
                return pids[1]
        time.sleep(0.05)
    raise AssertionError("the sleeping part did not start")


@pytest.fixture(scope="module", params=VIEWS)
def mother(request):
    m = sandbox.Mother(request.param, 2)
    for z in m.zygotes:
        z.ready()
    yield m
    m.close()


@pytest.mark.parametrize("defended", [True, False], ids=["own_pid_namespace", "defence_removed"])
def test_a_part_sees_no_process_but_its_own(mother, defended):
    sleeper, looker = mother.zygotes
    assert sleeper.info["pidns"] and looker.info["pidns"], sleeper.info["pidns_off"]
    layers = {} if defended else {"pidns": False}
    slept = []
    thread = threading.Thread(target=lambda: slept.append(probe(sleeper, SLEEPER, options(timeout=30),
                                                                layers=dict(OFF, **layers))))
    thread.start()
    try:
        host = sandbox._outer_pid(mother.proc.pid, int(sleeper.info["host_pid"]))
        other_part = _sleeping_part(host)
        others = {"another student's part": other_part, "its zygote": int(looker.info["pid"]),
                  "the other zygote": int(sleeper.info["pid"]), "the mother": _nspids(_parent(host))[1]}
        # Landlock on (as graded), seccomp and the guard off: kill(pid, 0) and listing /proc reach the kernel
        landlocked = probe(looker, LOOK.format(pids=sorted(set(others.values()))),
                           layers={"seccomp": False, "guard": False, **layers})
        bare = probe(looker, LOOK.format(pids=[]), layers=dict(OFF, **layers))   # Landlock off: /proc listed
    finally:
        thread.join()
    assert slept == ["slept"]
    me = landlocked["pid"]
    assert other_part != me, others                             # the number looked for is not its own
    if defended:
        for name, pid in others.items():
            assert pid == me or landlocked["seen"][str(pid)] == ABSENT, (name, pid, landlocked["seen"])
        assert bare["proc"] == [str(bare["pid"])], bare["proc"]
    else:                                                      # the sandbox's namespace: the other part is there
        assert landlocked["seen"][str(other_part)][0] == "there", landlocked
        assert str(other_part) in bare["proc"] and len(bare["proc"]) > 3, bare["proc"]
    for z in mother.zygotes:                                   # nothing of either part is left, only the init
        left = _children(sandbox._outer_pid(mother.proc.pid, int(z.info["host_pid"])))
        assert [_nspids(pid)[-1] for pid in left] == [1], left


def _parent(host_pid: int) -> int:
    with open(f"/proc/{host_pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


@pytest.mark.parametrize("level", VIEWS)
def test_a_part_holds_no_capability(level):
    """The zygote keeps CAP_SYS_ADMIN (to make each part's namespaces); the part drops every capability,
    the bounding set too, before its cell runs."""
    z = sandbox.Zygote(level)
    try:
        z.ready()
        got = probe(z, "def probe():\n    t = open('/proc/self/status').read()\n"
                       "    return [l.split()[1] for l in t.splitlines() if l.startswith('Cap')]\n", layers=OFF)
        assert got == ["0000000000000000"] * 5, got
    finally:
        z.close()


INTERRUPT = "s = getattr(torch, 's' + 'ys')\ns.modules['signal'].raise_signal({sig})\n"


@pytest.mark.parametrize("level", LEVELS)
def test_a_grader_started_with_signals_ignored_still_ends_a_part_that_signals_itself(level):
    """``nohup python -m course_grader autograde ... &`` starts the grader with SIGINT and SIGHUP
    ignored, which every process inherits: the zygote resets them, so a part that signals itself gets
    the verdict it gets when the grader runs in a terminal."""
    kept = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)}
    try:
        z = sandbox.Zygote(level)                              # inherits the ignored signals
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)
    try:
        z.ready()
        for sig, says in ((2, "KeyboardInterrupt"), (1, "ended without a result"), (15, "ended without a result")):
            result, outcome = run_part(z, "feed_forward", with_prologue("feed_forward", INTERRUPT.format(sig=sig)))
            assert result.status == "failed" and says in result.message, (sig, result.message)
            assert_contained(z, outcome)
    finally:
        z.close()
