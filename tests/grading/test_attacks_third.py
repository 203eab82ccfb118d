"""The third red-team round (issue 30) that fits in the sandbox's own tests: system calls on other
processes (their limits, priority, affinity, scheduling, I/O priority) and System V IPC.

As in test_attacks.py, each payload is the correct solution of its part plus an attack; here the guard
and Landlock are off (a raw system call through ``ctypes``), so what holds is the seccomp filter alone,
at this machine's level and, as root, at the ``uid`` level too (where the part sees the machine's
processes).
"""

from __future__ import annotations

import os

import pytest

from attack_kit import any_zygote, assert_contained, probe, run_part, with_prologue, zygote  # noqa: F401

SYSCALL = ("s = getattr(torch, 's' + 'ys')\nc = s.modules['ct' + 'ypes']\n"
           "L = c.c_long\nsc = c.CDLL(None).syscall\nbuf = c.create_string_buffer(256)\n")
ME = os.getpid()                                   # the test's own process: the instructor's, for the part

# (name, the raw call): each must end the part (SIGSYS), whatever its target
ON_OTHERS = [
    ("prlimit_another_process", f"sc(L(302), L({ME}), L(7), L(0), buf)"),
    ("prlimit_set_another", f"sc(L(302), L({ME}), L(7), buf, L(0))"),
    ("setpriority_another_process", f"sc(L(141), L(0), L({ME}), L(19))"),
    ("setpriority_a_process_group", "sc(L(141), L(1), L(0), L(19))"),
    ("setpriority_a_whole_user", "sc(L(141), L(2), L(0), L(19))"),
    ("sched_setaffinity_another", f"sc(L(203), L({ME}), L(8), buf)"),
    ("sched_setscheduler_another", f"sc(L(144), L({ME}), L(0), buf)"),
    ("sched_setparam_another", f"sc(L(142), L({ME}), buf)"),
    ("sched_setattr_another", f"sc(L(314), L({ME}), buf, L(0))"),
    ("ioprio_set_another", f"sc(L(251), L(1), L({ME}), L(0))"),
    ("ioprio_set_a_user", "sc(L(251), L(3), L(0), L(0))"),
    ("migrate_pages_of_another", f"sc(L(256), L({ME}), L(8), buf, buf)"),
    # System V IPC and POSIX message queues: refused outright
    ("shmget", "sc(L(29), L(0), L(1 << 20), L(0o1600))"),
    ("shmat", "sc(L(30), L(0), L(0), L(0))"),
    ("msgget", "sc(L(68), L(0), L(0o1600))"),
    ("semget", "sc(L(64), L(0), L(1), L(0o1600))"),
    ("mq_open", "sc(L(240), c.c_char_p(b'/course-attack'), L(0o102), L(0o600), L(0))"),
    ("socketpair", "sc(L(53), L(1), L(1), L(0), buf)"),
]


@pytest.mark.parametrize("name, call", ON_OTHERS, ids=[a[0] for a in ON_OTHERS])
def test_a_call_on_another_process_or_ipc_ends_the_part(any_zygote, name, call):  # noqa: F811
    limits = open(f"/proc/{ME}/limits").read()
    result, outcome = run_part(any_zygote, "feed_forward", with_prologue("feed_forward", SYSCALL + call + "\n"),
                               layers={"guard": False, "landlock": False})
    assert result.status == "failed" and "system call" in result.message, result.message
    assert open(f"/proc/{ME}/limits").read() == limits
    assert os.getpriority(os.PRIO_PROCESS, ME) == 0
    assert_contained(any_zygote, outcome)


OWN = ("import os\ndef probe():\n" + "".join("    " + line + "\n" for line in SYSCALL.splitlines()) +
       "    return [sc(L(302), L(0), L(7), L(0), buf), sc(L(141), L(0), L(0), L(5)),\n"
       "            os.sched_setaffinity(0, os.sched_getaffinity(0)), sc(L(251), L(1), L(0), L(0)),\n"
       "            os.getpriority(os.PRIO_PROCESS, 0)]\n")


