"""The zygote: a clean interpreter, started empty, that forks one sandboxed process per graded part.

Started by the grader as ``python -I -S zygote.py CONFIG`` with an empty environment (PATH, LANG and
one-thread settings only), in its own session, stdin/stdout/stderr on /dev/null or a log file: either
as one zygote with one socket to the grader (:class:`course_grader.sandbox.Zygote`), or as the
*mother* of a class's zygotes (:class:`course_grader.sandbox.Mother`, :func:`_mother`), which
imports and warms up torch once, forks one zygote per socket, and only then becomes the judge
(:mod:`course_grader.judge`). A zygote never imports course_lib and never holds the grader's
state (no class list, no gradebook, no tokens, no case): its ``sys.path`` is the standard library and
the virtual environment's site-packages, and it loads :mod:`wire`, :mod:`confine`,
:mod:`seccomp`, :mod:`guard` and EXERCISE's ``harness.py`` by file path (from ``/grader`` in
bubblewrap's view, :func:`course_grader.sandbox.bwrap_argv`, which also made its namespaces). Then:

1. torch and numpy imported and warmed up, the guard installed (:func:`guard.install`), and the
   zygote made its parts' subreaper;
2. for every request (a part's source, the references of its dependencies, its cases) it forks the
   part process, in the PID namespace of the zygote's parts where it may make one (at its start,
   :meth:`Zygote._pid_namespace`: an init that does nothing is its PID 1; the parts run one after the
   other, so a part finds no other process there): its own session, a mount namespace of its own
   (:func:`confine.own_mounts`) with a ``/proc`` of that namespace and a ``/tmp`` that is a tmpfs of
   its own, its working directory (the rest of the view read-only), rlimits, another uid (as root), no
   capability, no_new_privs, the dependencies' references, Landlock, seccomp, the guard armed, then
   the student's cell and the cases; at the deadline the zygote kills it, its process group and
   whatever it left (:func:`confine.end_orphans`: the zygote's children and its init's); its /tmp goes
   with its mount namespace, so the zygote removes nothing a part made;
3. the answer to the grader: what the part wrote (raw, parsed by the grader), the reason the guard
   gave if any, how the process ended, whether anything of it survived it, and whether it left
   more in its directory than a part may.
"""

import json
import os
import select
import shutil
import signal
import sys
import time

PRIVATE_TMP = "/tmp"                    # a part's own tmpfs, in its own mount namespace
TMP_INODES = 4096                       # files and folders a part may make there


