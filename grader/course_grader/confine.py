"""Namespaces, the allow-list file system, cgroups, resource limits, the uid drop of the zygote, and the end
of whatever a part started where there is no PID namespace.

Loaded by the zygote by file path (standard library only). :func:`enter` gives the zygote its own
mount, network, IPC and UTS namespaces (plus a user namespace when the grader is not root);
:func:`build_view` makes a tmpfs the root of its file system with only the Python installation and
the site-packages directory bound in read-only (course_lib hidden even where it is installed
there), a minimal /dev, and ``pivot_root`` into it. Per part, :func:`part_namespaces` (in the
supervisor) and :func:`part_mounts` (in the part process, PID 1 of its namespace) add a PID
namespace, a fresh /proc and a small private /tmp; :class:`Cgroups` caps the memory and the number
of processes of the whole part; :func:`limit` and :func:`drop` set rlimits and leave root.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import time

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 3, 4, 36, 38
SYS_PIVOT_ROOT = 155
# statvfs flags that a bind remount must keep (in a user namespace they are locked)
_KEEP = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
         (1024, 1024), (2048, 2048), (4096, 1 << 21))          # noatime, nodiratime, relatime
# Where the new root is built: a tmpfs mounted (in our mount namespace only) over the first of these
# that holds none of the paths to bind (a Python environment may well live under /tmp).
ROOT_CANDIDATES = ("/tmp", "/var/tmp", "/dev/shm", "/run", "/mnt", "/srv", "/opt", "/home")
DEVICES = ("null", "zero", "full", "random", "urandom")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source, target, fstype, flags, data=None) -> None:
    _check(_libc.mount(source.encode() if source else None, target.encode(),
                       fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                       data.encode() if data else None), f"mount {target}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, value, 0, 0, 0), f"prctl({option})")


def dumpable() -> int:
    """PR_GET_DUMPABLE: 0 when processes of the same uid may not read this one's memory (/proc/PID/mem)."""
    return _libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _map_user(inside: int, outside: int, gid_outside: int) -> None:
    """Map one uid and gid into the new user namespace (the process must be dumpable to write its
    maps: a grader that changed uid is not, so it is for the moment of writing only)."""
    prctl(PR_SET_DUMPABLE, 1)
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{inside} {outside} 1")
    _write("/proc/self/gid_map", f"{inside} {gid_outside} 1")
    prctl(PR_SET_DUMPABLE, 0)


def enter(level: str) -> bool:
    """The zygote's namespaces (before it starts any thread: unshare refuses a threaded process).
    True when a PID namespace was made: the caller's next child is its PID 1."""
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID
    if level == "userns":
        uid, gid = os.geteuid(), os.getegid()
        unshare(flags | CLONE_NEWUSER)
        _map_user(0, uid, gid)
    elif level == "root":
        unshare(flags)
    else:
        return False
    mount(None, "/", None, MS_REC | MS_PRIVATE)      # nothing we mount propagates out
    return True


