"""Checks for the exercise "implement the encoder from scratch" (notebooks/07_exercise).

Each of the six parts of the exercise contract has a list of *cases*: inputs and weights chosen by
the grader. A check runs in two steps that never mix:

* :func:`run_case` calls the student's code on a case's inputs (after loading the case's weights)
  and returns plain arrays. It is the only function here that calls student code.
* :func:`judge_case` compares those arrays with course_lib's reference and, when they differ, says
  *why* in words ("the heads are split the wrong way", "the residual connection is missing", ...)
  by comparing with the mistakes students make most often. It never calls student code.

In the notebook both steps run in the student's kernel (``check_attention(...)`` and friends), for
quick feedback. The autograder (``python -m course_lib.grading``) runs the first step in a sandboxed
process and the second in its own process, so nothing a submission does to this module, to torch or
to numpy changes its grade.

Each part is checked on its own: while a part is checked, the other contract names it uses
(``scaled_dot_product_attention`` inside ``MultiHeadAttention``, ``MultiHeadAttention`` and
``PositionwiseFeedForward`` inside ``EncoderLayer``, ...) are course_lib's reference versions, so a
bug in one part costs only that part.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from .attention import MultiHeadAttention as _RefMHA
from .attention import scaled_dot_product_attention as _ref_sdpa
from .encoder import Encoder as _RefEncoder
from .errors import CourseValueError
from .encoder import EncoderLayer as _RefLayer
from .feed_forward import PositionwiseFeedForward as _RefFFN
from .positional import sinusoidal_positional_encoding as _ref_pe

PARTS = ("positional_encoding", "attention", "multi_head_attention", "feed_forward", "encoder_layer", "encoder")

#: the public name each part defines (the same name course_lib exports)
NAMES = {
    "positional_encoding": "sinusoidal_positional_encoding",
    "attention": "scaled_dot_product_attention",
    "multi_head_attention": "MultiHeadAttention",
    "feed_forward": "PositionwiseFeedForward",
    "encoder_layer": "EncoderLayer",
    "encoder": "Encoder",
}

#: the parts whose names a part may use; while a part is checked these are course_lib's versions
DEPENDENCIES = {
    "positional_encoding": (),
    "attention": (),
    "multi_head_attention": ("attention",),
    "feed_forward": (),
    "encoder_layer": ("multi_head_attention", "feed_forward"),
    "encoder": ("encoder_layer", "positional_encoding"),
}

REFERENCES = {
    "positional_encoding": _ref_pe,
    "attention": _ref_sdpa,
    "multi_head_attention": _RefMHA,
    "feed_forward": _RefFFN,
    "encoder_layer": _RefLayer,
    "encoder": _RefEncoder,
}

ATOL, RTOL = 1e-4, 1e-4          # float32 maths done in a different order stays far inside this


@dataclass
class Case:
    """One call of a part, with inputs (and weights) the grader chose."""

    part: str
    name: str
    hidden: bool
    args: dict                                   # plain numbers: sizes, flags
    tensors: dict = field(default_factory=dict)  # inputs
    state: dict | None = None                    # weights to load (modules)
    _expected: dict | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return f"{self.part}, {'hidden' if self.hidden else 'visible'} case '{self.name}'"


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------

def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(g, *shape) -> torch.Tensor:
    return torch.randn(*shape, generator=g)


def _padding(lengths, t) -> torch.Tensor:
    return torch.arange(t)[None, :] >= torch.as_tensor(lengths)[:, None]       # (B, T) True = pad


def _random_mask(g, *shape) -> torch.Tensor:
    """A bool mask (True = may attend) with at least one True per row (the last axis)."""
    m = torch.rand(*shape, generator=g) < 0.6
    first = torch.randint(0, shape[-1], shape[:-1], generator=g)
    return m | torch.nn.functional.one_hot(first, shape[-1]).bool()


def _module_state(cls, seed: int, **kwargs) -> dict:
    """Weights of a reference module built with ``kwargs``; LayerNorms get non-trivial weights too."""
    torch.manual_seed(seed)
    m = cls(**kwargs)
    g = _gen(seed + 1)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("norm1.weight") or name.endswith("norm2.weight") or name.startswith("final_norm.weight"):
                p.copy_(1.0 + 0.3 * _randn(g, *p.shape))
            elif "norm" in name and name.endswith("bias"):
                p.copy_(0.2 * _randn(g, *p.shape))
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def make_cases(part: str) -> list[Case]:
    """Every case of ``part``, visible ones first. Deterministic."""
    if part not in PARTS:
        raise CourseValueError(f"part: expected one of {PARTS}, got {part!r}")
    return _CASE_MAKERS[part]()


def _cases_positional() -> list[Case]:
    sizes = [("10 positions, d_model=8", False, 10, 8), ("50 positions, d_model=16", False, 50, 16),
             ("7 positions, d_model=6", True, 7, 6), ("1 position, d_model=4", True, 1, 4),
             ("100 positions, d_model=64", True, 100, 64)]
    return [Case("positional_encoding", n, h, dict(max_len=t, d_model=d)) for n, h, t, d in sizes]


def _cases_attention() -> list[Case]:
    out = []
    g = _gen(11)
    out.append(Case("attention", "no mask, (2, 5, 8)", False, {},
                    dict(q=_randn(g, 2, 5, 8), k=_randn(g, 2, 5, 8), v=_randn(g, 2, 5, 8))))
    out.append(Case("attention", "bool mask (2, 4, 6), T_q != T_k, d_v != d_k", False, {},
                    dict(q=_randn(g, 2, 4, 8), k=_randn(g, 2, 6, 8), v=_randn(g, 2, 6, 3),
                         attn_mask=_random_mask(g, 2, 4, 6))))
    out.append(Case("attention", "d_k = 64 (the scaling matters)", False, {},
                    dict(q=_randn(g, 1, 6, 64), k=_randn(g, 1, 6, 64), v=_randn(g, 1, 6, 4))))
    # hidden: other ranks, broadcast masks, a padding-shaped mask, unbatched inputs
    lengths = torch.tensor([6, 3])
    out.append(Case("attention", "4-d (B, H, T, d_k) with a (B, 1, 1, T_k) padding mask", True, {},
                    dict(q=_randn(g, 2, 3, 6, 4), k=_randn(g, 2, 3, 6, 4), v=_randn(g, 2, 3, 6, 5),
                         attn_mask=~_padding(lengths, 6)[:, None, None, :])))
    out.append(Case("attention", "2-d inputs (T, d_k), mask (T_q, T_k)", True, {},
                    dict(q=_randn(g, 5, 16), k=_randn(g, 7, 16), v=_randn(g, 7, 2),
                         attn_mask=_random_mask(g, 5, 7))))
    out.append(Case("attention", "mask broadcast over the batch (1, T_q, T_k)", True, {},
                    dict(q=3 * _randn(g, 3, 4, 32), k=_randn(g, 3, 4, 32), v=_randn(g, 3, 4, 8),
                         attn_mask=_random_mask(g, 1, 4, 4))))
    return out


def _cases_mha() -> list[Case]:
    out = []
    specs = [  # name, hidden, d_model, heads, dropout, B, T_q, T_k, lengths (None = no mask), self-attn
        ("self-attention, d_model=16, 4 heads", False, 16, 4, 0.0, 2, 5, 5, None, True),
        ("self-attention with padding, lengths (5, 3)", False, 16, 4, 0.0, 2, 5, 5, (5, 3), True),
        ("cross-attention T_q=3, T_k=6 with padding", True, 16, 2, 0.0, 2, 3, 6, (6, 2), False),
        ("one head, d_model=8", True, 8, 1, 0.0, 2, 4, 4, (4, 1), True),
        ("8 heads, d_model=32, dropout=0.3 in eval mode", True, 32, 8, 0.3, 3, 6, 6, (6, 5, 2), True),
        ("d_model=12, 3 heads (d_k=4)", True, 12, 3, 0.0, 1, 7, 7, None, True),
    ]
    for i, (name, hidden, d, h, p, b, tq, tk, lengths, self_attn) in enumerate(specs):
        g = _gen(100 + i)
        q = _randn(g, b, tq, d)
        if self_attn:
            k = v = q
        else:
            k, v = _randn(g, b, tk, d), _randn(g, b, tk, d)
        tensors = dict(query=q, key=k, value=v)
        if lengths is not None:
            tensors["key_padding_mask"] = _padding(lengths, tk)
        state = _module_state(_RefMHA, 200 + i, d_model=d, num_heads=h, dropout=p)
        out.append(Case("multi_head_attention", name, hidden, dict(d_model=d, num_heads=h, dropout=p),
                        tensors, state))
    return out


def _cases_ffn() -> list[Case]:
    specs = [("d_model=16, d_ff=64", False, 16, 64, 0.0, (2, 5)),
             ("d_model=8, d_ff=32, dropout=0.5 in eval mode", True, 8, 32, 0.5, (3, 4)),
             ("d_model=6, d_ff=5", True, 6, 5, 0.0, (1, 9))]
    out = []
    for i, (name, hidden, d, dff, p, bt) in enumerate(specs):
        g = _gen(300 + i)
        out.append(Case("feed_forward", name, hidden, dict(d_model=d, d_ff=dff, dropout=p),
                        dict(x=2 * _randn(g, *bt, d)),
                        _module_state(_RefFFN, 310 + i, d_model=d, d_ff=dff, dropout=p)))
    return out


def _cases_layer() -> list[Case]:
    specs = [  # name, hidden, d_model, heads, d_ff, dropout, norm_first, B, T, lengths
        ("post-LN, no padding", False, 16, 4, 32, 0.0, False, 2, 5, None),
        ("post-LN, lengths (5, 3)", False, 16, 4, 32, 0.0, False, 2, 5, (5, 3)),
        ("pre-LN, lengths (6, 2, 4)", True, 16, 2, 24, 0.0, True, 3, 6, (6, 2, 4)),
        ("pre-LN, no padding, 1 head", True, 8, 1, 16, 0.0, True, 2, 4, None),
        ("post-LN, dropout=0.2 in eval mode", True, 12, 3, 20, 0.2, False, 2, 7, (7, 4)),
    ]
    out = []
    for i, (name, hidden, d, h, dff, p, nf, b, t, lengths) in enumerate(specs):
        g = _gen(400 + i)
        tensors = dict(x=_randn(g, b, t, d))
        if lengths is not None:
            tensors["key_padding_mask"] = _padding(lengths, t)
        args = dict(d_model=d, num_heads=h, d_ff=dff, dropout=p, norm_first=nf)
        out.append(Case("encoder_layer", name, hidden, args, tensors, _module_state(_RefLayer, 410 + i, **args)))
    return out


def _tokens(g, b, t, vocab, pad_id, lengths) -> torch.Tensor:
    tokens = torch.randint(0, vocab - 1, (b, t), generator=g)
    tokens = tokens + (tokens >= pad_id).long()                                  # never pad_id ...
    return tokens.masked_fill(_padding(lengths, t), pad_id)                     # ... except padding


def _cases_encoder() -> list[Case]:
    specs = [  # name, hidden, vocab, d, heads, d_ff, layers, max_len, dropout, pad_id, norm_first, B, T, lengths, explicit mask
        ("post-LN, 2 layers, padding from pad_id", False, 30, 16, 4, 32, 2, 16, 0.0, 0, False, 2, 6, (6, 4), False),
        ("pre-LN, 2 layers (final_norm)", True, 30, 16, 2, 32, 2, 16, 0.0, 0, True, 2, 5, (5, 2), False),
        ("pad_id=3, explicit key_padding_mask", True, 20, 8, 2, 16, 1, 12, 0.0, 3, False, 3, 4, (4, 3, 1), True),
        ("T = max_len, dropout=0.1 in eval mode", True, 25, 12, 3, 24, 3, 7, 0.1, 0, False, 2, 7, (7, 5), False),
    ]
    out = []
    for i, (name, hidden, vocab, d, h, dff, n, max_len, p, pad, nf, b, t, lengths, explicit) in enumerate(specs):
        g = _gen(500 + i)
        tensors = dict(tokens=_tokens(g, b, t, vocab, pad, lengths))
        if explicit:
            tensors["key_padding_mask"] = _padding(lengths, t)
        args = dict(vocab_size=vocab, d_model=d, num_heads=h, d_ff=dff, num_layers=n, max_len=max_len,
                    dropout=p, pad_id=pad, norm_first=nf)
        state = _module_state(_RefEncoder, 510 + i, **args)
        out.append(Case("encoder", name, hidden, args, tensors, state))
    return out


_CASE_MAKERS = {
    "positional_encoding": _cases_positional,
    "attention": _cases_attention,
    "multi_head_attention": _cases_mha,
    "feed_forward": _cases_ffn,
    "encoder_layer": _cases_layer,
    "encoder": _cases_encoder,
}


# --------------------------------------------------------------------------------------------
# Step 1: run the student's code (the only place that calls it)
# --------------------------------------------------------------------------------------------

class ResultError(Exception):
    """The student's code returned something that is not what the contract asks for."""


