"""The checks of lecture 08's practice say what is wrong for the usual mistakes, in one line.

The features and models are small stand-ins (no MiniLM is loaded): the checks read only their interface."""

import numpy as np
import pytest
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


def gradient_descent(features, labels, steps, lr, average=True, bias=True, up=False):
    n = len(labels)
    w, b = np.zeros((features.shape[1], 5)), np.zeros(5)
    y = np.eye(5)[labels]
    for _ in range(steps):
        g = (softmax(features @ w + b, 1) - y) / (n if average else 1)
        w = w + (1 if up else -1) * lr * features.T @ g
        b = b + (1 if up else -1) * lr * g.sum(axis=0) * bias
    return w, b


def test_train_probe(capsys):
    rng = np.random.default_rng(1)
    features = rng.normal(size=(40, 6))
    labels = np.arange(40) % 5
    check = lecture08.check_train_probe
    assert said(capsys, check, gradient_descent, features, labels).startswith("✓")
    summed = lambda f, y, s, lr: gradient_descent(f, y, s, lr, average=False)
    assert "summed over the headlines, not averaged" in said(capsys, check, summed, features, labels)
    fixed_b = lambda f, y, s, lr: gradient_descent(f, y, s, lr, bias=False)
    assert "b never moves" in said(capsys, check, fixed_b, features, labels)
    uphill = lambda f, y, s, lr: gradient_descent(f, y, s, lr, up=True)
    assert "go up the loss" in said(capsys, check, uphill, features, labels)
    assert "expected W of shape" in said(capsys, check, lambda f, y, s, lr: (np.zeros((6, 4)), np.zeros(4)),
                                         features, labels)
    assert "expected a pair" in said(capsys, check, lambda f, y, s, lr: np.zeros((6, 5)), features, labels)
    assert said(capsys, check, lambda f, y, s, lr: ..., features, labels).startswith("○ not done yet")


class Nearest:
    """A toy model for the cross-validation check: the label of the nearest training row, shifted by ``value``."""

    def __init__(self, features, labels, value):
        self.features, self.labels, self.value = features, labels, value

    def predict(self, features):
        nearest = np.abs(features[:, None, 0] - self.features[None, :, 0]).argmin(axis=1)
        return (self.labels[nearest] + self.value) % 2


def test_cross_validate(capsys):
    from course_lib.capstone import cross_validate

    features = np.arange(20, dtype=float)[:, None]
    labels = (np.arange(20) // 10) % 2
    grid = [1, 0]
    check = lecture08.check_cross_validate

    def right_one(fit, grid, features, labels, folds):
        return cross_validate(fit, grid, features, labels, folds=folds)

    def leaky(fit, grid, features, labels, folds):           # trains on every row, held-out ones included
        fold = np.arange(len(labels)) % folds
        right = [sum(int((fit(features, labels, v).predict(features[fold == k]) == labels[fold == k]).sum())
                     for k in range(folds)) for v in grid]
        return grid[int(np.argmax(right))], right

    def worst(fit, grid, features, labels, folds):
        best, right = cross_validate(fit, grid, features, labels, folds=folds)
        return grid[int(np.argmin(right))], right

    def one_fold(fit, grid, features, labels, folds):        # counts fold 0 only
        fold = np.arange(len(labels)) % folds
        right = [int((fit(features[fold != 0], labels[fold != 0], v).predict(features[fold == 0])
                      == labels[fold == 0]).sum()) for v in grid]
        return grid[int(np.argmax(right))], right

    assert said(capsys, check, right_one, Nearest, grid, features, labels).startswith("✓")
    assert "held-out rows in the training data" in said(capsys, check, leaky, Nearest, grid, features, labels)
    assert "the right counts, but best" in said(capsys, check, worst, Nearest, grid, features, labels)
    assert "summed over all the folds" in said(capsys, check, one_fold, Nearest, grid, features, labels)
    assert "one count per value" in said(capsys, check, lambda *a: (0, [1]), Nearest, grid, features, labels)
    assert said(capsys, check, lambda *a: None, Nearest, grid, features, labels).startswith("○ not done yet")


def test_quizzes(capsys):
    assert said(capsys, lecture08.check_paired_spread, "differences").startswith("✓")
    assert "hides a consistent lead" in said(capsys, lecture08.check_paired_spread, "accuracies")
    assert "not whether the lead holds" in said(capsys, lecture08.check_paired_spread, "one split")
    assert said(capsys, lecture08.check_paired_spread, None).startswith("○ not done yet: set answer")
    assert said(capsys, lecture08.check_scale_of_minilm, 32 ** 0.5).startswith("✓")
    assert "d_k is d_model / num_heads" in said(capsys, lecture08.check_scale_of_minilm, 384 ** 0.5)
