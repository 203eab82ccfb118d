"""Wrong answers to lecture 03's checks, each with the word of its message that names the cause."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from course_lib import EncoderLayer
from practice_wrong import Wrong


def _masked_batch_norm(kind):
    def masked_batch_norm(x, key_padding_mask, eps=1e-5):
        real = torch.ones_like(key_padding_mask) if kind == "all tokens" else ~key_padding_mask
        if kind == "inverted":
            real = key_padding_mask
        if kind == "per token":
            mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
            return (x - mean) / torch.sqrt(var + eps)
        w = real.unsqueeze(-1).to(x.dtype)
        count = x.shape[0] * x.shape[1] if kind == "count all" else w.sum()
        mean = (x * w).sum(dim=(0, 1)) / count
        var = (((x - mean) * w) ** 2).sum(dim=(0, 1)) / (count - 1 if kind == "unbiased" else count)
        return (x - mean) / torch.sqrt(var + eps) * w
    return masked_batch_norm


def _dropout(kind):
    def my_dropout(x, p, training=True):
        if not training and kind != "always":
            return x
        if kind == "seeded":
            keep = (torch.rand(x.shape, generator=torch.Generator().manual_seed(0)) >= p).to(x.dtype)
        elif kind == "inverted":
            keep = (torch.rand(x.shape) < p).to(x.dtype)
        else:
            keep = (torch.rand(x.shape) >= p).to(x.dtype)
        if kind == "no scale":
            return x * keep
        if kind == "times keep":
            return x * keep * (1 - p)
        return x * keep / (1 - p)
    return my_dropout


def _swiglu(kind):
    class SwiGLUFeedForward(nn.Module):
        def __init__(self, d_model, d_ff):
            super().__init__()
            bias = kind == "biases"
            d_hidden = {"full width": d_ff, "half width": d_ff // 2}.get(kind, round(2 * d_ff / 3))
            self.w_gate = nn.Linear(d_model, d_hidden, bias=bias)
            self.w_up = nn.Linear(d_model, d_hidden, bias=bias)
            self.w_down = nn.Linear(d_hidden, d_model, bias=bias)

        def forward(self, x):
            if kind == "swapped":
                return self.w_down(F.silu(self.w_up(x)) * self.w_gate(x))
            if kind == "relu":
                return self.w_down(F.relu(self.w_gate(x)) * self.w_up(x))
            if kind == "no gate":
                return self.w_down(F.silu(self.w_up(x)))
            return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))
    return SwiGLUFeedForward


def _rms(kind):
    class MyRMSNorm(nn.Module):
        def __init__(self, d_model, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(d_model))
            if kind == "shift":
                self.bias = nn.Parameter(torch.zeros(d_model))

        def forward(self, x):
            if kind == "centred":
                x = x - x.mean(dim=-1, keepdim=True)
            if kind == "summed":
                return x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) + self.eps) * self.weight
            if kind == "eps outside":
                return x / (x.pow(2).mean(-1, keepdim=True).sqrt() + self.eps) * self.weight
            out = x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
            return out if kind == "no gain" else out * self.weight
    return MyRMSNorm


def _stream(kind):
    def stream_sizes(num_layers, norm_first, d=64, seed=0):
        torch.manual_seed(seed)
        layers = [EncoderLayer(d, 4, 4 * d, norm_first=norm_first).eval() for _ in range(num_layers)]
        x, sizes = torch.randn(8, 16, d), []
        with torch.no_grad():
            for layer in layers:
                if kind == "before":
                    sizes.append(x.norm(dim=-1).mean().item())
                x = layer(x)
                if kind == "batch axis":
                    sizes.append(x.norm(dim=0).mean().item())
                elif kind == "largest":
                    sizes.append(x.norm(dim=-1).max().item())
        return sizes
    return stream_sizes


WRONG = {
    "check_masked_batch_norm": [
        Wrong("plain BatchNorm: the padding counted", (_masked_batch_norm("all tokens"),), word="padding positions"),
        Wrong("the mask read as True = real", (_masked_batch_norm("inverted"),), word="inverted"),
        Wrong("unbiased variance", (_masked_batch_norm("unbiased"),), word="unbiased"),
        Wrong("divided by every position", (_masked_batch_norm("count all"),), word="count"),
        Wrong("per-token statistics (LayerNorm)", (_masked_batch_norm("per token"),), word="LayerNorm"),
    ],
    "check_dropout": [
        Wrong("kept entries not scaled", (_dropout("no scale"),), word="expected value"),
        Wrong("scaled by the keep probability", (_dropout("times keep"),), word="expected value"),
        Wrong("keeps with probability p", (_dropout("inverted"),), word="how the mask is drawn"),
        Wrong("drops in evaluation too", (_dropout("always"),), word="training=False"),
        Wrong("the same mask every call", (_dropout("seeded"),), word="drawn anew"),
    ],
    "check_swiglu": [
        Wrong("SiLU on the other branch", (_swiglu("swapped"),), word="gate"),
        Wrong("a ReLU gate", (_swiglu("relu"),), word="SiLU"),
        Wrong("no gating product", (_swiglu("no gate"),), word="gating"),
        Wrong("maps with biases", (_swiglu("biases"),), word="bias"),
        Wrong("the ReLU FFN's width kept: half as many parameters again", (_swiglu("full width"),),
              word="too many parameters"),
        Wrong("half the width", (_swiglu("half width"),), word="too few parameters"),
    ],
    "check_rms_norm": [
        Wrong("the mean subtracted", (_rms("centred"),), word="mean"),
        Wrong("sum of squares", (_rms("summed"),), word="sum"),
        Wrong("eps outside the root", (_rms("eps outside"),), word="eps"),
        Wrong("the gain ignored", (_rms("no gain"),), word="gain"),
        Wrong("a shift added", (_rms("shift"),), word="no shift"),
    ],
    "check_stream_sizes": [
        Wrong("measured before each layer", (_stream("before"),), word="one layer late"),
        Wrong("the norm over the batch", (_stream("batch axis"),), word="over the batch"),
        Wrong("the largest token", (_stream("largest"),), word="mean over the tokens"),
    ],
    "check_layer_norm_value": [
        Wrong("unbiased variance", (1.162,), word="d - 1"),
        Wrong("divided by the variance", (1.2,), word="too small"),
        Wrong("not normalised: the feature minus the mean", (1.5,), word="too large"),
    ],
    "check_causal_zeros": [
        Wrong("the diagonal counted", (1275,), word="diagonal"),
        Wrong("everything but the diagonal", (2450,), word="every key but"),
        Wrong("half of the map", (1250,), word="too many"),
    ],
}
