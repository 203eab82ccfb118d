"""Checks for the practice exercises of lecture 03 (feed-forward, residuals, normalization, dropout).

Each check prints one line, ``✓ ...`` or ``✗ what is wrong (where to look)``, and returns None, so that
a check cell shows that line and nothing else.
"""

from __future__ import annotations


import torch
import torch.nn.functional as F

from . import attempt, check, failed, passed, todo, unanswered


__all__ = ["check_residual_prediction", "check_layer_norm", "check_eval_mode"]

CHOICES = ("x", "zeros", "2x")


@check
def check_residual_prediction(prediction, residual_out, x) -> bool:
    """The student predicted what ``x + sublayer(x)`` is when the sublayer outputs zeros."""
    if unanswered(prediction):
        return todo("not done yet: set prediction to one of " + ", ".join(repr(c) for c in CHOICES))
    if prediction not in CHOICES:
        return failed(f"prediction should be one of {', '.join(repr(c) for c in CHOICES)}, got {prediction!r}")
    try:
        is_identity = torch.equal(residual_out, x)
    except Exception:  # a changed cell: report, never raise
        return failed("residual_out is not a tensor like x_res (run the exercise cell as given)")
    if not is_identity:
        return failed("residual_out is not x_res any more (run the exercise cell as it was given)")
    if prediction == "zeros":
        return failed("zeros is what the sublayer returns, not the residual block "
                      "(look at what the sublayer's output is added to)")
    if prediction == "2x":
        return failed("the input is added once, to the sublayer's output (look at what that output is here)")
    return passed("x + 0 = x: a residual block whose sublayer outputs zeros is the identity, so its "
                  "gradient passes straight through")


@check
def check_layer_norm(fn) -> bool:
    """The student's ``my_layer_norm(x, eps)`` against ``F.layer_norm`` without gamma and beta."""
    where = "my_layer_norm"
    g = torch.Generator().manual_seed(3)
    x = 3 * torch.randn(2, 5, 16, generator=g, dtype=torch.float64) + 1        # (B, T, d_model)
    ok, got = attempt(fn, x.clone(), where=where)
    if not ok:
        return False
    expected = F.layer_norm(x, (16,), eps=1e-5)
    if not isinstance(got, torch.Tensor):
        return failed(f"my_layer_norm should return a tensor, got {type(got).__name__}", where)
    if tuple(got.shape) != tuple(x.shape):
        return failed(f"the output has shape {tuple(got.shape)}, expected the input's {tuple(x.shape)} "
                      "(keep the reduced axis: keepdim)", where)
    got = got.to(torch.float64)
    if torch.allclose(got, expected, atol=1e-6):
        return passed("one mean and one variance per token, over its d_model features: "
                      "the same numbers as F.layer_norm")
    d = x.shape[-1]
    mean, biased = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
    if torch.allclose(got, (x - mean) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5), atol=1e-6):
        return failed(f"the variance is divided by d - 1 = {d - 1} (the unbiased estimate); LayerNorm "
                      f"divides by d = {d} (look at how you compute var)", where)
    if torch.allclose(got, (x - mean) / (biased + 1e-5), atol=1e-6):
        return failed("the output is divided by the variance; divide by the standard deviation "
                      "(look at the last line)", where)
    if torch.allclose(got, x - mean, atol=1e-6):
        return failed("the mean is removed but the size is not normalised (look at the last line)", where)
    for axis in range(x.dim() - 1):
        m, v = x.mean(axis, keepdim=True), x.var(axis, keepdim=True, unbiased=False)
        if torch.allclose(got, (x - m) / torch.sqrt(v + 1e-5), atol=1e-6):
            return failed(f"the statistics are taken over axis {axis}; LayerNorm takes them over the last "
                          "axis, one token's features (look at dim)", where)
    means, stds = got.mean(-1), got.std(-1, unbiased=False)
    if not torch.allclose(means, torch.zeros_like(means), atol=1e-5):
        return failed("the tokens of the output do not have mean 0 over their features (look at mean)", where)
    return failed(f"each token has mean 0 but a standard deviation of {stds.mean().item():.3g}, not 1 "
                  "(look at var and the division)", where)


@check
def check_eval_mode(layer, x, out) -> bool:
    """The student switched a dropout layer to evaluation mode and ran ``out = layer(x)``."""
    try:
        training, identical = bool(layer.training), torch.equal(out, x)
        zeros = int((out == 0).sum())
    except Exception:  # a changed cell: report, never raise
        return failed("drop_demo, drop_in or drop_out is not what the exercise cell makes (run it as given)")
    if training:
        return failed(f"the layer is still in training mode: {zeros} of {x.numel()} entries are zeroed and "
                      "the others scaled (look at the line that sets the mode)")
    if not identical:
        return failed("the layer is in evaluation mode but drop_out differs from drop_in: was it computed "
                      "after the mode was set? (run the whole cell)")
    return passed("in evaluation mode dropout is the identity: nothing zeroed, nothing rescaled")
