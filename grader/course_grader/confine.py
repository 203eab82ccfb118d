"""Resource limits, the uid drop of a part, its /proc, and the end of whatever a part started.

Loaded by the zygote by file path (standard library only). The sandbox's namespaces and file-system
view are bubblewrap's (:func:`course_grader.sandbox.bwrap_argv`); what is left here is per part:
:func:`own_mounts` (a mount namespace of the part's own: a ``/proc`` of the PID namespace its zygote made
for its parts, a ``/tmp`` that is a tmpfs of its own, every other mount of the view read-only),
:func:`limit` (rlimits), :func:`drop` (another uid as root, every capability dropped for good, then
no_new_privs and not dumpable), :func:`die_with_parent`, :func:`kill_group` and :func:`end_orphans`
(the zygote is its parts' subreaper).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import time

PR_SET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 3, 4, 36, 38
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
CLONE_NEWNS, CLONE_NEWPID = 0x00020000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
CAP_SETPCAP, CAP_SYS_ADMIN = 8, 21
#: what the zygote keeps beyond a part's needs, to give its parts a PID namespace and each a /proc
#: (bubblewrap's ``--cap-add``; the mother drops them before it judges, each part before its cell runs)
NAMESPACE_CAPS = ("CAP_SYS_ADMIN", "CAP_SETPCAP")
_CAP_VERSION_3 = 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, value, 0, 0, 0), f"prctl({option})")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), f"unshare({flags:#x})")


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(fd, nstype), f"setns({nstype:#x})")


def own_mounts(proc: bool, tmp: dict | None) -> None:
    """In a part process, before it drops its capabilities: a mount namespace of its own (propagation
    private: nothing goes back to its zygote), and in it

    - with ``proc`` (the part is in its zygote's parts' PID namespace), a fresh ``/proc`` of that PID
      namespace over bubblewrap's, listing only the processes it may ptrace (``hidepid=4``; before Linux
      5.8 ``hidepid=2``, the same for a part whose gid is not 0): itself, as its init is not dumpable;
    - with ``tmp`` (``{"mb", "inodes", "uid", "gid"}``), a tmpfs of its own on ``/tmp`` (mode 0700, the
      part's), at most ``mb`` MiB and ``inodes`` files and folders; then the view's root and ``/dev``
      made read-only (``/dev/null`` and the other devices are mounts of their own, untouched). The only
      place the part can write is that tmpfs, which no other part sees, and which the kernel removes
      with this mount namespace when the part ends: nothing it made there can stop that or outlive it.
    """
    unshare(CLONE_NEWNS)
    _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount(/, MS_PRIVATE)")
    if proc:
        for hide in (b"hidepid=4", b"hidepid=2"):                # "ptraceable" (Linux 5.8), else "invisible"
            if _libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, hide) == 0:
                break
        else:
            _check(-1, "mount(proc, /proc)")
    if tmp is None:
        return
    options = (f"size={int(tmp['mb'])}m,nr_inodes={int(tmp['inodes'])},mode=0700,"
               f"uid={int(tmp['uid'])},gid={int(tmp['gid'])}")
    _check(_libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options.encode()),
           "mount(tmpfs, /tmp)")
    for path in (b"/", b"/dev"):                                 # the view's own tmpfs mounts: read-only now
        _check(_libc.mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, None),
               f"mount({path.decode()}, MS_RDONLY)")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def capabilities() -> dict:
    """{"effective", "permitted", "inheritable"}: this process's capability sets, as 64-bit masks."""
    data = (_CapData * 2)()
    _check(_libc.capget(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data), "capget")
    return {k: getattr(data[0], k) | getattr(data[1], k) << 32 for k in ("effective", "permitted", "inheritable")}


def _capset(sets: dict) -> None:
    data = (_CapData * 2)(*[_CapData(*((sets[k] >> shift) & 0xFFFFFFFF for k in ("effective", "permitted",
                                                                                     "inheritable")))
                            for shift in (0, 32)])
    _check(_libc.capset(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data), "capset")


def drop_capabilities(caps=None) -> None:
    """Drop ``caps`` (capability numbers; all of them when None) for good: from the bounding set (where
    this process may: CAP_SETPCAP), the ambient set, and the effective, permitted and inheritable sets."""
    drop = range(64) if caps is None else caps
    _drop_bounding(drop)
    _drop_sets(drop, clear_ambient=caps is None)


def _drop_sets(caps, clear_ambient: bool) -> None:
    """Drop ``caps`` from the effective, permitted and inheritable sets (which drops them from the ambient
    set), and every ambient capability with ``clear_ambient``; the bounding set is :func:`_drop_bounding`'s."""
    if clear_ambient:
        _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)   # EINVAL before Linux 4.3: none then
    mask = sum(1 << c for c in caps)
    _capset({k: v & ~mask for k, v in capabilities().items()})  # lowering these clears the ambient ones


def _drop_bounding(caps) -> None:
    for cap in caps:
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() not in (1, 22):
            _check(-1, f"prctl(PR_CAPBSET_DROP, {cap})")        # EPERM: no CAP_SETPCAP; EINVAL: no such cap


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
    """Leave root for good where the grader is root (``root``, and ``rlimits`` run by root: another uid),
    and every capability at every level (the bounding set first, while CAP_SETPCAP allows it; in
    bubblewrap's user namespace, ``userns``, the zygote's :data:`NAMESPACE_CAPS`), checked. Then
    no_new_privs and not dumpable."""
    _drop_bounding(range(64))           # while CAP_SETPCAP (and CAP_SETUID) are still ours
    if level != "userns" and os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if 0 in os.getresuid():
            raise RuntimeError("could not drop root")
    _drop_sets(range(64), clear_ambient=True)      # the bounding set is empty already (CAP_SETPCAP is gone now)
    if any(capabilities().values()):
        raise RuntimeError(f"could not drop every capability: {capabilities()}")
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_DUMPABLE, 0)


def die_with_parent(parent: int, outside: bool = False) -> None:
    """SIGKILL when ``parent`` ends (and now, if it has ended already). ``outside``: the parent is outside
    this process's PID namespace, where getppid() says 0 (1 once the parent is gone: our init adopted us)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != (0 if outside else parent):
        os._exit(9)


def reset_signals() -> None:
    """Every signal's disposition as a fresh Python in a terminal has it (SIGINT raises KeyboardInterrupt,
    SIGPIPE and SIGXFSZ ignored: a write fails instead, every other signal its default) and none blocked,
    whatever the grader inherited (``nohup`` ignores SIGINT and SIGHUP): a part's verdict never depends
    on how the grader was started."""
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):
                continue
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def kill_group(pid: int) -> None:
    """SIGKILL the part's process group (its own, once its setsid ran), and the part itself."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, 9)
        except ProcessLookupError:
            pass


def end_orphans(deadline: float, init: int | None = None) -> int:
    """Kill and reap every child this subreaper still has (only the part's orphans: the part itself is
    reaped), and every child of ``init``, the init of its parts' PID namespace (which adopts a part's
    orphans there, and reaps them). The number still there at the deadline."""
    parents = {str(os.getpid()), str(init)}
    while True:
        left = []
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[1] in parents and entry != str(init):
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
