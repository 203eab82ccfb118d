"""The checks of lecture 09's practice: the solution passes, typical mistakes get their one line."""

from __future__ import annotations

import math

import torch

from course_lib.practice.lecture09 import check_mask_tokens, check_warmup
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
    assert said(capsys).startswith("✗ 100 % of the picked tokens became <mask>, expected about 80 %")

    def with_padding(tokens, vocab_size, generator):
        picked = torch.rand(tokens.shape, generator=generator) < 0.15
        return tokens, torch.where(picked, tokens, torch.full_like(tokens, IGNORE))

    check_mask_tokens(with_padding)
    assert said(capsys).startswith("✗ a padding position was picked")
    check_mask_tokens(lambda tokens, vocab_size, generator: None)
    assert said(capsys).startswith("○ not done yet")


def test_warmup(capsys):
    def right(step, warmup):
        return 1.0 if warmup == 0 else min((step + 1) / warmup, math.sqrt(warmup / (step + 1)))

    check_warmup(right)
    assert said(capsys).startswith("✓")
    check_warmup(lambda step, warmup: min((step + 1) / warmup, 1.0) if warmup else 1.0)
    assert "the paper decays it" in said(capsys)
    check_warmup(lambda step, warmup: min((step + 1) / warmup, math.sqrt(warmup / (step + 1))))
    assert "ZeroDivisionError" in said(capsys)
