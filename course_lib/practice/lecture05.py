"""Checks of lecture 05's practice (positional encodings): each prints one line, never raises."""

from __future__ import annotations

import math

import torch

from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_order_prediction", "check_dot_by_distance", "check_inverse_shift", "check_three_back",
           "check_wavelength", "check_relative_bias", "check_embedding_scale"]


@check
def check_order_prediction(same_mean, same_first, encoder, a, b) -> bool:
    """Predict-then-run: without positions, is the mean over tokens the same for the two orders,
    and is the output at position 0?"""
    if unanswered(same_mean) or unanswered(same_first):
        return todo("not done yet: set same_mean and same_first to True or False")
    if not isinstance(same_mean, bool) or not isinstance(same_first, bool):
        return failed("same_mean and same_first should each be True or False")
    with torch.no_grad():
        ha, hb = encoder(a)[0], encoder(b)[0]                                   # (T, d_model) each
    truth_mean = torch.allclose(ha.mean(0), hb.mean(0), atol=1e-5)
    truth_first = torch.allclose(ha[0], hb[0], atol=1e-5)
    if same_mean != truth_mean:
        return failed("the mean over tokens: think of what a permutation does to a sum",
                      "section 1, the picture of the two orders")
    if same_first != truth_first:
        return failed("the output at position 0: which word sits there in each sentence?",
                      "section 1, the picture of the two orders")
    return passed("both the same: each word gets the same output in both orders, only listed elsewhere; "
                  "position 0 holds cls in both")


@check
def check_dot_by_distance(fn, table: torch.Tensor) -> bool:
    """Write ``fn(delta, d_model)`` = PE(p) . PE(p + delta) from the formula, without the table."""
    d_model = table.shape[1]
    for delta in (0, 1, 7, 40):
        ok, got = attempt(fn, delta, d_model, where="section 3.2")
        if not ok:
            return False
        try:
            got = float(got)
        except (TypeError, ValueError):
            return failed(f"dot_by_distance({delta}, {d_model}) should be a number, got {type(got).__name__}")
        expected = float(table[0] @ table[delta])
        if not math.isclose(got, expected, abs_tol=1e-3):
            if delta == 0:
                return failed(f"at distance 0 you get {got:.3f}, expected {expected:.1f}: each pair adds "
                              "sin² + cos² there", "the identity under section 3.2")
            return failed(f"at distance {delta} you get {got:.3f}, expected {expected:.3f}",
                          "the frequencies ω_i and the identity under section 3.2")
    return passed(f"PE(p)·PE(p+Δ) from the formula matches the table at Δ = 0, 1, 7, 40 (d_model = {d_model})")


@check
def check_inverse_shift(answer) -> bool:
    """Quiz: M_3 maps PE(pos) to PE(pos + 3); which matrix maps PE(pos) to PE(pos - 3)?"""
    return choice(answer, "M_3.T",
                  {"-M_3": "−M_3 flips the sign of every feature: PE(pos)(−M_3) = −PE(pos + 3), not a row of the "
                           "table (look at what a rotation by −kω does to each pair)",
                   "M_3 @ M_3": "two shifts by 3 are one shift by 6, forwards (rotations add their angles)",
                   "no matrix": "every pair turns by the same angle whatever pos is, so turning back is one "
                                "matrix too (look at R(kω) in section 3.1)"},
                  "M_3 is a rotation, so its inverse is its transpose: M_3ᵀ = M_{−3} turns every pair back "
                  "by 3ω_i", where="section 3.1: M_k is orthogonal")


