"""The position-wise feed-forward network: ``FFN(x) = max(0, x W_1 + b_1) W_2 + b_2``.

The same two-layer MLP is applied to every position separately (it never mixes positions; that is
attention's job). The paper uses ``d_ff = 4 * d_model`` (2048 for 512) and ReLU; BERT and most later
encoders use GELU.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from .errors import CourseTypeError, CourseValueError, check_dropout, check_last_dim, check_positive_int

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,                                     # exact (erf) GELU, as BERT
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
}


def get_activation(activation) -> Callable[[torch.Tensor], torch.Tensor]:
    """An activation function from its name (``"relu"``, ``"gelu"``, ``"gelu_tanh"``) or a callable."""
    if callable(activation):
        return activation
    if not isinstance(activation, str):
        raise CourseTypeError(f"activation: expected one of {sorted(ACTIVATIONS)} or a callable, "
                              f"got {type(activation).__name__}")
    if activation not in ACTIVATIONS:
        raise CourseValueError(f"activation: expected one of {sorted(ACTIVATIONS)} or a callable, got {activation!r}")
    return ACTIVATIONS[activation]


class PositionwiseFeedForward(nn.Module):
    """``linear2(dropout(activation(linear1(x))))``, applied at every position.

    Args:
        d_model: input and output features.
        d_ff: hidden features (the paper: ``4 * d_model``).
        dropout: dropout after the activation (training only).
        activation: ``"relu"`` (the paper), ``"gelu"`` (BERT) or a callable.

    Shape:
        x: ``(B, T, d_model)``, or any ``(..., d_model)`` (one token ``(d_model,)`` too); output: the same shape.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation="relu"):
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("d_ff", d_ff)
        check_dropout(dropout)
        self.d_model, self.d_ff = d_model, d_ff
        self.activation = get_activation(activation)
        self.linear1 = nn.Linear(d_model, d_ff)          # W_1, b_1
        self.linear2 = nn.Linear(d_ff, d_model)          # W_2, b_2
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_last_dim("x", x, self.d_model)          # any leading axes: (B, T, d), (T, d), (d,)
        h = self.activation(self.linear1(x))                                        # (..., d_ff)
        return self.linear2(self.dropout(h))                                        # (..., d_model)
