"""Reads traced, not guessed: a command run under strace, and the checks its trace allows (issue 48's
promise "no file of another student read", checked by what the kernel was asked to open).

API, for any end-to-end test that runs the grader's commands::

    output, trace = traced_command(args, cwd, env, log)      # like subprocess.run, exit 0 asserted
    trace.reads_of_other_students({student: [their paths]})  # [Read]: no Read with .ok when the promise holds
    trace.opened_outside(roots, never=[test_root])           # opens by confined processes outside the view
    trace.attempts()                                         # the confined processes' failed opens
    trace.created(top)                                       # what any process wrote, made or removed under top
    trace.opened_for_reading(top)                            # what any process opened under top to read
    broken, tries = confined_reads({name: trace}, files, test_root)   # both checks over several commands

``log`` belongs outside any folder whose contents the test compares (it is written while the command
runs). tests/grading/test_lms_end_to_end.py uses all of it; tests/grading/test_trace_kit.py shows the
checker failing on a synthetic log.

**What is traced.** ``strace -f`` follows every process the command starts (forks, bubblewrap's
namespaces, the zygotes' parts), with ``--pidns-translation`` so a fork inside bubblewrap's PID
namespace names its child by the pid strace sees, and ``-y`` so that every descriptor, the working
directory of ``AT_FDCWD`` included, is printed with the path the kernel resolves it to. Recorded:
every ``open``, ``openat``, ``openat2``, ``creat``, ``execve``, ``execveat``, ``readlink(at)``,
``chdir``/``fchdir``, ``rename``/``mkdir``/``unlink``/``rmdir``/``link``/``symlink`` (and their ``at``
forms) and ``truncate``, succeeded or failed, and the forks (``clone``, ``clone3``, ``fork``,
``vfork``) that give each process its parent. Not recorded: ``stat``, ``access`` and friends (Python's
imports make thousands; they reveal that a path exists, never its content) and ``read``/``write``
(which go through descriptors whose opening *is* recorded). ``--seccomp-bpf`` stops the traced
processes only at these calls, so the grader's own reads, writes and torch's work run untraced.
Under it the sandbox works as without: strace's filter only asks to be told, and the grader's seccomp
rules (``SCMP_ACT_KILL_PROCESS``) still end a part (the stricter action wins); a part's forks inside
its PID namespace are followed. Tried by hand: tests/grading/test_seccomp_policy.py and
test_processes.py pass under this prefix, and the LMS end-to-end test's grades are the same traced or
not (its cost: 53.5 CPU-s traced, 52.0 untraced, one run each on 2 shared cores).

**Which processes ran a student's code.** Every part runs in a process the sandbox's zygote forked
inside bubblewrap (:mod:`course_grader.zygote`), and nothing else runs a student's code: the grader,
its workers and recorders, ``lms-collect`` and ``nbgrader generate_feedback`` read notebooks as data
and never execute a cell. So the trace's *confined* processes are the descendants of a process that
executed ``bwrap`` (found from the forks' returns), from the moment they execute something other than
bwrap itself (bwrap's own set-up opens the host paths it binds; the mother, its zygotes, their init
and every part come after). A part's student is deliberately *not* guessed: the grader sends a part
its cell as a string over a socket, so no confined process has any reason to open a file of any
student, its own included, and the check demands exactly that. It implies "no file of another
student" whichever student a part served, and holds with any number of zygotes (no attribution by
timing, which ``--jobs 2`` would blur).

**What a trace proves, and what not.** A successful open is judged by the path the kernel gives the
new descriptor (``= 5</path>``), not by the string the process passed: ``../``, ``/proc/self/cwd``,
links and relative names are already resolved. A failed open keeps the path asked for (joined to its
directory descriptor's path, not resolved: the attempt, not a read). Paths are as seen from the
tracer; a student's file bound into the view under another name would not match the student's paths,
which is why :meth:`Trace.opened_outside` also lists every successful open of a confined process
outside the view's own roots. Not seen: memory another process shares (none is shared with a part), a
descriptor passed over a socket (the trace shows who opened it, not who received it), ``stat``-like
calls. For the gate (``lms-collect``), the trace shows which files it opened and created (only under
``submitted/<student>/`` and its own records); it cannot show which bytes of the download went into
which file, since the zip is read through one descriptor into memory: that is checked by content.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
from pathlib import Path

STRACE = "/usr/bin/strace"
FILE_CALLS = ("open", "openat", "openat2", "creat", "execve", "execveat", "readlink", "readlinkat", "chdir",
              "fchdir", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "unlink", "unlinkat", "rmdir",
              "link", "linkat", "symlink", "symlinkat", "truncate")
FORKS = ("clone", "clone3", "fork", "vfork")
OPENS = ("open", "openat", "openat2", "creat")
WRITING = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC")


def strace_argv(log: Path | str) -> list[str]:
    """The strace prefix that writes the trace of a command and all it starts to ``log``."""
    return [STRACE, "-f", "-qq", "-y", "--pidns-translation", "--seccomp-bpf", "-s", "4096", "-e", "signal=none",
            "-e", "trace=" + ",".join(FILE_CALLS + FORKS), "-o", str(log)]


@dataclasses.dataclass(frozen=True)
class Event:
    """One traced call: ``path`` the path it names, resolved by the kernel for a successful open (the
    new descriptor's), else the one asked for joined to its directory's; ``asked`` the string as the
    process passed it; ``target`` a rename's or link's second path (joined likewise); ``result`` the
    return value (-1 failed, with ``error`` the errno's name); ``program`` what the process was executing."""
    pid: int
    syscall: str
    path: str
    result: int
    error: str
    flags: str
    program: str
    asked: str = ""
    target: str = ""

    @property
    def ok(self) -> bool:
        return self.result >= 0


@dataclasses.dataclass(frozen=True)
class Read:
    """A confined process's open (or attempt) of a file of ``student``."""
    pid: int
    syscall: str
    path: str
    ok: bool
    error: str
    student: str

    def __str__(self) -> str:
        how = "opened" if self.ok else f"tried ({self.error})"
        return f"pid {self.pid} {how} {self.path} of {self.student} by {self.syscall}"


_LINE = re.compile(r"^(\d+) +(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)\) += (-?\d+|\?)(.*)$", re.S)
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DIRFDS = re.compile(r"(?:^|, )(?:AT_FDCWD|-?\d+)<((?:[^>\\]|\\.)*)>")
_TRANSLATED = re.compile(r"/\* (\d+) in strace's PID NS \*/")


def _unescape(text: str) -> str:
    """A string as strace prints it (C escapes, ``\\xNN`` bytes) back to text."""
    raw = re.sub(rb"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)", lambda m: _escape(m.group(1)), text.encode("utf-8"))
    return raw.decode("utf-8", "surrogateescape")


def _escape(code: bytes) -> bytes:
    if code[:1] == b"x":
        return bytes([int(code[1:], 16)])
    if code[:1].isdigit():
        return bytes([int(code, 8)])
    return {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"v": b"\v", b"f": b"\f"}.get(code, code)


def _joined(lines: list[str]) -> list[tuple[int, str]]:
    """(pid, whole call) for every line, an ``<unfinished ...>`` call joined to its ``resumed`` end."""
    out, pending = [], {}
    for line in lines:
        m = _LINE.match(line)
        if not m:
            continue
        pid, text = int(m.group(1)), m.group(2)
        if text.endswith("<unfinished ...>"):
            pending[pid] = text[: -len("<unfinished ...>")].rstrip()
            continue
        resumed = re.match(r"^<\.\.\. \w+ resumed>(.*)$", text, re.S)
        if resumed:
            text = pending.pop(pid, "") + resumed.group(1)
        out.append((pid, text))
    return out


def _under(path: str, top: Path | str) -> bool:
    """Whether ``path`` is ``top`` or lies under it."""
    top = str(top).rstrip("/")
    return path == top or path.startswith(top + "/")


class Trace:
    """The events of one traced command (:func:`parse`)."""

    def __init__(self, events: list[Event], parent: dict[int, int]):
        self.events, self.parent = events, parent

    def confined(self) -> set[int]:
        """Pids of the processes that descend from a ``bwrap`` executed (see the module's docstring)."""
        roots = self.bwraps()
        pids = {e.pid for e in self.events} | set(self.parent)
        found = set()
        for pid in pids:
            p = pid
            while p is not None and p not in roots:
                p = self.parent.get(p)
            if p is not None:
                found.add(pid)
        return found

    def confined_events(self) -> list[Event]:
        """What the confined processes asked for, bubblewrap's own set-up left out."""
        pids = self.confined() - self.bwraps()        # the grader's fork that became bubblewrap: not inside
        return [e for e in self.events if e.pid in pids and os.path.basename(e.program) != "bwrap"]

    def bwraps(self) -> set[int]:
        """The processes that executed bubblewrap."""
        return {e.pid for e in self.events if e.syscall.startswith("execve") and e.ok
                and os.path.basename(e.path) == "bwrap"}

    def reads_of_other_students(self, students: dict[str, list[Path | str]]) -> list[Read]:
        """Every open, successful or not, by a confined process of a path of a student (``students``:
        {id: their files and folders}: their uploads in the download, ``submitted/<id>``,
        ``autograded/<id>``, ``feedback/<id>``). A confined process serves no student's files, so each
        one counts (see the module's docstring). A successful one breaks the promise; a failed one is an
        attempt that the sandbox stopped."""
        areas = [(p, s) for s, paths in students.items() for p in paths]
        found = []
        for e in self.confined_events():
            if e.syscall not in OPENS + ("execve", "execveat", "readlink", "readlinkat", "chdir", "fchdir",
                                         "truncate", "link", "linkat", "symlink", "symlinkat"):
                continue
            for area, student in areas:
                if _under(e.path, area):
                    found.append(Read(e.pid, e.syscall, e.path, e.ok, e.error, student))
                    break
        return found

    def attempts(self) -> list[Event]:
        """The failed opens of the confined processes (what the sandbox refused, and what was absent)."""
        return [e for e in self.confined_events() if e.syscall in OPENS and not e.ok]

    def opened_outside(self, roots: list[Path | str], never: list[Path | str] = ()) -> list[Event]:
        """Successful opens of files and folders by confined processes under none of ``roots`` (the
        view's own), or under one of ``never`` (a course under ``/tmp`` is not the part's own ``/tmp``).
        Descriptors that are no path (``pid:[...]``, ``pipe:``, ``anon_inode:``) are left out."""
        return [e for e in self.confined_events() if e.syscall in OPENS and e.ok and e.path.startswith("/")
                and (not any(_under(e.path, t) for t in roots) or any(_under(e.path, t) for t in never))]

    def created(self, top: Path | str) -> list[Event]:
        """Successful calls that write, make, rename or remove something under ``top`` (a rename's or
        link's either end), by any process."""
        return [e for e in self.events if e.ok and (_under(e.path, top) or _under(e.target, top))
                and (e.syscall in OPENS and WRITING.search(e.flags) or e.syscall.startswith(
                    ("rename", "mkdir", "unlink", "rmdir", "link", "symlink", "truncate")))]

    def opened_for_reading(self, top: Path | str) -> list[Event]:
        """Successful opens of files under ``top`` for reading only, by any process."""
        top = str(top).rstrip("/")
        return [e for e in self.events if e.ok and e.syscall in OPENS and not WRITING.search(e.flags)
                and "O_DIRECTORY" not in e.flags and e.path.startswith(top + "/")]


def parse(text: str, cwd: Path | str) -> Trace:
    """The :class:`Trace` of strace's log ``text`` (:func:`strace_argv`) of a command started in ``cwd``."""
    calls, parent, born = [], {}, {}
    for at, (pid, call) in enumerate(_joined(text.splitlines())):
        m = _CALL.match(call)
        if not m or m.group(3) == "?":
            continue
        name, args, value, rest = m.group(1), m.group(2), int(m.group(3)), m.group(4)
        if name in FORKS:
            if value > 0:
                child = _TRANSLATED.search(rest)
                kid = int(child.group(1)) if child else value
                parent[kid], born[kid] = pid, at
            continue
        calls.append((at, pid, name, args, value, rest))
    execs: dict[int, list] = {}
    for at, pid, name, args, value, _ in calls:
        if name.startswith("execve") and value == 0:
            execs.setdefault(pid, []).append((at, _unescape((_STRING.findall(args) or [""])[0])))

    def program(pid: int, at: int) -> str:
        """What ``pid`` executed at line ``at``: its last execve before, else its parent's at the fork (a
        child's first calls may be logged before its parent's fork returns)."""
        mine = [p for when, p in execs.get(pid, []) if when <= at]
        if mine:
            return mine[-1]
        return program(parent[pid], born[pid]) if pid in parent and born[pid] != at else ""
    events = []
    for at, pid, name, args, value, rest in calls:
        error = (rest.split() or [""])[0] if value < 0 else ""
        strings = [_unescape(s) for s in _STRING.findall(args)]
        asked = path = strings[0] if strings else ""
        dirs = [_unescape(d) for d in _DIRFDS.findall(args)]
        if name == "fchdir":
            path = dirs[0] if dirs else ""
        elif not path.startswith("/"):
            path = os.path.join(dirs[0] if dirs else str(cwd), path)
        if value < 0:
            path = os.path.normpath(path)          # an attempt, named lexically (nothing was resolved)
        target = strings[1] if len(strings) > 1 and name.startswith(("rename", "link", "symlink")) else ""
        if target and not target.startswith("/"):
            target = os.path.join(dirs[-1] if dirs else str(cwd), target)
        if name in OPENS and value >= 0:
            got = re.match(r"^<((?:[^>\\]|\\.)*)>", rest)
            if got:
                path = _unescape(got.group(1))
        parts = [a.strip() for a in args.split(", ")]
        flags = parts[2] if name == "openat" and len(parts) > 2 else parts[1] if name == "open" and len(parts) > 1 \
            else ""
        events.append(Event(pid, name, path, value, error, flags, program(pid, at), asked, target))
    return Trace(events, parent)


def traced_command(args: list[str], cwd: Path, env: dict, log: Path, timeout: float = 600) -> tuple[str, Trace]:
    """Run ``args`` in ``cwd`` with ``env`` under strace (its log at ``log``, outside the course); assert
    it exits 0; (its stdout and stderr, the :class:`Trace`)."""
    assert os.access(STRACE, os.X_OK), f"{STRACE} is missing: `make trace-deps` (as root) or apt-get install strace"
    proc = subprocess.run(strace_argv(log) + list(args), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{args[:4]} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc.stdout + proc.stderr, parse(Path(log).read_text(encoding="utf-8", errors="surrogateescape"), cwd)


def view_roots() -> list[str]:
    """What the sandbox's view holds (:func:`course_grader.sandbox.bwrap_argv`): the Python installation
    and site-packages, the C libraries, the grader's and the judge's folders, its /dev, /proc, /tmp (the
    root folder itself, which bubblewrap's ``--chdir /`` opens, is left to :func:`confined_reads`)."""
    from course_grader import sandbox
    paths = sandbox.python_paths()
    return [*paths["readonly"], *paths["hidden"], "/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64",
            sandbox.GRADER_DIR, sandbox.JUDGE_DIR, "/dev", "/proc", "/tmp"]


def confined_reads(traces: dict[str, Trace], files: dict, test_root: Path | str) -> tuple[list[str], list[Event]]:
    """Over the traces of several commands ({name: Trace}): (a line for each successful open, by a confined
    process, of a student's file (``files``, as :meth:`Trace.reads_of_other_students` takes them) or of
    anything outside the view or under ``test_root``: the promise holds when it is empty; the confined
    processes' failed opens, the tries)."""
    broken, tries = [], []
    for name, trace in traces.items():
        broken += [f"{name}: {r}" for r in trace.reads_of_other_students(files) if r.ok]
        broken += [f"{name}: pid {e.pid} opened {e.path}, outside the view" for e in
                   trace.opened_outside(view_roots(), never=[test_root]) if e.path != "/"]
        tries += trace.attempts()
    return broken, tries
