"""Checks for the practice exercises of lecture 03 (feed-forward, residuals, normalization, dropout).

Each check prints one line, ``✓ ...``, ``✗ what is wrong (where to look)`` or ``○ not done yet: ...``,
and returns None, so that a check cell shows that line and nothing else.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from . import attempt, check, failed, number, passed, todo, unanswered

__all__ = [
    "check_causal_zeros",
    "check_dropout",
    "check_ffn_cost",
    "check_layer_norm",
    "check_layer_norm_value",
    "check_pre_ln_block",
]


def _layer_norm_input() -> torch.Tensor:
    """(2, 5, 16) float64: tokens of std about 3 and mean about 1, and one token (batch 1, position 4)
    whose features barely vary (variance about 1e-6), where eps matters."""
    g = torch.Generator().manual_seed(3)
    x = 3 * torch.randn(2, 5, 16, generator=g, dtype=torch.float64) + 1           # (B, T, d_model)
    x[1, 4] = 0.5 + 1e-3 * torch.randn(16, generator=g, dtype=torch.float64)
    return x


@check
def check_layer_norm(fn) -> bool:
    """The student's ``my_layer_norm(x, eps)`` against ``F.layer_norm`` without gamma and beta."""
    where = "my_layer_norm"
    x = _layer_norm_input()
    ok, got = attempt(fn, x.clone(), where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor):
        return failed(f"my_layer_norm should return a tensor, got {type(got).__name__}", where)
    if tuple(got.shape) != tuple(x.shape):
        return failed(f"the output has shape {tuple(got.shape)}, expected the input's {tuple(x.shape)} "
                      "(look at the shapes of mean and var: one per token, kept as an axis of size 1)", where)
    got = got.to(torch.float64)
    expected = F.layer_norm(x, (16,), eps=1e-5)
    if torch.allclose(got, expected, atol=1e-6):
        return passed("the same numbers as F.layer_norm, the flat token included")
    d, eps = x.shape[-1], 1e-5
    mean, biased = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
    centred = x - mean
    if torch.allclose(got, centred / torch.sqrt(x.var(-1, keepdim=True) + eps), atol=1e-6):
        return failed(f"the variance is divided by d - 1 = {d - 1} (the unbiased estimate); LayerNorm "
                      f"divides by d = {d} (look at how you compute var)", where)
    if torch.allclose(got, centred / (biased + eps), atol=1e-6):
        return failed("the output is divided by the variance, a squared size; the tokens do not come out "
                      "with standard deviation 1 (look at the last line)", where)
    if torch.allclose(got, centred, atol=1e-6):
        return failed("the mean is removed but the size is not normalised (look at the last line)", where)
    # eps outside the root: right everywhere except where the variance is as small as eps
    quiet = (1, 4)                                                                 # the nearly constant token
    ratio = (got[quiet].norm() / expected[quiet].norm()).item()
    loud = torch.ones(x.shape[:2], dtype=torch.bool)
    loud[quiet] = False
    if (torch.allclose(got[loud], expected[loud], atol=1e-4)
            and not torch.allclose(got[quiet], expected[quiet], atol=1e-3)):
        return failed(f"right for ordinary tokens, but a token whose features barely vary (variance 1e-6) comes "
                      f"out {ratio:.2g} times as large as F.layer_norm's: eps does not act where LayerNorm "
                      "puts it (look at where eps enters the denominator)", where)
    for axis in range(x.dim() - 1):
        m, v = x.mean(axis, keepdim=True), x.var(axis, keepdim=True, unbiased=False)
        if torch.allclose(got, (x - m) / torch.sqrt(v + eps), atol=1e-6):
            return failed(f"the statistics are taken over axis {axis}; LayerNorm takes them over the last "
                          "axis, one token's features (look at dim)", where)
    means, stds = got[loud].mean(-1), got[loud].std(-1, unbiased=False)
    if not torch.allclose(means, torch.zeros_like(means), atol=1e-5):
        return failed("the tokens of the output do not have mean 0 over their features (look at mean)", where)
    return failed(f"each token has mean 0 but a standard deviation of {stds.mean().item():.3g}, not 1 "
                  "(look at var and the division)", where)


