"""Dropout graded by what it does, whatever random stream draws its mask.

A case in training mode (dropout p > 0) cannot expect the reference's mask: ``nn.Dropout``,
``F.dropout`` and a hand-made Bernoulli mask draw different numbers from the same seed. So the judge
recovers the mask from the student's output and checks what dropout must do:

* it acts where the part puts it (the output is the reference's computation with some entries of that
  one tensor zeroed);
* the kept entries are scaled by exactly 1/(1-p);
* the share of zeroed entries is p, within 4 standard deviations of the binomial count;
* (the eval-mode families check that it is the identity after ``model.eval()``.)

The training cases are built so that the mask can be read back: for multi-head attention and the
feed-forward network the layers after dropout are invertible (``d_k >= T_k``, ``d_ff <= d_model``),
so a least-squares solve gives the dropped tensor; for the layer and the encoder, ``d_model = 4`` and
the sublayers whose own dropout would blur the picture output constants (zero ``w_v`` and
``linear2.weight``), so every one of the 2⁴ masks of a position can be tried. Nothing here calls
student code: it reads the outputs the harness sent back.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .harness import Case
from .reference import reference_module

P_TRAIN = 0.25           # the rate of every training case: a confusion of p and 1-p shows in the count
TOL = 2e-4

#: where each part's dropout acts (what rung 1 says when the output does not fit it)
WHERE = {"multi_head_attention": "on the attention weights, where they multiply v",
         "feed_forward": "on the hidden layer, between the activation and linear2",
         "encoder_layer": "on each sublayer's output (dropout1 after self-attention, dropout2 after the "
                          "feed-forward network), before the residual sum",
         "encoder": "on embedding · √d_model + the positions, before the first layer"}


def _fits(got: torch.Tensor, ref: torch.Tensor, scale: float) -> bool:
    """Every entry of ``got`` is 0 or ``scale * ref``."""
    tol = TOL * (1 + ref.abs() * scale)
    return bool(((got.abs() <= tol) | ((got - scale * ref).abs() <= tol)).all())


def _read(got: torch.Tensor, ref: torch.Tensor, p: float):
    """(kind, detail) of ``got`` against dropout of ``ref``: kind "ok", "missing", "scale", "rate", or
    None when ``got`` is not ``ref`` with entries zeroed and the others scaled by one factor."""
    informative = ref.abs() > 1e-3
    dropped = (got.abs() <= TOL * (1 + ref.abs())) & informative
    kept = informative & ~dropped
    ratios = got[kept] / ref[kept]
    factor = float(ratios.median()) if ratios.numel() else 1.0 / (1.0 - p)
    if not _fits(got, ref, factor):
        return None, None
    return _counted(int(dropped.sum()), int(informative.sum()), factor, p)


def _counted(k: int, n: int, factor: float, p: float):
    if k == 0 and abs(factor - 1.0) < 1e-3:
        return "missing", None
    if abs(factor - 1.0 / (1.0 - p)) > 1e-3 * factor:
        return "scale", factor
    if n and abs(k - n * p) > 4 * math.sqrt(n * p * (1 - p)) + 1:
        return "rate", k / n
    return "ok", None


def _binary_masks(d: int) -> torch.Tensor:
    """Every 0/1 vector of length ``d``: (2^d, d), float64."""
    bits = torch.arange(2 ** d)[:, None] >> torch.arange(d)[None, :]
    return (bits & 1).double()


def _best(candidates: torch.Tensor, out: torch.Tensor):
    """``candidates`` (B, T, K..., d) against ``out`` (B, T, d): (fits, index of the best candidate per
    position, flattened over K...)."""
    b, t, d = out.shape
    flat = candidates.reshape(b, t, -1, d)
    err = (flat - out[:, :, None, :]).abs().amax(-1)                          # (B, T, K)
    best = err.argmin(-1)
    tol = TOL * (1 + out.abs().amax(-1))
    return bool((err.gather(-1, best[..., None])[..., 0] <= tol).all()), best


# ------------------------------------------------------------------ each part

def _message(kind: str, detail, part: str, what: str = "") -> tuple[str, str]:
    where = WHERE[part]
    if kind == "missing":
        return "dropout_missing", (f"in training mode (dropout > 0) nothing is dropped{what}: the output equals the "
                                   f"eval-mode output; dropout acts {where}.")
    if kind == "scale":
        factor = "" if detail is None else f" (by {detail:.4g})"
        return "dropout_not_scaled", ("in training mode the dropped entries are zeroed, but the kept ones are not "
                                      f"scaled as dropout scales them{factor}{what}; look at your dropout's "
                                      "scaling.")
    if kind == "rate":
        share = "" if detail is None else f" ({detail:.0%} of the entries)"
        return "dropout_wrong_rate", (f"in training mode dropout zeroes too many or too few entries{share}{what}; "
                                      "look at the probability your mask uses.")
    return "dropout_misplaced", (f"in training mode the output is not the eval-mode computation with dropout acting "
                                 f"{where}{what}.")


def _place(part: str, label: str) -> tuple[str, str]:
    return "dropout_misplaced", (f"in training mode your dropout acts {label}; the part puts it {WHERE[part]}.")


def judge(case: Case, outputs: dict, hidden: bool = False) -> tuple[str, str] | None:
    """None when the outputs of a training-mode case fit dropout where the part puts it, else
    (mistake id, rung-1 message). ``hidden``: no numbers in the message."""
    with torch.no_grad():
        found = _JUDGES[case.part](case, {k: torch.from_numpy(np.asarray(v, dtype=np.float64))
                                          for k, v in outputs.items()})
    if found is None:
        return None
    if hidden:
        mistake, _ = found
        if mistake == "dropout_misplaced" and "acts " in found[1] and "the part puts it" in found[1]:
            return found                                                           # names a place, no number
        return mistake, _message({"dropout_missing": "missing", "dropout_not_scaled": "scale",
                                  "dropout_wrong_rate": "rate"}.get(mistake, "misplaced"), None, case.part)[1]
    return found


def _feed_forward(case: Case, got: dict):
    m = reference_module(case)
    x = case.inputs["x"].double()
    p = case.kwargs["dropout"]
    hidden = m.activation(m.linear1(x))                                         # (B, T, d_ff)
    w2, b2 = m.linear2.weight, m.linear2.bias                                   # (d_model, d_ff)
    out = got["out"]
    rec = torch.linalg.lstsq(w2, (out - b2).reshape(-1, out.shape[-1]).T).solution.T.reshape(hidden.shape)
    if (rec @ w2.T + b2 - out).abs().max() <= TOL * (1 + out.abs().max()):
        kind, detail = _read(rec, hidden, p)
        if kind == "ok":
            return None
        if kind is not None:
            return _message(kind, detail, case.part)
    kind, _ = _read(out, m(x), p)
    if kind in ("ok", "scale", "rate"):
        return _place(case.part, "on linear2's output")
    return _message("misplaced", None, case.part)


def _multi_head_attention(case: Case, got: dict):
    m = reference_module(case)
    t = {k: (v.double() if v.is_floating_point() else v) for k, v in case.inputs.items()}
    query, key, value = t["query"], t.get("key", t["query"]), t.get("value", t["query"])
    kpm = {"key_padding_mask": t["key_padding_mask"]} if "key_padding_mask" in t else {}
    p = case.kwargs["dropout"]
    out_eval, weights = m(query, key, value, **kpm)
    if not torch.allclose(got["weights"], weights, atol=1e-4, rtol=1e-4):
        kind, _ = _read(got["weights"], weights, p)
        if kind in ("ok", "scale", "rate"):
            return "weights_after_dropout", ("in training mode (dropout > 0) the weights you return have zeroed "
                                             "entries and rows that do not sum to 1; look at which weights you "
                                             "return.")
        return "values_differ", "in training mode the weights you return differ from those of eval mode."
    v = m.split_heads(m.w_v(value))                                             # (B, H, T_k, d_k)
    out = got["out"]
    concat = torch.linalg.lstsq(m.w_o.weight, (out - m.w_o.bias).reshape(-1, out.shape[-1]).T).solution.T
    heads = m.split_heads(concat.reshape(out.shape))                            # (B, H, T_q, d_k)
    rec = torch.linalg.lstsq(v.transpose(-2, -1), heads.transpose(-2, -1)).solution.transpose(-2, -1)
    if (rec @ v - heads).abs().max() <= TOL * (1 + heads.abs().max()):
        kind, detail = _read(rec, weights, p)
        if kind == "ok":
            return None
        if kind is not None:
            return _message(kind, detail, case.part)
    kind, _ = _read(out, out_eval, p)
    if kind in ("ok", "scale", "rate"):
        return _place(case.part, "on the output (after w_o)")
    return _message("misplaced", None, case.part)


def _layer_candidates(m, x, c1, c2, masks1: torch.Tensor, masks2: torch.Tensor, on_sum: bool = False) -> torch.Tensor:
    """Every output the layer can give, per position, for every pair of masks (B, T, K1, K2, d): dropout1
    (``masks1``, (K1, d), entries 0 or the scale) on the self-attention output ``c1`` and dropout2
    (``masks2``) on the feed-forward output ``c2`` (the case's sublayers output constants), or
    (``on_sum``) each on the residual sum instead."""
    xk = x[:, :, None, :]
    if m.norm_first:
        if on_sum:
            y1 = (xk + c1) * masks1                                             # (B, T, K1, d)
            return (y1[:, :, :, None, :] + c2) * masks2[None, :, :]
        y1 = xk + masks1 * c1
        return y1[:, :, :, None, :] + masks2[None, :, :] * c2
    y1 = m.norm1((xk + c1) * masks1 if on_sum else xk + masks1 * c1)
    y2 = (y1[:, :, :, None, :] + c2) * masks2 if on_sum else y1[:, :, :, None, :] + masks2[None, :, :] * c2
    return m.norm2(y2)


def _encoder_layer(case: Case, got: dict):
    m = reference_module(case)
    x = case.inputs["x"].double()
    p = case.kwargs["dropout"]
    c1, c2 = m.self_attn.w_o.bias, m.ffn.linear2.bias                           # what the sublayers output here
    d = x.shape[-1]
    out = got["out"]
    binary, ones, s = _binary_masks(d), torch.ones(1, d, dtype=torch.float64), 1.0 / (1.0 - p)
    fits, best = _best(_layer_candidates(m, x, c1, c2, binary * s, binary * s), out)
    if fits:
        k = 2 ** d
        m1, m2 = binary[best // k], binary[best % k]                            # (B, T, d) each, 1 = kept
        kind, detail = _counted(int((m1 == 0).sum() + (m2 == 0).sum()), 2 * m1.numel(), s, p)
        return None if kind == "ok" else _message(kind, detail, case.part)
    for masks1, masks2, what in ((ones, binary * s, " by dropout1 (the self-attention output)"),
                                 (binary * s, ones, " by dropout2 (the feed-forward output)"), (ones, ones, "")):
        if _best(_layer_candidates(m, x, c1, c2, masks1, masks2), out)[0]:
            return _message("missing", None, case.part, what)
    if _best(_layer_candidates(m, x, c1, c2, binary, binary), out)[0]:
        return _message("scale", None, case.part)
    if _best(_layer_candidates(m, x, c1, c2, binary * s, binary * s, on_sum=True), out)[0]:
        return _place(case.part, "on the residual sum (x + the sublayer's output)")
    return _message("misplaced", None, case.part)


def _encoder(case: Case, got: dict):
    m = reference_module(case)
    tokens = case.inputs["tokens"]
    p = case.kwargs["dropout"]
    emb = m.embedding(tokens) * math.sqrt(m.d_model)                            # (B, T, d_model)
    pe = m.pe[: tokens.shape[1]].double()
    masks = _binary_masks(emb.shape[-1])
    out = got["out"]
    for scale in (1.0 / (1.0 - p), 1.0):
        fits, best = _best(m.final_norm((emb + pe)[:, :, None, :] * masks * scale), out)
        if not fits:
            continue
        kept = masks[best]
        if scale == 1.0:
            return _message("missing" if bool((kept == 1).all()) else "scale", None, case.part)
        kind, detail = _counted(int((kept == 0).sum()), kept.numel(), scale, p)
        return None if kind == "ok" else _message(kind, detail, case.part)
    if _best(m.final_norm(emb[:, :, None, :] * masks / (1.0 - p) + pe[:, None, :]), out)[0]:
        return _place(case.part, "on the embeddings before the positions are added")
    return _message("misplaced", None, case.part)


_JUDGES = {"feed_forward": _feed_forward, "multi_head_attention": _multi_head_attention,
           "encoder_layer": _encoder_layer, "encoder": _encoder}
