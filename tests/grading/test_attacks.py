"""Attacks on the sandboxed grader, one class of hole at a time, each past the static policy.

Every attack is the correct solution of its part plus a payload (names built with ``getattr`` and
string pieces, so ``policy.check_source`` would not see them; the policy is skipped here anyway).
Each must cost that part its points, leave the other parts and the next submission unaffected,
leave no process behind and write nothing outside the sandbox.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from attack_kit import GOOD, any_zygote, assert_contained, grade_here, options, run_part, with_prologue, zygote  # noqa: F401
from course_grader import runner

OS = "o = getattr(torch, 'o' + 's')\n"
SYS = "s = getattr(torch, 's' + 'ys')\n"
BUILTIN = "b = getattr(torch, 's' + 'ys').modules['built' + 'ins']\n"
CHECKOUT = str(Path(__file__).resolve().parents[2])       # this checkout, wherever it was cloned

ATTENTION_VIA = """
def scaled_dot_product_attention(q, k, v, attn_mask=None):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1)
    if attn_mask is not None:
        w = torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~attn_mask, -1e9), -1)
    return {call}, w
"""

# (name, part, payload, what the verdict says); a payload with a "def" replaces the cell
ATTACKS = [
    # the terminal
    ("tiocsti_dev_tty", "attention", SYS + OS + "fd = o.open('/dev/' + 'tty', 2)\n"
     "s.modules['fcntl'].ioctl(fd, 0x5412, b'r')\n", "/dev/tty"),
    ("tiocsti_on_stdin", "feed_forward", SYS + "s.modules['fcntl'].ioctl(0, 0x5412, b'r')\n", "system call"),
    ("take_a_terminal", "encoder", SYS + "s.modules['fcntl'].ioctl(2, 0x540E, 0)\n", "system call"),
    # signals
    ("kill_the_parent", "attention", OS + "o.kill(o.getppid(), 9)\n", "os.kill"),
    ("interrupt_the_group", "multi_head_attention", OS + "o.killpg(o.getpgid(0), 2)\n", "os.killpg"),
    ("signal_module_kill", "feed_forward", SYS + "s.modules['signal'].raise_signal(2)\n", None),
    # memory of the grader
    ("environment_file", "attention", BUILTIN + "t = b.open('/proc/self/en' + 'viron').read()\n", "environ"),
    ("parent_environment", "encoder_layer", BUILTIN + OS + "t = b.open(f'/proc/{o.getppid()}/environ').read()\n",
     "environ"),
    ("parent_frame", "positional_encoding", SYS + "g = getattr(s, '_get' + 'frame')(1).f_globals\n", "_getframe"),
    ("frame_of_a_traceback", "encoder", "try:\n    1 / 0\nexcept Exception as e:\n"
     "    f = getattr(getattr(e, '__trace' + 'back__'), 'tb_' + 'frame')\n", "tb_frame"),
    ("every_object", "parameter_count", SYS + "objs = s.modules['gc'].get_objects()\n", "gc.get_objects"),
    # the reference, past the policy
    ("import_module_course_lib", "encoder_layer", SYS + "m = s.modules['importlib'].import_module('course_' + 'lib')\n"
     "EncoderLayer = m.EncoderLayer\n", None),
    ("dunder_import", "encoder", BUILTIN + "m = getattr(b, '__imp' + 'ort__')('course_' + 'lib.encoder')\n",
     "course_lib"),
    ("reload_a_module", "feed_forward", SYS + "s.modules['importlib'].reload(s.modules['torch.nn.functional'])\n",
     None),
    ("loader_by_path", "multi_head_attention", SYS + "ld = s.modules['importlib._bootstrap_external']\n"
     f"m = ld.SourceFileLoader('r', {CHECKOUT + '/course_'!r} + 'lib/attention.py').load_module()\n", None),
    ("ctypes_memory", "attention", SYS + "c = s.modules['ct' + 'ypes']\nc.string_at(id(c), 8)\n", "ctypes"),
    ("exec_a_string", "feed_forward", BUILTIN + "getattr(b, 'ex' + 'ec')('x = 1')\n", "compile"),
    # torch's ready-made attention, past the policy and below __torch_function__
    ("sdpa_without_torch_function", "attention", ATTENTION_VIA.format(
        call="(lambda C: (lambda g: (g.__enter__(), getattr(F, 'scaled_dot_' + 'product_attention')(q, k, v, "
             "attn_mask=attn_mask))[1])(getattr(C, 'DisableTorch' + 'Function')()))(getattr(torch, '_' + 'C'))"),
     "aten::scaled_dot_product_attention"),
    ("aten_flash_kernel", "attention", ATTENTION_VIA.format(
        call="getattr(getattr(torch, 'o' + 'ps').aten, '_scaled_dot_product_flash_' + 'attention_for_cpu')"
             "(q, k, v)[0]"),
     "aten::_scaled_dot_product_flash_attention_for_cpu"),
    ("c_binding", "attention", ATTENTION_VIA.format(
        call="getattr(getattr(torch, '_' + 'C')._nn, 'scaled_dot_' + 'product_attention')(q, k, v)"),
     "aten::scaled_dot_product_attention"),
    ("native_mha", "multi_head_attention", "f = getattr(torch, '_native_multi_head_' + 'attention')\n"
     "f(torch.ones(1, 2, 4), torch.ones(1, 2, 4), torch.ones(1, 2, 4), 4, 2, torch.ones(12, 4), torch.ones(12), "
     "torch.ones(4, 4), torch.ones(4))\n", "aten::_native_multi_head_attention"),
    ("nn_multihead", "multi_head_attention", "m = getattr(nn, 'Multihead' + 'Attention')(8, 2)\n", "Multihead"),
    ("encoder_layer_module", "encoder_layer", "m = getattr(nn, 'Transformer' + 'EncoderLayer')(8, 2)\n",
     "TransformerEncoderLayer"),
    ("functional_mha", "multi_head_attention", "getattr(F, 'multi_head_' + 'attention_forward')()\n",
     "multi_head_attention_forward"),
    ("python_decomposition", "attention", "d = getattr(getattr(torch, '_de' + 'comp'), 'decompositions')\n"
     "getattr(d, 'scaled_dot_product_flash_' + 'attention_for_cpu')(torch.ones(1, 1, 2, 2), "
     "torch.ones(1, 1, 2, 2), torch.ones(1, 1, 2, 2))\n", "scaled_dot_product"),
    # files
    ("read_outside", "positional_encoding", BUILTIN + "t = b.open('/etc/host' + 'name').read()\n", "/etc/hostname"),
    ("write_run_lock", "encoder", BUILTIN + "b.open('/run/lock/course-attack', 'w').write('x')\n", "writing"),
    ("write_dev_shm", "feed_forward", OS + "o.open('/dev/shm/course-attack', o.O_CREAT | o.O_WRONLY)\n", "writing"),
    ("list_the_disk", "attention", OS + "o.listdir('/')\n", "os.listdir"),
    # processes
    ("fork_children", "multi_head_attention", OS + "kids = [o.fork() for _ in range(60)]\n", "os.fork"),
    ("spawn_a_shell", "encoder_layer", OS + "o.posix_spawn('/bin/sh', ['sh'], {})\n", "os.posix_spawn"),
    ("thread", "feed_forward", SYS + "s.modules['threading'].Thread(target=print).start()\n", None),
]


@pytest.mark.parametrize("name, part, payload, says", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_attack_costs_its_part(any_zygote, name, part, payload, says):  # noqa: F811 (the fixture)
    source = payload if payload.lstrip().startswith("def ") else with_prologue(part, payload)
    result, outcome = run_part(any_zygote, part, source)
    assert result.status == "failed", (any_zygote.level, name, result)
    if says is not None:
        assert says in result.message, (any_zygote.level, name, result.message)
    assert_contained(any_zygote, outcome)


def test_the_other_parts_of_an_attacker_still_pass(zygote):  # noqa: F811
    """One part attacks; the others are graded as usual."""
    bad, _ = run_part(zygote, "attention", with_prologue("attention", OS + "o.kill(o.getppid(), 9)\n"))
    assert bad.status == "failed"
    for part in ("positional_encoding", "multi_head_attention", "encoder"):
        good, outcome = run_part(zygote, part, GOOD[part])
        assert good.passed, good.message
    assert_contained(zygote, outcome)


@pytest.mark.parametrize("payload", [
    "while True:\n    pass\n",                                                    # the shared process times out
    "F.scaled_dot_product_attention(torch.ones(1, 2), torch.ones(1, 2), torch.ones(1, 2))\n",   # the guard trips
    OS + "o.kill(o.getpid(), 9)\n",                                               # it ends itself, no results
    SYS + "s.modules['torch'].softmax = None\n"])                                 # it breaks torch for the others
def test_a_cell_that_spoils_the_shared_process_costs_only_its_part(zygote, payload):  # noqa: F811
    """The parts that load no reference share one process (runner.GROUP); whatever the first of them
    does there, every other part gets the verdict it gets in a process of its own (here: passed), and
    so does the spoiler."""
    assert runner.GROUP[0] == "positional_encoding" and "attention" in runner.GROUP
    spoiler = with_prologue("positional_encoding", payload)
    got = grade_here(dict(GOOD, positional_encoding=spoiler), zygote, options(timeout=3.0))
    alone, _ = run_part(zygote, "positional_encoding", spoiler, options(timeout=3.0))
    assert got["positional_encoding"].status == alone.status
    assert all(got[p].passed for p in runner.PARTS if p != "positional_encoding"), {
        p: r.message for p, r in got.items()}


def test_a_student_message_is_never_a_grader_failure(zygote):  # noqa: F811
    """Verdicts are structured: the words "could not grade" in an exception are the student's words,
    and are not even shown (issue 30 item 1: the process had the hidden cases)."""
    for text in ("could not grade", "grader error: could not enter the sandbox", "the sandbox failed"):
        source = with_prologue("encoder", f"raise RuntimeError({text!r})\n")
        result, _ = run_part(zygote, "encoder", source)
        assert result.status == "failed" and "raised RuntimeError" in result.message
        assert text not in result.message
    fake = with_prologue("attention", OS + "o.write(5, b'forged set-up error')\n")
    result, _ = run_part(zygote, "attention", fake)
    assert result.status == "failed"


def test_the_reference_of_the_graded_part_is_not_in_its_process(zygote):  # noqa: F811
    """Dependencies are course_lib's references, the graded part's own reference exists nowhere."""
    source = GOOD["encoder_layer"] + (
        "\nseen = sorted(c.__name__ for c in nn.Module.__subclasses__())\n"
        "assert 'MultiHeadAttention' in seen and 'PositionwiseFeedForward' in seen, seen\n"
        "assert seen.count('EncoderLayer') == 1, seen\n"                        # the student's own only
        "assert 'EncoderLayer' not in getattr(MultiHeadAttention.forward, '__glob' + 'als__')\n")
    result, _ = run_part(zygote, "encoder_layer", source)
    assert result.passed, result.message
    copy = "EncoderLayer = [c for c in nn.Module.__subclasses__() if c.__name__ == 'EncoderLayer'][0]\n"
    result, _ = run_part(zygote, "encoder_layer", copy)
    assert result.status == "failed"


def test_another_process_of_nobody_changes_nothing(zygote):  # noqa: F811
    """The parts run as a uid of their own: a service that runs as ``nobody`` on the grading machine
    is neither a part's neighbour nor taken for a part's survivor."""
    if os.geteuid() != 0:
        pytest.skip("needs root to start a process as nobody")
    other = subprocess.Popen(["sleep", "60"], user=65534, group=65534)
    try:
        result, outcome = run_part(zygote, "attention", with_prologue("attention", OS + "o.kill(o.getppid(), 9)\n"))
        assert result.status == "failed"
        assert_contained(zygote, outcome)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_tiocsti_with_high_bits_is_refused(zygote):  # noqa: F811
    """The kernel reads ioctl's command as 32 bits: the filter compares the low 32 bits, so
    ``TIOCSTI | 1 << 32`` is refused like TIOCSTI (the guard is off here: a raw system call)."""
    payload = (SYS + "c = s.modules['ct' + 'ypes']\n"
               "c.CDLL(None).syscall(16, 0, c.c_ulong(0x5412 | (1 << 32)), c.c_char_p(b'r'))\n")
    result, outcome = run_part(zygote, "attention", with_prologue("attention", payload),
                               layers={"guard": False, "landlock": False})
    assert result.status == "failed" and "system call" in result.message, result.message
    assert_contained(zygote, outcome)
