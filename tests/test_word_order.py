"""Lecture 09's word-order test: without positions a headline and its shuffle are the same to the model."""

from __future__ import annotations

import torch

from course_lib.word_order import make_order_model, order_accuracy, order_pairs, train_order


def test_pairs_hold_each_headline_then_a_different_shuffle_of_it():
    _, (x, y), (test_x, test_y) = order_pairs()
    assert torch.equal(y[0::2], torch.ones(len(x) // 2, dtype=torch.long)) and not y[1::2].any()
    for a, b in zip(x[0::2], x[1::2]):
        assert not torch.equal(a, b)
        assert torch.equal(a.sort().values, b.sort().values)                     # the same words, another order
    assert len(test_x) == len(test_y) and len(test_x) > 400


def test_without_positions_the_model_is_exactly_at_chance_and_with_them_above():
    tokenizer, (x, y), (test_x, test_y) = order_pairs()
    blind = make_order_model(len(tokenizer), 0, positional="none")
    train_order(blind, x, y, steps=20)
    with torch.no_grad():
        scores = blind(test_x)
    assert torch.allclose(scores[0::2], scores[1::2], atol=1e-9)                 # a headline and its shuffle alike
    assert order_accuracy(blind, test_x, test_y) == 0.5
    seeing = make_order_model(len(tokenizer), 0)
    train_order(seeing, x, y, steps=100)
    assert order_accuracy(seeing, test_x, test_y) > 0.55