def test_the_same_calls_on_the_part_itself_are_allowed(any_zygote):  # noqa: F811
    """pid 0, the caller: a library that lowers its own priority or reads its own limits runs (glibc's
    setrlimit and getrlimit, Python's os and resource modules all name the caller 0)."""
    got = probe(any_zygote, OWN, layers={"guard": False, "landlock": False})
    assert got == [0, 0, None, 0, 5], got


def test_the_parts_own_pid_number_is_refused_too(any_zygote):  # noqa: F811
    """The policy allows one value per argument (libseccomp compares one): the caller is 0, and any pid
    number, the part's own included, ends the part."""
    result, outcome = run_part(any_zygote, "feed_forward",
                               with_prologue("feed_forward", SYSCALL + "sc(L(302), L(getattr(torch, 'o' + 's')"
                                             ".getpid()), L(7), L(0), buf)\n"),
                               layers={"guard": False, "landlock": False})
    assert result.status == "failed" and "system call" in result.message, result.message
    assert_contained(any_zygote, outcome)


# ------------------------------------------------------------------ item 1: no free text from a part

HIDDEN_OUT = "LEAK"
LEAKS = [
    # the exception's text spells the hidden case out (visible and hidden cases alike)
    ("exception_text", "attention", "def scaled_dot_product_attention(q, k, v, attn_mask=None):\n"
     "    raise ValueError(f'LEAK{tuple(q.shape)}')\n", "raised ValueError"),
    # so does the exception's class name
    ("exception_name", "attention", "def scaled_dot_product_attention(q, k, v, attn_mask=None):\n"
     "    raise type('LEAK_' + '_'.join(map(str, q.shape)), (Exception,), {})()\n", "raised an exception"),
    # the cell itself, when it is defined
    ("cell_error_text", "feed_forward", "raise RuntimeError('LEAK at definition')\n", "raised RuntimeError"),
    # the guard's pipe, written by hand (as a part with the guard switched off could): a chosen path ...
    ("forged_guard_path", "feed_forward", "o = getattr(torch, 'o' + 's')\n"
     "o.write(3, b\"the solution cell opens '/LEAK/4x8' for writing\\n\")\no._exit(86)\n", "opens a file for writing"),
    # ... a chosen module name ...
    ("forged_guard_import", "feed_forward", "o = getattr(torch, 'o' + 's')\n"
     "o.write(3, b\"the solution cell imports 'LEAK_4_8', a module\\n\")\no._exit(86)\n", "imports a module"),
    # ... or any text at all
    ("forged_guard_text", "feed_forward", "o = getattr(torch, 'o' + 's')\n"
     "o.write(3, b'LEAK (2, 7, 16)\\n')\no._exit(86)\n", "broke a rule of the sandbox"),
]


@pytest.mark.parametrize("name, part, payload, says", LEAKS, ids=[a[0] for a in LEAKS])
def test_no_text_a_part_writes_reaches_the_feedback(zygote, name, part, payload, says):  # noqa: F811
    """Issue 30 item 1: a part's process has the hidden cases, so what it writes (an exception's text or
    class name, the guard's pipe) is never shown; the verdict says the kind, in the grader's words."""
    source = payload if payload.startswith("def ") else with_prologue(part, payload)
    result, outcome = run_part(zygote, part, source, layers={"guard": False})
    assert result.status == "failed", result
    assert HIDDEN_OUT not in result.message and says in result.message, result.message
    assert_contained(zygote, outcome)


def test_a_forged_result_header_shows_no_text(zygote):  # noqa: F811
    """A part that writes its own result (its error entries hold text of its choosing): the kind only."""
    forge = ("o = getattr(torch, 'o' + 's')\nimport json, struct\n"
             "h = json.dumps({'part': 'feed_forward', 'cell_error': None, 'cases': [{'error': 'raised ValueError: "
             "LEAK(4, 8)', 'keys': []}] * 6, 'arrays': 0}).encode()\n"
             "o.write(4, struct.pack('>Q', len(h)) + h)\no._exit(0)\n")
    result, outcome = run_part(zygote, "feed_forward", with_prologue("feed_forward", forge), layers={"guard": False})
    assert result.status == "failed" and HIDDEN_OUT not in result.message, result.message
    assert "raised ValueError" in result.message
    assert_contained(zygote, outcome)


