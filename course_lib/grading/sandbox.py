"""Run one solution cell on the grader's cases in a sandboxed process; bring back plain arrays.

The process tree for one part of one submission::

    grader (root or not; already imported torch and course_lib; never runs student code)
      └─ C: unshare(mount, PID, network, IPC, UTS [, user]) namespaces; reports S's pid
          └─ S: PID 1 of the new PID namespace
                private /proc; tmpfs over the course directory (gradebook, source, release,
                submitted, autograded, feedback), /tmp, /var/tmp, /dev/shm and the exchange, with
                the virtual environment and course_lib bound back read-only;
                rlimits (address space, CPU time, processes, file size, open files, no core);
                then an unprivileged uid (default nobody, 65534) with no_new_privs, not dumpable;
                exec the cell, call it on the cases, write frames (JSON header + .npy arrays) to a pipe.

The grader reads the pipe with a wall-clock deadline and kills S (and with it the whole PID
namespace) when it passes. Nothing from S is unpickled: the header is JSON, the arrays are
``np.load(..., allow_pickle=False)``. When S dies, hangs, exits, floods the pipe or writes garbage,
only this part of this submission is lost.

Levels (``detect_level`` picks the strongest that works): ``root`` as above; ``userns`` (not root:
the same tree in a new user namespace, mounts still hide the course, the uid is the grader's own,
mapped, without capabilities); ``uid`` (root in a container that refuses namespaces: no hiding and
no network isolation, but the unprivileged uid and the rlimits; without a PID namespace a process that
leaves the process group outlives its part until RLIMIT_CPU ends it); ``rlimits`` (neither: resource
limits and timeouts only).
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import resource
import select
import signal
import struct
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38

MAX_RESULT_BYTES = 64 << 20
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass
class SandboxOptions:
    """How a part runs. ``hide``: directories the student's code must not see (tmpfs over them);
    ``keep``: directories inside those that it needs (bound back read-only)."""

    timeout: float = 20.0                 # wall clock per part (cell + all its cases), seconds
    memory_mb: int = 2048                 # address space on top of what the grader has mapped
    cpu_seconds: int = 40
    max_processes: int = 64
    max_file_mb: int = 16
    uid: int = 65534
    gid: int = 65534
    hide: list = field(default_factory=list)
    keep: list = field(default_factory=list)
    level: str = "auto"                   # "auto" | "root" | "userns" | "rlimits"


def detect_level(requested: str = "auto") -> str:
    """The strongest sandbox this machine allows (probed once with a throwaway child)."""
    if requested != "auto":
        return requested
    for level in (("root",) if os.geteuid() == 0 else ()) + ("userns",):
        pid = os.fork()
        if pid == 0:                                           # probe: unshare and mount a tmpfs
            try:
                _unshare(level)
                _mount(None, "/", None, MS_REC | MS_PRIVATE)     # never let a mount propagate out
                _mount("tmpfs", _probe_dir(), "tmpfs", 0, "size=1k")
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) == 0:
            return level
    # no namespaces (e.g. a container without CAP_SYS_ADMIN): as root, still drop to the sandbox uid
    return "uid" if os.geteuid() == 0 else "rlimits"


def _probe_dir() -> str:
    return "/tmp" if os.path.isdir("/tmp") else "/"


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source, target, fstype, flags, data=None) -> None:
    _check(_libc.mount(source.encode() if source else None, target.encode(),
                       fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                       data.encode() if data else None), f"mount {target}")


def _unshare(level: str) -> None:
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if level == "userns":
        uid, gid = os.geteuid(), os.getegid()
        _check(_libc.unshare(flags | CLONE_NEWUSER), "unshare")
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"0 {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"0 {gid} 1")
    elif level == "root":
        _check(_libc.unshare(flags), "unshare")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _hide(opts: SandboxOptions) -> None:
    """tmpfs over every hidden directory; the kept ones inside it come back read-only."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    hide = sorted({os.path.realpath(h) for h in opts.hide if os.path.exists(h)}, key=len)
    keep = sorted({os.path.realpath(k) for k in opts.keep if os.path.exists(k)}, key=len)
    done: list[str] = []
    for h in hide:
        if any(_inside(h, d) for d in done):
            continue                                       # already under a hidden directory
        inner = [k for k in keep if _inside(k, h) and k != h]
        fds = [os.open(k, os.O_PATH) for k in inner]
        if os.path.isdir(h):
            public = h in ("/tmp", "/var/tmp", "/dev/shm")
            _mount("tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV,
                   "size=64m,mode=1777" if public else "size=1m,mode=0755")
        else:                                              # a file (a gradebook outside the course)
            _mount("/dev/null", h, None, MS_BIND)
        for k, fd in zip(inner, fds):
            os.makedirs(k, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", k, None, MS_BIND | MS_REC)
            _mount(None, k, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
            os.close(fd)
        done.append(h)


def _limit(opts: SandboxOptions) -> None:
    mapped = 0
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * resource.getpagesize()
    limits = {
        resource.RLIMIT_AS: mapped + opts.memory_mb * 2 ** 20,
        resource.RLIMIT_CPU: opts.cpu_seconds,
        resource.RLIMIT_NPROC: opts.max_processes,
        resource.RLIMIT_FSIZE: opts.max_file_mb * 2 ** 20,
        resource.RLIMIT_NOFILE: 256,
        resource.RLIMIT_CORE: 0,
    }
    for which, value in limits.items():
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))


