"""The checks of lecture 09's practice: the solution passes, typical mistakes get their one line."""

from __future__ import annotations

import torch

from course_lib.practice.lecture09 import (
    check_guess_by_position,
    check_lr_factor,
    check_mask_tokens,
    check_my_change,
    check_no_positions_accuracy,
)
from course_lib.training import IGNORE, MASK_ID, mask_tokens


def said(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out.strip()


def test_mask_tokens(capsys):
    check_mask_tokens(lambda tokens, vocab_size, generator: mask_tokens(tokens, vocab_size, generator))
    assert said(capsys).startswith("✓")

    def all_masked(tokens, vocab_size, generator):
        picked = (torch.rand(tokens.shape, generator=generator) < 0.15) & (tokens > 1)
        return (torch.where(picked, torch.full_like(tokens, MASK_ID), tokens),
                torch.where(picked, tokens, torch.full_like(tokens, IGNORE)))

    check_mask_tokens(all_masked)
    assert said(capsys).startswith("✗ wrong: 100 % of the picked tokens became <mask>, expected about 80 %")

    def with_padding(tokens, vocab_size, generator):
        picked = torch.rand(tokens.shape, generator=generator) < 0.15
        return tokens, torch.where(picked, tokens, torch.full_like(tokens, IGNORE))

    check_mask_tokens(with_padding)
    assert said(capsys).startswith("✗ wrong: a padding position was picked")
    check_mask_tokens(lambda tokens, vocab_size, generator: None)
    assert said(capsys).startswith("○ not done yet")


def test_lr_factor(capsys):
    def right(step, warmup, total):
        return (1.0 if warmup == 0 else min(1.0, (step + 1) / warmup)) * (1 - step / total)

    check_lr_factor(right)
    assert said(capsys).startswith("✓")
    check_lr_factor(lambda step, warmup, total: min(1.0, (step + 1) / warmup) if warmup else 1.0)
    assert "the factor is the ramp alone" in said(capsys) or "with warmup = 0" in said(capsys)
    check_lr_factor(lambda step, warmup, total: (min(1.0, step / warmup) if warmup else 1.0) * (1 - step / total))
    assert "gets a learning rate of 0" in said(capsys)
    check_lr_factor(lambda step, warmup, total: min(1.0, (step + 1) / warmup) * (1 - step / total))
    assert "ZeroDivisionError" in said(capsys)
    check_lr_factor(lambda step, warmup, total: None)
    assert said(capsys).startswith("○ not done yet")


def test_guess_by_position(capsys):
    def right(train):
        return torch.stack([torch.bincount(c[c > 1]).argmax() for c in train.T])

    check_guess_by_position(right)
    assert said(capsys).startswith("✓")
    check_guess_by_position(lambda train: torch.bincount(train[train > 1]).argmax().repeat(train.shape[1]))
    assert "every position gets the same guess" in said(capsys)
    check_guess_by_position(lambda train: torch.stack([torch.bincount(c).argmax() for c in train.T]))
    assert "is <pad> or <unk>" in said(capsys)
    check_guess_by_position(lambda train: torch.stack([torch.bincount(r[r > 1], minlength=1).argmax() for r in train]))
    assert "expected one guess per position" in said(capsys)


def test_no_positions_accuracy(capsys):
    check_no_positions_accuracy(0.5)
    assert said(capsys).startswith("✓")
    check_no_positions_accuracy(0.8)
    assert "above one half" in said(capsys)
    check_no_positions_accuracy(None)
    assert said(capsys).startswith("○ not done yet")


def test_my_change_refuses_two_changes_and_unknown_names_without_training(capsys):
    check_my_change(dict(num_layers=1, d_model=16), None, None, None, None)
    assert "one thing at a time" in said(capsys)
    check_my_change(dict(colour="red"), None, None, None, None)
    assert "is not a setting of this run" in said(capsys)
    check_my_change(None, None, None, None, None)
    assert said(capsys).startswith("○ not done yet")