def own_pid_namespace() -> int:
    """In the zygote (PID 1 of its namespace): a /proc of its own, and a descriptor of its PID namespace
    (after each part's ``unshare(CLONE_NEWPID)`` it goes back to it with :func:`setns`)."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    return os.open("/proc/self/ns/pid", os.O_RDONLY)


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(fd, nstype), "setns")


def _bind_readonly(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    keep = os.statvfs(source).f_flag
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV
    flags |= sum(ms for st, ms in _KEEP if keep & st)
    mount(None, target, None, flags)


def _make(path: str, is_dir: bool) -> None:
    if is_dir:
        os.makedirs(path, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "a").close()


def _hide(target: str, root: str) -> None:
    """An empty, read-only thing over ``target`` (a directory or a file) inside the new root."""
    if os.path.isdir(target):
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "size=4k,mode=000")
    else:
        mount(f"{root}/.empty", target, None, MS_BIND)


def _new_root(readonly: list) -> str:
    """A directory to mount the new root over: not above (nor at) any path that must stay visible."""
    for candidate in ROOT_CANDIDATES:
        if os.path.isdir(candidate) and not any(
                p == candidate or p.startswith(candidate.rstrip("/") + "/") for p in readonly):
            return candidate
    raise OSError(f"no place to build the sandbox's root: every one of {ROOT_CANDIDATES} holds a path to bind")


def build_view(readonly: list, hidden: list) -> None:
    """Make a tmpfs the root: ``readonly`` paths bound in read-only, ``hidden`` ones (inside them)
    covered, /dev with a few devices, /proc and /tmp as mount points; then pivot_root into it."""
    root = _new_root([os.path.realpath(p) for p in readonly] + list(readonly))
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    open(f"{root}/.empty", "w").close()
    for path in readonly:
        _make(root + path, os.path.isdir(path))
        _bind_readonly(path, root + path)
    for path in hidden:
        if os.path.lexists(path):
            _hide(root + path, root)
    for d in ("dev", "proc", "tmp", ".old"):
        os.makedirs(f"{root}/{d}", exist_ok=True)
    for name in DEVICES:
        _make(f"{root}/dev/{name}", False)
        mount(f"/dev/{name}", f"{root}/dev/{name}", None, MS_BIND)
    # the zygote's /proc (its own PID namespace: itself and its parts): a part's new /proc needs a
    # fully visible one in the mount namespace (the kernel's mount_too_revealing rule in a user
    # namespace); every part mounts its own over this one
    mount("/proc", f"{root}/proc", None, MS_BIND | MS_REC)
    _check(_libc.syscall(SYS_PIVOT_ROOT, root.encode(), f"{root}/.old".encode()), "pivot_root")
    os.chdir("/")
    _check(_libc.umount2(b"/.old", MNT_DETACH), "umount /.old")
    os.rmdir("/.old")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def part_namespaces() -> None:
    """In the part process (already PID 1 of its own PID namespace): its own mount and IPC namespaces
    (the network namespace is the zygote's: no interface but a loopback that is down)."""
    unshare(CLONE_NEWNS | CLONE_NEWIPC)


def part_mounts(tmp_mb: int) -> None:
    """In the part process (PID 1 of its namespace): its own /proc and a small private /tmp."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={tmp_mb}m,mode=1777")


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
    """Leave root for good: another uid (root, uid levels), or a nested user namespace without
    capabilities whose mounts are locked (userns); then no_new_privs and not dumpable."""
    if level in ("root", "uid"):
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if 0 in os.getresuid():
            raise RuntimeError("could not drop root")
    elif level == "userns":
        unshare(CLONE_NEWUSER | CLONE_NEWNS)
        _map_user(1000, 0, 0)
        os.setresgid(1000, 1000, 1000)
        os.setresuid(1000, 1000, 1000)
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
    """Without a PID namespace or a cgroup: kill and reap every child this subreaper still has (only
    the part's orphans: the part itself is reaped). The number still there at the deadline."""
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


NOBODY = 65534
_DEDICATED: list = []


def dedicated_uid() -> int:
    """In the grader: a uid (and gid) for the parts alone, when the grader is root: the highest one below
    2**31 that this user namespace maps, with no account, no group and no process; ``nobody`` (65534) if
    none is found. Unlike ``nobody``'s, it owns no file and shares no process with another service."""
    if _DEDICATED:
        return _DEDICATED[0]
    import grp
    import pwd
    top = 0
    try:
        with open("/proc/self/uid_map") as f:
            for line in f:
                inside, _, count = (int(x) for x in line.split())
                top = max(top, min(inside + count - 1, 2 ** 31 - 1))
    except (OSError, ValueError):
        top = 0
    busy = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/status") as f:
                busy.update(int(x) for line in f if line.startswith(("Uid:", "Gid:")) for x in line.split()[1:])
        except (OSError, ValueError):
            continue
    found = NOBODY
    for uid in range(top - 1, max(top - 1000, 1000), -1):
        if uid in busy or uid == NOBODY:
            continue
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        try:
            grp.getgrgid(uid)
            continue
        except KeyError:
            found = uid
            break
    _DEDICATED.append(found)
    return found
