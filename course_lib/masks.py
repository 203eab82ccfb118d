"""Masks, and converters between the conventions you will meet.

==================================  ==========  ==============================================
where                               dtype       meaning
==================================  ==========  ==============================================
``nn.MultiheadAttention``,          bool        ``key_padding_mask``: **True = padding** (ignore)
``nn.TransformerEncoder``
(``src_key_padding_mask``),
course_lib ``key_padding_mask``
``F.scaled_dot_product_attention``  bool        ``attn_mask``: **True = may attend**
``attn_mask``, course_lib
``scaled_dot_product_attention``'s
``attn_mask`` and
``MultiHeadAttention``'s
``allow_mask``
``nn.MultiheadAttention``,          bool        ``attn_mask``: **True = NOT allowed**, the
``nn.Transformer*`` (``mask``,                  opposite of SDPA's ``attn_mask`` under the
``src_mask``)                                   same name
Hugging Face ``attention_mask``,    int (0/1)   **1 = keep** (a real token), 0 = padding
the Annotated Transformer           bool        **True = keep** (``src != pad``)
==================================  ==========  ==============================================

A *float* mask is added to the scores in every library: 0 = attend, ``-inf`` = blocked.

Use these helpers instead of inverting masks by hand: an inverted mask does not crash, it silently
attends to padding, or lets a decoder see the future. That is why course_lib's
``MultiHeadAttention`` calls its mask ``allow_mask``, not ``attn_mask``: copied to
``nn.MultiheadAttention`` under torch's name, a causal mask would be read upside down; pass
``allow_to_torch_attn_mask(allow_mask)`` there instead.
"""

from __future__ import annotations

import torch

from .errors import CourseTypeError, CourseValueError, check_bool_2d, check_positive_int, check_tensor, describe


def padding_mask_from_lengths(lengths, max_len: int | None = None) -> torch.Tensor:
    """A ``key_padding_mask`` (bool ``(B, T)``, **True = padding**) from sequence lengths.

    Args:
        lengths: ``(B,)`` ints (a tensor or a list): the number of real tokens of each sequence.
        max_len: ``T``; defaults to ``max(lengths)``.

    Example: ``padding_mask_from_lengths([3, 1])`` is ``[[F, F, F], [F, T, T]]``.
    """
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or lengths.is_floating_point() or lengths.dtype == torch.bool:
        raise CourseTypeError(f"lengths: expected a 1-D sequence of ints, got {describe(lengths)}")
    if len(lengths) and int(lengths.min()) < 0:
        raise CourseValueError(f"lengths: expected non-negative lengths, got {lengths.tolist()}")
    longest = int(lengths.max()) if len(lengths) else 0
    if max_len is None:
        max_len = longest
    elif max_len < longest:
        raise CourseValueError(f"max_len: expected at least the longest length {longest}, got {max_len}")
    positions = torch.arange(max_len, device=lengths.device)                      # (T,)
    return positions[None, :] >= lengths[:, None]                                 # (B, T)


def causal_mask(size: int, device=None) -> torch.Tensor:
    """A decoder's mask, bool ``(size, size)``, **True = may attend**: position t sees 0..t.

    This is the convention of ``F.scaled_dot_product_attention``'s ``attn_mask`` and of
    course_lib's ``allow_mask``. ``nn.MultiheadAttention`` wants the opposite:
    pass it ``allow_to_torch_attn_mask(causal_mask(size))``. An encoder does not use a causal mask:
    every token attends in both directions.
    """
    check_positive_int("size", size)
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


def key_padding_to_attn_mask(key_padding_mask: torch.Tensor) -> torch.Tensor:
    """bool ``(B, T)`` True = padding -> bool ``(B, 1, 1, T)`` **True = may attend** (SDPA's convention),
    broadcastable over heads and queries."""
    check_bool_2d("key_padding_mask", key_padding_mask)
    return ~key_padding_mask[:, None, None, :]


def hf_to_key_padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Hugging Face's ``attention_mask`` (1 = keep, 0 = padding) -> bool ``(B, T)`` **True = padding**."""
    check_tensor("attention_mask", attention_mask)
    if attention_mask.dim() != 2:
        raise CourseValueError(f"attention_mask: expected shape (batch, seq), got {describe(attention_mask)}")
    if attention_mask.dtype == torch.bool:
        raise CourseTypeError(
            "attention_mask: expected Hugging Face's integer mask (1 = keep, 0 = pad), got torch.bool; "
            "a bool mask is already a key_padding_mask or its inverse: say which explicitly")
    values = torch.unique(attention_mask)
    if not bool(((values == 0) | (values == 1)).all()):
        raise CourseValueError(f"attention_mask: expected only 0 and 1, got values {values.tolist()}")
    return attention_mask == 0


def key_padding_to_hf(key_padding_mask: torch.Tensor) -> torch.Tensor:
    """bool ``(B, T)`` True = padding -> Hugging Face's ``attention_mask``: long, **1 = keep**, 0 = padding."""
    check_bool_2d("key_padding_mask", key_padding_mask)
    return (~key_padding_mask).long()


def allow_to_torch_attn_mask(allow_mask: torch.Tensor) -> torch.Tensor:
    """course_lib's ``allow_mask`` (and SDPA's ``attn_mask``), bool **True = may attend** -> the bool
    ``attn_mask`` of ``nn.MultiheadAttention`` and ``nn.Transformer*``, **True = not allowed**."""
    _check_bool("allow_mask", allow_mask)
    return ~allow_mask


def torch_attn_mask_to_allow(attn_mask: torch.Tensor) -> torch.Tensor:
    """The bool ``attn_mask`` of ``nn.MultiheadAttention``, **True = not allowed** -> course_lib's
    ``allow_mask``, **True = may attend** (SDPA's convention)."""
    _check_bool("attn_mask", attn_mask)
    return ~attn_mask


def _check_bool(name: str, mask) -> None:
    check_tensor(name, mask)
    if mask.dtype != torch.bool:
        raise CourseTypeError(f"{name}: expected a bool mask, got {describe(mask)}; a float mask is added to "
                              "the scores (0 = attend, -inf = blocked) and means the same in every library")
