"""A seccomp filter for the part process: the system calls a solution never needs end the process.

Loaded by the zygote by file path (standard library only). The filter is installed after
``PR_SET_NO_NEW_PRIVS`` (so it needs no privilege, at every sandbox level) and before the student's
code runs; nothing in the process can remove it, and it survives into anything the process could
start. What it does (x86-64 only; elsewhere :func:`install` returns False and the level says so):

* new processes: ``fork``, ``vfork``, ``execve``, ``execveat`` and ``clone`` without
  ``CLONE_THREAD`` kill the process (so does any thread: ``clone`` with ``CLONE_THREAD`` fails with
  EAGAIN, ``clone3`` with ENOSYS, so pthread_create fails cleanly and no Python thread can run
  without the profile hook);
* signals: ``kill``, ``tgkill`` and ``rt_sigqueueinfo`` only to the process itself; ``tkill``,
  ``pidfd_*`` never;
* the terminal: ``ioctl`` TIOCSTI (typing into a terminal), TIOCLINUX and TIOCSCTTY (taking a
  controlling terminal);
* other processes' limits and scheduling: ``prlimit64``, ``setpriority``, ``sched_setaffinity``,
  ``sched_setscheduler``, ``sched_setparam``, ``sched_setattr``, ``ioprio_set``, ``migrate_pages``,
  ``move_pages`` only on the part's own process (pid 0 or its own pid; ``setpriority`` and
  ``ioprio_set`` only for one process, never a process group or a user): at the levels where the part
  sees the machine's processes (``uid``, ``rlimits``) it could otherwise lower the grader's or another
  part's limits;
* System V IPC and POSIX message queues (``shmget``, ``shmat``, ``shmctl``, ``shmdt``, ``semget``,
  ``semop``, ``semtimedop``, ``semctl``, ``msgget``, ``msgsnd``, ``msgrcv``, ``msgctl``, ``mq_*``): a
  segment outlives its process and is not counted by ``RLIMIT_AS`` until it is mapped;
* the rest of the escape kit: ``ptrace``, ``process_vm_*``, ``socket``, ``socketpair``, mounts and namespaces
  (``mount``, ``umount2``, ``pivot_root``, ``chroot``, ``unshare``, ``setns``, the new mount API),
  ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring_*``, keyrings, modules, ``kexec``,
  ``reboot``, ``swapon``, ``mknod``, file handles, ``personality``.

A forbidden call ends the process with SIGSYS (``SECCOMP_RET_KILL_PROCESS``), so an attempt costs
the part its points even when the student's code would have caught an error.
"""

from __future__ import annotations

import ctypes
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
RET_KILL_PROCESS, RET_ALLOW = 0x80000000, 0x7FFF0000
RET_ERRNO = 0x00050000
EAGAIN, ENOSYS = 11, 38
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
CLONE_THREAD = 0x00010000
TIOCSTI, TIOCSCTTY, TIOCLINUX = 0x5412, 0x540E, 0x541C

# BPF opcodes
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06

# x86-64 system call numbers
NR = dict(shmget=29, shmat=30, shmctl=31, socketpair=53, semget=64, semop=65, semctl=66, shmdt=67,
          msgget=68, msgsnd=69, msgrcv=70, msgctl=71, setpriority=141, sched_setparam=142,
          sched_setscheduler=144, sched_setaffinity=203, semtimedop=220, mq_open=240, mq_unlink=241,
          mq_timedsend=242, mq_timedreceive=243, mq_notify=244, mq_getsetattr=245, ioprio_set=251,
          migrate_pages=256, move_pages=279, prlimit64=302, sched_setattr=314, ioctl=16, socket=41, clone=56, fork=57, vfork=58, execve=59, kill=62, ptrace=101,
          rt_sigqueueinfo=129, mknod=133, personality=135, pivot_root=155, chroot=161, mount=165,
          umount2=166, swapon=167, swapoff=168, reboot=169, init_module=175, delete_module=176,
          tkill=200, tgkill=234, kexec_load=246, add_key=248, request_key=249, keyctl=250, unshare=272,
          mknodat=259, rt_tgsigqueueinfo=297, perf_event_open=298, name_to_handle_at=303,
          open_by_handle_at=304, setns=308, process_vm_readv=310, process_vm_writev=311, kcmp=312,
          finit_module=313, kexec_file_load=320, bpf=321, execveat=322, userfaultfd=323,
          pidfd_send_signal=424, io_uring_setup=425, io_uring_enter=426, io_uring_register=427,
          open_tree=428, move_mount=429, fsopen=430, fsconfig=431, fsmount=432, fspick=433,
          pidfd_open=434, clone3=435, pidfd_getfd=438, mount_setattr=442)

