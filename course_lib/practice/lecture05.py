"""Checks of lecture 05's practice (positional encodings): each prints one line, never raises."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_order_prediction", "check_inverse_shift", "check_three_back", "check_probe",
           "check_relative_position_bias", "check_embedding_scale", "linear_probe_accuracy"]


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


def linear_probe_accuracy(h_train: torch.Tensor, pos_train: torch.Tensor, h_test: torch.Tensor,
                          pos_test: torch.Tensor, T: int, ridge: float = 0.0) -> float:
    """A linear probe for the position: least squares from the vectors (and a constant 1) to one-hot
    positions, fit on the training vectors; the share of test vectors whose highest score is their
    own position.

    ``ridge > 0`` standardises the features on the training set and adds ``ridge * N`` times the
    identity to the normal equations (not on the constant): vectors that nearly coincide (a layer that
    erased the position) then give a well-posed fit, the same on every CPU's maths library.

    Shape:
        h_train: ``(N, d)``; pos_train: ``(N,)`` ints in ``0 .. T-1``; h_test: ``(M, d)``; pos_test: ``(M,)``.
    """
    targets = F.one_hot(pos_train, T).to(h_train.dtype)                                   # (N, T)
    if ridge > 0:
        mean, std = h_train.mean(dim=0), h_train.std(dim=0).clamp_min(1e-6)
        h_train, h_test = (h_train - mean) / std, (h_test - mean) / std
    x = torch.cat([h_train, torch.ones(len(h_train), 1, dtype=h_train.dtype)], dim=1)     # (N, d + 1)
    x_test = torch.cat([h_test, torch.ones(len(h_test), 1, dtype=h_test.dtype)], dim=1)   # (M, d + 1)
    if ridge > 0:
        penalty = torch.diag(torch.cat([torch.full((x.shape[1] - 1,), ridge * len(x), dtype=x.dtype),
                                        torch.zeros(1, dtype=x.dtype)]))                 # not on the constant
        w = torch.linalg.solve(x.T @ x + penalty, x.T @ targets)                          # (d + 1, T)
    else:
        w = torch.linalg.lstsq(x, targets).solution                                       # (d + 1, T)
    return ((x_test @ w).argmax(dim=1) == pos_test).double().mean().item()


def _probe_data(T: int = 8, d: int = 24):
    """Vectors that carry their position weakly (a random direction per position, under noise and a
    common offset), few for training and many for testing: a probe scored on what it was fit on
    looks far better than it is."""
    g = torch.Generator().manual_seed(5)
    directions = torch.randn(T, d, generator=g, dtype=torch.float64)

    def draw(n):
        pos = torch.arange(T).repeat(n)
        return 0.5 * directions[pos] + torch.randn(len(pos), d, generator=g, dtype=torch.float64) + 3.0, pos
    return (*draw(6), *draw(50), T)


@check
def check_probe(fn) -> bool:
    """The student's ``probe_accuracy(h_train, pos_train, h_test, pos_test, T)``: fit a least-squares
    map from vectors (plus a constant) to one-hot positions on the training set, score it on the test set."""
    where = "probe_accuracy"
    h_train, pos_train, h_test, pos_test, T = _probe_data()
    ok, got = attempt(fn, h_train.clone(), pos_train.clone(), h_test.clone(), pos_test.clone(), T, where=where)
    if not ok:
        return False
    try:
        got = float(got)
    except (TypeError, ValueError):
        return failed(f"probe_accuracy should return a number, the share of test vectors placed right, got "
                      f"{type(got).__name__}", where)
    expected = linear_probe_accuracy(h_train, pos_train, h_test, pos_test, T)
    if abs(got - expected) <= 0.01:
        return passed(f"your probe places {got:.1%} of the {len(pos_test)} held-out vectors at their position, as "
                      f"the reference does (chance: {1 / T:.1%})")
    if got > 1:
        return failed(f"{got:g} is not a share between 0 and 1 (look at the last line: a mean of right / wrong)", where)
    if abs(got - linear_probe_accuracy(h_train, pos_train, h_train, pos_train, T)) <= 0.01:
        return failed(f"{got:.3f}: the probe is scored on the vectors it was fit on, which flatters it (look at "
                      "which vectors you score)", where)
    if abs(got - linear_probe_accuracy(h_test, pos_test, h_test, pos_test, T)) <= 0.01:
        return failed(f"{got:.3f}: the probe was fit on the test vectors (look at which vectors lstsq sees)", where)
    if abs(got - 1 / T) < 0.05:
        return failed(f"{got:.3f}, about chance (1/{T}): the scores and the positions are not compared along the "
                      "same axis (look at the argmax)", where)
    return failed(f"{got:.3f}, expected about {expected:.3f} on these vectors (look at the constant column of "
                  "ones and the one-hot targets)", where)


def _relative_reference(table: torch.Tensor, T: int) -> torch.Tensor:
    k = (len(table) - 1) // 2
    return torch.stack([torch.stack([table[min(max(j - i, -k), k) + k] for j in range(T)]) for i in range(T)])


@check
def check_relative_position_bias(cls) -> bool:
    """The student's ``RelativePositionBias(K)``: a learned table of 2K + 1 numbers, zero at the start;
    ``forward(scores)`` adds to entry (i, j) of the last two axes the table at offset j - i, clipped to
    [-K, K]. Checked for translation invariance: the same offset gets the same bias everywhere."""
    where = "RelativePositionBias"
    K = 3
    ok, module = attempt(cls, K, where=where)
    if not ok:
        return False
    if not isinstance(module, nn.Module):
        return failed(f"RelativePositionBias should be an nn.Module, got {type(module).__name__}", where)
    scores = torch.randn(2, 3, 9, 9, generator=torch.Generator().manual_seed(3))   # (B, h, T, T); T = 9 > K + 1
    ok, out = attempt(module.forward, scores.clone(), where=where)
    if not ok:
        return False
    params = list(module.parameters())
    if sum(p.numel() for p in params) != 2 * K + 1:
        return failed(f"with K = {K} the module should learn 2K + 1 = {2 * K + 1} numbers, it has "
                      f"{sum(p.numel() for p in params)} (look at the table: one number per offset -K .. K)", where)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(scores.shape):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        return failed(f"for scores of shape {tuple(scores.shape)} the output should have the same shape, got {shape}",
                      where)
    if not torch.allclose(out, scores):
        return failed("with a fresh (all-zero) table the scores should come out unchanged (look at how the table "
                      "starts and what you add)", where)
    (table,) = params
    with torch.no_grad():
        table.copy_(torch.tensor([-4.0, -3.0, -2.0, -1.0, 0.5, 1.0, 2.0]))
    bias = (module(torch.zeros(1, 1, 9, 9))[0, 0]).detach().double()
    expected = _relative_reference(table.detach().double(), 9)
    shifted = [torch.diagonal(bias, o).unique().numel() for o in range(-8, 9)]
    if max(shifted) > 1:
        return failed("the bias changes along a diagonal: the same offset j - i gets different numbers at different "
                      "positions, so a shift of the sentence changes the scores (look at how the offset is computed)",
                      where)
    if torch.allclose(bias, expected.T):
        return failed("the bias of query i for key j is read at offset i - j: the table comes out mirrored (look at "
                      "which index is the query)", where)
    if not torch.allclose(bias, expected):
        near = _relative_reference(table.detach().double(), 4)
        if torch.allclose(bias[:4, :4], near):
            return failed("right for offsets up to K, wrong beyond: offsets past ±K should share the end entries of "
                          "the table (look at the clipping)", where)
        i, j = (bias != expected).nonzero()[0].tolist()
        return failed(f"entry (query {i}, key {j}) gets {bias[i, j].item():g}, expected the table at offset {j - i} "
                      f"clipped to ±{K}, {expected[i, j].item():g}", where)
    module.zero_grad()
    module(torch.zeros(9, 9)).sum().backward()
    if table.grad is None:
        return failed("a loss on the output sends no gradient into the table: it cannot be learned (look at "
                      "whether the table is an nn.Parameter used in forward)", where)
    counts = torch.tensor([9 - abs(o) if abs(o) < K else 0 for o in range(-K, K + 1)], dtype=torch.float32)
    counts[0] = counts[-1] = sum(9 - o for o in range(K, 9))
    if not torch.allclose(table.grad, counts):
        return failed(f"the table's gradient is {table.grad.tolist()}, expected the number of (i, j) pairs at each "
                      f"offset, {counts.tolist()} (look at the lookup)", where)
    return passed(f"every offset j - i gets one number wherever it occurs, clipped at ±{K}, added to scores of any "
                  "leading shape, and a loss reaches the table")


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