# ------------------------------------------------------------------ item 7: one result cannot stall the class

def test_a_result_of_many_arrays_is_refused_at_once(zygote, monkeypatch):  # noqa: F811
    """Issue 30 item 7: a forged result of 200,000 small arrays (last round's 1M stalled the judge for
    59 s) is refused before any array is read (counted, not timed: benchmarks time the grader)."""
    forge = ("o = getattr(torch, 'o' + 's')\nimport json, struct\n"
             "h = json.dumps({'part': 'feed_forward', 'cell_error': None, 'cases': [{'error': None, 'keys': ['out'] "
             "* 40000}] * 6, 'arrays': 240000}).encode()\n"
             "d = b'{\"dtype\": \"<f8\", \"shape\": []}'\n"
             "a = struct.pack('>Q', len(d) + 10) + len(d).to_bytes(2, 'big') + d + bytes(8)\n"
             "o.write(4, struct.pack('>Q', len(h)) + h)\n"
             "[o.write(4, a * 1000) for _ in range(240)]\no._exit(0)\n")
    from course_grader import wire
    loaded = []
    load_array = wire.load_array
    monkeypatch.setattr(wire, "load_array", lambda frame: loaded.append(1) or load_array(frame))
    result, outcome = run_part(zygote, "feed_forward", with_prologue("feed_forward", forge), layers={"guard": False})
    assert result.status == "failed" and "more results than its cases have outputs" in result.message, result
    assert f"sent more than {wire.MAX_RESULT_ARRAYS} arrays" in outcome.failure, outcome.failure
    assert loaded == []                                     # refused before any array was read
    assert_contained(zygote, outcome)


def test_the_judge_refuses_more_arrays_than_outputs_and_reads_by_index():
    """The judge's side: more arrays than the case has outputs is refused; 4,000 arrays are not read
    one ``pop(0)`` at a time: each is read once, by index, and none when the result is refused."""
    import numpy as np

    from attack_kit import CASES, WANTS
    from course_grader import runner, sandbox
    cases, wants = CASES["feed_forward"], WANTS["feed_forward"]
    keys = [list(w) for w in wants]
    extra = [k + ["more"] for k in keys]
    arrays = tuple(np.zeros(1) for k in extra for _ in k)
    header = {"cell_error": None, "cases": [{"error": None, "keys": k} for k in extra]}
    result = runner.judge("feed_forward", cases, wants, sandbox.Outcome("ok", header, arrays))
    assert result.status == "failed" and "more results" in result.message
    many = {"cell_error": None, "cases": [{"error": None, "keys": ["out"] * 4000}] + [{"error": None}] * 5}

    class Counted(tuple):
        read = 0

        def __getitem__(self, i):
            Counted.read += 1
            return tuple.__getitem__(self, i)
    result = runner.judge("feed_forward", cases, wants, sandbox.Outcome("ok", many, Counted((np.zeros(1),) * 4000)))
    assert result.status == "failed" and "more results" in result.message and Counted.read == 0
    fine = {"cell_error": None, "cases": [{"error": None, "keys": k} for k in keys]}
    arrays = Counted(np.zeros(1) for k in keys for _ in k)
    runner.judge("feed_forward", cases, wants, sandbox.Outcome("ok", fine, arrays))   # zeros: fails its 1st case
    assert Counted.read == len(keys[0])                     # the 1st case's arrays, each read once, by index


