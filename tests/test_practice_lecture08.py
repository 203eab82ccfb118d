"""The checks of lecture 08's practice say what is wrong for the usual mistakes, in one line.

The features and models are small stand-ins (no MiniLM is loaded): the checks read only their interface."""

import numpy as np

from course_lib.practice import lecture08
from practice_wrong.lecture08 import _Nearest as Nearest


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


def softmax(score, axis):
    e = np.exp(score - score.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


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


def test_cross_validate(capsys):
    from course_lib.practice.lecture08 import _cross_validate

    features = (np.arange(20) * 7 % 20).astype(float)[:, None]   # row order is not feature order
    labels = (np.arange(20) // 10) % 2                       # sorted: the first half 0, the second 1
    grid = [1, 0]
    check = lecture08.check_cross_validate

    def variant(kind):
        def my_cross_validate(fit, grid, features, labels, folds):
            right = _cross_validate(fit, grid, features, labels, folds, kind)
            return grid[int(np.argmax(right))], right
        return my_cross_validate

    def worst(fit, grid, features, labels, folds):
        right = _cross_validate(fit, grid, features, labels, folds)
        return grid[int(np.argmin(right))], right

    assert said(capsys, check, variant("right"), Nearest, grid, features, labels).startswith("✓")
    assert "held-out rows were in the training data" in said(capsys, check, variant("leaky"), Nearest, grid,
                                                             features, labels)
    assert "roles are swapped" in said(capsys, check, variant("swapped"), Nearest, grid, features, labels)
    assert "contiguous blocks" in said(capsys, check, variant("contiguous"), Nearest, grid, features, labels)
    assert "only one fold is counted" in said(capsys, check, variant("one fold"), Nearest, grid, features, labels)
    assert "averaged over the folds" in said(capsys, check, variant("mean"), Nearest, grid, features, labels)
    assert "the right counts, but best" in said(capsys, check, worst, Nearest, grid, features, labels)
    assert "one count per value" in said(capsys, check, lambda *a: (0, [1]), Nearest, grid, features, labels)
    assert said(capsys, check, lambda *a: None, Nearest, grid, features, labels).startswith("○ not done yet")


def test_the_reference_cross_validation_is_course_libs():
    from course_lib.capstone import cross_validate
    from course_lib.practice.lecture08 import _cross_validate

    features, labels = np.arange(20, dtype=float)[:, None], (np.arange(20) // 10) % 2
    assert _cross_validate(Nearest, [1, 0], features, labels, 3) == cross_validate(Nearest, [1, 0], features,
                                                                                   labels, folds=3)[1]


def correlated_answers(n=300, seed=0):
    """Two models right on most of the same items: a pairs with b, as two models on one test set do."""
    rng = np.random.default_rng(seed)
    b = rng.random(n) < 0.7
    a = b | (rng.random(n) < 0.3)
    return a, b


def bootstrap(kind="paired", resamples=10_000, level=0.95, order=1):
    def my_paired_bootstrap(right_a, right_b, resamples_, seed):
        a, b = np.asarray(right_a, float), np.asarray(right_b, float)
        d = (a - b) * 100
        rng = np.random.default_rng(seed + order)
        pick = rng.integers(0, len(d), size=(resamples_, len(d)))
        if kind == "unpaired":
            other = rng.integers(0, len(d), size=(resamples_, len(d)))
            means = (a[pick].mean(axis=1) - b[other].mean(axis=1)) * 100
        else:
            means = d[pick].mean(axis=1)
        if kind == "sd":
            return d.mean(), d.mean() - means.std(), d.mean() + means.std()
        if kind == "items":
            return d.mean(), *np.quantile(d, [0.025, 0.975])
        if kind == "fraction":
            return d.mean() / 100, *(np.quantile(means, [0.025, 0.975]) / 100)
        if kind == "reversed":
            return -d.mean(), *np.quantile(-means, [0.025, 0.975])
        return d.mean(), *np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return my_paired_bootstrap


def test_paired_bootstrap(capsys):
    a, b = correlated_answers()
    check = lecture08.check_paired_bootstrap
    assert said(capsys, check, bootstrap(), a, b).startswith("✓")            # another order of draws passes
    assert "unpaired" in said(capsys, check, bootstrap("unpaired"), a, b)
    assert "68 %" in said(capsys, check, bootstrap("sd"), a, b)
    assert "single headlines" in said(capsys, check, bootstrap("items"), a, b)
    assert "a fraction, not points" in said(capsys, check, bootstrap("fraction"), a, b)
    assert "sign is reversed" in said(capsys, check, bootstrap("reversed"), a, b)
    assert "too narrow" in said(capsys, check, bootstrap(level=0.8), a, b)
    assert "expected three numbers" in said(capsys, check, lambda *x: 1.0, a, b)
    assert said(capsys, check, lambda *x: None, a, b).startswith("○ not done yet")


def test_unpaired_interval(capsys):
    """The right answer follows the two models' own answers: wider when they agree on most items (the
    headlines), narrower when they disagree on most."""
    a, b = correlated_answers()
    check = lecture08.check_unpaired_interval
    paired, unpaired = (high - low for low, high in lecture08.bootstrap_intervals(a, b).values())
    assert unpaired > 1.2 * paired
    assert said(capsys, check, "wider", a, b).startswith("✓")
    assert said(capsys, check, " wider ", a, b).startswith("✓")
    assert "correlated" in said(capsys, check, "narrower", a, b)
    assert "covariance" in said(capsys, check, "the same", a, b)
    assert "centre" in said(capsys, check, "moved", a, b)
    assert said(capsys, check, None, a, b) == ("○ not done yet: set prediction to one of 'moved', 'narrower', "
                                               "'the same', 'wider' (section 6's paired bootstrap)")
    opposed = ~a                                          # b right exactly where a is wrong: anti-correlated
    assert said(capsys, check, "narrower", a, opposed).startswith("✓")
    assert "disagree" in said(capsys, check, "wider", a, opposed)


def label_curve(fit, train_x, train_y, test_x, test_y, per_topic, seeds):
    accuracy = np.zeros((len(per_topic), len(seeds)))
    for j, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        for i, m in enumerate(per_topic):
            rows = np.concatenate([rng.choice(np.flatnonzero(train_y == k), size=m, replace=False)
                                   for k in np.unique(train_y)])
            accuracy[i, j] = (fit(train_x[rows], train_y[rows]).predict(test_x) == test_y).mean()
    return accuracy


def test_label_curve(capsys):
    """The right curve passes in either loop order; a placeholder is open; wrong ones are named in
    tests/practice_wrong/lecture08.py."""
    check = lecture08.check_label_curve

    def sizes_outer(fit, train_x, train_y, test_x, test_y, per_topic, seeds):
        rngs = [np.random.default_rng(seed) for seed in seeds]
        out = np.zeros((len(per_topic), len(seeds)))
        for i, m in enumerate(per_topic):
            for j, rng in enumerate(rngs):
                rows = np.concatenate([rng.permutation(np.flatnonzero(train_y == k))[:m] for k in range(3)])
                out[i, j] = np.mean(fit(train_x[rows], train_y[rows]).predict(test_x) == test_y)
        return out

    assert said(capsys, check, label_curve).startswith("✓")
    assert said(capsys, check, sizes_outer).startswith("✓")
    assert said(capsys, check, lambda *args: None).startswith("○ not done yet")
    assert "shape" in said(capsys, check, lambda *args: label_curve(*args)[0])


def test_rows_past_training(capsys):
    check = lecture08.check_rows_past_training
    assert said(capsys, check, "a").startswith("✓")
    assert "not a formula" in said(capsys, check, "b")
    assert "nothing ties a row to its neighbours" in said(capsys, check, "c")
    assert "should be one of" in said(capsys, check, 1)
    assert said(capsys, check, ...) == "○ not done yet: set answer to one of 'a', 'b', 'c' (lecture 05, section 5)"

