"""Checks for the practice exercises of lecture 08 (the encoder at work)."""

from __future__ import annotations

import math

import numpy as np

from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_probe_probabilities", "check_word_order", "check_train_probe", "check_cross_validate",
           "check_paired_spread", "check_scale_of_minilm"]


@check
def check_probe_probabilities(probe_probabilities, probe, features) -> bool:
    """Write: the linear probe's probability of every topic, from its weights, for every row of ``features``."""
    where = "the probe's scores are features @ W + b, one per topic; then a softmax over each row"
    ok, got = attempt(probe_probabilities, features, where=where)
    if not ok:
        return False
    expected = probe.predict_proba(features)                               # (sentences, topics)
    got = np.asarray(got, dtype=np.float64)
    if got.shape != expected.shape:
        return failed(f"expected shape {expected.shape} (one row per sentence, one column per topic), "
                      f"got {got.shape}", where)
    if np.allclose(got, expected, atol=1e-9):
        return passed(f"your probabilities equal probe.predict_proba for all {len(got)} sentences")
    w, b = probe.coef_.T, probe.intercept_                                 # (features, topics), (topics,)
    score = features @ w + b
    if np.allclose(got, score, atol=1e-9):
        return failed("these are the scores, not probabilities (rows do not sum to 1)",
                      "what turns scores into probabilities?")
    if np.allclose(got, _softmax(features @ w, axis=1), atol=1e-9):
        return failed("the intercept is missing", "probe.intercept_")
    if np.allclose(got, _softmax(score, axis=0), atol=1e-9):
        return failed("the softmax runs down the columns: each topic sums to 1 over the sentences",
                      "each ROW (one sentence) should sum to 1")
    if np.allclose(got, 1 / (1 + np.exp(-score)), atol=1e-9):
        return failed("a logistic function per topic: the rows do not sum to 1", "five topics: softmax")
    return failed("the probabilities differ from probe.predict_proba", where)


