"""Wrong answers to lecture 02's checks, each with the word of its message that names the cause."""

from __future__ import annotations

import torch

from course_lib import scaled_dot_product_attention
from practice_wrong import Wrong

QUERY = torch.tensor([1.0, 1.0, 0.0])
KEYS = {"north-east": torch.tensor([0.9, 1.1, 0.0]), "east": torch.tensor([3.0, 0.5, 0.0]),
        "up": torch.tensor([0.0, 0.2, 2.0])}


def _profile(drop=True, sign=1, reduce=torch.mean, flip=False):
    def offset_profile(attentions, max_offset):
        out = []
        for a in attentions:
            w = a[0, :, 1:-1, 1:-1] if drop else a[0]
            out.append(torch.stack([reduce(torch.diagonal(w, offset=sign * o, dim1=1, dim2=2), dim=-1)
                                    for o in range(-max_offset, max_offset + 1)], dim=-1))
        return torch.stack(out).flip(-1) if flip else torch.stack(out)
    return offset_profile


def _window(kind):
    def window_mask(T, window):
        t = torch.arange(T)
        offset = t[:, None] - t[None, :]
        if kind == "future":
            return offset.abs() < window
        if kind == "transposed":
            return ((offset >= 0) & (offset < window)).T
        if kind == "one more":
            return (offset >= 0) & (offset <= window)
        return (offset >= 0) & (offset < window)
    return window_mask


def _reach(kind):
    def reach(mask, layers):
        if kind == "one window":
            return mask
        total = torch.eye(mask.shape[0], dtype=torch.long)
        for _ in range(layers + (1 if kind == "one layer more" else 0)):
            total = (total @ mask.long()).clamp(max=1)
        if kind == "summed":
            return total.bool() | mask.T
        return total.bool()
    return reach


def _decode(kind):
    def decode_with_cache(xs, w_q, w_k, w_v):
        keys, values, outputs = [], [], []
        for x in xs:
            q = x @ w_q
            if kind == "attend first" and keys:
                out, _ = scaled_dot_product_attention(q[None], torch.stack(keys), torch.stack(values))
            elif kind == "attend first":
                out = torch.zeros(1, w_v.shape[1], dtype=xs.dtype)
            keys.append(x @ w_k)
            values.append(x @ w_v)
            if kind == "no cache":
                out, _ = scaled_dot_product_attention(q[None], keys[-1][None], values[-1][None])
            elif kind == "future":
                out, _ = scaled_dot_product_attention(q[None], xs @ w_k, xs @ w_v)
            elif kind == "swapped":
                out, _ = scaled_dot_product_attention(q[None], torch.stack(keys), torch.stack(values))
            elif kind != "attend first":
                out, _ = scaled_dot_product_attention(q[None], torch.stack(keys), torch.stack(values))
            outputs.append(out[0])
        if kind == "swapped":
            return torch.stack(outputs), torch.stack(values), torch.stack(keys)
        if kind == "last only":
            return torch.stack(outputs), keys[-1][None], values[-1][None]
        return torch.stack(outputs), torch.stack(keys), torch.stack(values)
    return decode_with_cache


WRONG = {
    "check_prediction": [
        Wrong("the best-aligned key", ("north-east", QUERY, KEYS), word="length"),
        Wrong("the key with a large third entry", ("up", QUERY, KEYS), word="largest score"),
        Wrong("a name that is not a key", ("west", QUERY, KEYS), word="not one of the keys"),
    ],
    "check_offset_profile": [
        Wrong("[CLS] and [SEP] kept", (_profile(drop=False),), word="special tokens"),
        Wrong("offset t - s instead of s - t", (_profile(sign=-1),), word="other way"),
        Wrong("columns in reverse order", (_profile(flip=True),), word="other way"),
        Wrong("summed along the diagonal", (_profile(reduce=torch.sum),), word="mean"),
    ],
    "check_window_reach": [
        Wrong("the future allowed", (_window("future"), _reach("right")), word="future"),
        Wrong("the mask transposed", (_window("transposed"), _reach("right")), word="transposed"),
        Wrong("a window of one key too many", (_window("one more"), _reach("right")), word="off by one"),
        Wrong("reach is the mask itself", (_window("right"), _reach("one window")), word="one window"),
        Wrong("one layer too many", (_window("right"), _reach("one layer more")), word="another number of layers"),
    ],
    "check_kv_cache": [
        Wrong("attends before appending", (_decode("attend first"),), word="before appending"),
        Wrong("reads only its own key", (_decode("no cache"),), word="only its own"),
        Wrong("reads the whole sequence", (_decode("future"),), word="future"),
        Wrong("keys and values swapped in the cache", (_decode("swapped"),), word="values as keys"),
        Wrong("returns only the last entry of the cache", (_decode("last only"),), word="cache should hold"),
    ],
    "check_score_divisor": [
        Wrong("sqrt(d_k) only", (8.0,), word="variance of one product"),
        Wrong("the variance, not its root", (256.0,), word="dividing by c"),
        Wrong("the standard deviation of one product, sqrt(var_q * var_k)", (2.0,), word="too small"),
    ],
    "check_unconverted_mask": [
        Wrong("the symptom", ("NaN",), word="symptom"),
        Wrong("the mask shifted", ("only the future",), word="inverted"),
        Wrong("nothing blocked", ("every key",), word="blocks"),
        Wrong("the diagonal kept", ("only itself",), word="diagonal"),
    ],
    "check_projection_share": [
        Wrong("three projections", (6 * 1000 * 256**2 / (6 * 1000 * 256**2 + 4 * 1000**2 * 256),),
              word="three projections"),
        Wrong("the share of the T x T part", (4 * 1000**2 * 256 / (8 * 1000 * 256**2 + 4 * 1000**2 * 256),),
              word="scores and the mixing"),
        Wrong("one FLOP per multiply-add", (4 * 1000 * 256**2 / (4 * 1000 * 256**2 + 4 * 1000**2 * 256),),
              word="multiply-add"),
        Wrong("the T x T part counted once, T²d", (8 * 1000 * 256**2 / (8 * 1000 * 256**2 + 1000**2 * 256),),
              word="too large"),
    ],
}
