"""The grader as an ordinary user (an instructor on a JupyterHub): the ``userns`` level, and ``rlimits``
forced, for real.

Run as root, the test makes the situation it checks: a child process drops to uid 65534 for good
and grades from there, with the Python installation hard-linked to a world-readable place (this
machine's interpreter lives under /root, which other users cannot enter). Run as a normal user,
the child simply keeps that user. Either way the sandbox runs without any privilege, so what it
shows is what holds for a non-root instructor.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from attack_kit import CASES, GOOD, OFF, WANTS, descendants, running, with_prologue
from course_grader import references, runner, sandbox

NOBODY = 65534
ATTENTION_PY = str(Path(__file__).resolve().parents[2] / "course_lib" / "attention.py")   # this checkout's
SDPA = ("def scaled_dot_product_attention(q, k, v, attn_mask=None):\n"
        "    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1)\n"
        "    return getattr(F, 'scaled_dot_' + 'product_attention')(q, k, v), w\n")
PROBE = ("import os\ndef probe():\n    r = {'uid': os.getuid(), 'root': sorted(os.listdir('/')), 'pid': os.getpid(),\n"
         "         'proc': sorted(p for p in os.listdir('/proc') if p.isdigit())}\n"
         f"    for p in ('/etc/hostname', {ATTENTION_PY!r}, '/root'):\n"
         "        try:\n            open(p).read(1); r[p] = 'read'\n"
         "        except OSError as e:\n            r[p] = type(e).__name__\n    return r\n")


ZYGOTE_FILES = ("zygote.py", "wire.py", "confine.py", "seccomp.py", "guard.py", "landlock.py",
                "warmup.py", "harness.py")


def _interpreter(tmp: str) -> tuple[str, dict]:
    """(python, paths) for the zygote: the grader's own, or, as root, world-readable hard-linked copies
    of the interpreter, the site-packages and the zygote's files (this checkout may be private)."""
    paths = sandbox.python_paths()
    python = os.path.realpath(sys.executable)
    if os.geteuid() != 0:
        return python, paths
    base = os.path.realpath(sys.base_prefix)
    moves = {base: os.path.join(tmp, "python")}
    subprocess.run(["cp", "-al", base, moves[base]], check=True)
    for i, site in enumerate(p for p in paths["readonly"] if p != base):
        moves[site] = os.path.join(tmp, f"site{i}")
        os.mkdir(moves[site])
        for entry in _needed(site):
            subprocess.run(["cp", "-al", os.path.join(site, entry), moves[site]], check=True)
    grading = os.path.join(tmp, "grading")
    os.mkdir(grading)
    for name in ZYGOTE_FILES:
        shutil.copy(sandbox.HARNESS if name == "harness.py" else os.path.join(sandbox.HERE, name), grading)
    for root, dirs, _ in os.walk(tmp):
        for d in dirs:
            os.chmod(os.path.join(root, d), os.stat(os.path.join(root, d)).st_mode | 0o005)
    sandbox.ZYGOTE, sandbox.HARNESS = os.path.join(grading, "zygote.py"), os.path.join(grading, "harness.py")
    os.environ["LD_LIBRARY_PATH"] = os.path.join(moves[base], "lib")

    def move(p):
        return next((p.replace(old, new, 1) for old, new in moves.items() if p == old or p.startswith(old + "/")), p)
    return move(python), {k: [move(p) for p in v] for k, v in paths.items()}


def _needed(site: str) -> list[str]:
    """The entries of ``site`` a zygote loads (packages, their .libs, their modules)."""
    z = sandbox.Zygote(sandbox.detect_level())
    try:
        names = set(z.ready()["modules"])
    finally:
        z.close()
    return [e for e in os.listdir(site) if e.split(".")[0].split("-")[0] in names and "course_lib" not in e]