KILLED = ("socket", "fork", "vfork", "execve", "ptrace", "mknod", "personality", "pivot_root", "chroot",
          "mount", "umount2", "swapon", "swapoff", "reboot", "init_module", "delete_module", "tkill",
          "kexec_load", "add_key", "request_key", "keyctl", "unshare", "mknodat", "perf_event_open",
          "name_to_handle_at", "open_by_handle_at", "setns", "process_vm_readv", "process_vm_writev", "kcmp",
          "finit_module", "kexec_file_load", "bpf", "execveat", "userfaultfd", "pidfd_send_signal",
          "io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree", "move_mount", "fsopen",
          "fsconfig", "fsmount", "fspick", "pidfd_open", "pidfd_getfd", "mount_setattr", "socketpair",
          "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semtimedop", "semctl", "msgget", "msgsnd",
          "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
          "mq_getsetattr")
#: system calls on a process named by its first argument: only the part's own (0 or its pid)
OWN_PROCESS = ("prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr",
               "migrate_pages", "move_pages")
#: (which, who) calls: only ``which`` = one process (PRIO_PROCESS 0, IOPRIO_WHO_PROCESS 1), ``who`` its own
WHICH_WHO = {"setpriority": 0, "ioprio_set": 1}


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> tuple:
    return (code, jt, jf, k & 0xFFFFFFFF)


def _arg_low(i: int) -> tuple:
    """Load the low 32 bits of argument ``i`` (seccomp_data: nr, arch, ip, args[6])."""
    return _ins(LD_W_ABS, 16 + 8 * i)


def _block(nr: int, body: list) -> list:
    """``body`` runs only for system call ``nr`` (and always returns)."""
    return [_ins(JEQ_K, nr, 0, len(body))] + body


def _only_values(i: int, allowed: list) -> list:
    """Allow when argument ``i`` is one of ``allowed``, else kill."""
    n = len(allowed)
    return ([_arg_low(i)] + [_ins(JEQ_K, v, n - j, 0) for j, v in enumerate(allowed)]
            + [_ins(RET_K, RET_KILL_PROCESS), _ins(RET_K, RET_ALLOW)])


def _never_values(i: int, refused: list) -> list:
    """Kill when argument ``i`` is one of ``refused``, else allow."""
    n = len(refused)
    return ([_arg_low(i)] + [_ins(JEQ_K, v, n - j, 0) for j, v in enumerate(refused)]
            + [_ins(RET_K, RET_ALLOW), _ins(RET_K, RET_KILL_PROCESS)])


def _kill_unless(i: int, allowed: list, then: list) -> list:
    """Kill unless argument ``i`` is one of ``allowed``; if it is, go on with ``then``."""
    n = len(allowed)
    return ([_arg_low(i)] + [_ins(JEQ_K, v, n - j, 0) for j, v in enumerate(allowed)]
            + [_ins(RET_K, RET_KILL_PROCESS)] + then)


def program(own_pid: int) -> list:
    """The filter as a list of (code, jt, jf, k) for a process whose pid (in its namespace) is ``own_pid``."""
    prog = [_ins(LD_W_ABS, 4), _ins(JEQ_K, AUDIT_ARCH_X86_64, 1, 0), _ins(RET_K, RET_KILL_PROCESS),
            _ins(LD_W_ABS, 0), _ins(JGE_K, 0x40000000, 0, 1), _ins(RET_K, RET_KILL_PROCESS)]   # no x32 calls
    for name in KILLED:
        prog += [_ins(JEQ_K, NR[name], 0, 1), _ins(RET_K, RET_KILL_PROCESS)]
    prog += _block(NR["clone"], [_arg_low(0), _ins(JSET_K, CLONE_THREAD, 0, 1),
                                 _ins(RET_K, RET_ERRNO | EAGAIN), _ins(RET_K, RET_KILL_PROCESS)])
    prog += [_ins(JEQ_K, NR["clone3"], 0, 1), _ins(RET_K, RET_ERRNO | ENOSYS)]
    prog += _block(NR["ioctl"], _never_values(1, [TIOCSTI, TIOCSCTTY, TIOCLINUX]))
    for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        prog += _block(NR[name], _only_values(0, [own_pid]))
    for name in OWN_PROCESS:
        prog += _block(NR[name], _only_values(0, [0, own_pid]))
    for name, which in WHICH_WHO.items():
        prog += _block(NR[name], _kill_unless(0, [which], _only_values(1, [0, own_pid])))
    prog.append(_ins(RET_K, RET_ALLOW))
    return prog


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def supported() -> bool:
    return platform.machine() == "x86_64"


def install(own_pid: int) -> bool:
    """Install the filter on this process (and all it could start). False where unsupported."""
    if not supported():
        return False
    prog = program(own_pid)
    raw = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
    return True
