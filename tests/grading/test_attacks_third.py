"""The third red-team round (issue 30) that fits in the sandbox's own tests: system calls on other
processes (their limits, priority, affinity, scheduling, I/O priority) and System V IPC.

As in test_attacks.py, each payload is the correct solution of its part plus an attack; here the guard
and Landlock are off (a raw system call through ``ctypes``), so what holds is the seccomp filter alone,
at this machine's level and, as root, at the ``uid`` level too (where the part sees the machine's
processes).
"""

from __future__ import annotations

import os

import pytest
from attack_kit import any_zygote, assert_contained, probe, run_part, with_prologue, zygote  # noqa: F401

SYSCALL = ("s = getattr(torch, 's' + 'ys')\nc = s.modules['ct' + 'ypes']\n"
           "L = c.c_long\nsc = c.CDLL(None).syscall\nbuf = c.create_string_buffer(256)\n")
ME = os.getpid()                                   # the test's own process: the instructor's, for the part

# (name, the raw call): each must end the part (SIGSYS), whatever its target
ON_OTHERS = [
    ("prlimit_another_process", f"sc(L(302), L({ME}), L(7), L(0), buf)"),
    ("prlimit_set_another", f"sc(L(302), L({ME}), L(7), buf, L(0))"),
    ("setpriority_another_process", f"sc(L(141), L(0), L({ME}), L(19))"),
    ("setpriority_a_process_group", "sc(L(141), L(1), L(0), L(19))"),
    ("setpriority_a_whole_user", "sc(L(141), L(2), L(0), L(19))"),
    ("sched_setaffinity_another", f"sc(L(203), L({ME}), L(8), buf)"),
    ("sched_setscheduler_another", f"sc(L(144), L({ME}), L(0), buf)"),
    ("sched_setparam_another", f"sc(L(142), L({ME}), buf)"),
    ("sched_setattr_another", f"sc(L(314), L({ME}), buf, L(0))"),
    ("ioprio_set_another", f"sc(L(251), L(1), L({ME}), L(0))"),
    ("ioprio_set_a_user", "sc(L(251), L(3), L(0), L(0))"),
    ("migrate_pages_of_another", f"sc(L(256), L({ME}), L(8), buf, buf)"),
    # System V IPC and POSIX message queues: refused outright
    ("shmget", "sc(L(29), L(0), L(1 << 20), L(0o1600))"),
    ("shmat", "sc(L(30), L(0), L(0), L(0))"),
    ("msgget", "sc(L(68), L(0), L(0o1600))"),
    ("semget", "sc(L(64), L(0), L(1), L(0o1600))"),
    ("mq_open", "sc(L(240), c.c_char_p(b'/course-attack'), L(0o102), L(0o600), L(0))"),
    ("socketpair", "sc(L(53), L(1), L(1), L(0), buf)"),
]


@pytest.mark.parametrize("name, call", ON_OTHERS, ids=[a[0] for a in ON_OTHERS])
def test_a_call_on_another_process_or_ipc_ends_the_part(any_zygote, name, call):  # noqa: F811
    limits = open(f"/proc/{ME}/limits").read()
    result, outcome = run_part(any_zygote, "feed_forward", with_prologue("feed_forward", SYSCALL + call + "\n"),
                               layers={"guard": False, "landlock": False})
    assert result.status == "failed" and "system call" in result.message, result.message
    assert open(f"/proc/{ME}/limits").read() == limits
    assert os.getpriority(os.PRIO_PROCESS, ME) == 0
    assert_contained(any_zygote, outcome)


OWN = ("import os\ndef probe():\n" + "".join("    " + line + "\n" for line in SYSCALL.splitlines()) +
       "    me = os.getpid()\n"
       "    return [sc(L(302), L(0), L(7), L(0), buf), sc(L(302), L(me), L(7), L(0), buf),\n"
       "            sc(L(141), L(0), L(0), L(5)), sc(L(141), L(0), L(me), L(6)),\n"
       "            os.sched_setaffinity(0, os.sched_getaffinity(0)), sc(L(251), L(1), L(0), L(0)),\n"
       "            os.getpriority(os.PRIO_PROCESS, 0)]\n")


def test_the_same_calls_on_the_part_itself_are_allowed(any_zygote):  # noqa: F811
    """pid 0 or the part's own pid: a library that lowers its own priority or reads its own limits runs."""
    got = probe(any_zygote, OWN, layers={"guard": False, "landlock": False})
    assert got == [0, 0, 0, 0, None, 0, 6], got