@check
def check_dropout(fn) -> bool:
    """The student's ``my_dropout(x, p, training)``: inverted dropout with a Bernoulli mask."""
    where = "my_dropout"
    p, n = 0.2, 200_000
    ones = torch.ones(n, dtype=torch.float64)
    with torch.random.fork_rng():                    # the lecture's random numbers stay as they were
        torch.manual_seed(5)
        ok, out = attempt(fn, ones.clone(), p, True, where=where)
        if not ok:
            return False
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != (n,):
            return failed(f"my_dropout should return a tensor of the input's shape ({n},), got "
                          f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}", where)
        out = out.to(torch.float64)
        dropped = (out == 0).double().mean().item()
        kept = out[out != 0]
        if abs(dropped - p) > 0.01:
            return failed(f"in training {dropped:.1%} of the entries are zeroed, expected p = {p:.0%} "
                          "(look at how the mask is drawn)", where)
        values = kept.unique()
        if values.numel() != 1:
            return failed(f"on a tensor of ones the kept entries take {values.numel()} different values; "
                          "every kept entry should be scaled by the same factor (look at the scaling)", where)
        if abs(values.item() - 1 / (1 - p)) > 1e-9:
            return failed(f"at p = {p} the kept entries are {values.item():.4g} and the mean of the output is "
                          f"{out.mean().item():.3f}, not about 1: the expected value is not kept "
                          "(look at what the kept entries are multiplied by)", where)
        again = fn(ones.clone(), p, True)
        if isinstance(again, torch.Tensor) and torch.equal(again.to(torch.float64), out):
            return failed("two calls in training drop exactly the same entries: the mask must be drawn anew "
                          "for every call (look at where the random numbers come from)", where)
        g = torch.Generator().manual_seed(6)
        x = torch.randn(4, 50, generator=g, dtype=torch.float64)
        mixed = fn(x.clone(), p, True).to(torch.float64)
        if not torch.allclose(mixed[mixed != 0], x[mixed != 0] / (1 - p), atol=1e-9):
            return failed("on a tensor of varied values the kept entries are not x / (1 - p) "
                          "(look at what the mask multiplies)", where)
        ok, in_eval = attempt(fn, x.clone(), p, False, where=where)
        if not ok:
            return False
    if not isinstance(in_eval, torch.Tensor) or tuple(in_eval.shape) != tuple(x.shape):
        return failed("in evaluation (training=False) my_dropout should return a tensor of x's shape", where)
    if not torch.equal(in_eval.to(torch.float64), x):
        return failed("in evaluation dropout must return x unchanged: nothing zeroed, nothing rescaled "
                      "(look at the training=False case)", where)
    return passed(f"{dropped:.1%} zeroed at p = {p}, the rest scaled as nn.Dropout scales them, and nothing "
                  "changed in evaluation")


class _Mask(nn.Module):
    """A dropout stand-in with a fixed mask (so the check is deterministic): zeroes the entries where
    the mask is 0 and scales the others by 1/0.9, like dropout with P = 0.1 in training."""

    def __init__(self, shape, seed: int = 8):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("mask", (torch.rand(shape, generator=g) > 0.1).double() / 0.9, persistent=False)

    def forward(self, h):
        return h * self.mask


