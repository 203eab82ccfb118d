"""The checks of lecture 08's practice say what is wrong for the usual mistakes, in one line.

The model and tokenizer are small stand-ins (no MiniLM is loaded): the checks read only their interface."""

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from course_lib.practice import lecture08


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


@pytest.fixture(scope="module")
def probe():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(60, 8))
    topics = rng.integers(0, 5, size=60)
    return LogisticRegression(max_iter=500).fit(features, topics), features[:7]


def softmax(score, axis):
    e = np.exp(score - score.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_probe_probabilities(capsys, probe):
    model, features = probe
    w, b = model.coef_.T, model.intercept_
    check = lecture08.check_probe_probabilities
    assert said(capsys, check, lambda f: softmax(f @ w + b, 1), model, features).startswith("✓")
    assert "scores, not probabilities" in said(capsys, check, lambda f: f @ w + b, model, features)
    assert "intercept is missing" in said(capsys, check, lambda f: softmax(f @ w, 1), model, features)
    assert "down the columns" in said(capsys, check, lambda f: softmax(f @ w + b, 0), model, features)
    assert "logistic function" in said(capsys, check, lambda f: 1 / (1 + np.exp(-(f @ w + b))), model, features)
    assert said(capsys, check, lambda f: ..., model, features).startswith("○ not done yet")


def test_word_order(capsys):
    pair = ["a b", "b a"]
    bag = lambda s: np.array([[0.2, 0.8], [0.2, 0.8]])           # same words, same counts
    ordered = lambda s: np.array([[0.3, 0.7], [0.6, 0.4]])       # the encoder sees the order
    check = lecture08.check_word_order
    assert said(capsys, check, True, False, bag, ordered, pair).startswith("✓")
    assert "bag of words" in said(capsys, check, False, False, bag, ordered, pair)
    assert "adds a position" in said(capsys, check, True, True, bag, ordered, pair)
    assert said(capsys, check, None, False, bag, ordered, pair).startswith("○ not done yet")


class Tokenizer:
    """Sentences of 2 and 4 tokens, padded to 4."""

    def __call__(self, sentences):
        lengths = torch.tensor([len(s.split()) for s in sentences])
        mask = torch.arange(int(lengths.max()))[None, :] >= lengths[:, None]
        return {"input_ids": torch.arange(mask.numel()).reshape(mask.shape), "key_padding_mask": mask}


class Model:
    def __call__(self, input_ids, key_padding_mask):
        gen = torch.Generator().manual_seed(0)
        return torch.randn(*input_ids.shape, 6, generator=gen) + 3.0        # (B, T, 6), far from 0 on average

    def encode(self, sentences, tokenizer):
        batch = tokenizer(sentences)
        hidden = self(batch["input_ids"], batch["key_padding_mask"])
        keep = (~batch["key_padding_mask"]).unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * keep).sum(dim=1) / keep.sum(dim=1)
        return mean / mean.norm(dim=-1, keepdim=True)


def test_mean_pool(capsys):
    sentences = ["one two", "one two three four"]

    def right(h, pad):
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        mean = (h * keep).sum(1) / keep.sum(1)
        return mean / mean.norm(dim=-1, keepdim=True)

    def unscaled(h, pad):
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        return (h * keep).sum(1) / keep.sum(1)

    check = lecture08.check_mean_pool
    assert said(capsys, check, right, Model(), Tokenizer(), sentences).startswith("✓")
    assert "padding positions are in the average" in said(capsys, check, lambda h, pad: h.mean(1), Model(),
                                                         Tokenizer(), sentences)
    assert "not of length 1" in said(capsys, check, unscaled, Model(), Tokenizer(), sentences)
    assert "expected shape" in said(capsys, check, lambda h, pad: h.mean(2), Model(), Tokenizer(), sentences)


def test_quizzes(capsys):
    assert said(capsys, lecture08.check_probe_size, 7700).startswith("✓")
    assert "too few" in said(capsys, lecture08.check_probe_size, 7680)
    assert said(capsys, lecture08.check_probe_size, None).startswith("○ not done yet: set answer")
    assert said(capsys, lecture08.check_scale_of_minilm, 32 ** 0.5).startswith("✓")
    assert "d_k is d_model / num_heads" in said(capsys, lecture08.check_scale_of_minilm, 384 ** 0.5)
