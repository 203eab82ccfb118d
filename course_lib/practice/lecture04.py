"""Checks for the practice exercises of lecture 04 (embeddings and softmax).

Each check prints one line, ``✓ ...``, ``✗ what is wrong (where to look)`` or ``○ not done yet: ...``,
and returns None, so that a check cell shows that line and nothing else.
"""

from __future__ import annotations

import math

import torch

from . import attempt, check, failed, number, passed, same_tensor, todo, unanswered

__all__ = [
    "check_cold_softmax",
    "check_doubled_logits",
    "check_dropout_scale",
    "check_embed_by_matmul",
    "check_nearest",
    "check_stable_softmax",
    "check_temperature",
    "check_tying_savings",
]


@check
def check_embed_by_matmul(fn) -> bool:
    """The student's ``embed_by_matmul(ids, table)``: one-hot rows times the table."""
    where = "embed_by_matmul"
    g = torch.Generator().manual_seed(4)
    table = torch.randn(28, 8, generator=g)                 # (V, d_model)
    ids = torch.tensor([2, 5, 8, 2, 11])                    # (T,): ids below V - 1, "the" twice
    try:
        got = fn(ids, table)
    except Exception as exc:  # the student's error, on one line
        text = (str(exc).splitlines() or [""])[0]
        if "cannot be multiplied" in text or "size mismatch" in text or "shape" in text:
            return failed("the one-hot matrix and the table do not fit together: a one-hot row needs one "
                          "entry per vocabulary token, V of them (look at how the one-hot matrix is made)", where)
        if "dtype" in text or "Long" in text or "expected" in text:
            return failed(f"your code raised {type(exc).__name__}: {text} (a one-hot matrix of integers "
                          "cannot multiply a float table: look at its dtype)", where)
        return failed(f"your code raised {type(exc).__name__}: {text}", where)
    if unanswered(got):
        return todo(f"not done yet: {where} returned {got!r}", where)
    if not same_tensor(got, table[ids], "the result", where):
        return False
    return passed("one-hot rows times E select rows of E: the same numbers as the look-up table[ids]")


@check
def check_stable_softmax(fn) -> bool:
    """The student's ``stable_softmax(z, tau)``: softmax(z / tau) over the last axis, for any logits."""
    where = "stable_softmax"
    g = torch.Generator().manual_seed(9)
    z = 3 * torch.randn(4, 6, generator=g, dtype=torch.float64)                    # (B, V): ordinary logits
    ok, got = attempt(fn, z.clone(), 1.0, where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(z.shape):
        return failed(f"stable_softmax should return a tensor of the logits' shape {tuple(z.shape)}, got "
                      f"{tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__}", where)
    got = got.to(torch.float64)
    sums = got.sum(-1)
    if not torch.allclose(sums, torch.ones_like(sums), atol=1e-6):
        return failed(f"the rows of the output sum to {sums.min().item():.3g} .. {sums.max().item():.3g}, not 1: "
                      "each row is one distribution over the V tokens (look at the axis of the sum)", where)
    if not same_tensor(got, torch.softmax(z, dim=-1), "at tau = 1 the output", where):
        return False
    sharp = fn(z.clone(), 0.5).to(torch.float64)
    if torch.allclose(sharp, torch.softmax(z * 0.5, dim=-1), atol=1e-6):
        return failed("at tau = 0.5 your distribution is flatter than at tau = 1; a small temperature must "
                      "sharpen it (look at how tau enters)", where)
    if not same_tensor(sharp, torch.softmax(z / 0.5, dim=-1), "at tau = 0.5 the output", where):
        return False
    big = torch.tensor([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -1003.0]], dtype=torch.float64)
    with torch.no_grad():
        huge = fn(big.clone(), 1.0)
    huge = huge.to(torch.float64) if isinstance(huge, torch.Tensor) else torch.full_like(big, math.nan)
    if not torch.isfinite(huge).all():
        rows = [i for i in range(2) if not torch.isfinite(huge[i]).all()]
        if rows == [1]:
            return failed("NaN for a row of logits around -1000 in a batch whose other row is around +1000: "
                          "every e^z of that row underflows to 0, and 0 / 0 (look at over which axis the "
                          "maximum is taken)", where)
        return failed("NaN or inf for logits around 1000: e^1000 overflows to inf, and inf / inf is NaN "
                      "(look at what you subtract before exp)", where)
    if not same_tensor(huge, torch.softmax(big, dim=-1), "for logits around +-1000 the output", where):
        return False
    return passed("right for ordinary logits, for tau = 0.5, and for logits of +-1000: shifting each row by its "
                  "own maximum changes nothing but keeps exp in range")


