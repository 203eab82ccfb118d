"""Landlock (Linux 5.13+): the part process's file system as an allow-list the kernel enforces, at every
sandbox level, with or without namespaces.

Loaded by the zygote by file path (standard library only; the three system calls through ctypes, as
the kernel's documentation spells them: ``landlock_create_ruleset``, ``landlock_add_rule``,
``landlock_restrict_self``). After :func:`restrict` the process, and all it could start, may

* read (and list) only beneath ``read_roots`` (the Python installation and its site-packages), and
  ``/dev/urandom``, ``/dev/random``, ``/dev/zero``;
* write only ``/dev/null`` and beneath ``write_roots`` (its private /tmp where it has one; none at the
  ``rlimits`` level): no file left in /tmp, /var/tmp, /dev/shm or /run/lock by native
  code (``torch.from_file(..., shared=True)``, ``np.memmap``), no course directory, no home;
* not open anything under ``/proc`` (no other process's environment or working directory), and, from
  ABI 6, signal or reach through an abstract unix socket no process outside its domain; from ABI 4,
  bind or connect no TCP port.

Unlike the in-process guard, nothing the student's code does from Python (or native memory writes)
can undo it. Where the kernel has no Landlock (:func:`abi` is 0), :func:`restrict` returns 0 and the
levels without namespaces are refused unless forced (see :func:`course_grader.sandbox.detect_level`).
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

# system call numbers: the same on every architecture that has them (the generic table)
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = (1 << i for i in range(9, 16))
#: the file-system rights each ABI knows (a right the kernel does not know may not be asked for)
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2

READ = READ_FILE | READ_DIR | EXECUTE
WRITE = READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | TRUNCATE
READ_DEVICES = ("/dev/urandom", "/dev/random", "/dev/zero")
WRITE_DEVICES = ("/dev/null",)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def abi() -> int:
    """The kernel's Landlock ABI version, 0 where there is none (not built in, not enabled at boot)."""
    if platform.system() != "Linux":
        return 0
    version = _libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _call(nr: int, *args) -> int:
    ret = _libc.syscall(nr, *args)
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock syscall {nr}: {os.strerror(err)}")
    return int(ret)


def restrict(read_roots, write_roots=()) -> int:
    """Confine this process (it must have no_new_privs) to the allow-list above; the ABI used, 0 if none."""
    version = abi()
    if version == 0:
        return 0
    fs = FS_BY_ABI[min(version, 5)]
    net = NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    attr = struct.pack("=QQQ", fs, net, scoped)[:8 if version < 4 else 16 if version < 6 else 24]
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _call(SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    try:
        rules = [(p, READ) for p in read_roots] + [(p, READ_FILE) for p in READ_DEVICES]
        rules += [(p, WRITE_FILE) for p in WRITE_DEVICES] + [(p, WRITE) for p in write_roots]
        for path, rights in rules:
            _allow(ruleset, path, rights & fs)
        _call(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return version


def _allow(ruleset: int, path: str, rights: int) -> None:
    """One path-beneath rule (a file gets only the rights that apply to files)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return                                              # not there: nothing to allow
    try:
        if not os.path.isdir(path):
            rights &= EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        _call(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), rule, ctypes.c_uint32(0))
    finally:
        os.close(fd)
