"""The grader's side of the sandbox: which level this machine allows, the zygote, one call per part.

The grader never forks a process that runs student code. It starts a :class:`Zygote` (see
:mod:`.zygote`): a fresh ``python -I -S`` with an empty environment that imports torch once and
forks one confined process per graded part. The grader sends it a part (JSON + .npy over a socket)
and gets back what the part wrote, parsed here with ``allow_pickle=False``, and how it ended.

Levels (:func:`detect_level` picks the strongest that works; README "Autograde, sandboxed"):

``root``
    the grader is root: bubblewrap (:func:`bwrap_argv`) builds the view (the Python installation and the
    C libraries read-only, no network, new PID, IPC and UTS namespaces, a private /tmp, an empty
    environment, its own session, the life of the grader) with eight capabilities left; each part then
    is in a PID namespace of its zygote's parts (one at a time) with a /proc of its own, and leaves root
    for uid ``nobody`` (no capability), with rlimits (one process: RLIMIT_NPROC=1, so
    RLIMIT_AS caps the part's memory), Landlock, seccomp (:mod:`.seccomp`, compiled by libseccomp) and the
    guard.
``userns``
    not root: the same view, bubblewrap making a user namespace (the zygotes keep the capabilities that
    make each part's PID namespace in it; a part keeps none), the same rlimits, Landlock, seccomp, the
    guard.
``rlimits``
    no bubblewrap view, only by name (``--sandbox rlimits``, a throw-away VM): ``nobody`` (a root
    grader's parts leave root as at ``root``) or the grader's own uid, rlimits, Landlock where the kernel
    has it, seccomp, the guard (:func:`confirm_level` says what that leaves open). ``uid``, its name
    before 0.5, still means it. Without bubblewrap the grader refuses the
    other levels and says how to install it (:data:`INSTALL_BWRAP`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass

from . import confine, landlock, wire

HERE = os.path.dirname(os.path.abspath(__file__))
COURSE_LIB = os.path.dirname(importlib.util.find_spec("course_lib").origin)   # found, not imported
ZYGOTE, HARNESS = os.path.join(HERE, "zygote.py"), os.path.join(COURSE_LIB, "grading", "harness.py")
LEVELS = ("root", "userns", "rlimits")
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1",
       "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}


class SandboxError(RuntimeError):
    """The sandbox itself failed (never a submission's doing)."""


@dataclass
class SandboxOptions:
    """Limits of one part (its cell and all its cases)."""

    timeout: float = 20.0                 # wall clock, seconds
    memory_mb: int = 2048                 # the part's memory: RLIMIT_AS (RLIMIT_NPROC=1: it is one process)
    cpu_seconds: int = 40
    max_file_mb: int = 16
    tmp_mb: int = 16                      # the part's private /tmp (a tmpfs)
    uid: int = confine.NOBODY             # the part's uid and gid when the grader is root
    gid: int = confine.NOBODY
    level: str = "auto"                   # "auto" | "root" | "userns" | "rlimits"

    def __post_init__(self):
        """-1, the default before 0.5 (a uid of the grader's choosing), is ``nobody`` now."""
        self.uid, self.gid = (confine.NOBODY if i < 0 else i for i in (self.uid, self.gid))


class WeakSandbox(SandboxError):
    """Only a level without namespaces is possible here: refused unless the level is asked for by name
    (``--sandbox rlimits``), Landlock or not (:func:`confirm_level`)."""


WEAK = ("rlimits",)

#: what no layer stops at a level without namespaces, Landlock or not (it governs opens, not these)
OBSERVES = ("a part can stat() and readlink() any path its uid can search, outside its view: with guessed "
            "names it learns the class list, submission times and file sizes of the course directory")


def confirm_level(level: str, forced: bool, abi: int | None = None) -> str | None:
    """For the level without namespaces (``rlimits``): a warning to log when the level was asked
    for by name (``forced``), else :class:`WeakSandbox`. With Landlock (``abi`` > 0) a part still observes
    the course's files (:data:`OBSERVES`); without it, it reads and writes them too."""
    if level not in WEAK:
        return None
    abi = landlock.abi() if abi is None else abi
    whose = "the part uid's" if os.geteuid() == 0 else "your account's"
    if abi > 0:
        text = (f"sandbox level {level!r} (no namespaces; Landlock ABI {abi} confines what a part opens): "
                + OBSERVES)
    else:
        text = (f"sandbox level {level!r} without Landlock (this kernel has none): no namespace and no file "
                f"allow-list, so a part's native code (torch.from_file, np.fromfile, np.memmap) can read and "
                f"write whatever {whose} files allow, /proc included, and leave files in /tmp, /var/tmp, "
                f"/dev/shm, /run/lock; and " + OBSERVES)
    if not forced:
        raise WeakSandbox(text + ". Grade in a VM or container where user namespaces work, or pass "
                                 f"--sandbox {level} to accept this")
    return "FORCED: " + text


BWRAP = "/usr/bin/bwrap"
GRADER_DIR, JUDGE_DIR = "/grader", "/judge"      # inside the view: the zygote's files; the judge's packages
JUDGE_NEEDS_LANDLOCK = ("sandbox level 'userns' on a kernel without Landlock: the judge's packages (course_lib's "
                        "references) would be readable by the parts, which share its uid. Grade as root, or on a "
                        "kernel with Landlock (5.13 or later, 'landlock' in its lsm= list)")
ZYGOTE_MODULES = ("zygote", "wire", "confine", "guard", "landlock", "seccomp", "warmup")
#: what an ordinary user's grader says when bubblewrap cannot make its user namespace (Ubuntu 24.04: AppArmor)
USERNS_HELP = ("Where unprivileged user namespaces are restricted (Ubuntu 24.04 and later: "
               "kernel.apparmor_restrict_unprivileged_userns=1), an administrator lets bubblewrap alone make "
               "them by loading AppArmor's bwrap-userns-restrict profile (Ubuntu 25.04 loads it; on 24.04: "
               "apt install apparmor-profiles, then install -m 0644 /usr/share/apparmor/extra-profiles/"
               "bwrap-userns-restrict /etc/apparmor.d/ and apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict), "
               "or grades as root")
INSTALL_BWRAP = ("the grader confines each part with bubblewrap, which this machine lacks: install it "
                 "(`apt install bubblewrap`, `dnf install bubblewrap`), or pass --sandbox rlimits on a "
                 "throw-away VM only")


def bwrap() -> str | None:
    """The bubblewrap binary, or None."""
    return shutil.which("bwrap") or (BWRAP if os.access(BWRAP, os.X_OK) else None)


def _setuid(binary: str) -> bool:
    """Whether ``binary`` is setuid (an older distribution's bubblewrap, where unprivileged user namespaces
    are off): such a bubblewrap gives an ordinary user no capability (``--cap-add``), so there a part
    shares the sandbox's PID namespace."""
    try:
        return bool(os.stat(binary).st_mode & 0o4000)
    except OSError:
        return False


def zygote_env() -> dict:
    """The zygote's whole environment: :data:`ENV`, and where libpython is and the sandbox's debugging
    switch when the grader has them."""
    return ENV | {name: os.environ[name] for name in ("LD_LIBRARY_PATH", "COURSE_GRADING_DEBUG")
                  if os.environ.get(name)}


def bwrap_argv(level: str, paths: dict, tmp_mb: int = 64) -> list:
    """The view of the mother, its zygotes and their parts, as bubblewrap's argument list: the Python
    installation, site-packages, the C libraries and the grader's own few files read-only, a private
    /tmp, /dev and /proc, no network, new PID/IPC/UTS namespaces, a cleared environment, the session
    and the life of the grader. As root the sandbox keeps only what its zygotes need to leave root per
    part (setuid/setgid), to end a part of another uid (kill) and to give it, then remove, its /tmp
    directory (chown, dac_override, fowner); elsewhere bwrap makes a user namespace. At both, it keeps
    :data:`confine.NAMESPACE_CAPS` (in that user namespace only, at ``userns``) for the parts' PID
    namespace and their /proc, unless an ordinary user's bubblewrap is setuid (it refuses ``--cap-add`` then)."""
    argv = [bwrap() or BWRAP, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--die-with-parent", "--new-session", "--clearenv", "--chdir", "/"]
    for name, value in zygote_env().items():
        argv += ["--setenv", name, value]
    caps = () if _setuid(argv[0]) and os.geteuid() != 0 else confine.NAMESPACE_CAPS   # a PID namespace per part
    if level == "root":
        caps = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", *caps)
    else:
        argv += ["--unshare-user", "--unshare-cgroup-try"]
    argv += ["--cap-drop", "ALL"] + [a for cap in caps for a in ("--cap-add", cap)]
    # /tmp, /dev and /proc first: bubblewrap mounts in order, and a tmpfs on /tmp made after the binds would
    # hide whatever of them lies under /tmp (a virtual environment in a clone under /tmp, as CI makes)
    argv += ["--size", str(tmp_mb << 20), "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc"]
    for lib in ("/usr/lib", "/usr/lib64", "/usr/lib32"):        # libc, libstdc++, libseccomp
        if os.path.isdir(lib) and not os.path.islink(lib):
            argv += ["--ro-bind", lib, lib]
    for link in ("/lib", "/lib64", "/lib32"):
        if os.path.islink(link):
            argv += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            argv += ["--ro-bind", link, link]
    for path in paths["readonly"]:
        argv += ["--ro-bind", path, path]
    for path in paths.get("hidden", ()):      # course_lib/course_grader installed in site-packages: covered
        argv += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    if paths.get("grader"):                   # the zygote's own modules and the harness, loaded before any part
        argv += ["--perms", "0700", "--dir", GRADER_DIR]     # (as root: a part's uid cannot open them)
    for name, path in paths.get("grader", {}).items():
        argv += ["--ro-bind", path, f"{GRADER_DIR}/{name}"]
    if paths.get("judge"):                    # the judge's packages: a folder only root (the mother) may open
        argv += ["--perms", "0700", "--dir", JUDGE_DIR]
        for path in paths["judge"]:
            argv += ["--ro-bind", path, f"{JUDGE_DIR}/{os.path.basename(path)}"]
    return argv


def detect_level(requested: str = "auto") -> str:
    """The strongest level this machine allows (bubblewrap tried once, with a throwaway Python). A
    level without bubblewrap is refused unless asked for by name (:func:`confirm_level`)."""
    requested = "rlimits" if requested == "uid" else requested       # its name before 0.5
    if requested != "auto":
        if requested not in LEVELS:
            raise ValueError(f"sandbox level: expected one of {LEVELS}, got {requested!r}")
        if requested in ("root", "userns") and bwrap() is None:
            raise SandboxError(INSTALL_BWRAP)
        return requested
    if bwrap() is None:
        raise SandboxError(INSTALL_BWRAP)
    paths = python_paths()
    said = []
    for level in (("root",) if os.geteuid() == 0 else ()) + ("userns",):
        probe = subprocess.run(bwrap_argv(level, paths) + [os.path.realpath(sys.executable), "-I", "-S", "-c", ""],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        if probe.returncode == 0:
            return level
        said.append(f"{level}: {probe.stderr.decode(errors='replace').strip()[-300:] or probe.returncode}")
    try:
        confirm_level("rlimits", forced=False)             # refuses: rlimits runs only when asked for by name
    except WeakSandbox as weak:
        raise WeakSandbox(f"bubblewrap could not make its sandbox here ({'; '.join(said)}). {USERNS_HELP}. "
                          f"Otherwise: {weak}") from None
    return "rlimits"


def python_paths() -> dict:
    """The zygote's sys.path (standard library + site-packages), what its view binds read-only, and
    what it covers inside those (course_lib, wherever it is installed)."""
    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib")}
    site = {os.path.realpath(paths[k]) for k in ("purelib", "platlib")}
    base = os.path.realpath(sys.base_prefix)
    sys_path = [p for p in sys.path if p and os.path.realpath(p).startswith(base + "/")
                and "site-packages" not in p and "dist-packages" not in p] + sorted(site)
    readonly = [base] if base not in ("/usr", "/usr/local", "/") else sorted(stdlib)
    readonly += sorted(s for s in site if not any(s.startswith(r + "/") for r in readonly))
    hidden = sorted(os.path.join(s, name) for s in site if os.path.isdir(s) for name in os.listdir(s)
                    if "course_lib" in name or "course_grader" in name)
    return {"sys_path": sys_path, "readonly": readonly, "hidden": hidden, "read_roots": readonly}


@dataclass
class Outcome:
    """What came back for one part. ``status``: "ok" (results), "student" (no usable result, the
    submission's doing: timeout, crash, a rule broken), "grader" (the sandbox failed)."""

    status: str
    header: dict | None = None
    arrays: tuple = ()
    failure: str | None = None
    seconds: float = 0.0
    survivors: int = 0


def interpret(reply: dict, raw: bytes, timeout: float) -> Outcome:
    """An Outcome from the zygote's reply; nothing the part wrote can make it a grader failure."""
    seconds, survivors = float(reply.get("seconds", 0.0)), int(reply.get("survivors", 0))

    def out(status, failure=None, header=None, arrays=()):
        return Outcome(status, header, tuple(arrays), failure, seconds, survivors)
    if survivors:
        return out("grader", f"{survivors} process(es) of the part survived it")
    if reply.get("setup_error"):
        return out("grader", "could not enter the sandbox: " + reply["setup_error"])
    if reply.get("tattle"):
        return out("student", guard_reason(reply["tattle"]))
    if reply.get("overflow"):                              # ended at once, before any deadline
        return out("student", "sent more than 64 MiB of results")
    if reply.get("timed_out"):
        return out("student", f"timed out after {timeout:g} s (an endless loop?)")
    status = reply.get("wait_status") or 0
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == 31:
        return out("student", "made a system call the sandbox forbids (starting a process, signalling another "
                              "process, a terminal ioctl, a socket, a mount, ...)")
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 86:
        return out("student", "broke a rule of the sandbox")
    if reply.get("tmp_over"):
        return out("student", "left more in /tmp than the sandbox allows a part")
    try:
        header, arrays = wire.parse(raw)
    except wire.TooManyArrays:
        return out("student", f"sent more than {wire.MAX_RESULT_ARRAYS} arrays: more results than its cases have "
                              "outputs")
    except Exception:                                      # noqa: BLE001
        return out("student", "the process ended without a result (it exited, crashed or ran out of memory)")
    return out("ok", None, header, arrays)


#: files a guard's reason may name (any other path is "a file": the part chose it, after the hidden cases)
NAMED_FILES = ("/dev/tty", "/etc/hostname", "/etc/passwd", "/etc/shadow", "/proc/self/environ", "/proc/PID/environ",
               "/proc/self/cwd", "/proc/PID/cwd", "/proc/self/mem", "/proc/PID/mem", "/root", "/home", "/tmp",
               "/dev/shm", "/run/lock", "/var/tmp", "/")
#: names of torch's ready-made attention a tripwire's reason may give
TORCH_NAMES = ("MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerEncoderLayer",
               "TransformerDecoder", "TransformerDecoderLayer", "multi_head_attention_forward",
               "scaled_dot_product_attention", "scaled_dot_product_flash_attention_for_cpu",
               "scaled_dot_product_flash_attention", "scaled_dot_product_efficient_attention")


def guard_reason(text: str) -> str:
    """The guard's reason as the feedback may show it: rebuilt from a fixed vocabulary (the guard's own
    events, attributes, torch's operators, a few named files), never the text the part wrote. The part
    process had the hidden cases, and with the guard switched off (raw memory access) it can write
    anything on the guard's pipe: a path or module name it picks could spell a hidden case out."""
    import re

    from . import guard
    text = str(text).strip()
    head = "the solution cell "
    body = text[len(head):] if text.startswith(head) else ""

    def path(quoted: str) -> str:
        p = re.sub(r"^/proc/\d+/", "/proc/PID/", quoted.strip("'\""))
        return repr(p) if p in NAMED_FILES else "a file"
    m = re.fullmatch(r"imports '(.*)', (.*)", body, re.S)
    if m:
        return head + ("imports course_lib, the course's reference solution" if "course_lib" in m.group(1)
                       else "imports a module the grader did not load (solutions use math, torch and numpy)")
    if body == "runs code with exec/eval" or body == "tried to arm the sandbox's guard a second time":
        return text
    m = re.fullmatch(r"uses (\S+), which a solution may not use", body)
    if m:
        rule = next((f for f in guard.FORBIDDEN if (m.group(1).startswith(f) if f.endswith(".") else
                                                     m.group(1) == f)), None)
        if rule is not None:
            return head + f"uses {rule.rstrip('.')}, which a solution may not use"
    m = re.fullmatch(r"reads \.(\w+) \(the interpreter's frames\)", body)
    if m and m.group(1) in guard.FRAME_ATTRIBUTES:
        return text
    m = re.fullmatch(r"rebinds a function's (\w+)", body)
    if m and m.group(1) in guard.REBOUND_ATTRIBUTES:
        return text
    m = re.fullmatch(r"opens (.*) for writing", body, re.S)
    if m:
        return head + f"opens {path(m.group(1))} for writing"
    m = re.fullmatch(r"opens (.*), outside what a solution may read", body, re.S)
    if m:
        return head + f"opens {path(m.group(1))}, outside what a solution may read"
    m = re.fullmatch(r"uses (\S+) on (.*)", body, re.S)
    if m:
        rule = next((f for f in guard.FILE_EVENTS + guard.LISTING_EVENTS
                     if (m.group(1).startswith(f) if f.endswith(".") else m.group(1) == f)), None)
        if rule is not None:
            return head + f"uses {rule.rstrip('.')} on {path(m.group(2))}"
    m = re.fullmatch(r"calls (\S+), torch's ready-made attention.*", body, re.S)
    if m:
        name = m.group(1)
        if name.startswith("aten::") and name[len("aten::"):] in guard.ATEN_OPS:
            shown = name
        else:
            shown = next((n for n in TORCH_NAMES if n == name.split(".")[0] or n == name.split(".")[-1]
                          .lstrip("_")), None)
        return head + (f"calls {shown}, " if shown else "calls ") + ("torch's ready-made attention; this part "
                                                                    "must compute attention explicitly")
    return "broke a rule of the sandbox"


PRESPAWNED: list = []          # [level, Mother] started by ``python -m course_grader`` first thing, if any


class Zygote:
    """One zygote process, started at once (its torch import overlaps the grader's own start-up)."""

    def __init__(self, level: str, python: str | None = None, paths: dict | None = None):
        """``python`` and ``paths`` (see :func:`python_paths`) default to the grader's own interpreter."""
        self.level, self.proc, self.info, self.mother_pid = level, None, None, None
        self.python, self.paths = python or sys.executable, paths or python_paths()
        self.log = tempfile.TemporaryFile()
        self._spawn()

    @classmethod
    def slot(cls, level: str, sock: socket.socket, log, python: str, paths: dict, mother_pid: int) -> Zygote:
        """A zygote that a :class:`Mother` forked, reached on ``sock`` (its hello names its pid there)."""
        z = cls.__new__(cls)
        z.mother_pid = mother_pid
        z.level, z.proc, z.info, z.python, z.paths, z.log = level, None, None, python, paths, log
        z.sock, z.read_roots, z.pidfd, z.known_cases = sock, paths["read_roots"], None, set()
        return z

    def _spawn(self) -> None:
        parent, child = socket.socketpair()
        self.read_roots = self.paths["read_roots"]
        self.proc = _start(self.python, dict(self.paths, level=self.level, fd=child.fileno()), [child.fileno()],
                           self.log)
        child.close()
        self.sock, self.info, self.pidfd = parent, None, None
        self.known_cases: set = set()                      # keys of the cases this zygote holds

    def ready(self, timeout: float = 180.0) -> dict:
        """The zygote's hello ({"level", "seccomp", "landlock", ...}); SandboxError if it did not start."""
        if self.info is None:
            try:
                header, _ = wire.read_message(self.sock.fileno(), time.monotonic() + timeout)
            except (EOFError, TimeoutError, ValueError) as e:
                header = {"ready": False, "error": f"{type(e).__name__}: {e}"}
            if not header.get("ready"):
                self.kill()
                raise SandboxError(f"the sandbox's zygote did not start: {header.get('error')}\n"
                                   f"{header.get('traceback', '')}{_tail(self.log)}")
            self.info = header
            if self.proc is None:                          # a mother's: followed by its pid, never reused
                pid = int(header["host_pid"])
                if self.mother_pid is not None and self.level in ("root", "userns"):
                    pid = _outer_pid(self.mother_pid, pid)
                self.pidfd = os.pidfd_open(pid)
        return self.info

    def run(self, request: dict, arrays: list) -> Outcome:
        """Send one part; its Outcome. A zygote that fails is replaced by a fresh one (status "grader")."""
        try:
            self.ready()
            wire.write_message(self.sock.fileno(), request, arrays)
            deadline = time.monotonic() + request["timeout"] + 30.0
            reply, _ = wire.read_message(self.sock.fileno(), deadline)
            raw = wire.read_blob(self.sock.fileno(), deadline)
            for sent in request.get("members", [request]):
                if sent.get("cases") is not None and sent.get("cases_key"):
                    self.known_cases.add(sent["cases_key"])
        except (OSError, EOFError, TimeoutError, ValueError, SandboxError) as e:
            self.kill()
            tail = _tail(self.log)[-300:]
            self._spawn()
            return Outcome("grader", failure=f"the sandbox failed ({type(e).__name__}: {e}) {tail}")
        return interpret(reply, raw, request["timeout"])

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)                # the zygote and its waiter; parts die with them
            except ProcessLookupError:
                pass
            self.proc.wait()
        elif self.proc is None and self.pidfd is not None:
            signal.pidfd_send_signal(self.pidfd, 9)        # a mother's zygote: its waiter; the rest die with it
            select.select([self.pidfd], [], [], 10)
        self.sock.close()
        self._tidy()

    def close(self) -> None:
        """Ask the zygote to end; kill it if it does not."""
        self.sock.close()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        elif self.pidfd is not None and not select.select([self.pidfd], [], [], 10)[0]:
            self.kill()
        self._tidy()

    def _tidy(self) -> None:
        """Close the pidfd of a mother's zygote."""
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def _tail(log) -> str:
    """The last lines a zygote (or the sandbox's interpreter) wrote to its log file."""
    log.seek(0)
    return log.read()[-2000:].decode("utf-8", "replace")


def _start(python: str, cfg: dict, fds: list, log) -> subprocess.Popen:
    """``python -I -S zygote.py CFG`` in bubblewrap's view (:func:`bwrap_argv`; at the rlimits level,
    with an empty environment only), in its own session, ``fds`` passed."""
    cfg = dict(cfg, grader_pid=os.getpid(), harness=HARNESS)
    env = zygote_env()
    if cfg["level"] in ("root", "userns"):      # in the view: /grader/zygote.py, its modules, the harness
        here = os.path.dirname(ZYGOTE)
        cfg["grader"] = {f"{m}.py": os.path.join(here, f"{m}.py") for m in ZYGOTE_MODULES} | {"harness.py": HARNESS}
        cfg["harness"] = f"{GRADER_DIR}/harness.py"
        if cfg.get("judge"):
            cfg["course_lib_parent"] = cfg["grader_parent"] = JUDGE_DIR
        slots = max(1, len(cfg.get("slots") or ()))
        argv = bwrap_argv(cfg["level"], cfg, tmp_mb=slots * SandboxOptions.tmp_mb)
        argv += [os.path.realpath(python), "-I", "-S", f"{GRADER_DIR}/zygote.py", json.dumps(cfg)]
    else:
        argv = [python, "-I", "-S", ZYGOTE, json.dumps(cfg)]
    return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=None if env.get("COURSE_GRADING_DEBUG") else log,
                            pass_fds=tuple(fds), start_new_session=True, cwd="/")


def _outer_pid(ancestor: int, inner: int) -> int:
    """The pid, as this process sees it, of the descendant of ``ancestor`` that is ``inner`` in its own PID
    namespace (a zygote inside bubblewrap names itself by its inner pid)."""
    todo = [ancestor]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/status") as f:
                nspid = next(line for line in f if line.startswith("NSpid:")).split()[1:]
            if pid != ancestor and int(nspid[-1]) == inner and len(nspid) > 1:
                return pid
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return inner


class Mother:
    """The sandbox of a class (:func:`zygote._mother`): one interpreter imports torch once, forks
    ``slots`` zygotes (:attr:`zygotes`), then judges (:mod:`.judge`): :meth:`cases` has it make the
    cases from the hidden seeds, and each :meth:`channel` carries one worker's outcomes and verdicts."""

    def __init__(self, level: str, slots: int, python: str | None = None, paths: dict | None = None):
        if level == "userns" and landlock.abi() == 0:     # one uid in the sandbox: only Landlock keeps
            raise SandboxError(JUDGE_NEEDS_LANDLOCK)       # a part from the judge's packages (JUDGE_DIR)
        self.level, self.python, self.paths = level, python or sys.executable, paths or python_paths()
        self.log = tempfile.TemporaryFile()
        pairs = [socket.socketpair() for _ in range(slots + 2)]
        theirs = [b.fileno() for _, b in pairs]
        cfg = dict(self.paths, level=level, slots=theirs[:slots], control=theirs[slots],
                   channels=theirs[slots + 1],
                   course_lib_parent=os.path.dirname(COURSE_LIB), grader_parent=os.path.dirname(HERE),
                   judge=[HERE, COURSE_LIB])           # bound under JUDGE_DIR (0700), outside every Landlock
        self.proc = _start(self.python, cfg, theirs, self.log)
        for _, b in pairs:
            b.close()
        self.zygotes = [Zygote.slot(level, a, self.log, self.python, self.paths, self.proc.pid)
                        for a, _ in pairs[:slots]]
        self.control, self.passing = pairs[slots][0], pairs[slots + 1][0]

    def ask_cases(self, seeds: dict) -> None:
        """Have the judge make the cases from ``{part: hidden seed}``; :meth:`cases` gets them."""
        wire.write_message(self.control.fileno(), {"op": "cases", "seeds": seeds})

    def cases(self, timeout: float = 180.0) -> tuple[dict, list, float]:
        """({part: its encoded cases}, arrays, seconds the judge took): see :func:`runner.use_encoded`."""
        try:
            header, arrays = wire.read_message(self.control.fileno(), time.monotonic() + timeout)
        except (EOFError, TimeoutError, ValueError) as e:
            raise SandboxError(f"the sandbox's judge did not answer ({type(e).__name__}: {e}) "
                               f"{_tail(self.log)}") from e
        return header["cases"], arrays, float(header.get("seconds", 0.0))

    def channel(self) -> socket.socket:
        """A new judging channel: this end for a worker, the other end passed to the judge."""
        mine, theirs = socket.socketpair()
        socket.send_fds(self.passing, [b"c"], [theirs.fileno()])
        theirs.close()
        return mine

    def close(self) -> None:
        """The zygotes first, then the judge; the process ends with them."""
        for z in self.zygotes:
            z.close()
        self.control.close()
        self.passing.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        for z in self.zygotes:
            z.kill()
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        for sock in (self.control, self.passing):
            sock.close()
