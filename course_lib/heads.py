"""An output head: from the encoder's features to a score (logit) for every vocabulary token.

``logits = x W^T + b`` with ``W`` of shape ``(vocab_size, d_model)``, then
``softmax(logits / temperature)`` for probabilities. That is the shape of ``nn.Embedding``'s
weight too, so the head can *share* the embedding's matrix ("weight tying", Press & Wolf 2017,
used in the Transformer paper, section 3.4): a token's input vector and its output vector are
the same, and the model has ``vocab_size * d_model`` fewer parameters.
"""

from __future__ import annotations

import torch
from torch import nn

from .errors import CourseValueError, check_float, check_last_dim, check_positive_int, check_type


class OutputHead(nn.Module):
    """A linear layer from ``d_model`` features to ``vocab_size`` logits.

    Args:
        d_model: size of the input features.
        vocab_size: number of tokens to score.
        tie_to: an ``nn.Embedding(vocab_size, d_model)`` whose ``weight`` the head shares (the
            same ``Parameter``, so training one trains the other); None for a separate weight.
        bias: add a learned bias per token (tied or not, the bias is the head's own).

    Attributes:
        tied: whether the weight is shared with an embedding.
        linear: the ``nn.Linear(d_model, vocab_size)``; ``linear.weight is tie_to.weight`` when tied.

    Shape:
        x: ``(B, T, d_model)`` (any leading axes: ``(B, d_model)`` for one vector per sequence);
        logits and probabilities: ``(B, T, vocab_size)``; predict: ``(B, T)``.
    """

    def __init__(self, d_model: int, vocab_size: int, tie_to: nn.Embedding | None = None, bias: bool = True) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("vocab_size", vocab_size)
        self.d_model = d_model
        self.vocab_size = vocab_size
        self.tied = tie_to is not None
        self.linear = nn.Linear(d_model, vocab_size, bias=bias)
        if tie_to is not None:
            check_type("tie_to", tie_to, nn.Embedding, "an nn.Embedding or None")
            if tuple(tie_to.weight.shape) != (vocab_size, d_model):
                raise CourseValueError(
                    f"tie_to: expected an nn.Embedding({vocab_size}, {d_model}) (weight of shape "
                    f"({vocab_size}, {d_model})), got weight of shape {tuple(tie_to.weight.shape)}"
                )
            self.linear.weight = tie_to.weight  # the same Parameter, not a copy

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``x W^T + b``, one score per vocabulary token.

        Shape:
            x: ``(B, T, d_model)``; returns ``(B, T, vocab_size)``.
        """
        check_last_dim("x", x, self.d_model)
        return self.linear(x)  # (B, T, V)

    def probabilities(self, x: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        """``softmax(logits / temperature)`` over the vocabulary.

        A temperature below 1 sharpens the distribution towards the argmax, above 1 flattens it.

        Shape:
            x: ``(B, T, d_model)``; returns ``(B, T, vocab_size)``, each row summing to 1.
        """
        check_float("temperature", temperature, low=0, low_open=True)
        return torch.softmax(self(x) / temperature, dim=-1)  # (B, T, V)

    @torch.no_grad()
    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """The most likely token id at each position (argmax of the logits; no gradient).

        Shape:
            x: ``(B, T, d_model)``; returns a LongTensor ``(B, T)``.
        """
        return self(x).argmax(dim=-1)  # (B, T)

    def extra_repr(self) -> str:
        return f"tied={self.tied}"