class Zygote:
    def __init__(self, cfg: dict, libs: dict):
        self.cfg, self.level = cfg, cfg["level"]
        self.wire, self.confine = libs["wire"], libs["confine"]
        self.seccomp, self.guard, self.landlock = libs["seccomp"], libs["guard"], libs["landlock"]
        self.warmup = libs["warmup"]
        self.sock, self.pid, self.cases = cfg["fd"], os.getpid(), {}
        self.made = 0                   # parts run (without a mount namespace each: /tmp/part-<zygote pid>-<made>)
        self.init, self.pidns_off = None, "no namespaces at this level"    # PID 1 of our parts' namespace

    def start(self, warm: tuple | None = None) -> dict:
        """Torch imported and warmed up (or ``warm``: (torch, harness, the functions the guard trips) of the
        mother this zygote was forked from), the guard installed, and the zygote its parts' subreaper
        (bubblewrap made the view before this process started)."""
        self.torch, self.harness, watched = warm or (*self.warmup.warm(self.cfg["harness"]), None)
        self.guard.install(self.torch, watched)
        self.confine.prctl(self.confine.PR_SET_CHILD_SUBREAPER, 1)   # a part's orphans come back to us, to be ended
        if self.level in ("root", "userns"):
            self.init, self.pidns_off = self._pid_namespace()
        import gc
        gc.collect()
        gc.freeze()                     # parts share these pages: no collection of theirs touches (copies) them
        return {"ready": True, "level": self.level, "pid": os.getpid(),
                "seccomp": self.seccomp.supported(), "dumpable": self.confine.dumpable(),
                "landlock": self.landlock.abi(), "pidns": self.init is not None, "pidns_off": self.pidns_off,
                "modules": sorted({m.split(".")[0] for m in sys.modules})}

    def serve(self) -> None:
        while True:
            try:
                req, arrays = self.wire.read_message(self.sock)
            except EOFError:
                break
            reply, raw = self.run_part(req, arrays)
            self.wire.write_message(self.sock, reply, [])
            self.wire.write_all(self.sock, self.wire.frame(raw))

    def _members(self, req, arrays) -> list:
        """[(member request, its cases, its arrays)]: one, or each part of a group run in one process."""
        if "members" not in req:
            return [(req, self._cases(req, arrays), arrays)]
        out = []
        for m in req["members"]:
            mine = arrays[int(m["first"]):int(m["first"]) + int(m["count"])]
            out.append((m, self._cases(m, mine), mine))
        return out

    def _cases(self, req, arrays) -> list:
        """The request's cases, or the ones sent earlier under its ``cases_key`` (the same for every
        student: decoded once, kept here; inputs only, no expected answer)."""
        key = req.get("cases_key")
        if req.get("cases") is None:
            return self.cases[key]
        made = {}
        cases = [self.harness.Case(**self.wire.decode(c, arrays, made)) for c in req["cases"]]
        if key:
            self.cases[key] = cases
        return cases

    def _tmp(self, req: dict) -> str:
        """Where the zygote may not make mount namespaces (no CAP_SYS_ADMIN: a setuid bubblewrap), or with
        the defence removed (tests): the part's own directory in bubblewrap's shared /tmp (Landlock lets
        it write there only), its uid's, which the zygote measures and removes after the part."""
        self.made += 1
        path = f"/tmp/part-{os.getpid()}-{self.made}"
        os.mkdir(path, 0o700)
        if self.level == "root":
            os.chown(path, req["uid"], req["gid"])
        return path

    def run_part(self, req: dict, arrays: list) -> tuple[dict, bytes]:
        """Fork the part process S, wait for it or kill it, clean up (orphans, its /tmp directory)."""
        start = time.monotonic()
        members = self._members(req, arrays)
        own_pidns = self.init is not None and req.get("layers", {}).get("pidns", True)
        own_tmp = self.init is not None and req.get("layers", {}).get("tmpfs", True)    # a tmpfs of its own
        if self.init is not None and not own_pidns:                  # the defence removed (tests only)
            self.confine.setns(self.namespaces[0], self.confine.CLONE_NEWPID)
        try:
            r, w = os.pipe()                                     # the part's results (fd 4 there)
            tr, tw = os.pipe()                                   # the guard's reason (fd 3 there)
            er, ew = os.pipe()                                   # set-up errors, closed before student code
            tmp = None
            if self.level in ("root", "userns"):
                tmp = PRIVATE_TMP if own_tmp else self._tmp(req)
            pid = os.fork()
            if pid == 0:
                part_process(self, req, members, (w, tw, ew), arrays, tmp, own_pidns, own_tmp)   # never returns
        finally:
            if self.init is not None and not own_pidns:
                self.confine.setns(self.namespaces[1], self.confine.CLONE_NEWPID)
        for fd in (w, tw, ew):
            os.close(fd)
        bufs, timed_out, status = _watch_part(pid, (r, tr, er), req["timeout"], self.confine.kill_group)
        survivors = self.confine.end_orphans(time.monotonic() + 3.0, self.init)   # ours and our init's
        tmp_over = False
        if tmp is not None and not own_tmp:     # a directory of the shared /tmp: what it left, then removed
            tmp_over = _remove_left(tmp, req["tmp_mb"] << 20)
        reply = {"timed_out": timed_out, "wait_status": status, "survivors": survivors,
                 "tmp_over": tmp_over,
                 "tattle": bufs[tr].decode("utf-8", "replace")[:300],
                 "setup_error": bufs[er].decode("utf-8", "replace")[:1000],
                 "seconds": time.monotonic() - start,
                 "overflow": bool(bufs.get("overflow")), "cpu": bufs["cpu"]}
        for fd in (r, tr, er):
            os.close(fd)
        return reply, bytes(bufs[r])

    def _pid_namespace(self) -> tuple[int | None, str]:
        """A new PID namespace for all our children from now on (our parts: one at a time), and its PID 1,
        an init of ours that does nothing (a part as PID 1 would ignore the signals it sends itself):
        (the init's pid, "") where we may make one (CAP_SYS_ADMIN in our user namespace,
        :data:`confine.NAMESPACE_CAPS`), else (None, why not). A part is then a child of ours in that
        namespace (pidfd, wait status, CPU time as before); what it leaves, our init adopts."""
        try:
            own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            return None, str(e)
        try:
            self.confine.unshare(self.confine.CLONE_NEWPID)
        except OSError as e:
            os.close(own)
            return None, str(e)
        init = os.fork()
        if init == 0:
            _init(self.confine)                                  # never returns
        self.namespaces = (own, os.open("/proc/self/ns/pid_for_children", os.O_RDONLY | os.O_CLOEXEC))
        return init, ""