@check
def check_pre_ln_block(fn) -> bool:
    """The student's ``pre_ln_block(x, sublayer, norm, dropout)``: x + dropout(sublayer(norm(x)))."""
    where = "pre_ln_block"
    g = torch.Generator().manual_seed(7)
    d = 8
    x = 2 * torch.randn(2, 5, d, generator=g, dtype=torch.float64) + 0.5          # (B, T, d_model)
    norm = nn.LayerNorm(d).double()
    sublayer = nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, d)).double()
    with torch.no_grad():                                                           # weights from g, not the global RNG
        for param in [*norm.parameters(), *sublayer.parameters()]:
            param.copy_(torch.randn(param.shape, generator=g, dtype=torch.float64) * 0.5 + (param.dim() == 1) * 0.3)
    drop = _Mask(x.shape)
    ok, got = attempt(fn, x.clone(), sublayer, norm, drop, where=where)
    if not ok:
        return False
    with torch.no_grad():
        expected = x + drop(sublayer(norm(x)))
        if not isinstance(got, torch.Tensor):
            return failed(f"pre_ln_block should return a tensor, got {type(got).__name__}", where)
        got = got.detach().to(torch.float64)
        if tuple(got.shape) != tuple(x.shape):
            return failed(f"the block's output has shape {tuple(got.shape)}, expected x's {tuple(x.shape)}", where)
        if torch.allclose(got, expected, atol=1e-9):
            return passed("the same output as the reference block, with every part in its place")
        wrong = {
            "post": norm(x + drop(sublayer(x))),
            "post_pre": norm(x + drop(sublayer(norm(x)))),
            "normed_residual": norm(x) + drop(sublayer(norm(x))),
            "no_residual": drop(sublayer(norm(x))),
            "no_dropout": x + sublayer(norm(x)),
            "dropout_outside": drop(x + sublayer(norm(x))),
            "dropout_input": x + sublayer(norm(drop(x))),
            "norm_output": x + drop(norm(sublayer(x))),
        }
        if torch.allclose(got, wrong["post"], atol=1e-9) or torch.allclose(got, wrong["post_pre"], atol=1e-9):
            return failed("the residual sum goes through the norm, so the path from output to input is not an "
                          "identity: that is post-LN's order (look at what norm is applied to)", where)
        if torch.allclose(got, wrong["normed_residual"], atol=1e-9):
            return failed("the residual adds the normalised x, not x: with a sublayer that outputs zeros the "
                          "block would change its input (look at which x is added back)", where)
        if torch.allclose(got, wrong["no_residual"], atol=1e-9):
            return failed("the output is the sublayer's branch alone: x itself is never added back "
                          "(look at the last line)", where)
        if torch.allclose(got, wrong["no_dropout"], atol=1e-9):
            return failed("dropout is never applied: the check's dropout zeroes a tenth of the entries, and none "
                          "of yours are (look at the sublayer's output)", where)
        if torch.allclose(got, wrong["dropout_outside"], atol=1e-9):
            return failed("dropout acts on the whole sum, so entries of x itself are zeroed: the residual path "
                          "is not an identity any more (look at where dropout is applied)", where)
        if torch.allclose(got, wrong["dropout_input"], atol=1e-9):
            return failed("dropout acts on the block's input; the paper drops the sublayer's output, before "
                          "the sum (look at where dropout is applied)", where)
        if torch.allclose(got, wrong["norm_output"], atol=1e-9):
            return failed("the norm acts on the sublayer's output; pre-LN normalises the sublayer's input "
                          "(look at what norm is applied to)", where)
        zero_branch = fn(x.clone(), lambda h: torch.zeros_like(h), norm, drop)
        if isinstance(zero_branch, torch.Tensor) and not torch.allclose(zero_branch.detach().double(), x, atol=1e-9):
            return failed("with a sublayer that outputs zeros your block does not return x: the residual path "
                          "is not an identity (look at what is added to what)", where)
    return failed("the output differs from x + Dropout(Sublayer(LN(x))) (use each of the four parts once, in "
                  "the order of the pre-LN formula)", where)


def _ffn_reference(d_model: int, d_ff: int, T: int) -> tuple[int, int]:
    """Parameters of PositionwiseFeedForward(d_model, d_ff) and FlopCounterMode's FLOPs on (1, T, d_model)."""
    from torch.utils.flop_counter import FlopCounterMode

    from ..feed_forward import PositionwiseFeedForward
    from ..utils import count_parameters

    ffn = PositionwiseFeedForward(d_model, d_ff)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        ffn(torch.zeros(1, T, d_model))
    return count_parameters(ffn), counter.get_total_flops()