def _grade_as_nobody(python: str, paths: dict, asked: str) -> dict:
    out = {}
    try:
        level = sandbox.detect_level(asked)
    except sandbox.WeakSandbox:                 # no user namespaces here: rlimits, as an instructor would force it
        level = "rlimits"
    if level == "rlimits":
        out["forced"] = sandbox.confirm_level(level, forced=True)
    out["level"] = level
    z = sandbox.Zygote(level, python=python, paths=paths)
    try:
        out["hello"] = z.ready()

        def run(part, source, **extra):
            header, arrays = runner.request(part, source, CASES[part], sandbox.SandboxOptions(timeout=5),
                                            z.read_roots, **extra)
            return z.run(header, arrays)
        out["good"] = runner.judge("attention", CASES["attention"], WANTS["attention"],
                                   run("attention", GOOD["attention"])).as_dict()
        out["sdpa"] = runner.judge("attention", CASES["attention"], WANTS["attention"],
                                   run("attention", SDPA)).as_dict()
        out["kill"] = runner.judge("attention", CASES["attention"], WANTS["attention"], run(
            "attention", with_prologue("attention", "o = getattr(torch, 'os')\no.kill(o.getppid(), 9)\n"))).as_dict()
        probe = run("attention", PROBE, probe=True, layers=OFF)
        out["probe"] = probe.header["probe"] if probe.header else probe.failure
        loop = run("attention", "import os\ndef probe():\n    os.fork()\n    while True:\n        pass\n",
                   probe=True, layers=OFF, nproc=100)
        out["loop"] = [loop.status, loop.failure, loop.survivors]
        out["zygote"] = [z.proc.pid, *descendants(z.proc.pid)]
    finally:
        z.close()
    out["left"] = [p for p in out["zygote"] if os.path.exists(f"/proc/{p}")] + running(sandbox.ZYGOTE)
    return out


@pytest.mark.parametrize("asked", ["auto", "rlimits"])
def test_an_ordinary_user_grades(asked):
    """An instructor without root: the level the machine allows (``userns`` where user namespaces work),
    and ``rlimits`` forced, where the part runs as the instructor's own uid."""
    for part in ("attention",):
        references.for_part(part)                       # read course_lib's sources before losing root
    zygote_file, harness_file = sandbox.ZYGOTE, sandbox.HARNESS
    tmp = tempfile.mkdtemp(prefix="course-nonroot-", dir="/var/tmp")
    os.chmod(tmp, 0o755)
    try:
        python, paths = _interpreter(tmp)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(r)
                if os.geteuid() == 0:
                    os.setgroups([])
                    os.setresgid(NOBODY, NOBODY, NOBODY)
                    os.setresuid(NOBODY, NOBODY, NOBODY)
                result = _grade_as_nobody(python, paths, asked)
                os.write(w, json.dumps(result).encode())
            except BaseException as e:                 # noqa: BLE001
                os.write(w, json.dumps({"error": f"{type(e).__name__}: {e}"}).encode())
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            data = f.read()
        os.waitpid(pid, 0)
    finally:
        sandbox.ZYGOTE, sandbox.HARNESS = zygote_file, harness_file
        os.environ.pop("LD_LIBRARY_PATH", None)
        shutil.rmtree(tmp, ignore_errors=True)
    out = json.loads(data.decode())
    assert "error" not in out, out
    assert out["level"] in ("userns", "rlimits") and out["hello"]["seccomp"]
    assert out["level"] == "userns" or "FORCED" in out["forced"]      # rlimits is never picked on its own
    assert asked == "auto" or out["level"] == "rlimits"
    assert out["good"]["status"] == "passed", out["good"]
    assert out["sdpa"]["status"] == "failed" and "ready-made attention" in out["sdpa"]["message"]
    assert out["kill"]["status"] == "failed" and "os.kill" in out["kill"]["message"]
    probe = out["probe"]
    if out["level"] == "userns":                       # where the kernel allows it (this machine does)
        assert probe["uid"] == 1000                    # an unprivileged uid inside its user namespace
        assert probe["/etc/hostname"] == probe[ATTENTION_PY] == "FileNotFoundError", probe
        assert out["hello"]["pidns"], out["hello"]["pidns_off"]   # bubblewrap's --cap-add in its user namespace
        assert probe["proc"] == [str(probe["pid"])], probe   # no process but its own
    else:                                              # no view: the instructor's own uid, which is not root
        assert probe["uid"] == (NOBODY if os.geteuid() == 0 else os.geteuid()), probe
    assert out["loop"][0] == "student" and "timed out" in out["loop"][1] and out["loop"][2] == 0
    assert out["left"] == []
