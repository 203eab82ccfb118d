"""Checks for the practice exercises of lecture 04 (embeddings and softmax).

Each check prints one line, ``✓ ...`` or ``✗ what is wrong (where to look)``, and returns None, so that
a check cell shows that line and nothing else.
"""

from __future__ import annotations


import torch

from . import check, failed, passed, same_tensor, todo, unanswered


__all__ = ["check_embed_by_matmul", "check_cold_softmax", "check_temperature"]


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
def check_cold_softmax(prediction, p_cold, words) -> bool:
    """The student predicted what softmax(z / tau) becomes as tau -> 0."""
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
        return failed("dividing the logits by tau multiplies every gap between them by 1/tau, and softmax "
                      "depends on the gaps (look at the printed probabilities)")
    return passed(f"all the mass goes to the largest logit: p({words[top]}) = {p_cold[top].item():.4f} at "
                  "tau = 0.01; tau -> 0 is the argmax")


@check
def check_temperature(tau, p, words) -> bool:
    """The student chose a temperature at which the top candidate gets at least 90 % of the mass."""
    if unanswered(tau):
        return todo("not done yet: give tau_try a number")
    try:
        tau = float(tau)
    except (TypeError, ValueError):
        return failed(f"tau_try should be a number, got {tau!r}")
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
