"""One cgroup per part: the memory and the number of processes of the part as a whole are capped.

Loaded by the zygote by file path (standard library only); used only when the grader is root.
cgroup v2 (``memory.max``, ``memory.swap.max``, ``pids.max``, ``cgroup.kill``) where its memory
controller is available, else cgroup v1 (``memory.limit_in_bytes`` and ``pids.max`` in their own
hierarchies). The zygote opens the base directories at its start (bubblewrap binds /sys/fs/cgroup into
its view, as root) and works through those descriptors afterwards.
"""

from __future__ import annotations

import os
import re
import signal
import time


def _read(path: str, dir_fd: int | None = None) -> str:
    """All of ``path``, read to its end: a /proc file such as mountinfo comes a page or so per read, and
    on a host with many mounts (snaps, containers) the cgroup lines came after the first one, so no
    cgroup was found and the parts ran without one."""
    fd = os.open(path, os.O_RDONLY, dir_fd=dir_fd)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(fd)


def _write(path: str, text: str, dir_fd: int | None = None) -> None:
    fd = os.open(path, os.O_WRONLY, dir_fd=dir_fd)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _mounts() -> tuple[str | None, dict]:
    """(the cgroup2 mount point, {v1 controller: (mount point, mount root)})."""
    v2, v1 = None, {}
    for line in _read("/proc/self/mountinfo").splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] == "cgroup2":
            v2 = fields[4]
        elif tail[0] == "cgroup":
            for c in ("memory", "pids"):
                if c in tail[2].split(","):
                    v1[c] = (fields[4], fields[3])
    return v2, v1


def _own() -> dict:
    """{controller or "": this process's cgroup path} from /proc/self/cgroup."""
    out = {}
    for line in _read("/proc/self/cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _mkbase(parent: str, name: str) -> tuple:
    """(directory fd, its parent's fd, path) of a new base cgroup."""
    path = os.path.join(parent, name)
    os.mkdir(path, 0o700)
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY), os.open(parent, os.O_RDONLY | os.O_DIRECTORY), path


def remove(path: str, wait: float = 3.0) -> bool:
    """Remove a base cgroup left by a zygote that was killed: whatever is still in its parts' cgroups
    is killed, then the directories go. True when nothing is left."""
    deadline = time.monotonic() + wait
    while os.path.isdir(path):
        try:
            for entry in os.listdir(path):
                child = os.path.join(path, entry)
                if os.path.isdir(child):
                    for pid in _read(os.path.join(child, "cgroup.procs")).split():
                        _kill(int(pid))
                    os.rmdir(child)
            os.rmdir(path)
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
    return True


PREFIX = "course-grader-"


def base_name(grader_pid: int) -> str:
    """A zygote's base cgroup name: the grader's pid (host namespace) first, so that :func:`sweep` can
    tell an orphan (its grader is gone) from the cgroups of a grader still running."""
    return f"{PREFIX}{grader_pid}-{os.urandom(6).hex()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def parents() -> list:
    """Where a zygote of this process may make its base cgroups (each hierarchy's root, and this
    process's own cgroup in it)."""
    try:
        v2, v1 = _mounts()
        own = _own()
    except OSError:
        return []
    found = set()
    if v2 is not None:
        found |= {v2 + own.get("", "/").rstrip("/"), v2}
    for c, (point, root) in v1.items():
        rel = own.get(c, "/")
        rel = rel[len(root):] if root != "/" and rel.startswith(root) else rel
        found |= {point + rel.rstrip("/"), point}
    return sorted(p for p in found if os.path.isdir(p))