def _drop(opts: SandboxOptions, level: str) -> None:
    if level in ("root", "uid"):
        os.setgroups([])
        os.setresgid(opts.gid, opts.gid, opts.gid)
        os.setresuid(opts.uid, opts.uid, opts.uid)
        if os.geteuid() == 0 or os.getuid() == 0:
            raise RuntimeError("could not drop root")
    elif level == "userns":
        # a second user namespace: the mounts above become locked (cannot be undone), and the uid
        # inside is an unprivileged one with no capabilities
        _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare (drop)")
        with open("/proc/self/uid_map", "w") as f:
            f.write("1000 0 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write("1000 0 1")
        os.setresgid(1000, 1000, 1000)
        os.setresuid(1000, 1000, 1000)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def enter(opts: SandboxOptions, level: str, keep_fd: int) -> None:
    """Everything between "forked" and "run the student's code" (S, still privileged)."""
    import faulthandler
    faulthandler.disable()                                 # it holds a copy of the grader's stderr
    # no inherited descriptor (a database, a log, another pipe) may outlive the fork: only the result pipe
    os.closerange(3, keep_fd)
    os.closerange(keep_fd + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    if level in ("root", "userns"):
        _hide(opts)
    _limit(opts)
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    if level in ("root", "userns", "uid"):
        _drop(opts, level)
    os.environ.clear()
    os.environ.update({"HOME": "/tmp", "TMPDIR": "/tmp", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    try:
        os.chdir("/tmp")
    except OSError:
        os.chdir("/")


# ------------------------------------------------------------------ frames on a pipe

def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def send(fd: int, header: dict, arrays: list) -> None:
    """A JSON header frame, then one frame of .npy bytes per array."""
    _write_all(fd, _frame(json.dumps(header).encode()))
    for a in arrays:
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
        _write_all(fd, _frame(buf.getvalue()))


def _frame(payload: bytes) -> bytes:
    return struct.pack(">Q", len(payload)) + payload


def parse(data: bytes) -> tuple[dict, list]:
    """Header and arrays from the bytes a sandbox sent; raises ValueError on anything odd."""
    frames, pos = [], 0
    while pos < len(data):
        if pos + 8 > len(data):
            raise ValueError("truncated frame")
        (n,) = struct.unpack(">Q", data[pos:pos + 8])
        if n > len(data) - pos - 8:
            raise ValueError("truncated frame")
        frames.append(data[pos + 8:pos + 8 + n])
        pos += 8 + n
    if not frames:
        raise ValueError("no result")
    header = json.loads(frames[0].decode())
    if not isinstance(header, dict):
        raise ValueError("bad header")
    arrays = []
    for f in frames[1:]:
        a = np.load(io.BytesIO(f), allow_pickle=False)
        if a.dtype.kind not in "fiub" or a.size > 10_000_000:
            raise ValueError("bad array")
        arrays.append(a)
    return header, arrays


# ------------------------------------------------------------------ one sandboxed call

@dataclass
class Outcome:
    header: dict | None          # what the sandbox reported (None: no usable result)
    arrays: list
    failure: str | None          # why there is no usable result (timeout, crash, garbage)
    seconds: float


def run(target, opts: SandboxOptions, level: str) -> Outcome:
    """Fork C and S; S calls ``target(write_fd)`` inside the sandbox. Returns what came back."""
    start = time.monotonic()
    r, w = os.pipe()
    ctl_r, ctl_w = os.pipe()
    c = os.fork()
    if c == 0:                                             # C
        try:
            os.close(r)
            os.close(ctl_r)
            os.setpgid(0, 0)
            _unshare(level)
            s = os.fork()
            if s == 0:                                     # S
                os.close(ctl_w)
                try:
                    enter(opts, level, w)
                except BaseException as e:                 # noqa: BLE001 (report, never run unsandboxed)
                    try:
                        send(w, {"sandbox_error": f"{type(e).__name__}: {e}"}, [])
                    finally:
                        os._exit(3)
                try:
                    target(w)
                finally:
                    os._exit(0)
            os.write(ctl_w, struct.pack(">q", s))
            os.close(ctl_w)
            os.close(w)
            while True:
                try:
                    os.waitpid(s, 0)
                    break
                except ChildProcessError:
                    break
                except InterruptedError:
                    continue
        except BaseException:                              # noqa: BLE001
            traceback.print_exc()
        finally:
            os._exit(0)
    os.close(w)
    os.close(ctl_w)
    s_pid = None
    try:
        raw = os.read(ctl_r, 8)
        if len(raw) == 8:
            (s_pid,) = struct.unpack(">q", raw)
    finally:
        os.close(ctl_r)
    chunks, size, failure = [], 0, None
    deadline = start + opts.timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                failure = f"timed out after {opts.timeout:g} s (an endless loop?)"
                break
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                continue
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_RESULT_BYTES:
                failure = "sent more than 64 MiB of results"
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        if s_pid:
            try:
                os.kill(s_pid, signal.SIGKILL)             # S is PID 1 of its namespace: all of it goes
            except ProcessLookupError:
                pass
        if level not in ("root", "userns"):                # no PID namespace: kill what is left by hand
            try:
                os.killpg(c, signal.SIGKILL)
            except ProcessLookupError:
                pass

        # C reaps S (after the kernel has killed everything in S's namespace), then exits
        for _ in range(500):
            if os.waitpid(c, os.WNOHANG) != (0, 0):
                break
            time.sleep(0.01)
        else:
            try:
                os.killpg(c, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(c, 0)
    seconds = time.monotonic() - start
    if failure:
        return Outcome(None, [], failure, seconds)
    try:
        header, arrays = parse(b"".join(chunks))
    except Exception:                                      # noqa: BLE001
        return Outcome(None, [], "the process ended without a result (it exited, crashed or ran out of memory)",
                       seconds)
    if "sandbox_error" in header:
        return Outcome(None, [], "grader error: could not enter the sandbox: " + str(header["sandbox_error"]),
                       seconds)
    return Outcome(header, arrays, None, seconds)