def _softmax(score, axis):
    e = np.exp(score - score.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@check
def check_word_order(same_for_baseline, same_for_probe, baseline_probabilities, probe_probabilities,
                sentences) -> bool:
    """Predict: do the two models give the same probabilities to two sentences with the same words?"""
    where = "what does each model keep of a sentence?"
    if unanswered(same_for_baseline) or unanswered(same_for_probe):
        return todo("not done yet: set both predictions to True or False", where)
    if not isinstance(same_for_baseline, bool) or not isinstance(same_for_probe, bool):
        return failed("each prediction should be True or False", where)
    base = np.asarray(baseline_probabilities(sentences), dtype=np.float64)   # (2, topics)
    probe = np.asarray(probe_probabilities(sentences), dtype=np.float64)
    truth_base, truth_probe = bool(np.array_equal(base[0], base[1])), bool(np.array_equal(probe[0], probe[1]))
    gap_base, gap_probe = np.abs(base[0] - base[1]).max(), np.abs(probe[0] - probe[1]).max()
    if same_for_baseline != truth_base:
        return failed("the baseline gives " + ("exactly the same probabilities to both" if truth_base else
                                               f"probabilities up to {gap_base:.3f} apart"),
                      "a bag of words counts words and forgets their order")
    if same_for_probe != truth_probe:
        return failed("the probe gives " + ("exactly the same probabilities to both" if truth_probe else
                                            f"probabilities up to {gap_probe:.3f} apart"),
                      "the encoder adds a position to every token before attention")
    return passed(f"the baseline's probabilities are equal, the probe's up to {gap_probe:.3f} apart: "
                  "the bag of words cannot see the order, the encoder can")


def _train_probe(features, labels, steps, lr, average=True, bias=True, axis=1, sign=1.0):
    """The reference: full-batch gradient descent on the mean cross-entropy of softmax(e W + b), from zeros;
    the keyword arguments make the usual mistakes, for the check to recognise."""
    n, topics = len(labels), int(labels.max()) + 1
    w, b = np.zeros((features.shape[1], topics)), np.zeros(topics)
    onehot = np.eye(topics)[labels]                                        # (n, topics)
    for _ in range(steps):
        p = _softmax(features @ w + b, axis=axis)                          # (n, topics)
        grad = (p - onehot) / (n if average else 1)                        # d loss / d scores
        w = w - sign * lr * features.T @ grad
        if bias:
            b = b - sign * lr * grad.sum(axis=0)
    return w, b


@check
def check_train_probe(train_probe, features, labels, steps: int = 100, lr: float = 2.0) -> bool:
    """Write: the probe fitted by gradient descent on the mean cross-entropy, from zeros."""
    where = "from W = 0 and b = 0, each step: the softmax of every row, (P - Y) / n, then W and b move against it"
    features, labels = np.asarray(features, dtype=np.float64), np.asarray(labels)
    ok, got = attempt(train_probe, features.copy(), labels.copy(), steps, lr, where=where)
    if not ok:
        return False
    if not isinstance(got, tuple) or len(got) != 2:
        return failed(f"expected a pair (W, b), got {type(got).__name__}", where)
    w, b = (np.asarray(x, dtype=np.float64) for x in got)
    w_ref, b_ref = _train_probe(features, labels, steps, lr)
    if w.shape != w_ref.shape or b.shape != b_ref.shape:
        return failed(f"expected W of shape {w_ref.shape} and b of shape {b_ref.shape}, got {w.shape} and {b.shape}",
                      "one weight per feature and topic, one bias per topic")
    def close(ref):
        return np.allclose(w, ref[0], atol=1e-8) and np.allclose(b, ref[1], atol=1e-8)

    if close((w_ref, b_ref)):
        right = int(((features @ w + b).argmax(axis=1) == labels).sum())
        return passed(f"your W and b equal the reference's after {steps} steps; they get {right} of the "
                      f"{len(labels)} training headlines right")
    with np.errstate(all="ignore"):
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            return failed("W or b holds NaN or inf: the steps are far too large",
                          "is the gradient averaged over the rows?")
        if np.allclose(b, 0) and close(_train_probe(features, labels, steps, lr, bias=False)):
            return failed("b never moves", "the bias gets a gradient too: the sum of (P - Y) over the rows")
        if close(_train_probe(features, labels, steps, lr, average=False)):
            return failed("the gradient is summed over the headlines, not averaged", "the loss is a mean over the rows")
        if close(_train_probe(features, labels, steps, lr, axis=0)):
            return failed("the softmax runs down the columns", "each ROW (one headline) is a distribution over topics")
        if close(_train_probe(features, labels, steps, lr, sign=-1.0)):
            return failed("the steps go up the loss, not down", "move W and b against the gradient")
    return failed("W and b differ from the reference's", where)


@check
def check_cross_validate(my_cross_validate, fit, grid, features, labels, folds: int = 3) -> bool:
    """Write: k-fold cross-validation that chooses one value of ``grid`` on the training data alone."""
    where = "fold k holds the rows i with i % folds == k; train on the others, count the right answers on fold k"
    from ..capstone import cross_validate
    ok, got = attempt(my_cross_validate, fit, grid, features, labels, folds, where=where)
    if not ok:
        return False
    if not isinstance(got, tuple) or len(got) != 2:
        return failed(f"expected a pair (best, right), got {type(got).__name__}", where)
    best, right = got
    best_ref, right_ref = cross_validate(fit, grid, features, labels, folds=folds)
    right = [int(r) for r in right] if isinstance(right, list | tuple | np.ndarray) else right
    if not isinstance(right, list) or len(right) != len(grid):
        return failed(f"right: expected one count per value of the grid ({len(grid)}), got {right!r}", where)
    if right == right_ref and best == best_ref:
        return passed(f"your counts {right} (of {len(labels)} held-out rows) and your choice {best!r} equal "
                      "course_lib's cross_validate")
    if right == right_ref:
        return failed(f"the right counts, but best = {best!r}", "the value with the MOST held-out right answers")
    if max(right) > max(right_ref):
        return failed("the counts are too high: were the held-out rows in the training data?",
                      "train on the rows NOT in fold k")
    if sum(right) < 0.6 * sum(right_ref):
        return failed("the counts are too low: are they summed over all the folds?", where)
    return failed(f"your counts {right} differ from the reference's", where)


@check
def check_paired_spread(answer) -> bool:
    """Quiz: which spread decides whether a lead over the same splits is visible."""
    return choice(answer, "differences", {
        "accuracies": "each accuracy's spread includes how hard each split's test headlines are, which both "
                      "models share: it hides a consistent lead",
        "one split": "one split's standard error says how much its test set could move one accuracy, not "
                     "whether the lead holds from split to split",
    }, "the paired difference cancels what the two models share (a split's easy or hard test headlines): its "
       "spread is the one to compare the lead with", where="section 6, paired differences")


@check
def check_scale_of_minilm(answer) -> bool:
    """Retrieval (lecture 02): MiniLM's attention scores are divided by sqrt(d_k), d_k = 384 / 12."""
    return number(answer, math.sqrt(32), "sqrt(d_k) = sqrt(384 / 12) = sqrt(32): each head works on 32 features",
                  rel_tol=0.01, low="too small: the divisor is the square root of a head's width d_k",
                  high="too large: d_k is d_model / num_heads, not d_model", where="lecture 02, scaled attention")