def _init(confine) -> None:
    """PID 1 of the parts' namespace: holds no descriptor, reaps what it adopts (SIGCHLD ignored), ends
    with the zygote (and the kernel then ends whatever is left in the namespace). Not dumpable, like the
    zygote it was forked from: a part's ``/proc`` (hidepid) does not list it."""
    try:
        confine.prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        os.closerange(3, 1 << 16)
        while True:
            signal.pause()
    finally:
        os._exit(0)


def _remove_left(top: str, limit: int) -> bool:
    """Whether the part left more than ``limit`` bytes in its directory ``top`` of the shared /tmp, or
    something the zygote could not measure or remove (a tree deeper than Python recurses, a folder of
    mode 000 at ``userns``): then the part fails; the zygote goes on serving either way."""
    try:
        over = _bytes_under(top) > limit
        shutil.rmtree(top)
        return over
    except (OSError, RecursionError):
        return True


def _bytes_under(top: str) -> int:
    """The bytes the files under ``top`` take (their blocks: a sparse file counts what it holds)."""
    total = 0
    for folder, dirs, files in os.walk(top):
        for name in files + dirs:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                continue
    return total


def _watch_part(pid: int, fds: tuple, timeout: float, kill_group):
    """Read the part's pipes until it ends, or kill it and its process group at the deadline, or at once
    when it writes more than a pipe allows (what else it left, :func:`confine.end_orphans` ends).
    (buffers, timed out?, wait status). Each buffer grows in place: 64 MiB read in 64 KiB pieces costs
    one copy, not one per piece."""
    limits = dict(zip(fds, (64 << 20, 4096, 4096)))
    bufs = {fd: bytearray() for fd in fds}
    _bigger_pipe(fds[0])
    pidfd = os.pidfd_open(pid)                                   # our unreaped child: never a reused pid
    deadline, timed_out, alive = time.monotonic() + timeout, False, True
    open_fds = set(fds)
    while alive or open_fds:
        left = deadline - time.monotonic()
        if alive and left <= 0:
            kill_group(pid)
            timed_out, alive = True, False
            continue
        wait = max(left, 0) if alive else 1.0                    # after the end: drain what is left
        ready, _, _ = select.select(list(open_fds) + ([pidfd] if alive else []), [], [], wait)
        if not ready and not alive:
            break
        for fd in ready:
            if fd == pidfd:
                alive = False
                continue
            chunk = os.read(fd, 1 << 20)
            if chunk and len(bufs[fd]) + len(chunk) > limits[fd]:
                bufs["overflow"] = True                          # too much: refused, and the part ends now
                kill_group(pid)
                open_fds.clear()
                alive = False
                break
            if not chunk:
                open_fds.discard(fd)                             # EOF
                continue
            bufs[fd] += chunk
    os.close(pidfd)
    kill_group(pid)                                             # what it started, before it is reaped
    _, status, usage = os.wait4(pid, 0)
    bufs["cpu"] = usage.ru_utime + usage.ru_stime
    return bufs, timed_out, status


def _bigger_pipe(fd: int) -> None:
    """The result pipe at 1 MiB (the unprivileged maximum) where the kernel allows: fewer reads."""
    import fcntl
    try:
        fcntl.fcntl(fd, 1031, 1 << 20)                           # F_SETPIPE_SZ
    except OSError:
        pass