@check
def check_three_back(w_q, w_k, scores, pe: torch.Tensor, T: int = 12) -> bool:
    """Write W^Q and W^K (d_model x d_model) from the rotations M_k so that the scores
    (PE W^Q)(PE W^K)^T of query p are largest at key p - 3, and compute those scores."""
    where = "the rotation M_k and which side it turns"
    if unanswered(w_q) or unanswered(w_k) or unanswered(scores):
        return todo("not done yet: set w_q, w_k and scores")
    d_model = pe.shape[1]
    for name, w in (("w_q", w_q), ("w_k", w_k)):
        if not isinstance(w, torch.Tensor) or tuple(w.shape) != (d_model, d_model):
            shape = tuple(w.shape) if isinstance(w, torch.Tensor) else type(w).__name__
            return failed(f"{name} should be a ({d_model}, {d_model}) tensor, one row per feature, got {shape}")
    x = pe[:T].double()                                                            # (T, d_model)
    expected = (x @ w_q.double()) @ (x @ w_k.double()).T                          # (T, T): query p, key q
    if not isinstance(scores, torch.Tensor) or tuple(scores.shape) != (T, T):
        shape = tuple(scores.shape) if isinstance(scores, torch.Tensor) else type(scores).__name__
        return failed(f"scores should be ({T}, {T}), one row per query, got {shape}", "the last line")
    if not torch.allclose(scores.double(), expected, atol=1e-6):
        if torch.allclose(scores.double(), expected.T, atol=1e-6):
            return failed("scores is transposed: row p should hold query p's scores against every key",
                          "(PE W^Q)(PE W^K)ᵀ, queries first")
        return failed("scores is not (PE[:T] W^Q)(PE[:T] W^K)ᵀ for your w_q and w_k", "the last line")
    top = expected.argmax(dim=-1)                                                 # (T,): the key each query prefers
    rows = torch.arange(3, T)
    if torch.equal(top[rows], rows - 3):
        weight = torch.softmax(expected, dim=-1)[rows, rows - 3].mean().item()
        return passed(f"every query p ≥ 3 scores key p − 3 highest (softmax weight {weight:.2f} there on average): "
                      "one fixed linear map per side, the same for every position")
    if torch.equal(top[rows], rows):
        return failed("every query scores itself highest: both sides are turned by the same angle, so the "
                      "offset cancels", where)
    if torch.equal(top[: T - 3], torch.arange(3, T)):
        return failed("each query scores the key three tokens ahead (p + 3), not back", where)
    p = int((top[rows] != rows - 3).nonzero()[0]) + 3
    return failed(f"query {p} scores key {int(top[p])} highest, not {p - 3}", where)


@check
def check_wavelength(answer, d_model: int = 64, i: int = 3) -> bool:
    """Quiz: the wavelength, in positions, of pair i of a d_model-wide table."""
    value = 2 * math.pi * 10000 ** (2 * i / d_model)
    return number(answer, value,
                  f"λ_{i} = 2π · 10000^({2 * i}/{d_model}) ≈ {value:.1f} positions: pair {i} repeats after about "
                  f"{round(value)} tokens, while pair 31 takes about {2 * math.pi * 10000 ** (62 / 64):,.0f}",
                  low="too small: the wavelength is 2π/ω_i, and ω_i < 1 for i > 0",
                  high="too large: check the exponent 2i/d_model", where="section 3.3, λ_i")


def _relative_reference(table: torch.Tensor, T: int) -> torch.Tensor:
    k = (len(table) - 1) // 2
    return torch.stack([torch.stack([table[min(max(j - i, -k), k) + k] for j in range(T)]) for i in range(T)])


@check
def check_relative_bias(fn) -> bool:
    """Write ``relative_bias(table, T)``: the (T, T) matrix whose entry (i, j) is ``table`` at the offset
    j - i, clipped to [-K, K] (``table`` holds 2K + 1 numbers, offsets -K .. K)."""
    where = "relative_bias"
    table = torch.tensor([-4.0, -3.0, -2.0, -1.0, 0.5, 1.0, 2.0], dtype=torch.float64)   # K = 3, offsets -3..3
    for T in (4, 9):                                              # 4: no offset beyond K; 9: clipping needed
        ok, got = attempt(fn, table.clone(), T, where=where)
        if not ok:
            return False
        expected = _relative_reference(table, T)
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != (T, T):
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            return failed(f"relative_bias(table, {T}) should be ({T}, {T}), got {shape}", where)
        got = got.double()
        if torch.allclose(got, expected):
            continue
        if torch.allclose(got, expected.T):
            return failed("the bias of query i for key j is read at offset i − j: the table comes out mirrored "
                          "(look at which index is the query)", where)
        if T == 9:
            return failed("right for short sequences, wrong once an offset is larger than K: offsets beyond ±K "
                          "should share the end entries of the table (look at the clipping)", where)
        i, j = (got != expected).nonzero()[0].tolist()
        return failed(f"entry (query {i}, key {j}) is {got[i, j].item():g}, expected table[{j - i} + K] = "
                      f"{expected[i, j].item():g}", where)
    return passed("entry (i, j) is the table at offset j − i, clipped to ±K: every diagonal holds one number, "
                  "whatever the absolute position")


@check
def check_embedding_scale(answer, d_model: int = 512) -> bool:
    """Retrieval (lecture 04): with nn.Embedding's N(0, 1) table, how many times larger is the RMS of the
    token term E[id]·sqrt(d_model) than the position term's?"""
    value = math.sqrt(2 * d_model)
    return number(answer, value,
                  f"RMS √{d_model} for the token term against 1/√2 for the positions: √(2·{d_model}) = "
                  f"{value:g} times, so the positions would be drowned; course_lib draws E from N(0, 1/d_model)",
                  rel_tol=0.05,
                  low="too small: an N(0, 1) entry times √d_model has RMS √d_model, and a PE entry has RMS 1/√2",
                  high="too large: a PE entry has RMS 1/√2 (each pair has sin² + cos² = 1)",
                  where="lecture 04, the scale of the two terms")