def test_each_judging_has_a_deadline(monkeypatch):
    """A judging that does not end (here: a judge made slow on purpose) fails its part after the
    deadline, and the judge answers the next one."""
    import time

    from course_grader import judge, runner

    def slow(*args, **kwargs):
        while True:
            time.sleep(0.01)
    monkeypatch.setattr(runner, "judge", slow)
    start = time.monotonic()
    got = judge.verdict_in_time({"part": "encoder", "header": {}}, [], {"encoder": []}, {"encoder": []}, seconds=0.5)
    assert got["status"] == "failed" and "took longer than 0.5 s" in got["message"]
    assert time.monotonic() - start < 30.0                  # the judging itself never ends
    monkeypatch.undo()
    got = judge.verdict_in_time({"part": "nope", "header": {}}, [], {}, {}, seconds=0.5)
    assert got["status"] == "error"                          # the next judging runs as usual
    time.sleep(0.7)                                          # and no timer is left to fire


# ------------------------------------------------------------------ item 13: the guard switched off is named

KWDEFAULTS = ("f = getattr(F, 'multi_head_' + 'attention_forward')\n"
              "getattr(f, '__kw' + 'defaults__')['_tat' + 'tle'] = lambda reason: None\n"
              "assert f() is None\n")                           # the tripwire no longer ends the part
RAW_MEMORY = ("f = getattr(F, 'multi_head_' + 'attention_forward')\n"
              "free = (lambda *a, **k: 'free').__code__\n"
              "base = np.zeros(1, np.uint8)\n"
              "off = id(f) + 48 - getattr(base, '__array_inter' + 'face__')['data'][0]\n"
              "tricks = getattr(np.lib, 'stride_' + 'tricks')\n"
              "view = getattr(tricks, 'as_' + 'strided')(base, shape=(2, 8), strides=(off, 1))[1]\n"
              "view[:] = np.frombuffer(id(free).to_bytes(8, 'little'), np.uint8)\n"
              "assert f() == 'free'\n")                         # its code pointer rewritten: no tripwire left


@pytest.mark.parametrize("payload", [KWDEFAULTS, RAW_MEMORY], ids=["kwdefaults_in_place", "as_strided_code_pointer"])
def test_a_part_that_switches_the_guard_off_is_named(any_zygote, payload):  # noqa: F811
    """Issue 30 item 13: the guard is advisory, and a part can switch a tripwire off (a default changed in
    place; raw memory through numpy's as_strided, as last round's case did). Its verdict stands, but it
    carries ``guard_tampered``, which the log and verdicts_<assignment>.csv name; an honest part's does not."""
    from course_grader import runner
    result, outcome = run_part(any_zygote, "multi_head_attention", with_prologue("multi_head_attention", payload))
    assert result.passed, result.message
    assert "multi_head_attention_forward" in result.guard_tampered, result.guard_tampered
    honest, _ = run_part(any_zygote, "multi_head_attention", with_prologue("multi_head_attention", ""))
    assert honest.passed and honest.guard_tampered == ""
    assert runner.reaches_in("x = np.lib.stride_tricks.as_strided(a, (2,), (8,))") == "stride_tricks"
    assert runner.reaches_in(with_prologue("multi_head_attention", "")) == ""
    assert_contained(any_zygote, outcome)


def test_a_contract_message_keeps_its_words_not_the_parts():
    """A visible case's contract message (the harness's ResultError) is rebuilt from its fixed words: the
    type, key, list, shape or number the part chose is masked, and text that is not such a message is
    not shown at all."""
    from course_grader.runner import fixed_case_error
    said = fixed_case_error("Encoder: the state_dict has keys the contract does not have: ['LEAK_2_7_16'] (the "
                            "contract adds no parameters, and a table that is not a weight is a buffer registered "
                            "with persistent=False)")
    assert "persistent=False" in said and "LEAK" not in said
    for forged in ("out: expected a torch.Tensor, got LEAK_2_7_16", "EncoderLayer: parameter 'LEAK' has shape (2, 7), "
                   "expected (16, 16)", "Encoder: the state_dict has no LEAK", "LEAK (2, 7, 16)",
                   "LEAK: expected a torch.Tensor, got Tensor"):
        said = fixed_case_error(forged)
        assert "LEAK" not in said and "7" not in said, said