def part_process(z: Zygote, req: dict, members: list, fds: tuple, arrays: list, tmp: str | None,
                 own_pidns: bool = False, own_tmp: bool = False) -> None:
    """The part process S: confinement, the references of the dependencies, then the cell and the cases
    (of each member of a group of parts that depend on no reference, one after the other)."""
    w, tw, ew = fds
    writable = [tmp] if tmp else []
    try:
        z.confine.die_with_parent(z.pid, outside=own_pidns)
        os.setsid()                                              # no controlling terminal, its own session
        ew = _descriptors(w, tw, ew)
        if own_pidns or own_tmp:                                 # its /proc and /tmp, before Landlock
            z.confine.own_mounts(own_pidns, _tmpfs(z.level, req) if own_tmp else None)
        os.chdir(tmp or "/")
        max_file_mb = min(req["max_file_mb"], req["tmp_mb"]) if tmp else req["max_file_mb"]
        z.confine.limit(req["memory_mb"], req["cpu_seconds"], max_file_mb, req.get("nproc", 1))
        z.confine.drop(z.level, req["uid"], req["gid"])
        deps = z.guard.load_dependencies(f"_references_{os.getpid()}", req["deps"], req["exports"], arrays)
        compiled = [_compile(m["source"], m["part"]) for m, _, _ in members]
        layers = req.get("layers", {})
        if layers.get("landlock", True):                         # the kernel's file allow-list, every level
            z.landlock.restrict(req["read_roots"], writable)
        if layers.get("seccomp", True) and z.seccomp.supported():
            z.seccomp.install(os.getpid())
        if layers.get("guard", True):
            z.guard.arm(tuple(code for code, _ in compiled if code is not None), req["read_roots"], writable)
    except BaseException as e:                                   # noqa: BLE001 (never run unconfined)
        _fail(ew, e)
    os.close(ew)                                                 # only the grader's code could write there
    try:
        runs = [_run_cell(z, m["part"], m["name"], code, error, cases, deps, req.get("probe", False))
                for (m, cases, _), (code, error) in zip(members, compiled)]
        guard = z.guard.check() if layers.get("guard", True) else "off"     # still as armed? (advisory)
        if "members" in req:
            header = {"members": [dict(h, count=len(a), guard=guard) for h, a in runs]}
            z.wire.write_message(4, header, [x for _, a in runs for x in a])
        else:
            z.wire.write_message(4, dict(runs[0][0], guard=guard), runs[0][1])
        os._exit(0)
    except BaseException:                                        # noqa: BLE001
        if os.environ.get("COURSE_GRADING_DEBUG"):
            import traceback
            traceback.print_exc()
    finally:
        os._exit(1)


def _tmpfs(level: str, req: dict) -> dict:
    """The part's own tmpfs: its size, how many files and folders it may hold, its owner (the part's uid
    as root; at ``userns`` the part keeps the zygote's)."""
    uid, gid = (req["uid"], req["gid"]) if level == "root" else (os.getuid(), os.getgid())
    return {"mb": req["tmp_mb"], "inodes": req.get("tmp_inodes", TMP_INODES), "uid": uid, "gid": gid}


