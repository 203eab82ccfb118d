"""The checks of lecture 09's practice: the solution passes and an empty answer is "not done".

The wrong answers and the word naming each one's cause are in tests/practice_wrong/lecture09.py, run by
tests/test_lecture_kinds.py; here, the right answers and the answers that must not start a training run."""

from __future__ import annotations

from course_lib.practice.lecture09 import (
    check_count_neighbours,
    check_lr_factor,
    check_mask_tokens,
    check_my_change,
    check_no_positions_accuracy,
)
from course_lib.training import mask_tokens
from practice_wrong.lecture09 import _counts


def said(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out.strip()


def test_mask_tokens(capsys):
    check_mask_tokens(lambda tokens, vocab_size, generator: mask_tokens(tokens, vocab_size, generator))
    assert said(capsys).startswith("✓")
    check_mask_tokens(lambda tokens, vocab_size, generator: None)
    assert said(capsys).startswith("○ not done yet")


def test_lr_factor(capsys):
    def right(step, warmup, total):
        return (1.0 if warmup == 0 else min(1.0, (step + 1) / warmup)) * (1 - step / total)

    check_lr_factor(right)
    assert said(capsys).startswith("✓")
    check_lr_factor(lambda step, warmup, total: None)
    assert said(capsys).startswith("○ not done yet")


def test_count_neighbours(capsys):
    check_count_neighbours(_counts("right"))
    assert said(capsys).startswith("✓")
    check_count_neighbours(lambda t, v: None)
    assert said(capsys).startswith("○ not done yet")


def test_no_positions_accuracy(capsys):
    check_no_positions_accuracy(0.5)
    assert said(capsys).startswith("✓")
    check_no_positions_accuracy(None)
    assert said(capsys).startswith("○ not done yet")


def test_my_change_refuses_two_changes_and_unknown_names_without_training(capsys):
    check_my_change(dict(num_layers=1, d_model=16), None, None, None, None)
    assert "one thing at a time" in said(capsys)
    check_my_change(dict(colour="red"), None, None, None, None)
    assert "is not a setting of this run" in said(capsys)
    check_my_change(None, None, None, None, None)
    assert said(capsys).startswith("○ not done yet")
