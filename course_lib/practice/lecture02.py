"""The checks of lecture 02's practice exercises (attention).

Each check prints one line, ``✓ ...`` or ``✗ what is wrong (where to look)``, returns None (a bare call
in a cell shows only that line) and never raises.
"""

from __future__ import annotations

import math

import torch

from . import attempt, check, failed, passed, todo, unanswered

__all__ = ["check_prediction", "check_no_scaling", "check_additive_scores"]


@check
def check_prediction(prediction, q: torch.Tensor, keys: dict) -> bool:
    """Predict-then-run: which key gets the most attention from ``q``? ``prediction`` is its name."""
    names = list(keys)
    if unanswered(prediction):
        return todo("not done yet: set prediction to the name of one key", "the exercise cell")
    if prediction not in keys:
        return failed(f"{prediction!r} is not one of the keys {names}", "the exercise cell")
    dots = {name: float(q @ k) for name, k in keys.items()}
    best = max(dots, key=dots.get)
    table = ", ".join(f"{name} {dot:.2f}" for name, dot in dots.items())
    if prediction != best:
        cosine = {name: float(torch.nn.functional.cosine_similarity(q, k, dim=0)) for name, k in keys.items()}
        hint = (f"{prediction!r} points most nearly the same way as q, but the score is a dot product: "
                "it grows with the key's length too" if prediction == max(cosine, key=cosine.get)
                else f"{prediction!r} does not have the largest score")
        return failed(hint, "compute q · k for each key, as in section 2")
    return passed(f"{best!r}: the scores q · k are {table}; the largest score gets the most weight, "
                  "and a long key can beat a better-aligned short one")


@check
def check_no_scaling(scale, largest, q: torch.Tensor, K: torch.Tensor) -> bool:
    """Change-and-observe: with ``scale = 1`` (no division by sqrt(d_k)) the softmax saturates."""
    d_k = q.shape[-1]
    if not isinstance(scale, (int, float)) or not math.isfinite(scale):
        return failed(f"scale should be a number, got {scale!r}", "the line that sets scale")
    if math.isclose(scale, 1 / math.sqrt(d_k)):
        return failed("the scores are still divided by √d_k: make the change first, then run the cell",
                      "the line that sets scale")
    if not math.isclose(scale, 1.0):
        return failed(f"scale = {scale:.4g} still rescales the scores; the change is to drop the scaling "
                      "altogether", "the line that sets scale")
    if unanswered(largest):
        return todo("not done yet: write the largest weight the cell printed into largest",
                      "the last line of the exercise")
    unscaled = torch.softmax(K @ q, dim=0)
    scaled = torch.softmax(K @ q / math.sqrt(d_k), dim=0)
    if abs(float(largest) - float(unscaled.max())) > 0.006:
        return failed(f"largest = {float(largest):.3f} is not the largest weight the cell printed "
                      "after the change", "the printed line")
    return passed(f"without √d_k the largest of {K.shape[0]} weights is {float(unscaled.max()):.3f} "
                  f"(with it: {float(scaled.max()):.3f}): the softmax is nearly one-hot, saturated, "
                  "and passes almost no gradient")


def _reference_additive(q, K, W_a, U_a, v_a):
    return torch.tanh(q @ W_a + K @ U_a) @ v_a                  # (T_k,)


@check
def check_additive_scores(additive_scores) -> bool:
    """Write: Bahdanau's additive score ``e_j = tanh(q W_a + k_j U_a) · v_a`` for every key row."""
    where = "your additive_scores, against the formula above"
    try:
        g = torch.Generator().manual_seed(7)
        d_q, d_k, d_a, t_k = 5, 4, 6, 7
        q = torch.randn(d_q, generator=g, dtype=torch.float64)
        K = torch.randn(t_k, d_k, generator=g, dtype=torch.float64)
        W_a = torch.randn(d_q, d_a, generator=g, dtype=torch.float64)
        U_a = torch.randn(d_k, d_a, generator=g, dtype=torch.float64)
        v_a = torch.randn(d_a, generator=g, dtype=torch.float64)
        ok, got = attempt(additive_scores, q, K, W_a, U_a, v_a, where=where)
        if not ok:
            return False
        if not isinstance(got, torch.Tensor):
            return failed(f"the scores should be a tensor, got {type(got).__name__}", where)
        expected = _reference_additive(q, K, W_a, U_a, v_a)
        if tuple(got.shape) != (t_k,):
            return failed(f"the scores have shape {tuple(got.shape)}; expected one score per key, ({t_k},)", where)
        got = got.to(torch.float64)
        if torch.allclose(got, expected, atol=1e-6):
            return passed(f"one score per key, {t_k} keys; a small network scores each (query, key) pair, "
                          "where dot-product attention needs one product")
        if torch.allclose(got, torch.softmax(expected, dim=0), atol=1e-6):
            return failed("these are the weights (they sum to 1); the exercise asks for the scores, "
                          "before any softmax", where)
        if torch.allclose(got, (q @ W_a + K @ U_a) @ v_a, atol=1e-6):
            return failed("your scores are linear in q and k: the nonlinearity between the sum and v_a "
                          "is missing", where)
        if torch.allclose(got, torch.tanh(q @ W_a) @ v_a + torch.tanh(K @ U_a) @ v_a, atol=1e-6):
            return failed("the query and the key each go through tanh on their own; tanh must act on "
                          "their sum, so that they interact", where)
        return failed("the scores have the right shape but wrong values", where)
    except Exception as exc:
        return failed(f"the check could not run your function ({type(exc).__name__}: {exc})", where)
