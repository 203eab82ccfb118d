"""Checks of lecture 05's practice (positional encodings): each prints one line, never raises."""

from __future__ import annotations

import math

import torch

from . import attempt, check, failed, passed, todo, unanswered

__all__ = ["check_order_prediction", "check_dot_by_distance", "check_narrow_table"]


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
def check_narrow_table(d_model) -> bool:
    """Change ``d_model`` until a position at least 10 away looks like position 0: the normalised dot
    product PE(0)·PE(Δ) / (d_model/2) above 0.9 for some Δ in 10..400."""
    if unanswered(d_model):
        return todo("not done yet: set narrow")
    if not isinstance(d_model, int) or d_model < 2 or d_model % 2:
        return failed(f"narrow should be an even number of features, at least 2, got {d_model!r}")
    from ..positional import sinusoidal_positional_encoding
    table = sinusoidal_positional_encoding(401, d_model).double()
    similarity = table[0] @ table[10:].T / (d_model / 2)                          # Δ = 10 .. 400
    best, at = similarity.max().item(), similarity.argmax().item() + 10
    if best <= 0.9:
        return failed(f"with d_model = {d_model} the most similar far position (Δ = {at}) is only "
                      f"{best:.2f} like position 0: the table still has enough frequencies", "section 3.2")
    return passed(f"with d_model = {d_model}, position {at} is {best:.2f} like position 0: with few "
                  "frequencies the waves almost line up again far away")
