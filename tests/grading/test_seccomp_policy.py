"""The seccomp policy is data that libseccomp compiles: every name in the table is a system call of this
machine, the compiled filter exports as BPF (what `bwrap --seccomp` would take), and a process that
installed it dies on a refused call and keeps working on an allowed one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile

from course_grader import seccomp

HERE = os.path.dirname(seccomp.__file__)


def test_every_name_of_the_table_is_a_system_call_here():
    lib = seccomp._LIB
    assert lib is not None, "libseccomp.so.2 is missing (Debian/Ubuntu: libseccomp2)"
    names = [*seccomp.KILLED, *seccomp.ERRNO, *seccomp.ARG_RULES, "clone", "ioctl"]
    unknown = [n for n in names if lib.seccomp_syscall_resolve_name(n.encode()) < 0]
    assert not unknown, unknown


def test_the_filter_exports_as_bpf():
    with tempfile.TemporaryFile() as f:
        seccomp.export_bpf(os.getpid(), f.fileno())
        f.seek(0)
        program = f.read()
    assert program and len(program) % 8 == 0            # struct sock_filter: 8 bytes an instruction


def run_filtered(code: str) -> subprocess.CompletedProcess:
    child = ("import importlib.util, os\n"
             f"spec = importlib.util.spec_from_file_location('s', {os.path.join(HERE, 'seccomp.py')!r})\n"
             "s = importlib.util.module_from_spec(spec); spec.loader.exec_module(s)\n"
             "assert s.install(os.getpid())\n" + code + "\nprint('alive')\n")
    return subprocess.run([sys.executable, "-I", "-c", child], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_a_refused_call_ends_the_process_and_an_allowed_one_runs():
    assert run_filtered("import socket; socket.socket()").returncode == -signal.SIGSYS
    assert run_filtered("os.kill(os.getppid(), 0)").returncode == -signal.SIGSYS
    assert run_filtered("import ctypes; ctypes.CDLL(None).syscall(39 | 0x40000000)").returncode == -signal.SIGSYS
    inotify = "import ctypes; libc = ctypes.CDLL(None, use_errno=True); fd = libc.inotify_init1(0)\n"
    assert run_filtered(inotify + "libc.inotify_add_watch(fd, b'/tmp', 0x100 | 0x200)").returncode == -signal.SIGSYS
    assert run_filtered("import ctypes; ctypes.CDLL(None).fanotify_init(0, 0)").returncode == -signal.SIGSYS
    ok = run_filtered("import resource; resource.getrlimit(resource.RLIMIT_AS); os.kill(os.getpid(), 0)")
    assert ok.returncode == 0 and ok.stdout.strip() == "alive", ok.stderr
    threads = run_filtered("import threading\ntry:\n    threading.Thread(target=print).start()\n"
                           "except RuntimeError:\n    print('no thread')")
    assert threads.returncode == 0 and "no thread" in threads.stdout, threads.stderr
