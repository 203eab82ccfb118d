"""Checks for the practice exercises of lecture 08 (the encoder at work)."""

from __future__ import annotations

import math

import numpy as np
import torch

from . import attempt, check, failed, number, passed, same_tensor, todo, unanswered

__all__ = ["check_probe_probabilities", "check_word_order", "check_mean_pool", "check_probe_size",
           "check_scale_of_minilm"]


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


@check
def check_mean_pool(mean_pool, model, tokenizer, sentences) -> bool:
    """Write: MiniLM's sentence embedding from its states, the mean over the real tokens, to length 1."""
    where = "average only where key_padding_mask is False, then divide by the vector's length"
    batch = tokenizer(list(sentences))
    mask = batch["key_padding_mask"]                                       # (B, T), True = padding
    if not mask.any():
        return failed("the check needs sentences of different lengths", "sentences")
    with torch.no_grad():
        hidden = model(batch["input_ids"], key_padding_mask=mask).double()   # (B, T, d_model)
    ok, got = attempt(mean_pool, hidden.clone(), mask.clone(), where=where)
    if not ok:
        return False
    expected = model.encode(list(sentences), tokenizer).double()            # (B, d_model)
    if not isinstance(got, torch.Tensor):
        return failed(f"expected a tensor, got {type(got).__name__}", where)
    if tuple(got.shape) != tuple(expected.shape):
        return failed(f"expected shape {tuple(expected.shape)} (one vector per sentence), got {tuple(got.shape)}",
                      "average over the tokens: dim=1")
    got = got.double()
    plain = hidden.mean(dim=1)
    if (torch.allclose(got, plain / plain.norm(dim=-1, keepdim=True), atol=1e-5)
            or torch.allclose(got, plain, atol=1e-5)):
        return failed("the padding positions are in the average", "key_padding_mask: True = padding")
    keep = (~mask).unsqueeze(-1).double()
    mean = (hidden * keep).sum(dim=1) / keep.sum(dim=1)
    if torch.allclose(got, mean, atol=1e-5):
        return failed("the right mean, but not of length 1", "divide each vector by its norm")
    if not same_tensor(got, expected, "your embedding", where, atol=1e-4):
        return False
    return passed(f"your embeddings equal MiniLM's encode for all {len(sentences)} sentences, padding left out")


@check
def check_probe_size(answer) -> bool:
    """Quiz: the number of fitted numbers of a linear probe with 20 topics on 384 features."""
    return number(answer, 384 * 20 + 20, "384 x 20 weights and 20 biases: the encoder adds nothing to learn",
                  rel_tol=0, abs_tol=0.5, low="too few: one weight per feature AND topic, and a bias per topic",
                  high="too many: the encoder stays frozen, only W and b are fitted",
                  where="the head is softmax(e W + b)")


@check
def check_scale_of_minilm(answer) -> bool:
    """Retrieval (lecture 02): MiniLM's attention scores are divided by sqrt(d_k), d_k = 384 / 12."""
    return number(answer, math.sqrt(32), "sqrt(d_k) = sqrt(384 / 12) = sqrt(32): each head works on 32 features",
                  rel_tol=0.01, low="too small: the divisor is the square root of a head's width d_k",
                  high="too large: d_k is d_model / num_heads, not d_model", where="lecture 02, scaled attention")