def sweep() -> list:
    """At a grader's start-up (root): remove the ``course-grader-PID-*`` cgroups whose grader PID is gone
    (one killed before it could clean up), killing what is still in them. The paths removed. A name
    without a pid (an older grader's) is left alone: it may belong to a grader still running."""
    if os.geteuid() != 0:
        return []
    removed = []
    for parent in parents():
        try:
            names = [n for n in os.listdir(parent) if n.startswith(PREFIX)]
        except OSError:
            continue
        for name in names:
            owner = re.fullmatch(re.escape(PREFIX) + r"(\d+)-[0-9a-f]{12}", name)
            if owner is None or _alive(int(owner.group(1))):
                continue                                   # its grader still runs, or whose it is cannot be told
            if remove(os.path.join(parent, name), wait=1.0):
                removed.append(os.path.join(parent, name))
    return removed


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Cgroups:
    """Base cgroup(s) of one zygote: ``{controller: (directory fd, parent fd, path)}``, v1 or v2."""

    def __init__(self, version: int, bases: dict):
        self.version, self.bases, self.count = version, bases, 0

    @classmethod
    def open(cls, name: str) -> Cgroups | None:
        """The strongest cgroup set-up this machine allows, or None (not root, no controllers)."""
        if os.geteuid() != 0:
            return None
        v2, v1 = _mounts()
        own = _own()
        for make in (cls._v2, cls._v1):
            try:
                found = make(name, v2, v1, own)
            except OSError:
                found = None
            if found is not None:
                return found
        return None

    @classmethod
    def _v2(cls, name, v2, v1, own):
        if v2 is None or "memory" not in _read(os.path.join(v2, "cgroup.controllers")).split():
            return None
        for parent in (v2 + own.get("", "/").rstrip("/"), v2):
            try:
                _write(os.path.join(parent, "cgroup.subtree_control"), "+memory +pids")
                base = _mkbase(parent, name)
                _write("cgroup.subtree_control", "+memory +pids", dir_fd=base[0])
                return cls(2, {"": base})
            except OSError:
                continue
        return None

    @classmethod
    def _v1(cls, name, v2, v1, own):
        if "memory" not in v1:
            return None
        bases = {}
        for c, (point, root) in v1.items():
            rel = own.get(c, "/")
            rel = rel[len(root):] if root != "/" and rel.startswith(root) else rel
            parent = point + rel.rstrip("/")
            bases[c] = _mkbase(parent, name)
        return cls(1, bases)

    def part(self, memory_mb: int, pids: int) -> PartCgroup:
        self.count += 1
        name = f"part-{self.count}"
        made = []
        for fd, _, _ in self.bases.values():
            os.mkdir(name, 0o700, dir_fd=fd)
            made.append(fd)
        limits = {"memory.max": f"{memory_mb}M", "memory.swap.max": "0", "pids.max": str(pids),
                  "memory.limit_in_bytes": f"{memory_mb}M", "memory.memsw.limit_in_bytes": f"{memory_mb}M"}
        for fd in made:
            for key, value in limits.items():
                try:
                    _write(f"{name}/{key}", value, dir_fd=fd)
                except FileNotFoundError:
                    pass                                   # the other version's, or the other controller's file
        return PartCgroup(name, made)

    def paths(self) -> list:
        return [path for _, _, path in self.bases.values()]

    def close(self) -> None:
        """Remove the base cgroups (through their parents' descriptors: the zygote no longer sees /sys)."""
        for fd, parent, path in self.bases.values():
            os.close(fd)
            try:
                os.rmdir(os.path.basename(path), dir_fd=parent)
            except OSError:
                pass
            os.close(parent)


class PartCgroup:
    """The cgroup of one part (one directory per hierarchy)."""

    def __init__(self, name: str, fds: list):
        self.name, self.fds = name, fds

    def join_self(self) -> None:
        """Move the calling process, single-threaded (a fresh fork), into this cgroup. cgroup v1: "0"
        into ``tasks`` moves the calling thread without the kernel's global thread-group lock, whose
        writer waits for an RCU grace period (writing a pid to ``cgroup.procs`` takes it: a few
        milliseconds of idle CPU per part under load). v2 has no ``tasks``: ``cgroup.procs``."""
        for fd in self.fds:
            try:
                _write(f"{self.name}/tasks", "0", dir_fd=fd)
            except FileNotFoundError:
                _write(f"{self.name}/cgroup.procs", "0", dir_fd=fd)

    def pids(self) -> set:
        found = set()
        for fd in self.fds:
            found |= {int(p) for p in _read(f"{self.name}/cgroup.procs", dir_fd=fd).split()}
        return found

    def peak_mb(self) -> float:
        for key in ("memory.peak", "memory.max_usage_in_bytes"):
            for fd in self.fds:
                try:
                    return int(_read(f"{self.name}/{key}", dir_fd=fd)) / 2 ** 20
                except (FileNotFoundError, ValueError):
                    continue
        return 0.0

    def finish(self, wait: float = 3.0) -> int:
        """Kill whatever is left, remove the cgroup; the number of processes that survived (0)."""
        deadline = time.monotonic() + wait
        while True:
            left = self.pids()
            if not left:
                break
            if time.monotonic() > deadline:
                return len(left)
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)
        for fd in self.fds:
            try:
                os.rmdir(self.name, dir_fd=fd)
            except OSError:
                time.sleep(0.01)
                os.rmdir(self.name, dir_fd=fd)
        return 0
