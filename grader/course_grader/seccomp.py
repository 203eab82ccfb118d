"""A seccomp filter for the part process: the system calls a solution never needs end the process.

The policy is the table below (:data:`KILLED`, :data:`ERRNO`, :data:`ARG_RULES`): system call names
and argument rules, read at a glance. libseccomp (``libseccomp.so.2``, on every Debian and Ubuntu
host) compiles it for the machine's architecture, through ctypes; no BPF is written here. Loaded by
the zygote by file path (standard library only). The filter is installed after ``PR_SET_NO_NEW_PRIVS``
(so it needs no privilege, at every sandbox level) and before the student's code runs; nothing in the
process can remove it, and it survives into anything the process could start. What it does:

* new processes: ``fork``, ``vfork``, ``execve``, ``execveat`` and ``clone`` without
  ``CLONE_THREAD`` kill the process (so does any thread: ``clone`` with ``CLONE_THREAD`` fails with
  EAGAIN, ``clone3`` with ENOSYS, so pthread_create fails cleanly and no Python thread can run
  without the profile hook);
* signals: ``kill``, ``tgkill``, ``rt_sigqueueinfo`` and ``rt_tgsigqueueinfo`` only to the process
  itself; ``tkill``, ``pidfd_*`` never;
* other processes' limits and scheduling (``prlimit64``, ``setpriority``, ``sched_set*``,
  ``ioprio_set``, ``migrate_pages``, ``move_pages``): only on the caller itself (pid 0, as glibc
  passes it; ``setpriority`` and ``ioprio_set`` for one process only, never a group or a user);
* System V IPC and POSIX message queues: never (a segment outlives its process);
* watching files: ``inotify_*`` and ``fanotify_*`` never (a part that watched ``/tmp`` saw the other
  parts' folders come and go, issue 48 item 7);
* the terminal: ``ioctl`` TIOCSTI (typing into a terminal), TIOCLINUX and TIOCSCTTY (taking a
  controlling terminal), compared on the low 32 bits of the request as the kernel reads it;
* the rest of the escape kit: ``ptrace``, ``process_vm_*``, ``socket``, ``socketpair``, mounts and
  namespaces, ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring_*``, keyrings, modules,
  ``kexec``, ``reboot``, ``swapon``, ``mknod``, file handles, ``personality``.

A forbidden call ends the process with SIGSYS (``SCMP_ACT_KILL_PROCESS``), so an attempt costs the
part its points even when the student's code would have caught an error. A name the machine's
architecture does not have (``fork`` on arm64) is skipped: it cannot be called there.
"""

from __future__ import annotations

import contextlib
import ctypes

EAGAIN, ENOSYS = 11, 38
CLONE_THREAD = 0x00010000
TIOCSTI, TIOCSCTTY, TIOCLINUX = 0x5412, 0x540E, 0x541C
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
OWN = "own"                  # in an argument rule: the part's own pid

# ---- the policy ----------------------------------------------------------------------------------
#: never allowed: the process ends
KILLED = (
    "fork", "vfork", "execve", "execveat",                                  # new programs
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",              # other processes' memory
    "tkill", "pidfd_open", "pidfd_send_signal", "pidfd_getfd",
    "socket", "socketpair",                                                 # the network, local sockets
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",         # mounts and namespaces
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "name_to_handle_at", "open_by_handle_at", "mknod", "mknodat", "personality",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "add_key", "request_key", "keyctl", "init_module", "finit_module", "delete_module",
    "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
    "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semtimedop", "semctl",   # System V IPC
    "msgget", "msgsnd", "msgrcv", "msgctl",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    "inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",   # watching others' files
    "fanotify_init", "fanotify_mark",
)
#: refused with an error the caller sees (threads fail cleanly)
ERRNO = {"clone3": ENOSYS}
#: allowed only with these argument values; any other value ends the process.
#: name: {argument: the one allowed value}; the whole 64-bit argument must equal it (OWN: the part's
#: own pid; 0 for a process is "the caller", as glibc passes it)
ARG_RULES = {
    "kill": {0: OWN}, "tgkill": {0: OWN}, "rt_sigqueueinfo": {0: OWN}, "rt_tgsigqueueinfo": {0: OWN},
    "prlimit64": {0: 0}, "sched_setaffinity": {0: 0}, "sched_setscheduler": {0: 0},
    "sched_setparam": {0: 0}, "sched_setattr": {0: 0}, "migrate_pages": {0: 0}, "move_pages": {0: 0},
    "setpriority": {0: PRIO_PROCESS, 1: 0}, "ioprio_set": {0: IOPRIO_WHO_PROCESS, 1: 0},
}
#: ioctl requests that end the process (every other request is allowed)
IOCTL_KILLED = (TIOCSTI, TIOCSCTTY, TIOCLINUX)

