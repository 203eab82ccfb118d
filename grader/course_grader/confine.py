"""Resource limits, the uid drop of a part, and the end of whatever a part started.

Loaded by the zygote by file path (standard library only). The namespaces and the file-system view
are bubblewrap's (:func:`course_grader.sandbox.bwrap_argv`); what is left here is per part:
:func:`limit` (rlimits), :func:`drop` (another uid as root, then no_new_privs and not dumpable),
:func:`die_with_parent`, :func:`kill_group` and :func:`end_orphans` (the zygote is its parts'
subreaper).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import time

PR_SET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 3, 4, 36, 38

_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, value, 0, 0, 0), f"prctl({option})")


def dumpable() -> int:
    """PR_GET_DUMPABLE: 0 when processes of the same uid may not read this one's memory (/proc/PID/mem)."""
    return _libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)


def limit(memory_mb: int, cpu_seconds: int, max_file_mb: int, nproc: int = 1) -> None:
    """rlimits of the part process: address space (on top of what it maps already), CPU, files, no
    core dumps, and RLIMIT_NPROC=1: no second process for this uid (not enforced for root)."""
    with open("/proc/self/statm") if os.path.exists("/proc/self/statm") else open(os.devnull) as f:
        pages = f.read().split()
    mapped = int(pages[0]) * resource.getpagesize() if pages else 0
    limits = {resource.RLIMIT_AS: mapped + memory_mb * 2 ** 20, resource.RLIMIT_CPU: cpu_seconds,
              resource.RLIMIT_NPROC: nproc, resource.RLIMIT_FSIZE: max_file_mb * 2 ** 20,
              resource.RLIMIT_NOFILE: 64, resource.RLIMIT_CORE: 0, resource.RLIMIT_MEMLOCK: 0}
    for which, value in limits.items():
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))


def drop(level: str, uid: int, gid: int) -> None:
    """Leave root for good where the grader is root (``root``, and ``rlimits`` run by root: another uid);
    in bubblewrap's user namespace (``userns``) there is no capability to leave. Then no_new_privs and
    not dumpable."""
    if level != "userns" and os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if 0 in os.getresuid():
            raise RuntimeError("could not drop root")
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_DUMPABLE, 0)


def die_with_parent(parent: int) -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(9)


def kill_group(pid: int) -> None:
    """SIGKILL the part's process group (its own, once its setsid ran), and the part itself."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, 9)
        except ProcessLookupError:
            pass


def end_orphans(deadline: float) -> int:
    """Kill and reap every child this subreaper still has (only the part's orphans: the part itself is
    reaped). The number still there at the deadline."""
    me = str(os.getpid())
    while True:
        left = []
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[1] == me:
                        left.append(int(entry))
            except (OSError, IndexError):
                continue
        for pid in left:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, os.WNOHANG)
            except (ProcessLookupError, ChildProcessError):
                pass
        if not left or time.monotonic() > deadline:
            return len(left)
        time.sleep(0.005)


NOBODY = 65534                   # the parts' uid and gid when the grader is root (c.SandboxGrader.uid)
