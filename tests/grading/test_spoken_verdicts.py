"""The exercise's visible tests and hints say their verdict in words, where a screen reader hears it.

A cell of the exercise runs in IPython's own shell, in this process (no kernel, no browser): a check
that passes, one that fails, a part not done and a hint. Each shows one output whose ``text/html`` is a
polite ``role="status"`` region saying "correct", "wrong", "not done yet" or "hint" in words, and whose
``text/plain`` is the same line (what nbval compares and a terminal prints). A failure still ends in an
error whose only line is the check's message: nbgrader's Validate reports it and counts the cell failed.
"""

from __future__ import annotations

import re

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

STATUS = re.compile(r'^<div role="status" aria-live="polite" aria-atomic="true" class="course-verdict[^"]*">'
                    r'(?:<span aria-hidden="true">(?P<mark>.)</span> )?<strong>(?P<word>[a-z ]+)</strong>'
                    r"(?:: (?P<rest>.*))?</div>$")
CELLS = ['''
import math
import torch
from course_lib.checks import check_attention, check_positional_encoding, hint
''', '''
def uniform_attention(q, k, v, attn_mask=None):
    weights = torch.ones(*q.shape[:-1], k.shape[-2]) / k.shape[-2]
    return weights @ v, weights
''', '''
def sinusoidal_positional_encoding(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    rate = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(pos * rate)
    table[:, 1::2] = torch.cos(pos * rate)
    return table
''', '''
def unfinished(max_len, d_model):
    raise NotImplementedError()
''']


@pytest.fixture
def shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                        # hint() records its climb in ./.hints.json
    ip = InteractiveShell.instance()
    try:
        for cell in CELLS:                             # one cell each, as the policy reads a cell
            assert ip.run_cell(cell, store_history=True).success
        yield ip
    finally:
        InteractiveShell.clear_instance()              # the rest of the session prints plain lines again


def run(ip, code):
    """What a cell shows: (the displayed outputs' data, the error's lines or None)."""
    with capture_output() as shown:
        result = ip.run_cell(code, store_history=True)      # as a kernel runs it (IPython keeps the error)
    error = None if result.success else [line for line in shown.stdout.splitlines() if line.strip()]
    return [o.data for o in shown.outputs], error


def spoken(data):
    """(word, what follows it) heard from one status output; its text/plain must say the same."""
    found = STATUS.match(data["text/html"])
    assert found, data["text/html"]
    plain = f"{found['mark']} " if found["mark"] else ""
    plain += f"{found['word']}: {found['rest']}" if found["rest"] else found["word"]
    assert data["text/plain"] == plain.replace("&quot;", '"').replace("&#x27;", "'"), (data, plain)
    return found["word"], data["text/plain"]


def test_a_failing_visible_test_then_a_hint_say_wrong_and_hint(shell):
    outputs, error = run(shell, "check_attention(uniform_attention)")
    (status,) = outputs
    word, line = spoken(status)
    assert word == "wrong" and line.startswith("✗ wrong: Part 2: ")
    assert line.endswith('[hint("attention") for a hint]')
    assert error == [line.removeprefix("✗ wrong: ")]            # the error: the bare line Validate reports

    outputs, error = run(shell, 'hint("attention")')
    (status,) = outputs
    word, line = spoken(status)
    assert error is None and word == "hint" and line.startswith("hint: Part 2, hint 1 of 3: ")


def test_a_passing_test_says_correct_and_an_unfinished_one_not_done(shell):
    outputs, error = run(shell, "check_positional_encoding(sinusoidal_positional_encoding)")
    (status,) = outputs
    assert error is None and spoken(status) == ("correct", status["text/plain"])
    assert re.fullmatch(r"✓ correct: Part 1: all \d+ visible checks passed", status["text/plain"])

    outputs, error = run(shell, "check_positional_encoding(unfinished)")
    (status,) = outputs
    assert spoken(status) == ("not done yet", "○ not done yet: Part 1") and error == ["Part 1: not done yet"]


def test_a_failure_caught_by_the_cell_says_nothing(shell):
    outputs, error = run(shell, "try:\n    check_attention(uniform_attention)\nexcept AssertionError:\n    pass")
    assert outputs == [] and error is None