@check
def check_ffn_cost(fn) -> bool:
    """Write: ``ffn_cost(d_model, d_ff, T) -> (parameters, flops)`` of one position-wise FFN on T tokens."""
    where = "your ffn_cost"
    pair = []
    for T in (5, 50):                                  # the same sizes, two lengths
        ok, got = attempt(fn, 8, 32, T, where=where)
        if not ok:
            return False
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            return failed(f"expected two numbers, (parameters, flops), got {got!r}", "the return line")
        if any(unanswered(v) for v in got):
            return todo("not done yet: set parameters and flops", where)
        pair.append(got)
    if pair[0][0] != pair[1][0]:
        return failed("your parameter count changes with T", "what T has to do with the weights")
    if pair[0][1] == pair[1][1]:
        return failed("your FLOPs do not grow with T", "how many tokens go through the products")
    for d_model, d_ff, T in ((8, 32, 5), (16, 48, 5), (16, 48, 40)):
        ok, got = attempt(fn, d_model, d_ff, T, where=where)
        if not ok:
            return False
        params, flops = got
        want_params, want_flops = _ffn_reference(d_model, d_ff, T)
        size = f"d_model = {d_model}, d_ff = {d_ff}"
        if params != want_params:
            if params == 2 * d_model * d_ff:
                return failed(f"for {size}: {params:,} parameters counts W1 and W2 only", "the biases")
            return failed(f"for {size}: {params:,} parameters, count_parameters finds "
                          f"{'more' if want_params > params else 'fewer'}", "the shapes of W1, b1, W2, b2")
        if flops != want_flops:
            if flops * 2 == want_flops:
                return failed(f"for {size}, T = {T}: half the FLOPs FlopCounterMode counts",
                              "how many FLOPs a multiply-add is, or how many products there are")
            return failed(f"for {size}, T = {T}: {flops:,} FLOPs, FlopCounterMode counts "
                          f"{'more' if want_flops > flops else 'fewer'}", "the two matrix products")
    return passed("the parameters of PositionwiseFeedForward and the FLOPs of FlopCounterMode, for three sizes")


@check
def check_layer_norm_value(answer) -> bool:
    """Quiz: LayerNorm (gamma 1, beta 0, eps ignored) of the token [1, 2, 3, 4]: its last feature."""
    if unanswered(answer):
        return todo("not done yet: set last_feature to a number")
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    value = ((x[-1] - x.mean()) / x.std(unbiased=False)).item()
    unbiased = ((x[-1] - x.mean()) / x.std(unbiased=True)).item()
    if isinstance(answer, (int, float)) and abs(answer - unbiased) < 5e-3:
        return failed(f"{unbiased:.3f} divides the variance by d - 1 = 3; LayerNorm divides by d = 4 "
                      "(look at how the variance is averaged)")
    return number(answer, value, f"mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, so "
                  f"(4 - 2.5) / √1.25 = {value:.3f}", rel_tol=0.0, abs_tol=2e-3,
                  low="too small (look at the mean and the standard deviation of the four features)",
                  high="too large (look at the mean and the standard deviation of the four features)",
                  where="last_feature")


@check
def check_causal_zeros(answer) -> bool:
    """Retrieval quiz (lecture 02): the weights a causal mask sets to exactly 0 in one head's map, T = 50."""
    t = 50
    value = t * (t - 1) // 2
    if unanswered(answer):
        return todo("not done yet: set causal_zeros to a number")
    if answer == t * (t + 1) // 2:
        return failed(f"{answer:,} counts the diagonal too, where a token attends to itself",
                      "which keys query t may attend to, lecture 02 section 7")
    if answer == t * t - t:
        return failed(f"{answer:,} blocks every key but the query's own", "which keys query t may attend to")
    return number(answer, value, f"{t} · {t - 1} / 2 = {value:,} of the {t * t:,} weights, the keys after each query",
                  rel_tol=0.0, abs_tol=0.5,
                  low="too few: query t may not attend to any key after t",
                  high="too many: query t may attend to every key up to t, itself included",
                  where="lecture 02, section 7", name="causal_zeros")
