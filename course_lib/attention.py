"""Scaled dot-product attention and multi-head attention.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

Mask conventions (PyTorch's, so what you learn here transfers):

* ``scaled_dot_product_attention``'s ``attn_mask`` is bool and **True = may attend**, as in
  ``torch.nn.functional.scaled_dot_product_attention``.
* ``MultiHeadAttention``'s ``allow_mask`` is the same kind of mask, **True = may attend**. It is
  deliberately *not* called ``attn_mask``: ``nn.MultiheadAttention`` and ``nn.Transformer*`` read a
  bool ``attn_mask`` the other way round, **True = not allowed**, so the same tensor under the same
  name would silently invert a causal mask. Convert with ``course_lib.allow_to_torch_attn_mask``.
* ``key_padding_mask`` is bool ``(B, T_k)`` and **True = padding (ignored)**, as in
  ``torch.nn.MultiheadAttention``.
* Hugging Face and the Annotated Transformer use masks with **1 = keep**. Convert with
  ``course_lib.hf_to_key_padding_mask`` rather than inverting by hand.

A query row that may attend to no key at all (a sequence that is all padding) gets all-zero weights
and a zero output instead of the NaN that ``softmax`` of a row of ``-inf`` gives.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .errors import (
    CourseValueError,
    broadcast_shape,
    check_attn_mask,
    check_dropout,
    check_features,
    check_key_padding_mask,
    check_positive_int,
    check_tensor,
    describe,
)
from .masks import key_padding_to_attn_mask


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 attn_mask: torch.Tensor | None = None,
                                 dropout_p: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """``softmax(q k^T / sqrt(d_k)) v``, written out step by step.

    Args:
        q: queries ``(..., T_q, d_k)``.
        k: keys ``(..., T_k, d_k)``.
        v: values ``(..., T_k, d_v)``.
        attn_mask: optional bool mask broadcastable to ``(..., T_q, T_k)``; **True = may attend**.
        dropout_p: dropout on the weights before they multiply ``v`` (training only; the returned
            weights are the ones before dropout, so their rows sum to 1).

    Returns:
        ``(out, weights)``: ``out (..., T_q, d_v)`` and ``weights (..., T_q, T_k)``.

    Shape:
        q: ``(..., T_q, d_k)``, k: ``(..., T_k, d_k)``, v: ``(..., T_k, d_v)``
        out: ``(..., T_q, d_v)``, weights: ``(..., T_q, T_k)``
    """
    _check_attention_args(q, k, v, attn_mask)
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)                              # (..., T_q, T_k)
    if attn_mask is not None:
        # The most negative finite number, not -inf: exp() of it is exactly 0 for any row that has
        # one allowed key, and a row with none stays finite (it is zeroed just below).
        scores = scores.masked_fill(~attn_mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)                                        # rows sum to 1
    if attn_mask is not None:
        weights = weights * attn_mask.any(dim=-1, keepdim=True)                   # rows with no key: 0
    dropped = F.dropout(weights, p=dropout_p) if dropout_p > 0.0 else weights
    return dropped @ v, weights                                                    # (..., T_q, d_v)


class MultiHeadAttention(nn.Module):
    """Multi-head attention: ``num_heads`` attentions of width ``d_k = d_model / num_heads`` in parallel.

    ``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O`` with
    ``head_i = Attention(Q W^Q_i, K W^K_i, V W^V_i)``. Head ``i`` uses features
    ``[i * d_k, (i + 1) * d_k)`` of each projection; the heads are concatenated in order.

    Args:
        d_model: model width (input and output features).
        num_heads: number of heads; must divide ``d_model``.
        dropout: dropout on the attention weights (training only).
        bias: whether the four projections have a bias.

    Shape:
        query: ``(B, T_q, d_model)``; key, value: ``(B, T_k, d_model)``
        key_padding_mask: bool ``(B, T_k)``, **True = padding** (as ``nn.MultiheadAttention``)
        allow_mask: bool broadcastable to ``(B, num_heads, T_q, T_k)``, **True = may attend**
        (SDPA's convention; ``nn.MultiheadAttention``'s ``attn_mask`` means the opposite)
        out: ``(B, T_q, d_model)``; weights: ``(B, num_heads, T_q, T_k)`` (None if ``need_weights=False``)
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("num_heads", num_heads)
        check_dropout(dropout)
        if d_model % num_heads != 0:
            raise CourseValueError(
                f"num_heads: expected a divisor of d_model={d_model}, got {num_heads} "
                f"({d_model} / {num_heads} = {d_model / num_heads:.3g} features per head)"
            )
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.w_q = nn.Linear(d_model, d_model, bias=bias)   # W^Q, all heads side by side
        self.w_k = nn.Linear(d_model, d_model, bias=bias)   # W^K
        self.w_v = nn.Linear(d_model, d_model, bias=bias)   # W^V
        self.w_o = nn.Linear(d_model, d_model, bias=bias)   # W^O

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, T, d_model)`` -> ``(B, num_heads, T, d_k)``: head ``i`` takes features ``[i*d_k, (i+1)*d_k)``."""
        b, t, _ = x.shape
        return x.view(b, t, self.num_heads, self.d_k).transpose(1, 2)               # (B, H, T, d_k)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, num_heads, T, d_k)`` -> ``(B, T, d_model)``, heads concatenated in order."""
        b, _, t, _ = x.shape
        return x.transpose(1, 2).reshape(b, t, self.d_model)                        # (B, T, H * d_k)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                key_padding_mask: torch.Tensor | None = None, allow_mask: torch.Tensor | None = None,
                need_weights: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        ``need_weights=True`` (the default) runs the explicit ``softmax(QK^T/sqrt(d_k))V`` and returns
        the per-head weights. ``need_weights=False`` runs PyTorch's fused
        ``F.scaled_dot_product_attention`` (the same numbers, faster, less memory) and returns
        ``(out, None)``.
        """
        _check_forward_args(self, query, key, value, key_padding_mask, allow_mask)
        mask = merge_masks(key_padding_mask, allow_mask)                             # True = may attend
        p = self.dropout if self.training else 0.0
        if not need_weights:                                                        # the one fast path
            return self.fused_forward(query, key, value, mask, p), None
        q = self.split_heads(self.w_q(query))                                       # (B, H, T_q, d_k)
        k = self.split_heads(self.w_k(key))                                         # (B, H, T_k, d_k)
        v = self.split_heads(self.w_v(value))                                       # (B, H, T_k, d_k)
        # head_i = softmax(q_i k_i^T / sqrt(d_k)) v_i, all heads at once: (B, H, T_q, d_k), (B, H, T_q, T_k)
        out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        return self.w_o(self.merge_heads(out)), weights                             # (B, T_q, d_model)

    def fused_forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                      mask: torch.Tensor | None, dropout_p: float) -> torch.Tensor:
        """``forward(..., need_weights=False)``: the same attention, without materialising the weights.

        For self-attention (``query is key is value``) the three projections run as one matrix
        product, with ``[W^Q; W^K; W^V]`` stacked (``nn.MultiheadAttention``'s ``in_proj_weight``).
        """
        if query is key and key is value:
            q, k, v = self.project_self_attention(query)                            # 3 x (B, H, T, d_k)
        else:
            q, k, v = (self.split_heads(w(x)) for w, x in ((self.w_q, query), (self.w_k, key), (self.w_v, value)))
        out = fused_attention(q, k, v, mask, dropout_p)                             # (B, H, T_q, d_k)
        return self.w_o(self.merge_heads(out))                                      # (B, T_q, d_model)

    def project_self_attention(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``x W^Q``, ``x W^K``, ``x W^V`` as one matrix product with the three weights stacked.

        The same numbers as the three ``nn.Linear`` (up to rounding), one larger GEMM instead of
        three. ``nn.MultiheadAttention`` stores this stack as its ``in_proj_weight``.
        """
        weight = torch.cat([self.w_q.weight, self.w_k.weight, self.w_v.weight])    # (3 d_model, d_model)
        bias = None if self.w_q.bias is None else torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias])
        b, t, _ = x.shape
        qkv = F.linear(x, weight, bias).view(b, t, 3, self.num_heads, self.d_k)     # (B, T, 3, H, d_k)
        return qkv.permute(2, 0, 3, 1, 4).unbind(0)                                 # 3 x (B, H, T, d_k)


