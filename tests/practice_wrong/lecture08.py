"""Wrong answers to lecture 08's checks, each with the word of its message that names the cause.

Small stand-ins replace MiniLM and the headlines: the checks read only their interface."""

from __future__ import annotations

import numpy as np

from course_lib.practice.lecture08 import _cross_validate
from practice_wrong import Wrong

PAIR = ["Minister sues pop star", "Pop star sues minister"]


def _bag(sentences):                       # the same words, the same counts: the same probabilities
    return np.array([[0.2, 0.8], [0.2, 0.8]])


def _ordered(sentences):                   # the encoder sees the order
    return np.array([[0.3, 0.7], [0.6, 0.4]])


def _probe_data():
    rng = np.random.default_rng(1)
    return rng.normal(size=(40, 6)), np.arange(40) % 5


def _descent(average=True, bias=True, up=False, columns=False):
    def train_probe(features, labels, steps, lr):
        n = len(labels)
        w, b = np.zeros((features.shape[1], 5)), np.zeros(5)
        y = np.eye(5)[labels]
        for _ in range(steps):
            s = features @ w + b
            e = np.exp(s - s.max(axis=0 if columns else 1, keepdims=True))
            g = (e / e.sum(axis=0 if columns else 1, keepdims=True) - y) / (n if average else 1)
            w = w + (1 if up else -1) * lr * features.T @ g
            b = b + (1 if up else -1) * lr * g.sum(axis=0) * bias
        return w, b
    return lambda: ((train_probe, *_probe_data()), {})


class _Nearest:
    """The label of the nearest training row, shifted by ``value``: a model cross-validation can tune."""

    def __init__(self, features, labels, value):
        self.features, self.labels, self.value = features, labels, value

    def predict(self, features):
        nearest = np.abs(features[:, None, 0] - self.features[None, :, 0]).argmin(axis=1)
        return (self.labels[nearest] + self.value) % 2


