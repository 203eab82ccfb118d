"""Checks for the practice exercises of lecture 03 (feed-forward, residuals, normalization, dropout).

Each check prints one line, ``✓ ...``, ``✗ what is wrong (where to look)`` or ``○ not done yet: ...``,
and returns None, so that a check cell shows that line and nothing else.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import nn

from . import attempt, check, failed, number, passed, todo, unanswered

__all__ = [
    "check_causal_zeros",
    "check_dropout",
    "check_layer_norm_value",
    "check_masked_batch_norm",
    "check_rms_norm",
    "check_stream_sizes",
    "check_swiglu",
]


def _padded_batch() -> tuple[torch.Tensor, torch.Tensor]:
    """(3, 6, 8) float64 tokens of mean about 1 and std about 3, with 6, 4 and 2 real tokens; the padding
    positions hold large values (40 and more), as a careless pad could, so that counting them shows."""
    g = torch.Generator().manual_seed(3)
    x = 3 * torch.randn(3, 6, 8, generator=g, dtype=torch.float64) + 1              # (B, T, d)
    key_padding_mask = torch.arange(6)[None, :] >= torch.tensor([6, 4, 2])[:, None]  # (B, T), True = padding
    x[key_padding_mask] = 40 + torch.rand(int(key_padding_mask.sum()), 8, generator=g, dtype=torch.float64)
    return x, key_padding_mask


def _normalised(x, over, unbiased=False, eps=1e-5, count=None):
    """x normalised per feature with the statistics of the tokens ``over`` ((B, T) bool)."""
    chosen = x[over]                                                               # (N, d)
    mean = chosen.sum(0) / (count or chosen.shape[0])
    var = chosen.var(0, unbiased=unbiased) if count is None else ((chosen - mean) ** 2).sum(0) / count
    return (x - mean) / torch.sqrt(var + eps)


@check
def check_masked_batch_norm(fn) -> bool:
    """Write: ``masked_batch_norm(x, key_padding_mask, eps=1e-5)``, BatchNorm's per-feature statistics taken over
    the real tokens only (``key_padding_mask`` True = padding), as ``nn.BatchNorm1d`` in training on those
    tokens alone, without gamma and beta; what padding positions hold is not checked."""
    where = "masked_batch_norm"
    x, pad = _padded_batch()
    ok, got = attempt(fn, x.clone(), pad.clone(), where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(x.shape):
        shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        return failed(f"expected a tensor of x's shape {tuple(x.shape)}, got {shape}", where)
    got, real = got.detach().to(torch.float64), ~pad
    expected = _normalised(x, real)
    if torch.allclose(got[real], expected[real], atol=1e-6):
        return passed("the real tokens come out as BatchNorm over the real tokens alone: the padding no longer "
                      "changes them")
    if torch.allclose(got[real], torch.zeros_like(got[real])):
        return failed("the real tokens come out as 0: key_padding_mask is True at padding, and the mask is "
                      "inverted", "what the mask selects")
    everything = torch.ones_like(pad)
    if torch.allclose(got[real], _normalised(x, everything)[real], atol=1e-6):
        return failed("the padding positions enter the statistics, as in plain BatchNorm", "what the mask selects")
    if torch.allclose(got[real], _normalised(x, pad)[real], atol=1e-6):
        return failed("the statistics come from the padding only: key_padding_mask is True at padding "
                      "(the mask is inverted)", "what the mask selects")
    if torch.allclose(got[real], _normalised(x, real, unbiased=True)[real], atol=1e-6):
        return failed(f"the variance is divided by N - 1 = {int(real.sum()) - 1} (unbiased); BatchNorm divides by "
                      f"N = {int(real.sum())} in training", "how var is computed")
    if torch.allclose(got[real], _normalised(x, real, count=x.shape[0] * x.shape[1])[real], atol=1e-6):
        return failed(f"the sums run over the real tokens but are divided by all {x.shape[0] * x.shape[1]} "
                      f"positions; the count is the {int(real.sum())} real tokens", "the count")
    per_token = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-5)
    if torch.allclose(got[real], per_token[real], atol=1e-6):
        return failed("the statistics are per token, over its features (that is LayerNorm); BatchNorm takes "
                      "one mean and one variance per feature", "the axes of the sums")
    return failed("the real tokens do not come out with mean 0 and variance 1 per feature over the real tokens",
                  where)


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


def _swiglu(x, w_gate, w_up, w_down, act=F.silu, gated=True, swap=False):
    gate, up = (x @ w_up.T, x @ w_gate.T) if swap else (x @ w_gate.T, x @ w_up.T)
    hidden = act(gate) * up if gated else act(up)
    return hidden @ w_down.T


def _relu_ffn_parameters(d_model: int, d_ff: int) -> int:
    return 2 * d_model * d_ff + d_ff + d_model                 # W_1, W_2 and their biases


@check
def check_swiglu(SwiGLUFeedForward) -> bool:
    """Write: ``SwiGLUFeedForward(d_model, d_ff)``, the gated FFN that replaces a ReLU FFN of width ``d_ff``:
    three bias-free maps ``w_gate``, ``w_up`` (d_model -> d_hidden) and ``w_down`` (d_hidden -> d_model),
    ``forward(x) = w_down(silu(w_gate(x)) * w_up(x))``, with a hidden width the student derives so that it
    has the ReLU FFN's parameters to within 1 % (about 2/3 of d_ff)."""
    where = "your SwiGLUFeedForward"
    d_model, d_ff = 6, 24
    ok, module = attempt(SwiGLUFeedForward, d_model, d_ff, where=where)
    if not ok:
        return False
    names = ("w_gate", "w_up", "w_down")
    if not any(hasattr(module, name) for name in names):
        return todo("not done yet: the module has no w_gate, w_up or w_down", "__init__")
    for name in names:
        layer = getattr(module, name, None)
        if not isinstance(layer, nn.Linear):
            return failed(f"the module has no nn.Linear called {name}", "the three maps in __init__")
        if layer.bias is not None:
            return failed(f"{name} has a bias; SwiGLU's maps have none (as in LLaMA)", "bias=False")
    d_hidden = module.w_gate.out_features
    shapes = {"w_gate": (d_hidden, d_model), "w_up": (d_hidden, d_model), "w_down": (d_model, d_hidden)}
    for name, shape in shapes.items():
        if tuple(getattr(module, name).weight.shape) != shape:
            return failed(f"{name} maps {getattr(module, name).in_features} features to "
                          f"{getattr(module, name).out_features}; with w_gate's hidden width {d_hidden} it should "
                          f"map {shape[1]} to {shape[0]}", "the sizes of the three maps")
    for big_model, big_ff in ((512, 2048), (768, 3072)):
        ok, big = attempt(SwiGLUFeedForward, big_model, big_ff, where=where)
        if not ok:
            return False
        have, want = sum(p.numel() for p in big.parameters()), _relu_ffn_parameters(big_model, big_ff)
        if abs(have - want) > 0.01 * want:
            width = big.w_gate.out_features
            return failed(f"for d_model = {big_model}, d_ff = {big_ff} your hidden width {width} gives {have:,} "
                          f"parameters, the ReLU FFN has {want:,}: {'too many' if have > want else 'too few'} "
                          "parameters", "count both modules' parameters and solve for the hidden width")
    g = torch.Generator().manual_seed(4)
    weights = {name: torch.randn(*shape, generator=g, dtype=torch.float64) / 2 for name, shape in shapes.items()}
    module = module.double()
    with torch.no_grad():
        for name, w in weights.items():
            getattr(module, name).weight.copy_(w)
    x = torch.randn(2, 3, d_model, generator=g, dtype=torch.float64)
    ok, got = attempt(module, x.clone(), where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (2, 3, d_model):
        return failed(f"forward should return a tensor of the input's shape {(2, 3, d_model)}", "the return line")
    got, w = got.detach(), [weights[n] for n in shapes]
    if torch.allclose(got, _swiglu(x, *w), atol=1e-9):
        return passed("the ReLU FFN's parameters to within 1 %, and the same outputs as the reference SwiGLU "
                      "with your three maps")
    if torch.allclose(got, _swiglu(x, *w, swap=True), atol=1e-9):
        return failed("the SiLU acts on w_up's output and w_gate's passes through: the gate is the one squashed",
                      "which branch goes through SiLU")
    if torch.allclose(got, _swiglu(x, *w, act=F.relu), atol=1e-9) or torch.allclose(got, _swiglu(x, *w, act=F.gelu),
                                                                                     atol=1e-9):
        return failed("the gate goes through another activation than SiLU (x·sigmoid(x))", "the gate's activation")
    if torch.allclose(got, _swiglu(x, *w, gated=False), atol=1e-9) or torch.allclose(
            got, _swiglu(x, *w, act=lambda t: t), atol=1e-9):
        return failed("no gating: the hidden layer should be the elementwise product silu(x W_gate) * (x W_up)",
                      "the product of the two branches")
    return failed("the maps are right, the outputs are not", "forward")


def _rms(x, weight, eps, mean_square=True, centre=False, eps_outside=False):
    if centre:
        x = x - x.mean(dim=-1, keepdim=True)
    ms = x.pow(2).mean(dim=-1, keepdim=True) if mean_square else x.pow(2).sum(dim=-1, keepdim=True)
    return (x / (ms.sqrt() + eps) if eps_outside else x / torch.sqrt(ms + eps)) * weight


@check
def check_rms_norm(MyRMSNorm) -> bool:
    """Write: ``MyRMSNorm(d_model, eps=1e-6)``, a learned gain ``weight`` of ones (no shift) and
    ``forward(x) = x / sqrt(mean(x²) + eps) * weight`` over the last axis."""
    where = "your MyRMSNorm"
    d = 8
    ok, module = attempt(MyRMSNorm, d, where=where)
    if not ok:
        return False
    weight = getattr(module, "weight", None)
    if weight is None:
        return todo("not done yet: the module has no weight", "__init__")
    if not isinstance(weight, nn.Parameter) or tuple(weight.shape) != (d,):
        return failed(f"weight should be an nn.Parameter of shape ({d},), one gain per feature", "__init__")
    if not torch.equal(weight.detach(), torch.ones(d)):
        return failed("weight should start at ones, so that a new RMSNorm only rescales", "weight's initial value")
    if any(p.numel() == d for name, p in module.named_parameters() if name != "weight"):
        return failed("the module has a second vector of parameters: RMSNorm has a gain and no shift (no bias)",
                      "the parameters in __init__")
    eps = getattr(module, "eps", 1e-6)
    g = torch.Generator().manual_seed(8)
    x = 2 * torch.randn(2, 4, d, generator=g, dtype=torch.float64) + 0.5
    x[1, 3] = 1e-4 * torch.randn(d, generator=g, dtype=torch.float64)                 # a tiny token: eps matters
    gain = 1 + torch.randn(d, generator=g, dtype=torch.float64) / 4
    module = module.double()
    with torch.no_grad():
        module.weight.copy_(gain)
    ok, got = attempt(module, x.clone(), where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(x.shape):
        return failed(f"forward should return a tensor of the input's shape {tuple(x.shape)}", "the return line")
    got = got.detach()
    if torch.allclose(got, _rms(x, gain, eps), atol=1e-7):
        return passed("the same as x / sqrt(mean(x²) + eps) * weight, a tiny token included")
    if torch.allclose(got, _rms(x, gain, eps, centre=True), atol=1e-7):
        return failed("your RMSNorm subtracts the mean first: that is LayerNorm without its shift", "the mean")
    if torch.allclose(got, _rms(x, gain, eps, mean_square=False), atol=1e-7):
        return failed("you sum the squares; the root of their mean is the size per feature", "sum against mean")
    if torch.allclose(got, _rms(x, gain, eps, eps_outside=True), atol=1e-7):
        return failed("eps is added outside the square root; on a tiny token that changes the output",
                      "where eps goes")
    if torch.allclose(got, _rms(x, torch.ones(d, dtype=torch.float64), eps), atol=1e-7):
        return failed("the output ignores weight, the learned gain", "the last multiplication")
    return failed("the output has other values than x / sqrt(mean(x²) + eps) * weight", "forward")


@functools.lru_cache(maxsize=32)
def _stream(num_layers, norm_first, d=64, seed=0, before=False, reduce="mean", axis=-1):
    from course_lib import EncoderLayer

    rng = torch.get_rng_state()                       # the lecture's random numbers are left as they were
    torch.manual_seed(seed)
    layers = [EncoderLayer(d, 4, 4 * d, norm_first=norm_first).eval() for _ in range(num_layers)]
    x = torch.randn(8, 16, d)
    sizes = []
    with torch.no_grad():
        for layer in layers:
            if before:
                sizes.append(x.norm(dim=axis).mean().item())
            x = layer(x)
            if not before:
                norms = x.norm(dim=axis)
                sizes.append(norms.mean().item() if reduce == "mean" else norms.max().item())
    torch.set_rng_state(rng)
    return tuple(sizes)


@check
def check_stream_sizes(stream_sizes) -> bool:
    """Write: ``stream_sizes(num_layers, norm_first, d=64, seed=0)``: the mean size (norm over the features) of
    the tokens after each layer of a freshly initialised stack, as the lecture describes."""
    where = "your stream_sizes"
    for norm_first in (False, True):
        rng = torch.get_rng_state()                   # your function seeds torch: the lecture's numbers stay
        try:
            ok, got = attempt(stream_sizes, 4, norm_first, where=where)
        finally:
            torch.set_rng_state(rng)
        if not ok:
            return False
        if isinstance(got, torch.Tensor):
            got = got.tolist()
        if not isinstance(got, (list, tuple)) or len(got) != 4:
            return failed("stream_sizes should return one number per layer, 4 for 4 layers", "the return line")
        try:
            got = [float(v) for v in got]
        except (TypeError, ValueError):
            return failed("stream_sizes should return numbers", "what is appended")
        want = _stream(4, norm_first)
        name = "pre-LN" if norm_first else "post-LN"
        if all(abs(a - b) <= 1e-4 * max(1.0, abs(b)) for a, b in zip(got, want)):
            continue
        if all(abs(a - b) <= 1e-4 * max(1.0, abs(b)) for a, b in zip(got, _stream(4, norm_first, before=True))):
            return failed(f"{name}: your sizes are those of each layer's input: one layer late",
                          "measure after the layer")
        if all(abs(a - b) <= 1e-4 * max(1.0, abs(b)) for a, b in zip(got, _stream(4, norm_first, axis=0))):
            return failed(f"{name}: your norm runs over the batch, not over each token's features",
                          "the axis of the norm")
        if all(abs(a - b) <= 1e-4 * max(1.0, abs(b)) for a, b in zip(got, _stream(4, norm_first, reduce="max"))):
            return failed(f"{name}: you keep the largest token's size; the mean over the tokens is asked",
                          "how the tokens' sizes are summarised")
        return failed(f"{name}: your sizes differ from the reference (same seed, same layers)",
                      "the seed, the layers' order and what is measured")
    return passed("the sizes of the stream after each layer, post-LN and pre-LN")
