"""The checks of lecture 09's practice: the solution passes, typical mistakes get their one line."""

from __future__ import annotations

import torch

from course_lib.practice.lecture09 import (
    check_count_neighbours,
    check_lr_factor,
    check_mask_tokens,
    check_my_change,
    check_no_positions_accuracy,
)
from course_lib.tokenizer import PAD_ID
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

    def labels_everywhere(tokens, vocab_size, generator):
        inputs, _ = mask_tokens(tokens, vocab_size, generator)
        return inputs, tokens.clone()

    check_mask_tokens(labels_everywhere)
    assert "labels carry a word at" in said(capsys)

    def random_from(low):
        def masking(tokens, vocab_size, generator):
            picked = (torch.rand(tokens.shape, generator=generator) < 0.15) & (tokens > 1)
            labels = torch.where(picked, tokens, torch.full_like(tokens, IGNORE))
            which = torch.rand(tokens.shape, generator=generator)
            random_words = torch.randint(low, vocab_size, tokens.shape, generator=generator)
            inputs = torch.where(picked & (which < 0.8), torch.full_like(tokens, MASK_ID), tokens)
            return torch.where(picked & (which >= 0.8) & (which < 0.9), random_words, inputs), labels
        return masking

    check_mask_tokens(random_from(3))
    assert said(capsys).startswith("✓")
    check_mask_tokens(random_from(0))
    assert "<pad> or <unk>" in said(capsys)
    check_mask_tokens(random_from(2))
    assert "some random replacements are <mask> itself" in said(capsys)


def test_lr_factor(capsys):
    def right(step, warmup, total):
        return (1.0 if warmup == 0 else min(1.0, (step + 1) / warmup)) * (1 - step / total)

    check_lr_factor(right)
    assert said(capsys).startswith("✓")
    check_lr_factor(lambda step, warmup, total: min(1.0, (step + 1) / warmup) if warmup else 1.0)
    line = said(capsys)
    assert "the ramp's value" in line or "with warmup = 0" in line
    check_lr_factor(lambda step, warmup, total: (min(1.0, step / warmup) if warmup else 1.0) * (1 - step / total))
    assert "gets a learning rate of 0" in said(capsys)
    check_lr_factor(lambda step, warmup, total: min(1.0, (step + 1) / warmup) * (1 - step / total))
    assert "ZeroDivisionError" in said(capsys)
    check_lr_factor(lambda step, warmup, total: None)
    assert said(capsys).startswith("○ not done yet")


def _count(train, vocab_size, edge_rows=True, specials=False, swap=False):
    """A student's count_neighbours, written with loops, with one mistake switched on."""
    left = torch.zeros(vocab_size + 1, vocab_size)
    right = torch.zeros(vocab_size + 1, vocab_size)
    for row in train.tolist():
        words = [w for w in row if w != PAD_ID]
        for i, w in enumerate(words):
            if w <= MASK_ID and not specials:
                continue
            before = words[i - 1] if i > 0 else (vocab_size if edge_rows else None)
            after = words[i + 1] if i + 1 < len(words) else (vocab_size if edge_rows else None)
            if before is not None:
                left[before, w] += 1
            if after is not None:
                right[after, w] += 1
    return (right, left) if swap else (left, right)


def test_count_neighbours(capsys):
    check_count_neighbours(_count)
    assert said(capsys).startswith("✓")
    check_count_neighbours(lambda t, v: _count(t, v, swap=True))
    assert "swapped" in said(capsys)
    check_count_neighbours(lambda t, v: _count(t, v, specials=True))
    assert "counts <pad>, <unk> or <mask>" in said(capsys)
    check_count_neighbours(lambda t, v: _count(t, v, edge_rows=False))
    assert "left counts" in said(capsys) or "edge row" in said(capsys)
    check_count_neighbours(lambda t, v: (torch.zeros(v, v), torch.zeros(v, v)))
    assert "one for the sentence's edge" in said(capsys)
    check_count_neighbours(lambda t, v: None)
    assert said(capsys).startswith("○ not done yet")


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