EXTRA = ("Encoder: the state_dict has keys the contract does not have: {} (the contract adds no parameters, and "
         "a table that is not a weight is a buffer registered with persistent=False)")


def test_extra_keys_spelled_in_the_students_cell_are_named():
    """Issue 40 item 3: where extra keys are refused, they are named, when the student's own cell (read by the
    grader from the submission) spells every component, or it is a name of the contract or an index < 1000."""
    from course_grader.runner import fixed_case_error
    cell = "self.register_buffer('positions', table)\nself.stack = nn.Sequential(...)\n"
    said = fixed_case_error(EXTRA.format("['layers.0.ffn.stack', 'positions']"), cell)
    assert "['layers.0.ffn.stack', 'positions']" in said and "persistent=False" in said, said
    assert "[…]" in fixed_case_error(EXTRA.format("['positions']"))               # no cell: masked, as before


@pytest.mark.parametrize("keys", [
    "['positions', 'LEAK_2_7_16']",                      # a component the cell does not spell
    "['layers.1000.positions']",                         # an index of 1000 or more
    "['layers.07.positions']",                           # a number written otherwise
    "['" + "positions." * 6 + "stack']",                 # a key longer than 60 characters
    "[" + ", ".join(f"'stack.{i}'" for i in range(9)) + "]",    # more than 8 keys
    "['stack', 'positions']",                            # not as the harness lists them (sorted, once each)
    "['positions'] + ['stack']",
], ids=["not_spelled", "index_1000", "leading_zero", "too_long", "nine_keys", "unsorted", "not_a_list"])
def test_extra_keys_the_cell_does_not_spell_are_masked(keys):
    from course_grader.runner import fixed_case_error
    cell = "self.register_buffer('positions', table)\nself.stack = nn.Sequential(...)  # LEAK\n"
    said = fixed_case_error(EXTRA.format(keys), cell)
    assert "positions" not in said and "stack" not in said and "[…]" in said, said


def test_eight_extra_keys_are_named_and_more_are_cut_as_the_harness_cuts_them():
    from course_grader.runner import MAX_NAMED_KEYS, fixed_case_error
    cell = "self.stack = nn.ModuleList(...)\n"
    eight = "[" + ", ".join(f"'stack.{i}'" for i in range(MAX_NAMED_KEYS)) + "]"
    assert eight in fixed_case_error(EXTRA.format(eight), cell)
    assert eight + " ..." in fixed_case_error(EXTRA.format(eight + " ..."), cell)   # the harness's first 8 of more


def test_the_contract_names_are_the_references_names():
    """runner.CONTRACT_NAMES (the grader's process has no torch) are the names in the references' modules."""
    from course_grader.runner import CONTRACT_NAMES
    from course_lib.grading.checks import REFERENCES
    names = set()
    kwargs = dict(d_model=8, num_heads=2, d_ff=16, num_layers=2, vocab_size=10, max_len=5)
    for part in ("multi_head_attention", "feed_forward", "encoder_layer", "encoder"):
        cls = REFERENCES[part]
        module = cls(**{k: v for k, v in kwargs.items() if k in cls.__init__.__code__.co_varnames})
        for key in [*dict(module.named_modules()), *module.state_dict(), *dict(module.named_buffers())]:
            names.update(c for c in key.split(".") if c and not c.isdigit())
    assert names == CONTRACT_NAMES