def _descriptors(w: int, tw: int, ew: int) -> int:
    """Only the tattle pipe (fd 3), the result pipe (fd 4) and, until the cell runs, the set-up error
    pipe (fd 5, returned) stay open; 0, 1, 2 are /dev/null (2 stays the zygote's log when debugging)."""
    import fcntl
    debug = bool(os.environ.get("COURSE_GRADING_DEBUG"))
    keep = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in (tw, w, ew)]
    os.closerange(3 if debug else 0, 100)
    for target, fd in zip((3, 4, 5), keep):
        os.dup2(fd, target)
    os.closerange(6, 1 << 16)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1) if debug else (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return 5


def _fail(ew: int, e: BaseException) -> None:
    """A set-up error (the grader's problem, never the student's): on the set-up pipe, then exit."""
    try:
        os.write(ew, f"{type(e).__name__}: {e}"[:1000].encode())
    finally:
        os._exit(3)


def _compile(source: str, part: str):
    try:
        return compile(source, f"<submission:{part}>", "exec"), None
    except BaseException as e:                                   # noqa: BLE001 (SyntaxError, a huge source)
        return None, "the solution cell raised " + _fmt(e)


def _fmt(e: BaseException) -> str:
    try:
        text = f"{type(e).__name__}: {e}"
    except BaseException:                                        # noqa: BLE001 (a hostile __str__)
        text = type(e).__name__
    if isinstance(e, NotImplementedError):
        text += " (not implemented yet?)"
    return text[:600]


def _run_cell(z: Zygote, part: str, name: str, code, error, cases: list, deps: dict, probe: bool) -> tuple:
    """Define the part from the cell, run every case: (header, arrays) for the message on fd 4."""
    import builtins
    import math

    import numpy as np
    torch = z.torch
    header = {"part": part, "cell_error": error, "cases": []}
    arrays = []
    ns = {"__name__": "__submission__", "__builtins__": builtins, "math": math, "torch": torch, "nn": torch.nn,
          "F": torch.nn.functional, "np": np, **deps}
    if code is not None:
        try:
            exec(code, ns)
        except BaseException as e:                               # noqa: BLE001 (SystemExit, KeyboardInterrupt too)
            header["cell_error"] = "the solution cell raised " + _fmt(e)
    ns.update(deps)                                              # the other parts are always the references
    candidate = ns.get(name)
    if probe:
        header["probe"] = _probe(ns)
    elif header["cell_error"] is None and candidate is None:
        header["cell_error"] = f"the solution cell does not define {name}"
    elif header["cell_error"] is None:
        for case in cases:
            entry = {"error": None, "keys": []}
            try:
                out = z.harness.run_case(case, candidate)
                entry["keys"] = [str(k) for k in out]
                arrays.extend(np.asarray(v, dtype=np.float64) for v in out.values())
            except z.harness.ResultError as e:
                entry["error"] = "returned a wrong result" if case.hidden else str(e)[:600]
            except BaseException as e:                           # noqa: BLE001 (a hidden case: the type only)
                entry["error"] = "raised " + (type(e).__name__ if case.hidden else _fmt(e))
            header["cases"].append(entry)
    return header, arrays


def _probe(ns: dict):
    """Tests only (``probe`` requests): what the cell's ``probe()`` returns, as JSON."""
    try:
        return json.loads(json.dumps(ns["probe"](), default=str))
    except BaseException as e:                                   # noqa: BLE001
        return {"probe_error": _fmt(e)}


def _zygote(cfg: dict, libs: dict, warm: tuple | None = None) -> None:
    """Be a zygote on ``cfg["fd"]``: (torch,) the guard, the hello, then serve; never returns."""
    sock = cfg["fd"]
    try:
        libs.setdefault("wire", _wire(cfg))
        z = Zygote(cfg, libs)
        ready = dict(z.start(warm), host_pid=cfg.get("host_pid"))
    except BaseException as e:                                   # noqa: BLE001
        import traceback
        msg = json.dumps({"ready": False, "error": f"{type(e).__name__}: {e}",
                          "traceback": traceback.format_exc()[-3000:]}).encode()
        os.write(sock, len(msg).to_bytes(8, "big") + msg)
        os._exit(1)
    libs["wire"].write_message(sock, ready)
    z.serve()
    os._exit(0)


def _mother(cfg: dict, libs: dict) -> None:
    """One warm interpreter for a whole class: torch imported and warmed up once, then one zygote forked
    per slot (each then makes its own namespaces, guard and view, as a fresh zygote does), all before
    anything of course_lib or a case exists in this process. Then this process, which never forks a
    part, becomes the grader's judge (:mod:`judge`): the cases, the reference's answers, the verdicts."""
    warm = (*libs["warmup"].warm(cfg["harness"]), libs["guard"].watched_functions())   # torch's modules, searched once
    import gc
    gc.collect()
    gc.freeze()                         # once here, not in every zygote (a zygote's own collection is then short)
    mother = os.getpid()
    slots = cfg["slots"]
    for fd in slots:
        if os.fork() == 0:
            for other in [*slots, cfg["control"], cfg["channels"]]:
                if other != fd:
                    os.close(other)
            os.setsid()                                          # its own group: the grader ends it alone
            libs["confine"].die_with_parent(mother)
            _zygote(dict(cfg, fd=fd, host_pid=os.getpid()), libs, warm)
    for fd in slots:
        os.close(fd)
    del warm
    confine = libs["confine"]                                    # only the zygotes make namespaces
    confine.drop_capabilities([confine.CAP_SYS_ADMIN, confine.CAP_SETPCAP])
    sys.path[:0] = [cfg["grader_parent"], cfg["course_lib_parent"]]
    from course_grader import judge
    judge.serve(cfg["control"], cfg["channels"])
    while True:                                                  # the grader is done: wait for the zygotes
        try:
            os.wait()
        except ChildProcessError:
            break
    os._exit(0)


def _wire(cfg: dict):
    """:mod:`wire` (it imports numpy, so: after the namespaces of a fresh zygote)."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [here, *cfg["sys_path"]]
    import wire
    sys.path.remove(here)
    return wire


def main() -> None:
    cfg = json.loads(sys.argv[1])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import confine
    confine.reset_signals()                             # nothing of how the grader was started (nohup)
    import guard
    import landlock
    import seccomp
    import warmup
    if cfg["level"] in ("root", "userns"):
        confine.prctl(confine.PR_SET_PDEATHSIG, 9)      # bubblewrap's --die-with-parent: the grader's pid is not ours
    else:
        confine.die_with_parent(cfg["grader_pid"])
    confine.prctl(confine.PR_SET_DUMPABLE, 0)          # a process of the same uid cannot read our memory
    os.environ.pop("PWD", None)                         # bubblewrap's (after --chdir), not one of ENV
    libs = dict(confine=confine, seccomp=seccomp, guard=guard, landlock=landlock, warmup=warmup)
    if cfg.get("slots"):
        libs["wire"] = _wire(cfg)
        _mother(cfg, libs)
    _zygote(cfg, libs)


if __name__ == "__main__":
    main()