def _array(x, what: str) -> np.ndarray:
    if not isinstance(x, torch.Tensor):
        raise ResultError(f"{what}: expected a torch.Tensor, got {type(x).__name__}")
    if not (x.is_floating_point()):
        raise ResultError(f"{what}: expected a floating-point tensor, got {x.dtype}")
    return np.array(torch.Tensor.numpy(torch.Tensor.cpu(torch.Tensor.detach(x)).to(torch.float64)), dtype=np.float64)


def _pair(result, what: str):
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ResultError(f"{what}: expected a tuple (out, weights), got {type(result).__name__}"
                          + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
    return result


def _load(module, state: dict, what: str) -> dict:
    """Load the case's weights; report missing keys (extra ones, e.g. a persistent buffer, are harmless)."""
    if not isinstance(module, torch.nn.Module):
        raise ResultError(f"{what}: expected an nn.Module, got {type(module).__name__}")
    own = module.state_dict()
    missing = [k for k in state if k not in own]
    if missing:
        raise ResultError(
            f"{what}: the state_dict has no {missing[:4]}{' ...' if len(missing) > 4 else ''} "
            f"(its keys are {sorted(own)[:8]}{' ...' if len(own) > 8 else ''}); use the attribute names of "
            "the contract so the reference weights can be loaded")
    for k, v in state.items():
        if tuple(own[k].shape) != tuple(v.shape):
            raise ResultError(f"{what}: parameter '{k}' has shape {tuple(own[k].shape)}, expected {tuple(v.shape)}")
    module.load_state_dict(state, strict=False)
    return {}


def run_case(case: Case, candidate) -> dict[str, np.ndarray]:
    """Call ``candidate`` (the student's function or class) on ``case``; return its outputs as arrays.

    Exceptions raised by the student's code propagate; a result of the wrong type raises ResultError.
    """
    t = case.tensors
    what = NAMES[case.part]
    with torch.no_grad():
        if case.part == "positional_encoding":
            return {"pe": _array(candidate(case.args["max_len"], case.args["d_model"]), "the returned table")}
        if case.part == "attention":
            if "attn_mask" in t:
                res = candidate(t["q"].clone(), t["k"].clone(), t["v"].clone(), attn_mask=t["attn_mask"].clone())
            else:
                res = candidate(t["q"].clone(), t["k"].clone(), t["v"].clone())
            out, w = _pair(res, what)
            return {"out": _array(out, "out"), "weights": _array(w, "weights")}
        module = candidate(**case.args)
        _load(module, case.state, what)
        module.eval()
        if case.part == "multi_head_attention":
            kw = {"key_padding_mask": t["key_padding_mask"].clone()} if "key_padding_mask" in t else {}
            q = t["query"].clone()
            if t["key"] is t["query"]:
                res = module(q, q, q, **kw)
            else:
                res = module(q, t["key"].clone(), t["value"].clone(), **kw)
            out, w = _pair(res, "MultiHeadAttention.forward")
            return {"out": _array(out, "out"), "weights": _array(w, "weights")}
        if case.part == "feed_forward":
            return {"out": _array(module(t["x"].clone()), "output")}
        if case.part == "encoder_layer":
            kw = {"key_padding_mask": t["key_padding_mask"].clone()} if "key_padding_mask" in t else {}
            return {"out": _array(module(t["x"].clone(), **kw), "output")}
        if case.part == "encoder":
            kw = {"key_padding_mask": t["key_padding_mask"].clone()} if "key_padding_mask" in t else {}
            return {"out": _array(module(t["tokens"].clone(), **kw), "output")}
    raise ValueError(case.part)


# --------------------------------------------------------------------------------------------
# Step 2: judge (reference and the usual mistakes; never calls student code)
# --------------------------------------------------------------------------------------------

def _np(x) -> np.ndarray:
    return x.detach().to(torch.float64).numpy()


def expected(case: Case) -> dict[str, np.ndarray]:
    """course_lib's outputs for ``case`` (cached on the case)."""
    if case._expected is None:
        case._expected = {k: _np(v) for k, v in _variant(case).items()}
    return case._expected


def _sdpa(q, k, v, mask=None, scale="sqrt", axis=-1, invert=False, causal=False, d_model=None):
    d_k = q.shape[-1]
    div = {"sqrt": math.sqrt(d_k), "none": 1.0, "d_k": float(d_k),
           "sqrt_dmodel": math.sqrt(d_model or d_k)}[scale]
    s = q @ k.transpose(-2, -1) / div
    if mask is not None:
        allowed = ~mask if invert else mask
        s = s.masked_fill(~allowed, -1e9)
    if causal:
        tq, tk = s.shape[-2:]
        s = s.masked_fill(~torch.ones(tq, tk, dtype=torch.bool).tril(), -1e9)
    w = torch.softmax(s, dim=axis)
    return w @ v, w


def _mha(state, d, h, query, key, value, kpm=None, split="right", use_wo=True, scale="sqrt",
         invert=False, ignore_mask=False, causal=False, axis=-1):
    def lin(x, n):
        return F.linear(x, state[f"{n}.weight"], state.get(f"{n}.bias"))
    b, tq, tk, dk = query.shape[0], query.shape[1], key.shape[1], d // h

    # split: how (B, T, d_model) becomes (B, H, T, d_k); merge: how it comes back
    def heads(x, t):
        if split == "right":
            return x.view(b, t, h, dk).transpose(1, 2)
        if split.startswith("dk_h"):                                        # features [j*H + i] for head i
            return x.view(b, t, dk, h).permute(0, 3, 1, 2)
        return x.reshape(b, h, t, dk)                                       # a view without the transpose
    q, k, v = heads(lin(query, "w_q"), tq), heads(lin(key, "w_k"), tk), heads(lin(value, "w_v"), tk)
    mask = None if (kpm is None or ignore_mask) else ~kpm[:, None, None, :]
    out, w = _sdpa(q, k, v, mask, scale=scale, invert=invert, causal=causal, axis=axis, d_model=d)
    if split == "dk_h_both":
        out = out.permute(0, 2, 3, 1).reshape(b, tq, d)
    elif split == "view_both":
        out = out.reshape(b, tq, d)
    else:
        out = out.transpose(1, 2).reshape(b, tq, d)
    return (lin(out, "w_o") if use_wo else out), w


def _sub(state, prefix):
    return {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}


def _ffn(state, x, act=F.relu, where="middle"):
    hdn = F.linear(x, state["linear1.weight"], state["linear1.bias"])
    if where == "middle":
        hdn = act(hdn)
    y = F.linear(hdn, state["linear2.weight"], state["linear2.bias"])
    return act(y) if where == "end" else y


def _layer(state, args, x, kpm=None, norm_first=None, residual=(True, True), norm_around="standard",
           ignore_mask=False, causal=False, invert=False):
    d, h = args["d_model"], args["num_heads"]
    nf = args["norm_first"] if norm_first is None else norm_first

    def ln(y, n):
        return F.layer_norm(y, (d,), state[f"{n}.weight"], state[f"{n}.bias"], 1e-5)

    def attn(y):
        return _mha(_sub(state, "self_attn."), d, h, y, y, y, kpm, ignore_mask=ignore_mask, causal=causal,
                    invert=invert)[0]

    def ffn(y):
        return _ffn(_sub(state, "ffn."), y)
    r1, r2 = (1.0 if r else 0.0 for r in residual)
    if norm_around == "inside":                                               # x + norm(f(x))
        x = r1 * x + ln(attn(x), "norm1")
        return r2 * x + ln(ffn(x), "norm2")
    if nf:
        x = r1 * x + attn(ln(x, "norm1"))
        return r2 * x + ffn(ln(x, "norm2"))
    x = ln(r1 * x + attn(x), "norm1")
    return ln(r2 * x + ffn(x), "norm2")


def _encoder(state, args, tokens, kpm=None, scale_emb=True, pe="right", causal=False, ignore_mask=False,
             final_norm=True, norm_first=None, invert=False):
    d, pad = args["d_model"], args["pad_id"]
    nf = args["norm_first"] if norm_first is None else norm_first
    if kpm is None:
        kpm = tokens == pad
    x = F.embedding(tokens, state["embedding.weight"]) * (math.sqrt(d) if scale_emb else 1.0)
    t = tokens.shape[1]
    if pe == "right":
        x = x + _ref_pe(args["max_len"], d)[:t].double()
    elif pe == "swapped":
        x = x + _pe_variant(t, d, "swapped")
    for i in range(args["num_layers"]):
        x = _layer(_sub(state, f"layers.{i}."), args, x, kpm, norm_first=nf, ignore_mask=ignore_mask,
                   causal=causal, invert=invert)
    if nf and final_norm:
        x = F.layer_norm(x, (d,), state["final_norm.weight"], state["final_norm.bias"], 1e-5)
    return x


def _pe_variant(t, d, kind):
    pos = torch.arange(t, dtype=torch.float64)[:, None]
    pe = torch.zeros(t, d, dtype=torch.float64)
    i2 = torch.arange(0, d, 2, dtype=torch.float64)
    if kind == "swapped":
        a = pos / 10000 ** (i2 / d)
        pe[:, 0::2], pe[:, 1::2] = torch.cos(a), torch.sin(a[:, : d // 2])
    elif kind == "concat":
        a = pos / 10000 ** (i2 / d)
        pe[:, : (d + 1) // 2], pe[:, (d + 1) // 2:] = torch.sin(a), torch.cos(a[:, : d // 2])
    elif kind == "i_not_2i":                                                   # 10000^(i/d) instead of 2i/d
        a = pos / 10000 ** (torch.arange(0, (d + 1) // 2, dtype=torch.float64) / d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a[:, : d // 2])
    elif kind == "per_feature":                                                # 10000^(j/d) for every feature j
        j = torch.arange(d, dtype=torch.float64)
        a = pos / 10000 ** (j / d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(a[:, 0::2]), torch.cos(a[:, 1::2])
    elif kind == "no_pos":
        pass
    return pe


def _double(state):
    return None if state is None else {k: v.double() for k, v in state.items()}


def _variant(case: Case, **kw) -> dict[str, torch.Tensor]:
    """course_lib's result for ``case`` (no ``kw``), or the result of a known mistake (``kw``)."""
    t = {k: (v.double() if v.is_floating_point() else v) for k, v in case.tensors.items()}
    a, st = case.args, _double(case.state)
    p = case.part
    if p == "positional_encoding":
        if not kw:
            return {"pe": _ref_pe(a["max_len"], a["d_model"]).double()}
        return {"pe": _pe_variant(a["max_len"], a["d_model"], kw["kind"])}
    if p == "attention":
        if not kw:
            out, w = _ref_sdpa(t["q"], t["k"], t["v"], attn_mask=t.get("attn_mask"))
        else:
            out, w = _sdpa(t["q"], t["k"], t["v"], t.get("attn_mask"), **kw)
        return {"out": out, "weights": w}
    if p == "multi_head_attention":
        out, w = _mha(st, a["d_model"], a["num_heads"], t["query"], t["key"], t["value"],
                      t.get("key_padding_mask"), **kw)
        return {"out": out, "weights": w}
    if p == "feed_forward":
        return {"out": _ffn(st, t["x"], **kw)}
    if p == "encoder_layer":
        return {"out": _layer(st, a, t["x"], t.get("key_padding_mask"), **kw)}
    if p == "encoder":
        return {"out": _encoder(st, a, t["tokens"], t.get("key_padding_mask"), **kw)}
    raise ValueError(p)


# the usual mistakes of each part: (keyword arguments of _variant, what to tell the student)
MISTAKES = {
    "positional_encoding": [
        (dict(kind="swapped"), "sin and cos are swapped: even features (2i) take sin, odd features (2i+1) take cos."),
        (dict(kind="concat"), "the sines and cosines are in two halves; the contract interleaves them "
                              "(column 2i is sin, column 2i+1 is cos of the same frequency)."),
        (dict(kind="i_not_2i"), "the exponent uses i/d_model where the paper has 2i/d_model "
                                "(columns 2i and 2i+1 share the frequency 1 / 10000^(2i/d_model))."),
        (dict(kind="per_feature"), "each column gets its own frequency; columns 2i and 2i+1 must share "
                                   "1 / 10000^(2i/d_model)."),
        (dict(kind="no_pos"), "the table is all zeros."),
    ],
    "attention": [
        (dict(scale="none"), "the scores are not scaled: divide QK^T by sqrt(d_k) before the softmax."),
        (dict(scale="d_k"), "the scores are divided by d_k; the formula divides by sqrt(d_k)."),
        (dict(axis=-2), "the softmax runs over the queries (dim -2); each query's weights over the keys "
                        "(dim -1) must sum to 1."),
        (dict(invert=True), "the mask is inverted: attn_mask True means *may attend* "
                            "(the F.scaled_dot_product_attention convention)."),
        (dict(causal=True), "a causal mask is applied: attention here sees every key the mask allows, in both "
                            "directions."),
    ],
    "multi_head_attention": [
        *[(dict(split=s), "the heads are split the wrong way: head i takes features [i*d_k, (i+1)*d_k); "
                          "view (B, T, d_model) as (B, T, num_heads, d_k), then transpose to (B, num_heads, T, d_k), "
                          "and undo exactly that before w_o.")
          for s in ("dk_h", "dk_h_both", "view", "view_both")],
        (dict(use_wo=False), "the output projection w_o is missing (concatenate the heads, then apply w_o)."),
        (dict(scale="none"), "the scores are not scaled by 1/sqrt(d_k)."),
        (dict(scale="sqrt_dmodel"), "the scores are scaled by 1/sqrt(d_model); each head scales by 1/sqrt(d_k), "
                                    "d_k = d_model // num_heads."),
        (dict(invert=True), "the padding mask is inverted: key_padding_mask True means *padding, ignore* "
                            "(nn.MultiheadAttention's convention), the opposite of attn_mask."),
        (dict(ignore_mask=True), "key_padding_mask is ignored: padded keys must get zero weight."),
        (dict(causal=True), "a causal mask is applied: in an encoder every token attends in both directions."),
        (dict(axis=-2), "the softmax runs over the queries (dim -2) instead of the keys (dim -1)."),
    ],
    "feed_forward": [
        (dict(act=lambda x: x), "the ReLU between linear1 and linear2 is missing."),
        (dict(act=F.gelu), "the activation is GELU; the contract (and the paper) uses ReLU."),
        (dict(where="end"), "the ReLU comes after linear2; it belongs between linear1 and linear2."),
    ],
    "encoder_layer": [
        (dict(residual=(False, False)), "the residual connections are missing: add each sublayer's input to its output."),
        (dict(residual=(False, True)), "the residual connection around self-attention is missing: add its input to its output."),
        (dict(residual=(True, False)), "the residual connection around the feed-forward network is missing: add its input "
                                       "to its output."),
        (dict(norm_around="inside"), "the norm is applied to the sublayer's output before the residual "
                                     "(x + norm(f(x))); post-LN is norm(x + f(x)), pre-LN is x + f(norm(x))."),
        ("swap_norm_first", "the norm order is swapped: norm_first=False is post-LN x = norm1(x + attn(x)), "
                            "norm_first=True is pre-LN x = x + attn(norm1(x))."),
        (dict(ignore_mask=True), "key_padding_mask is not passed to self-attention."),
        (dict(invert=True), "the padding mask reaches attention inverted (True must mean padding)."),
        (dict(causal=True), "a causal mask is applied: in an encoder every token attends in both directions."),
    ],
    "encoder": [
        (dict(scale_emb=False), "the embeddings are not multiplied by sqrt(d_model) before adding the positions."),
        (dict(pe="none"), "the positional encoding is not added."),
        (dict(pe="swapped"), "the positional table has sin and cos swapped."),
        (dict(ignore_mask=True), "padding is not masked: when key_padding_mask is None use tokens == pad_id."),
        (dict(invert=True), "the padding mask is inverted (True must mean padding)."),
        (dict(causal=True), "a causal mask is applied: in an encoder every token attends in both directions."),
        (dict(final_norm=False), "final_norm is missing: with norm_first=True the output goes through a LayerNorm."),
        ("swap_norm_first", "norm_first is not passed on to the layers (or is inverted)."),
    ],
}


def _graded_rows(case: Case):
    """A bool (B, T) of query positions that are graded (padded queries are not), or None."""
    kpm = case.tensors.get("key_padding_mask")
    if case.part == "encoder":
        kpm = case.tensors["tokens"] == case.args["pad_id"] if kpm is None else kpm
        return ~kpm.numpy()
    if case.part == "encoder_layer" and kpm is not None:
        return ~kpm.numpy()
    return None


def _diff(case: Case, got: np.ndarray, want: np.ndarray, key: str) -> float:
    """Max abs difference over graded entries."""
    rows = _graded_rows(case)
    d = np.abs(got - want)
    if rows is not None:
        d = d[rows]
    return float(d.max()) if d.size else 0.0


def _close(case, got, want, key, atol=ATOL, rtol=RTOL) -> bool:
    rows = _graded_rows(case)
    g, w = got, want
    if rows is not None:
        g, w = g[rows], w[rows]
    return bool(np.all(np.abs(g - w) <= atol + rtol * np.abs(w)))


def judge_case(case: Case, outputs: dict | None, error: str | None = None) -> str | None:
    """None when ``outputs`` (from :func:`run_case`) are right, else a message for the student."""
    head = f"{case.label}: "
    if error is not None:
        return head + error
    want = expected(case)
    for key, w in want.items():
        if outputs is None or key not in outputs:
            return head + f"no '{key}' came back."
        g = outputs[key]
        if not isinstance(g, np.ndarray) or g.dtype.kind != "f":
            return head + f"'{key}' is not a floating-point tensor."
        if g.shape != w.shape:
            return head + (f"'{key}' has shape {tuple(g.shape)}, expected {tuple(w.shape)}"
                           + _shape_hint(case, key) + ".")
        if not np.all(np.isfinite(g)):
            return head + f"'{key}' contains NaN or inf (use a large negative number, or handle rows with no key)."
    if "weights" in want:
        g = outputs["weights"]
        sums = g.sum(axis=-1)
        if not np.allclose(sums, 1.0, atol=1e-4):
            i = np.unravel_index(np.argmax(np.abs(sums - 1)), sums.shape)
            hint = ""
            if np.allclose(g.sum(axis=-2), 1.0, atol=1e-4):
                hint = " (they sum to 1 over the queries: the softmax runs over the wrong axis, use dim=-1)"
            return head + f"the attention weights of each query must sum to 1 over the keys; row {tuple(int(x) for x in i)} sums to {sums[i]:.4f}{hint}."
        mask = _allowed(case)
        if mask is not None:
            leaked = np.abs(g * ~mask).max() if g.size else 0.0
            if leaked > 1e-6:
                return head + (f"keys that must be ignored get weight up to {leaked:.4f}; "
                               + ("attn_mask True = may attend, False = never attend."
                                  if case.part == "attention" else
                                  "key_padding_mask True = padding: those keys must get zero weight."))
    if all(_close(case, outputs[k], w, k) for k, w in want.items()):
        return None
    # what went wrong? compare with the usual mistakes
    for kw, msg in MISTAKES[case.part]:
        try:
            if kw == "swap_norm_first":
                if not case.args.get("norm_first") and case.part == "encoder":
                    continue
                var = _variant(case, norm_first=not case.args["norm_first"])
            else:
                var = _variant(case, **kw)
        except Exception:                                   # a mistake that does not apply to this case
            continue
        var = {k: _np(v) for k, v in var.items()}
        if all(k in var and var[k].shape == outputs[k].shape and _close(case, outputs[k], var[k], k, atol=1e-3)
               for k in want) and not all(_close(case, var[k], want[k], k) for k in want):
            return head + msg
    worst = max(want, key=lambda k: _diff(case, outputs[k], want[k], k))
    hint = ""
    if case.args.get("dropout", 0) > 0:
        hint = (" This case has dropout > 0 and runs after model.eval(): dropout must then do nothing "
                "(use nn.Dropout modules, or pass training=self.training).")
    elif case.args.get("norm_first"):
        hint = " This case uses norm_first=True (pre-LN): x = x + attn(norm1(x)), x = x + ffn(norm2(x))."
    return head + (f"'{worst}' differs from the reference by up to {_diff(case, outputs[worst], want[worst], worst):.4g} "
                   f"(tolerance {ATOL:g}).{hint}")


def _allowed(case: Case):
    t = case.tensors
    if case.part == "attention" and "attn_mask" in t:
        q, k = t["q"], t["k"]
        shape = (*torch.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])
        return t["attn_mask"].expand(shape).numpy()
    if case.part == "multi_head_attention" and "key_padding_mask" in t:
        b, tq, h = t["query"].shape[0], t["query"].shape[1], case.args["num_heads"]
        return (~t["key_padding_mask"])[:, None, None, :].expand(b, h, tq, -1).numpy()
    return None


def _shape_hint(case: Case, key: str) -> str:
    if case.part == "multi_head_attention" and key == "weights":
        return " = (B, num_heads, T_q, T_k): keep the heads as their own axis"
    if case.part == "attention":
        return " (out is (..., T_q, d_v), weights (..., T_q, T_k))"
    if case.part == "positional_encoding":
        return " = (max_len, d_model)"
    return ""


# --------------------------------------------------------------------------------------------
# Notebook-facing checks
# --------------------------------------------------------------------------------------------

def _globals_of(candidate) -> dict | None:
    if isinstance(candidate, type):
        for obj in vars(candidate).values():
            if callable(obj) and hasattr(obj, "__globals__"):
                return obj.__globals__
        return None
    return getattr(candidate, "__globals__", None)


@contextlib.contextmanager
def reference_dependencies(part: str, candidate):
    """While a part is checked, the other contract names it uses are course_lib's versions."""
    g = _globals_of(candidate)
    saved = {}
    if g is not None:
        for dep in DEPENDENCIES[part]:
            name = NAMES[dep]
            saved[name] = g.get(name, _MISSING)
            g[name] = REFERENCES[dep]
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                g.pop(name, None)
            else:
                g[name] = value


_MISSING = object()


def check(part: str, candidate: Callable[..., Any], hidden: bool = False) -> None:
    """Run the visible (or, with ``hidden=True``, the hidden) cases of ``part`` on ``candidate``.

    Raises AssertionError with a message that says what is wrong. Returns None on purpose: a test
    cell whose last line has a value would show it as an output, and nbgrader reads a number there
    as partial credit.
    """
    cases = [c for c in make_cases(part) if c.hidden == hidden]
    with reference_dependencies(part, candidate):
        for case in cases:
            try:
                outputs = run_case(case, candidate)
            except ResultError as e:
                raise AssertionError(f"{case.label}: {e}") from None
            message = judge_case(case, outputs)
            if message is not None:
                raise AssertionError(message)
    if not hidden:
        print(f"{part}: {len(cases)} visible checks passed")


def check_positional_encoding(fn, hidden: bool = False) -> None:
    """Check ``sinusoidal_positional_encoding(max_len, d_model)``."""
    check("positional_encoding", fn, hidden)


def check_attention(fn, hidden: bool = False) -> None:
    """Check ``scaled_dot_product_attention(q, k, v, attn_mask=None)``."""
    check("attention", fn, hidden)


def check_multi_head_attention(cls, hidden: bool = False) -> None:
    """Check ``MultiHeadAttention`` (its scaled_dot_product_attention is course_lib's while checked)."""
    check("multi_head_attention", cls, hidden)


def check_feed_forward(cls, hidden: bool = False) -> None:
    """Check ``PositionwiseFeedForward``."""
    check("feed_forward", cls, hidden)


def check_encoder_layer(cls, hidden: bool = False) -> None:
    """Check ``EncoderLayer`` (its MultiHeadAttention and PositionwiseFeedForward are course_lib's while checked)."""
    check("encoder_layer", cls, hidden)


def check_encoder(cls, hidden: bool = False) -> None:
    """Check ``Encoder`` (its EncoderLayer and positional table are course_lib's while checked)."""
    check("encoder", cls, hidden)
