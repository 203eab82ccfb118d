"""Rotary position embeddings (RoPE; Su et al. 2021, "RoFormer"), a "going further".

Instead of adding a position vector to the token embedding, RoPE *rotates* the queries and keys
of attention. Features are taken in pairs ``(x_{2i}, x_{2i+1})``; at position ``m`` pair ``i`` is
rotated by the angle ``m * theta_i`` with ``theta_i = base^(-2i / d_head)``:

    x'_{2i}   = x_{2i} cos(m theta_i) - x_{2i+1} sin(m theta_i)
    x'_{2i+1} = x_{2i} sin(m theta_i) + x_{2i+1} cos(m theta_i)

A rotation keeps lengths, and ``R(m)^T R(n) = R(n - m)``, so the attention score
``(R(m) q) . (R(n) k) = q . R(n - m) k`` depends on the two positions only through their offset.

Layouts: ``"interleaved"`` pairs neighbouring features ``(0, 1), (2, 3), ...`` as in the paper;
``"half"`` pairs feature ``i`` with ``i + d_head/2`` (GPT-NeoX's and Hugging Face's ``rotate_half``).
The two are the same rotation with the features listed in another order.
"""

from __future__ import annotations

import torch
from torch import nn

from .errors import (
    CourseValueError,
    broadcast_shape,
    check_choice,
    check_float,
    check_floating,
    check_int,
    check_length,
    check_positive_int,
    check_tensor,
    describe,
)

_LAYOUTS = ("interleaved", "half")


def _rotate_pairs(x: torch.Tensor, layout: str) -> torch.Tensor:
    """Each pair ``(a, b)`` -> ``(-b, a)``: a quarter turn."""
    if layout == "interleaved":
        pairs = x.unflatten(-1, (-1, 2))  # (..., T, d_head/2, 2)
        return torch.stack((-pairs[..., 1], pairs[..., 0]), dim=-1).flatten(-2)  # (..., T, d_head)
    first, second = x.chunk(2, dim=-1)  # (..., T, d_head/2) each
    return torch.cat((-second, first), dim=-1)  # (..., T, d_head)


def rotary_tables(max_len: int, d_head: int, base: float = 10000.0, layout: str = "interleaved"):
    """The ``cos`` and ``sin`` of every angle ``m * theta_i``, repeated for both members of a pair.

    Shape:
        returns ``(cos, sin)``, each ``(max_len, d_head)`` float32.
    """
    check_positive_int("max_len", max_len)
    check_positive_int("d_head", d_head)
    if d_head % 2:
        raise CourseValueError(f"d_head: expected an even number (features are rotated in pairs), got {d_head}")
    check_choice("layout", layout, _LAYOUTS)
    theta = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)  # (d_head/2,)
    angles = torch.arange(max_len, dtype=torch.float64)[:, None] * theta  # (max_len, d_head/2)
    if layout == "interleaved":
        angles = angles.repeat_interleave(2, dim=-1)  # (max_len, d_head): t0 t0 t1 t1 ...
    else:
        angles = torch.cat((angles, angles), dim=-1)  # (max_len, d_head): t0 t1 ... t0 t1 ...
    return angles.cos().float(), angles.sin().float()


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str = "interleaved") -> torch.Tensor:
    """Rotate the feature pairs of ``x`` by the angles whose ``cos``/``sin`` are given.

    ``x * cos + rotate_pairs(x) * sin``, where ``rotate_pairs`` maps each pair ``(a, b)`` to
    ``(-b, a)``; ``cos``/``sin`` come from :func:`.rotary_tables` (rows for the positions of ``x``).

    Shape:
        x: ``(..., T, d_head)``, e.g. ``(B, H, T, d_head)``; cos, sin: broadcastable to it,
        usually ``(T, d_head)``; output: the shape of ``x``.
    """
    _check_apply_args(x, cos, sin, layout)
    return x * cos + _rotate_pairs(x, layout) * sin  # (..., T, d_head)


class RotaryEmbedding(nn.Module):
    """Rotate queries or keys by their position (RoPE); apply it to both before ``q @ k^T``.

    Args:
        d_head: features per head (even: they are rotated in pairs).
        max_len: the longest ``offset + T`` supported.
        base: ``theta_i = base^(-2i / d_head)``; 10000 as in the sinusoidal encoding.
        layout: ``"interleaved"`` (the paper's pairs) or ``"half"`` (Hugging Face's ``rotate_half``).

    Attributes:
        cos, sin: non-persistent float32 buffers ``(max_len, d_head)`` (not in the ``state_dict``).

    Shape:
        x: ``(..., T, d_head)``, e.g. ``(B, H, T, d_head)``; output: the same shape.
    """

    def __init__(self, d_head: int, max_len: int = 2048, base: float = 10000.0, layout: str = "interleaved") -> None:
        super().__init__()
        check_float("base", base, low=1, low_open=True)
        cos, sin = rotary_tables(max_len, d_head, base, layout)                 # checks the sizes and layout
        self.d_head, self.max_len, self.base, self.layout = d_head, max_len, float(base), layout
        self.register_buffer("cos", cos, persistent=False)  # (max_len, d_head)
        self.register_buffer("sin", sin, persistent=False)  # (max_len, d_head)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Rotate ``x[..., t, :]`` as the token at position ``offset + t``."""
        _check_forward_args(self, x, offset)
        T = x.shape[-2]
        cos = self.cos[offset : offset + T].to(x.dtype)  # (T, d_head)
        sin = self.sin[offset : offset + T].to(x.dtype)  # (T, d_head)
        return apply_rotary(x, cos, sin, self.layout)

    def extra_repr(self) -> str:
        return f"d_head={self.d_head}, max_len={self.max_len}, base={self.base}, layout={self.layout!r}"


def _check_apply_args(x, cos, sin, layout) -> None:
    """apply_rotary's inputs: ``x (..., T, d_head)`` with d_head even, tables that broadcast to it."""
    check_tensor("x", x)
    check_choice("layout", layout, _LAYOUTS)
    if x.dim() < 2 or x.shape[-1] % 2:
        raise CourseValueError(f"x: expected shape (..., T, d_head) with d_head even, got {describe(x)}")
    for name, t in (("cos", cos), ("sin", sin)):
        check_tensor(name, t)
        if broadcast_shape(t.shape, x.shape) is None:
            raise CourseValueError(
                f"{name}: expected a table broadcastable to x's shape {tuple(x.shape)}, got {describe(t)}"
            )


def _check_forward_args(rope: RotaryEmbedding, x, offset) -> None:
    """RotaryEmbedding.forward's inputs: floating ``x (..., T, d_head)``, positions inside the tables."""
    check_floating("x", x)
    if x.dim() < 2 or x.shape[-1] != rope.d_head:
        raise CourseValueError(f"x: expected shape (..., T, {rope.d_head}), got {describe(x)}")
    check_length("x", x.shape[-2], rope.max_len)
    check_int("offset", offset, low=0)
    if offset + x.shape[-2] > rope.max_len:
        raise CourseValueError(f"offset: expected offset + T <= max_len={rope.max_len}, "
                               f"got offset={offset} with T={x.shape[-2]}")
