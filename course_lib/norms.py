"""RMSNorm (Zhang & Sennrich 2019): LayerNorm without the mean subtraction and the bias.

``RMSNorm(x) = x / sqrt(mean(x_i^2) + eps) * weight``

LayerNorm centres each feature vector and scales it to unit variance; RMSNorm only rescales it
to unit root-mean-square. It is cheaper and works as well in practice, which is why many recent
models (T5, LLaMA) use it. ``torch.nn.RMSNorm(d_model, eps=1e-6)`` computes the same thing.
"""

from __future__ import annotations

import torch
from torch import nn

from .errors import check_float, check_last_dim, check_positive_int


class RMSNorm(nn.Module):
    """Scale each feature vector to unit root-mean-square, then by a learned ``weight``.

    Args:
        d_model: size of the last axis, normalised over.
        eps: added to the mean square before the square root, for stability.

    Attributes:
        weight: ``nn.Parameter`` of shape ``(d_model,)``, initialised to ones.

    Shape:
        x: ``(..., d_model)``, usually ``(B, T, d_model)``; output: the same shape.
    """

    def __init__(self, d_model: int, eps: float = 1e-6) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        check_float("eps", eps, low=0, low_open=True)
        self.d_model = d_model
        self.eps = float(eps)
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_last_dim("x", x, self.d_model)
        inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # (B, T, 1)
        return x * inv_rms * self.weight  # (B, T, d_model)

    def extra_repr(self) -> str:
        return f"{self.d_model}, eps={self.eps}"