@check
def check_cold_softmax(prediction, p_cold, words) -> bool:
    """The student predicted what softmax(z / tau) becomes as tau -> 0 (the exercise cell prints nothing)."""
    choices = ("argmax", "uniform", "unchanged")
    if unanswered(prediction):
        return todo("not done yet: set tau_prediction to one of " + ", ".join(repr(c) for c in choices))
    if prediction not in choices:
        return failed(f"tau_prediction should be one of {', '.join(repr(c) for c in choices)}, got {prediction!r}")
    top = int(p_cold.argmax())
    if prediction == "uniform":
        return failed(f"at tau = 0.01 the probability of {words[top]!r} is {p_cold[top].item():.4f}: uniform "
                      "is the other end, tau -> infinity (look at what dividing by a small tau does to the gaps)")
    if prediction == "unchanged":
        return failed(f"at tau = 0.01 the probability of {words[top]!r} is {p_cold[top].item():.4f}: dividing the "
                      "logits by tau multiplies every gap between them by 1/tau, and softmax depends on the gaps")
    return passed(f"all the mass goes to the largest logit: p({words[top]}) = {p_cold[top].item():.4f} at "
                  "tau = 0.01; tau -> 0 is the argmax")


@check
def check_temperature(tau, p, words, given: float = 1.0) -> bool:
    """The student chose a temperature at which the top candidate gets at least 90 % of the mass."""
    if unanswered(tau):
        return todo("not done yet: give tau_try a number")
    try:
        tau = float(tau)
    except (TypeError, ValueError):
        return failed(f"tau_try should be a number, got {tau!r}")
    if tau == given:
        return todo(f"not done yet: tau_try is still {given:g}, the value the cell came with")
    if not tau > 0:
        return failed(f"a temperature must be positive, got {tau:g}")
    top = p[0].item()
    if top >= 0.9:
        return passed(f"tau = {tau:g} gives p({words[0]}) = {top:.2f}: below 1 the distribution sharpens, and "
                      "the order of the words never changes")
    if tau >= 1:
        return failed(f"p({words[0]}) = {top:.2f} at tau = {tau:g}: a temperature of 1 or more leaves the "
                      "distribution as it is or flattens it (look at which way tau must move)")
    return failed(f"p({words[0]}) = {top:.2f} at tau = {tau:g}: sharper than at tau = 1, not yet 0.90 "
                  "(go further the same way)")


def _neighbour_table() -> torch.Tensor:
    """(12, 6) rows: row 0 is the query; row 5 points its way but is short, row 9 is long and only
    loosely aligned, so a dot product and a cosine rank them differently."""
    g = torch.Generator().manual_seed(11)
    table = torch.randn(12, 6, generator=g, dtype=torch.float64)
    table[5] = 0.3 * (table[0] + 0.2 * torch.randn(6, generator=g, dtype=torch.float64))
    table[9] = 6.0 * (0.4 * table[0] / table[0].norm() + torch.randn(6, generator=g, dtype=torch.float64) / 3)
    return table