def test_the_grader_names_the_extra_keys_of_a_submission(zygote):  # noqa: F811
    """End to end: the part's process reports the keys, the grader's side adds the cell it read (a key the
    part's process writes under the same name is replaced), and the verdict names them."""
    from attack_kit import GOOD, grade_here, options
    from course_grader import runner
    end = "        ### END SOLUTION"
    own = GOOD["feed_forward"].replace(end, "        self.register_buffer('scale', torch.ones(1))\n" + end, 1)
    assert own != GOOD["feed_forward"]
    result = grade_here({"feed_forward": own}, zygote, options())
    assert not result["feed_forward"].passed and "does not have (scale)" in result["feed_forward"].message, result
    header = {"cases": [{"keys": [], "error": EXTRA.format("['LEAK']").replace("Encoder", "PositionwiseFeedForward")}],
              runner.GRADER_SOURCE: "LEAK"}
    forged = runner.with_source(runner.sandbox.Outcome("ok", header, ()), "self.linear1 = ...")
    assert forged.header[runner.GRADER_SOURCE] == "self.linear1 = ..."


def test_the_guard_never_takes_a_climbing_relative_path_for_its_own():
    """Issue 41 (second set, advisory guard): an open's audit event carries no ``dir_fd``, so
    ``os.open('../../proc/self/status', dir_fd=...)`` was resolved against the working directory and
    passed; a relative path that climbs is now outside every root (Landlock refused the open anyway)."""
    from course_grader.guard import _under
    assert not _under("../../proc/self/status", ["/"]) and not _under(b"a/../../x", ["/"])
    assert _under("/tmp/part-1/out.txt", ["/tmp/part-1"]) and not _under("/tmp/part-10/x", ["/tmp/part-1"])


def test_the_guard_resolves_a_relative_path_where_the_kernel_will(tmp_path, monkeypatch):
    """Issue 41 (advisory guard): a relative path is resolved against the ``dir_fd`` an event names, and an
    open (whose audit event names none) must be inside the roots from the working directory and from every
    directory the process holds open: ``os.open('p/status', dir_fd=fd)``, with ``p`` a link to ``/proc/self``
    in the directory ``fd`` holds, is not taken for a file of the working directory."""
    from course_grader.guard import _under
    inside, cwd = tmp_path / "inside", tmp_path / "cwd"
    inside.mkdir()
    cwd.mkdir()
    os.symlink("/proc/self", inside / "p")
    monkeypatch.chdir(cwd)
    roots = [str(tmp_path)]
    fd = os.open(inside, os.O_RDONLY)
    try:
        assert not _under("p/status", roots, fd)              # an event naming dir_fd (os.remove, os.mkdir, ...)
        assert not _under("p/status", roots)                  # an open: every directory held open counts
        assert _under("x.txt", roots, fd) and _under("x.txt", roots)
    finally:
        os.close(fd)
    assert _under("p/status", roots)                          # nothing open there: the working directory's


OS = "o = getattr(torch, 'o' + 's')\n"
DIR_FD_OPEN = OS + ("o.mkdir('a')\nf = o.open('a/x', o.O_CREAT | o.O_WRONLY)\no.write(f, b'kept')\no.close(f)\n"
                    "d = o.open('a', o.O_RDONLY)\nassert o.read(o.open('x', o.O_RDONLY, dir_fd=d), 4) == b'kept'\n")


def test_a_relative_open_inside_the_parts_own_directory_still_passes(zygote):  # noqa: F811
    """What the guard allows an honest part: a file of its own /tmp directory, opened relative to a
    directory descriptor there (every directory it holds open is inside its roots)."""
    result, outcome = run_part(zygote, "attention", with_prologue("attention", DIR_FD_OPEN))
    assert result.passed, result.message
    assert_contained(zygote, outcome)


def test_a_forged_oversized_result_is_refused_at_once(zygote):  # noqa: F811
    """Issue 41: more than 64 MiB on the result pipe ends the part at once with the size verdict (the
    zygote's buffer grows in place; it used to copy the whole buffer for every piece, and a part whose
    pipe was no longer read blocked until its deadline: "timed out" on a loaded machine)."""
    payload = OS + "piece = b'x' * (1 << 20)\nfor _ in range(80):\n    o.write(4, piece)\n"
    result, outcome = run_part(zygote, "attention", with_prologue("attention", payload))
    assert result.status == "failed" and "64 MiB" in result.message, result.message
    assert "timed out" not in result.message
    assert_contained(zygote, outcome)
