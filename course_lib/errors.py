"""Errors and argument checks shared by course_lib.

Bad input raises a ``ValueError``/``TypeError`` subclass whose message names the argument, what was
expected and what came, e.g.::

    key_padding_mask: expected bool of shape (2, 5), got torch.int64 of shape (2, 6)

The checks are plain ``if ...: raise`` statements, never ``assert`` (gone under ``python -O``).
"""

from __future__ import annotations

import torch


class CourseValueError(ValueError):
    """A value has the right type but the wrong size, range or shape."""


class CourseTypeError(TypeError):
    """A value has the wrong type or dtype."""


def describe(x) -> str:
    """A short description of ``x`` for error messages: dtype and shape for tensors."""
    if isinstance(x, torch.Tensor):
        return f"{x.dtype} of shape {tuple(x.shape)}"
    return f"{type(x).__name__} {x!r}"


def check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CourseTypeError(f"{name}: expected a positive int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise CourseValueError(f"{name}: expected a positive int, got {value}")


def check_dropout(value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CourseTypeError(f"dropout: expected a float in [0, 1), got {type(value).__name__} {value!r}")
    if not 0.0 <= value < 1.0:
        raise CourseValueError(f"dropout: expected a float in [0, 1), got {value}")


def check_tensor(name: str, x) -> None:
    if not isinstance(x, torch.Tensor):
        raise CourseTypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")


def check_features(name: str, x, d_model: int) -> None:
    """``x`` must be a floating tensor (B, T, d_model)."""
    check_tensor(name, x)
    if not x.is_floating_point():
        raise CourseTypeError(f"{name}: expected a floating-point tensor, got {describe(x)}")
    if x.dim() != 3 or x.shape[-1] != d_model:
        raise CourseValueError(
            f"{name}: expected shape (batch, seq, {d_model}), got {describe(x)}"
        )


def check_last_dim(name: str, x, d_model: int) -> None:
    """``x`` must be a floating tensor ``(..., d_model)``: any leading axes, as ``nn.Linear`` takes."""
    check_tensor(name, x)
    if not x.is_floating_point():
        raise CourseTypeError(f"{name}: expected a floating-point tensor, got {describe(x)}")
    if x.dim() == 0 or x.shape[-1] != d_model:
        raise CourseValueError(
            f"{name}: expected shape (..., {d_model}), e.g. (batch, seq, {d_model}), got {describe(x)}"
        )


def check_key_padding_mask(mask, batch: int, seq: int, name: str = "key_padding_mask") -> None:
    """A key padding mask is bool (batch, seq) with True = padding."""
    if mask is None:
        return
    check_tensor(name, mask)
    if mask.dtype != torch.bool:
        raise CourseTypeError(
            f"{name}: expected bool of shape ({batch}, {seq}) with True = padding, got {describe(mask)} "
            "(an integer mask is ambiguous: Hugging Face's 1 = keep or 1 = pad? "
            "convert with course_lib.hf_to_key_padding_mask or `mask.bool()` explicitly)"
        )
    if tuple(mask.shape) != (batch, seq):
        raise CourseValueError(f"{name}: expected bool of shape ({batch}, {seq}), got {describe(mask)}")


def check_attn_mask(mask, target_shape: tuple, name: str = "attn_mask") -> None:
    """A bool ``attn_mask`` (True = may attend) must broadcast to ``target_shape``."""
    if mask is None:
        return
    check_tensor(name, mask)
    if mask.dtype != torch.bool:
        raise CourseTypeError(
            f"{name}: expected bool with True = may attend, broadcastable to {tuple(target_shape)}, "
            f"got {describe(mask)}"
        )
    try:
        shape = torch.broadcast_shapes(tuple(mask.shape), tuple(target_shape))
    except RuntimeError:
        shape = None
    if shape != tuple(target_shape):
        raise CourseValueError(
            f"{name}: expected a bool mask broadcastable to {tuple(target_shape)}, got {describe(mask)}"
        )