@check
def check_nearest(fn) -> bool:
    """The student's ``nearest(table, i, k)``: the k rows of highest cosine similarity with row i, not i."""
    where = "nearest"
    table, i, k = _neighbour_table(), 0, 3
    ok, got = attempt(fn, table.clone(), i, k, where=where)
    if not ok:
        return False
    try:
        got = [int(j) for j in (got.tolist() if isinstance(got, torch.Tensor) else got)]
    except (TypeError, ValueError):
        return failed(f"nearest should return the k row indices, got {type(got).__name__}", where)
    unit = table / table.norm(dim=-1, keepdim=True)
    cos = unit @ unit[i]
    cos[i] = -math.inf
    expected = cos.topk(k).indices.tolist()
    if got == expected:
        return passed(f"rows {expected} have the highest cosine with row {i} (itself left out): only the "
                      "direction counts, not the length")
    if len(got) != k:
        return failed(f"asked for k = {k} neighbours, got {len(got)} (look at how many you keep)", where)
    if i in got:
        return failed(f"row {i} is among its own neighbours: its cosine with itself is 1, the largest there is "
                      "(look at how the row itself is left out)", where)
    dot = table @ table[i]
    dot[i] = -math.inf
    if got == dot.topk(k).indices.tolist():
        return failed(f"row 9, long but only loosely aligned (cosine {cos[9].item():.2f}), ranks above row 5 "
                      f"(cosine {cos[5].item():.2f}): a plain dot product rewards length (look at the rows' "
                      "lengths)", where)
    if sorted(got) == sorted(expected):
        return failed(f"the right rows in the wrong order: {got}, expected {expected}, most similar first "
                      "(look at the order of the result)", where)
    return failed(f"the neighbours of row {i} are {expected} by cosine similarity, got {got} (look at the "
                  "normalization: each row divided by its own length)", where)


@check
def check_doubled_logits(answer) -> bool:
    """Quiz: z = [2, 0]; every logit is multiplied by 2: p_1 after (softmax([4, 0])[0])."""
    if unanswered(answer):
        return todo("not done yet: set doubled to a number")
    before = 1 / (1 + math.exp(-2))
    value = 1 / (1 + math.exp(-4))
    if isinstance(answer, (int, float)) and not isinstance(answer, bool) and abs(answer - before) < 5e-3:
        return failed(f"{before:.3f} is p_1 before the change: multiplying every logit by 2 is not a shift, it "
                      "doubles the gap (look at what a temperature does)", "doubled")
    return number(answer, value, f"z = [4, 0]: p_1 = e^4 / (e^4 + 1) = {value:.3f}; doubling the logits is tau = 1/2, "
                  "the same order, sharper", rel_tol=0.0, abs_tol=2e-3,
                  low="too small (the gap between the logits is now 4: look at e^4 / (e^4 + e^0))",
                  high="too large (the gap between the logits is now 4: look at e^4 / (e^4 + e^0))",
                  where="doubled")


@check
def check_tying_savings(answer) -> bool:
    """Quiz: BERT-base, V = 30,522, d_model = 768: the weights that tying the output layer saves."""
    if unanswered(answer):
        return todo("not done yet: set tied to a number")
    v, d = 30_522, 768
    value = v * d
    if answer == 2 * value:
        return failed("tying one output layer to one embedding table removes one table, not two "
                      "(look at how many tables become one)", "tied")
    if answer == value + v:
        return failed("the output layer keeps its own bias b: tying shares W only (look at what is shared)", "tied")
    return number(answer, value, f"V x d_model = 30,522 x 768 = {value:,}: about 23 M weights, a fifth of "
                  "BERT-base's 110 M", rel_tol=1e-9,
                  low="too small (look at the shape of the shared table)",
                  high="too large (look at the shape of the shared table)", where="tied")


@check
def check_dropout_scale(answer) -> bool:
    """Retrieval quiz (lecture 03): dropout with P = 0.2 in training; a kept entry of value 1 becomes?"""
    if unanswered(answer):
        return todo("not done yet: set kept to a number")
    p = 0.2
    value = 1 / (1 - p)
    if isinstance(answer, (int, float)) and not isinstance(answer, bool) and abs(answer - (1 - p)) < 1e-6:
        return failed("0.8 shrinks the kept entries; they must make up for the dropped ones so that the mean "
                      "stays 1 (look at the expected value of the output, lecture 03)", "kept")
    return number(answer, value, "1 / (1 - 0.2) = 1.25: 80 % of the entries survive, each 1.25 times as large, "
                  "so the mean stays 1 and evaluation needs no rescaling", rel_tol=1e-3,
                  low="too small (look at the expected value of the output, lecture 03)",
                  high="too large (look at the expected value of the output, lecture 03)", where="kept")