def _cv(kind):
    def my_cross_validate(fit, grid, features, labels, folds):
        right = _cross_validate(fit, grid, features, labels, folds, kind)
        return grid[int(np.argmax(right))], right
    features = (np.arange(20) * 7 % 20).astype(float)[:, None]      # row order is not feature order
    labels = (np.arange(20) // 10) % 2                                # sorted by label, as the headlines are
    return (my_cross_validate, _Nearest, [1, 0], features, labels)


def _answers():
    rng = np.random.default_rng(0)
    b = rng.random(300) < 0.7
    return b | (rng.random(300) < 0.3), b            # two models right on mostly the same items


def _bootstrap(kind):
    def my_paired_bootstrap(right_a, right_b, resamples, seed):
        a, b = np.asarray(right_a, float), np.asarray(right_b, float)
        d = (a - b) * 100
        rng = np.random.default_rng(seed)
        pick = rng.integers(0, len(d), size=(resamples, len(d)))
        means = d[pick].mean(axis=1)
        if kind == "unpaired":
            other = rng.integers(0, len(d), size=(resamples, len(d)))
            means = (a[pick].mean(axis=1) - b[other].mean(axis=1)) * 100
        if kind == "sd":
            return d.mean(), d.mean() - means.std(), d.mean() + means.std()
        if kind == "items":
            return d.mean(), *np.quantile(d, [0.025, 0.975])
        if kind == "fraction":
            return d.mean() / 100, *(np.quantile(means, [0.025, 0.975]) / 100)
        if kind == "reversed":
            return -d.mean(), *np.quantile(-means, [0.025, 0.975])
        return d.mean(), *np.quantile(means, [0.025, 0.975])
    return lambda: ((my_paired_bootstrap, *_answers()), {})


def _curve(kind):
    def label_curve(fit, train_x, train_y, test_x, test_y, per_topic, seeds):
        accuracy = np.zeros((len(per_topic), len(seeds)))
        for j, seed in enumerate(seeds):
            rng = np.random.default_rng(0 if kind == "one seed" else seed)
            for i, m in enumerate(per_topic):
                if kind == "in all":
                    rows = rng.choice(len(train_y), size=m, replace=False)
                elif kind == "unstratified":
                    rows = rng.choice(len(train_y), size=m * len(np.unique(train_y)), replace=False)
                else:
                    rows = np.concatenate([rng.choice(np.flatnonzero(train_y == k), size=m,
                                                      replace=kind == "replacement") for k in np.unique(train_y)])
                model = fit(train_x[rows], train_y[rows])
                scored_x, scored_y = (train_x[rows], train_y[rows]) if kind == "training" else (test_x, test_y)
                right = (model.predict(scored_x) == scored_y)
                accuracy[i, j] = right.sum() if kind == "count" else right.mean()
        return accuracy.T if kind == "transposed" else accuracy
    return (label_curve,)


WRONG = {
    "check_word_order": [
        Wrong("the baseline sees the order", (False, False, _bag, _ordered, PAIR), word="forgets their order"),
        Wrong("the probe keeps no order", (True, True, _bag, _ordered, PAIR), word="position"),
        Wrong("both swapped", (False, True, _bag, _ordered, PAIR), word="forgets their order"),
        Wrong("a string, not a bool", ("True", False, _bag, _ordered, PAIR), word="True or False"),
    ],
    "check_train_probe": [
        Wrong("the gradient summed, not averaged", _descent(average=False), word="summed"),
        Wrong("the bias never updated", _descent(bias=False), word="b never moves"),
        Wrong("steps up the gradient", _descent(up=True), word="go up the loss"),
        Wrong("softmax down the columns", _descent(columns=True), word="columns"),
    ],
    "check_cross_validate": [
        Wrong("trained on every row", _cv("leaky"), word="training data"),
        Wrong("the folds' roles swapped", _cv("swapped"), word="swapped"),
        Wrong("contiguous folds", _cv("contiguous"), word="contiguous"),
        Wrong("one fold counted", _cv("one fold"), word="one fold"),
        Wrong("counts averaged", _cv("mean"), word="averaged"),
    ],
    "check_paired_bootstrap": [
        Wrong("a and b resampled separately", _bootstrap("unpaired"), word="unpaired"),
        Wrong("mean ± one sd of the draws", _bootstrap("sd"), word="68 %"),
        Wrong("quantiles of single headlines", _bootstrap("items"), word="single headlines"),
        Wrong("a fraction, not points", _bootstrap("fraction"), word="fraction"),
        Wrong("b minus a", _bootstrap("reversed"), word="reversed"),
    ],
    "check_unpaired_interval": [
        Wrong("pairing thought to widen the interval", lambda: (("narrower", *_answers()), {}), word="correlated"),
        Wrong("pairing thought to be bookkeeping", lambda: (("the same", *_answers()), {}), word="covariance"),
        Wrong("unpaired draws thought to move the centre", lambda: (("moved", *_answers()), {}), word="centre"),
        Wrong("not an option", lambda: (("wide", *_answers()), {}), word="should be one of"),
    ],
    "check_label_curve": [
        Wrong("rows drawn with replacement", _curve("replacement"), word="replacement"),
        Wrong("m rows in all, not per topic", _curve("in all"), word="per topic"),
        Wrong("m times the topics, drawn from every row", _curve("unstratified"), word="same number of each topic"),
        Wrong("one generator for every seed", _curve("one seed"), word="every seed draws the same"),
        Wrong("scored on the training rows", _curve("training"), word="training rows"),
        Wrong("counts, not accuracies", _curve("count"), word="counts"),
        Wrong("sizes and seeds swapped", _curve("transposed"), word="swapped"),
    ],
    "check_rows_past_training": [
        Wrong("rows by a rotation, as sinusoids", ("b",), word="not a formula"),
        Wrong("rows close to the last trained one", ("c",), word="nothing ties a row to its neighbours"),
        Wrong("not an option", ("d",), word="should be one of"),
        Wrong("a number, not a letter", (1,), word="should be one of"),
    ],
}