def merge_masks(key_padding_mask: torch.Tensor | None, allow_mask: torch.Tensor | None) -> torch.Tensor | None:
    """One bool mask, True = may attend, from a padding mask (True = pad) and an ``allow_mask``."""
    if key_padding_mask is None:
        return allow_mask
    mask = key_padding_to_attn_mask(key_padding_mask)                               # (B, 1, 1, T_k)
    return mask if allow_mask is None else mask & allow_mask


def fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
                    dropout_p: float) -> torch.Tensor:
    """``F.scaled_dot_product_attention`` with the explicit path's rule for rows with no key (zeros)."""
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)
    has_key = mask.any(dim=-1, keepdim=True)                                        # (..., T_q, 1)
    # A row with no allowed key would be NaN in the fused kernel: let it attend everywhere, then zero it.
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key, dropout_p=dropout_p)
    return out * has_key


def _check_attention_args(q, k, v, attn_mask) -> None:
    """scaled_dot_product_attention's inputs: tensors ``(..., T, features)`` that fit together."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, t)
        if t.dim() < 2:
            raise CourseValueError(f"{name}: expected at least 2 dimensions (..., seq, features), got {describe(t)}")
    if q.shape[-1] != k.shape[-1]:
        raise CourseValueError(f"k: expected last dimension d_k={q.shape[-1]} (as q), got {describe(k)}")
    if k.shape[-2] != v.shape[-2]:
        raise CourseValueError(f"v: expected {k.shape[-2]} positions (as k), got {describe(v)}")
    batch = broadcast_shape(q.shape[:-2], k.shape[:-2])
    if batch is None:
        raise CourseValueError(f"k: expected leading dimensions broadcastable with q's {tuple(q.shape[:-2])}, "
                               f"got {describe(k)}")
    check_attn_mask(attn_mask, (*batch, q.shape[-2], k.shape[-2]))


def _check_forward_args(mha: MultiHeadAttention, query, key, value, key_padding_mask, allow_mask) -> None:
    """MultiHeadAttention.forward's inputs: (B, T, d_model) tensors of one batch, masks that fit them."""
    check_features("query", query, mha.d_model)
    check_features("key", key, mha.d_model)
    check_features("value", value, mha.d_model)
    if key.shape[0] != query.shape[0] or value.shape[0] != query.shape[0]:
        raise CourseValueError(
            f"key/value: expected batch size {query.shape[0]} (as query), "
            f"got key {describe(key)} and value {describe(value)}"
        )
    if value.shape[1] != key.shape[1]:
        raise CourseValueError(f"value: expected {key.shape[1]} positions (as key), got {describe(value)}")
    b, t_q, t_k = query.shape[0], query.shape[1], key.shape[1]
    check_key_padding_mask(key_padding_mask, b, t_k)
    check_attn_mask(allow_mask, (b, mha.num_heads, t_q, t_k), name="allow_mask")
