"""Checks for the practice exercises of lecture 08 (the encoder at work)."""

from __future__ import annotations

import numpy as np

from . import attempt, check, failed, passed, todo, unanswered

__all__ = ["check_probe_probabilities", "check_word_order"]


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
