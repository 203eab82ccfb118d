"""Positional information: the sinusoidal table of the paper and learned position embeddings.

Self-attention is permutation-equivariant, so the encoder adds a position signal to each token's
embedding. The paper's table (Vaswani et al., 2017, section 3.5) is

    PE[pos, 2i]   = sin(pos / 10000^(2i / d_model))
    PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))

with sines and cosines interleaved. tensor2tensor's ``get_timing_signal_1d`` (the picture in many
blog posts, "split in half") puts all the sines first and all the cosines second, and spreads its
``d_model / 2`` timescales geometrically from 1 to 10000 *inclusive*, so its frequencies are
``1 / 10000^(i / (d_model/2 - 1))``: almost, not exactly, the paper's.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .errors import CourseValueError, check_choice, check_features, check_positive_int

LAYOUTS = ("interleaved", "concat")


def sinusoidal_positional_encoding(max_len: int, d_model: int, layout: str = "interleaved",
                                   base: float = 10000.0) -> torch.Tensor:
    """The fixed sinusoidal table, ``(max_len, d_model)`` float32.

    Args:
        max_len: number of positions (rows), ``pos = 0 .. max_len - 1``.
        d_model: number of features (columns).
        layout: ``"interleaved"`` (the paper: even features sin, odd features cos) or
            ``"concat"`` (tensor2tensor: first half sin, second half cos, its own timescales).
        base: the 10000 of the formula.

    Shape:
        output: ``(max_len, d_model)``
    """
    check_positive_int("max_len", max_len)
    check_positive_int("d_model", d_model)
    check_choice("layout", layout, LAYOUTS)
    # Computed in float64 and rounded once, so every entry is the closest float32 to the formula.
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]                      # (T, 1)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    if layout == "interleaved":
        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)                  # 2i = 0, 2, 4, ...
        angle = pos / base ** (two_i / d_model)                                   # (T, ceil(d/2))
        pe[:, 0::2] = torch.sin(angle)
        pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    else:
        n = d_model // 2                                                          # timescales
        if n == 0:
            raise CourseValueError(f"d_model: expected at least 2 for layout='concat', got {d_model}")
        increment = math.log(base) / max(n - 1, 1)
        inv_timescale = torch.exp(-increment * torch.arange(n, dtype=torch.float64))
        angle = pos * inv_timescale                                               # (T, n)
        pe[:, :n] = torch.sin(angle)
        pe[:, n:2 * n] = torch.cos(angle)                                         # odd d_model: last column 0
    return pe.to(torch.float32)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to a batch of embeddings.

    The table is a non-persistent buffer: it moves with ``.to(device)`` but is not saved in the
    ``state_dict`` (it has no parameters to learn).

    Shape:
        x: ``(B, T, d_model)`` with ``T <= max_len``; output: the same.
    """

    def __init__(self, d_model: int, max_len: int = 512, layout: str = "interleaved"):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model, layout), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_features("x", x, self.d_model, max_len=self.max_len)
        return x + self.pe[: x.shape[1]].to(x.dtype)


class LearnedPositionalEmbedding(nn.Module):
    """A learned vector per position (BERT, GPT-2), added to the embeddings.

    Unlike the sinusoidal table it has nothing to say about positions it never saw: asking for
    ``T > max_len`` raises.

    Shape:
        x: ``(B, T, d_model)`` with ``T <= max_len``; output: the same.
    """

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        check_positive_int("max_len", max_len)
        check_positive_int("d_model", d_model)
        self.d_model, self.max_len = d_model, max_len
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_features("x", x, self.d_model, max_len=self.max_len)
        positions = torch.arange(x.shape[1], device=x.device)                     # (T,)
        return x + self.embedding(positions).to(x.dtype)                          # broadcast over B