# ---- libseccomp, through ctypes -------------------------------------------------------------------
ACT_KILL_PROCESS, ACT_ALLOW = 0x80000000, 0x7FFF0000
ATTR_ACT_BADARCH = 2                 # enum scmp_filter_attr: SCMP_FLTATR_ACT_BADARCH
CMP_NE, CMP_EQ, CMP_MASKED_EQ = 1, 4, 7
LOW32 = 0xFFFFFFFF


def ACT_ERRNO(errno: int) -> int:  # noqa: N802 (libseccomp's name)
    return 0x00050000 | (errno & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def _load():
    """libseccomp, loaded once when this module is (the zygote loads it before it leaves the host's view,
    where the library is); None where it is not installed."""
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    return lib


_LIB = _load()


def supported() -> bool:
    """True where libseccomp can be loaded (its filter is then built for this architecture)."""
    return _LIB is not None


def _rule(ctx, action: int, name: str, cmps: list[tuple[int, int, int, int]]) -> None:
    nr = _LIB.seccomp_syscall_resolve_name(name.encode())
    if nr < 0:                                   # not a system call of this architecture
        return
    arr = (_ArgCmp * max(1, len(cmps)))(*[_ArgCmp(*c) for c in cmps])
    rc = _LIB.seccomp_rule_add_array(ctx, action, nr, len(cmps), arr)
    if rc < 0:
        raise OSError(-rc, f"seccomp_rule_add({name}, {cmps})")


def _value(v, own_pid: int) -> int:
    return own_pid if v == OWN else v


@contextlib.contextmanager
def _compiled(own_pid: int):
    """The filter for a process whose pid (in its namespace) is ``own_pid``, as a libseccomp context
    (released on leaving)."""
    if _LIB is None:
        raise OSError("libseccomp.so.2 is not installed (Debian/Ubuntu: libseccomp2)")
    ctx = _LIB.seccomp_init(ACT_ALLOW)
    if not ctx:
        raise OSError("seccomp_init failed")
    try:
        # a call made through another architecture's interface (int 0x80, x32) ends the whole process
        if _LIB.seccomp_attr_set(ctx, ATTR_ACT_BADARCH, ACT_KILL_PROCESS) < 0:
            raise OSError("seccomp_attr_set(SCMP_FLTATR_ACT_BADARCH)")
        for name in KILLED:
            _rule(ctx, ACT_KILL_PROCESS, name, [])
        for name, errno in ERRNO.items():
            _rule(ctx, ACT_ERRNO(errno), name, [])
        _rule(ctx, ACT_ERRNO(EAGAIN), "clone", [(0, CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)])
        _rule(ctx, ACT_KILL_PROCESS, "clone", [(0, CMP_MASKED_EQ, CLONE_THREAD, 0)])
        for request in IOCTL_KILLED:
            _rule(ctx, ACT_KILL_PROCESS, "ioctl", [(1, CMP_MASKED_EQ, LOW32, request)])
        for name, allowed in ARG_RULES.items():          # killed when any argument differs
            for arg, value in allowed.items():
                _rule(ctx, ACT_KILL_PROCESS, name, [(arg, CMP_NE, _value(value, own_pid), 0)])
        yield ctx
    finally:
        _LIB.seccomp_release(ctx)


def install(own_pid: int) -> bool:
    """Install the filter on this process (and all it could start). False where libseccomp is missing."""
    if _LIB is None:
        return False
    with _compiled(own_pid) as ctx:
        rc = _LIB.seccomp_load(ctx)              # sets no_new_privs itself (SCMP_FLTATR_CTL_NNP, default on)
        if rc < 0:
            raise OSError(-rc, "seccomp_load")
    return True


def export_bpf(own_pid: int, fd: int) -> None:
    """Write the compiled filter (raw BPF, for ``bwrap --seccomp FD``) to ``fd``."""
    with _compiled(own_pid) as ctx:
        rc = _LIB.seccomp_export_bpf(ctx, fd)
        if rc < 0:
            raise OSError(-rc, "seccomp_export_bpf")
