"""The exercise grader's sandbox and rules, tested directly (no nbgrader, a few seconds)."""

from __future__ import annotations

import os
import sys

import pytest

from course_lib import checks
from course_lib.grading import policy, runner, sandbox

LEVEL = sandbox.detect_level()
needs_namespaces = pytest.mark.skipif(LEVEL not in ("root", "userns"),
                                      reason="no mount/network namespaces here: the grader runs with rlimits only")


@pytest.fixture
def course(tmp_path):
    """A course directory with the things a submission must never see."""
    (tmp_path / "notebooks" / "07_exercise").mkdir(parents=True)
    (tmp_path / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb").write_text("SOLUTIONS")
    (tmp_path / "gradebook.db").write_text("GRADES")
    (tmp_path / "submitted" / "other" / "07_exercise").mkdir(parents=True)
    (tmp_path / "submitted" / "other" / "07_exercise" / "nb.ipynb").write_text("OTHER STUDENT")
    import course_lib
    opts = sandbox.SandboxOptions(timeout=3, hide=[str(tmp_path), "/tmp", "/root", "/home"],
                                  keep=[sys.prefix, sys.base_prefix, os.path.dirname(course_lib.__file__)])
    return tmp_path, opts


def _probe(paths):
    def target(fd):
        import socket
        r = {"uid": os.getuid()}
        for name, p in paths.items():
            try:
                with open(p) as f:
                    r[name] = f.read(20)
            except OSError as e:
                r[name] = type(e).__name__
        try:
            with open(paths["gradebook"], "w") as f:
                f.write("0")
            r["write_gradebook"] = "written"
        except OSError as e:
            r["write_gradebook"] = type(e).__name__
        try:
            socket.create_connection(("127.0.0.1", 22), timeout=1)
            r["net"] = "connected"
        except OSError as e:
            r["net"] = type(e).__name__
        try:
            os.setuid(0)
            r["setuid0"] = "yes"
        except OSError as e:
            r["setuid0"] = type(e).__name__
        import torch
        try:
            torch.empty(10 ** 11)
            r["alloc"] = "yes"
        except RuntimeError:
            r["alloc"] = "refused"
        sandbox.send(fd, r, [])
    return target


@needs_namespaces
def test_sandbox_hides_the_course_and_the_network(course):
    root, opts = course
    paths = {"gradebook": root / "gradebook.db", "source": root / "notebooks/07_exercise/encoder_from_scratch.ipynb",
             "other": root / "submitted/other/07_exercise/nb.ipynb"}
    out = sandbox.run(_probe({k: str(v) for k, v in paths.items()}), opts, LEVEL)
    assert out.failure is None, out.failure
    h = out.header
    assert h["gradebook"] == h["source"] == h["other"] == "FileNotFoundError"
    assert h["write_gradebook"] != "written" and (root / "gradebook.db").read_text() == "GRADES"
    assert h["net"] != "connected"
    assert h["setuid0"] == "PermissionError" and h["alloc"] == "refused"
    if LEVEL == "root":
        assert h["uid"] == opts.uid


def _loop_ignoring_signals(fd):
    import signal
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    if os.fork() == 0:
        os.setsid()                    # try to escape the process group too
        while True:
            pass
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass


@needs_namespaces
def test_timeout_kills_everything(course):
    _, opts = course
    opts.timeout = 1.0
    out = sandbox.run(_loop_ignoring_signals, opts, LEVEL)
    assert out.failure and "timed out" in out.failure
    if LEVEL == "root":
        assert _processes_of(opts.uid) == []


def _processes_of(uid: int) -> list:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as f:
                    uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
            except (OSError, StopIteration):
                continue
            if str(uid) in uids:
                found.append(int(entry))
    return found


def _segfault(fd):
    import ctypes
    ctypes.string_at(0)


def _exit_silently(fd):
    os._exit(0)


def _garbage(fd):
    os.write(fd, b"\x00\x00\x00\x00\x00\x00\x00\x05{\"a\":")


def _fork_bomb(fd):
    while True:
        try:
            os.fork()
        except OSError:
            pass


@needs_namespaces
@pytest.mark.parametrize("target", [_segfault, _exit_silently, _garbage, _fork_bomb])
def test_dying_processes_give_no_result(course, target):
    _, opts = course
    opts.timeout = 2.0
    out = sandbox.run(target, opts, LEVEL)
    assert out.header is None and out.failure


def test_parse_refuses_pickles():
    import io

    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    data = sandbox._frame(b'{"cases": []}') + sandbox._frame(buf.getvalue())
    with pytest.raises(ValueError):
        sandbox.parse(data)


@pytest.mark.parametrize("source, ok", [
    ("def f(q):\n    return torch.softmax(q, -1)\n", True),
    ("import math\nimport torch.nn.functional as F\nfrom torch import nn\n", True),
    ("import warnings\nwarnings.warn('fine')\n", True),
    ("import os\n", False),
    ("import subprocess\n", False),
    ("from course_lib import Encoder\n", False),
    ("x = F.scaled_dot_product_attention(q, k, v)\n", False),
    ("from torch.nn.functional import scaled_dot_product_attention as s\n", False),
    ("m = nn.MultiheadAttention(8, 2)\n", False),
    ("layer = torch.nn.TransformerEncoderLayer(8, 2)\n", False),
    ("f = getattr(F, 'scaled_dot_product_attention')\n", False),
    ("eval('1')\n", False),
    ("open('/etc/passwd')\n", False),
    ("x = nn.Module.__subclasses__()\n", False),
    ("m = torch.sys.modules\n", False),
    ("f = torch.ops.aten.mm\n", False),
    ("torch._C._pop_torch_function_stack()\n", False),
    ("y = scaled_dot_product_attention(q, k, v)\n", True),          # a dependency by its bare name
    ("def f():\n    '''Calls scaled_dot_product_attention, as the docs say.'''\n", True),
])
def test_policy(source, ok):
    assert (policy.check_source(source) is None) == ok, policy.check_source(source)


def test_part_of_test_prefers_the_longest_name():
    assert runner.part_of_test("test_encoder_layer") == "encoder_layer"
    assert runner.part_of_test("test_encoder") == "encoder"
    assert runner.part_of_test("test_encoder_hidden") == "encoder"
    assert runner.part_of_test("test_attention_masks") == "attention"
    assert runner.part_of_test("test_multi_head_attention") == "multi_head_attention"
    assert runner.part_of_test("answer_cost") is None


@pytest.mark.parametrize("part", checks.PARTS)
def test_reference_passes_its_own_checks(part):
    checks.check(part, checks.REFERENCES[part])
    checks.check(part, checks.REFERENCES[part], hidden=True)


def test_sandboxed_reference_passes_and_delegation_fails(course):
    _, opts = course
    cases = {p: checks.make_cases(p) for p in ("attention", "multi_head_attention")}
    good = "def scaled_dot_product_attention(q, k, v, attn_mask=None):\n" \
           "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n" \
           "    if attn_mask is not None:\n" \
           "        s = s.masked_fill(~attn_mask, -1e9)\n" \
           "    w = torch.softmax(s, dim=-1)\n" \
           "    return w @ v, w\n"
    sneaky = good.replace("    return w @ v, w\n",
                          "    g = F\n    name = 'scaled_dot_' + 'product_attention'\n"
                          "    return getattr(g, name)(q, k, v, attn_mask=attn_mask), w\n")
    res = runner.grade_sources({"attention": good}, opts, LEVEL, cases, parts=["attention"])
    assert res["attention"].passed, res["attention"].message
    res = runner.grade_sources({"attention": sneaky}, opts, LEVEL, cases, parts=["attention"])
    assert not res["attention"].passed and "ready-made" in res["attention"].message


@pytest.mark.skipif(os.geteuid() != 0, reason="the 'uid' level is root's fallback without namespaces")
def test_uid_level_still_drops_root(course):
    """Where namespaces are refused (some containers), root still runs student code as nobody."""
    root, opts = course
    opts.timeout = 2.0

    def target(fd):
        r = {"uid": os.getuid()}
        try:
            with open(root / "gradebook.db", "w") as f:
                f.write("0")
            r["write"] = "yes"
        except OSError as e:
            r["write"] = type(e).__name__
        sandbox.send(fd, r, [])
    out = sandbox.run(target, opts, "uid")
    assert out.header == {"uid": opts.uid, "write": "PermissionError"}
    assert (root / "gradebook.db").read_text() == "GRADES"
    assert "timed out" in sandbox.run(_plain_loop, opts, "uid").failure


def _plain_loop(fd):
    while True:
        pass
