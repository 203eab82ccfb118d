"""The encoder: a stack of identical layers, each self-attention then a feed-forward network,
each wrapped in a residual connection and layer normalization.

Post-LN (the paper, and ``nn.TransformerEncoderLayer``'s default)::

    x = norm1(x + dropout1(self_attn(x)))
    x = norm2(x + dropout2(ffn(x)))

Pre-LN (``norm_first=True``; Xiong et al., 2020; GPT-2 and most recent models)::

    x = x + dropout1(self_attn(norm1(x)))
    x = x + dropout2(ffn(norm2(x)))
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .attention import MultiHeadAttention
from .errors import (
    check_choice,
    check_dropout,
    check_features,
    check_int,
    check_length,
    check_positive_int,
    check_token_ids,
)
from .feed_forward import PositionwiseFeedForward
from .positional import sinusoidal_positional_encoding

POSITIONAL = ("sinusoidal", "learned", "none")


class EncoderLayer(nn.Module):
    """One encoder layer: multi-head self-attention and a feed-forward network, with Add & Norm.

    Args:
        d_model, num_heads, d_ff, dropout: as in the paper (512, 8, 2048, 0.1 for the base model).
        norm_first: False = post-LN (the paper), True = pre-LN.
        activation: the feed-forward activation, ``"relu"`` (the paper) or ``"gelu"`` (BERT).
        layer_norm_eps: epsilon of both LayerNorms (1e-5 as torch; BERT uses 1e-12).

    Shape:
        x: ``(B, T, d_model)``; key_padding_mask: bool ``(B, T)``, **True = padding**;
        allow_mask: bool broadcastable to ``(B, num_heads, T, T)``, **True = may attend** (not
        ``nn.TransformerEncoderLayer``'s ``src_mask``, where True = not allowed);
        output: ``(B, T, d_model)``, and the weights ``(B, num_heads, T, T)`` if ``return_attention``.

    Without ``return_attention`` the attention runs PyTorch's fused kernel (same numbers, less
    memory); with it, the explicit ``softmax(QK^T/sqrt(d_k))V`` whose weights you can plot.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0,
                 norm_first: bool = False, activation="relu", layer_norm_eps: float = 1e-5):
        super().__init__()
        check_dropout(dropout)
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def attend(self, x, key_padding_mask, allow_mask, need_weights):
        """Self-attention: ``x`` is the query, the key and the value (one tensor, so the fused path
        projects all three in one matrix product)."""
        return self.self_attn(x, x, x, key_padding_mask=key_padding_mask, allow_mask=allow_mask,
                              need_weights=need_weights)

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None,
                allow_mask: torch.Tensor | None = None, return_attention: bool = False):
        check_features("x", x, self.self_attn.d_model)                             # masks: in self_attn
        if self.norm_first:                                                        # pre-LN
            a, weights = self.attend(self.norm1(x), key_padding_mask, allow_mask, return_attention)
            x = x + self.dropout1(a)                                               # (B, T, d_model)
            x = x + self.dropout2(self.ffn(self.norm2(x)))                         # (B, T, d_model)
        else:                                                                      # post-LN (the paper)
            a, weights = self.attend(x, key_padding_mask, allow_mask, return_attention)
            x = self.norm1(x + self.dropout1(a))                                   # (B, T, d_model)
            x = self.norm2(x + self.dropout2(self.ffn(x)))                         # (B, T, d_model)
        return (x, weights) if return_attention else x


class Encoder(nn.Module):
    """Token ids in, one contextual vector per token out.

    ``embedding(tokens) * sqrt(d_model) + PE[:T]``, dropout, ``num_layers`` EncoderLayers, then
    ``final_norm`` (a LayerNorm for pre-LN, whose last residual stream is otherwise unnormalized;
    ``nn.Identity`` for post-LN).

    The embedding starts as ``N(0, 1/d_model)`` (:func:`.init_embedding`), not ``nn.Embedding``'s
    ``N(0, 1)``: the paper (section 3.4) multiplies the embedding by ``sqrt(d_model)`` and shares
    its matrix with the pre-softmax linear layer (weight tying, Press & Wolf 2017), a matrix with an
    output layer's small scale, about ``1/sqrt(d_model)``. Times ``sqrt(d_model)``, a token vector
    then has entries of variance 1, the scale of the sinusoidal table (entries in [-1, 1], RMS
    ``1/sqrt(2)``): both the token and its position are visible in the sum. From ``N(0, 1)`` the
    tokens would be ``sqrt(2 * d_model)`` times larger than the positions (32x at ``d_model=512``)
    and drown them.

    Args:
        vocab_size, d_model, num_heads, d_ff, num_layers, dropout: the usual sizes.
        max_len: the longest sequence (rows of the positional table).
        pad_id: the padding token id; its embedding row stays zero and, when no
            ``key_padding_mask`` is given, ``tokens == pad_id`` is the mask.
        norm_first: False = post-LN (the paper), True = pre-LN.
        activation, layer_norm_eps: passed to every layer.
        positional: ``"sinusoidal"`` (the paper, a non-persistent buffer ``pe``), ``"learned"``
            (a ``pos_embedding`` table, BERT-style) or ``"none"`` (to see what breaks without it).

    Shape:
        tokens: ``(B, T)`` integer ids, ``T <= max_len``; key_padding_mask: bool ``(B, T)``, True = padding.
        output: ``(B, T, d_model)``; with ``return_attention``, also a list of ``num_layers``
        tensors ``(B, num_heads, T, T)``.
    """

    def __init__(self, vocab_size: int, d_model: int, num_heads: int, d_ff: int, num_layers: int,
                 max_len: int = 512, dropout: float = 0.0, pad_id: int = 0, norm_first: bool = False,
                 activation="relu", positional: str = "sinusoidal", layer_norm_eps: float = 1e-5):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("num_layers", num_layers),
                            ("max_len", max_len)):
            check_positive_int(name, value)
        check_dropout(dropout)
        check_int("pad_id", pad_id, 0, vocab_size - 1, what=f"an id in [0, {vocab_size}) (inside the vocabulary)")
        check_choice("positional", positional, POSITIONAL)
        self.vocab_size, self.d_model, self.max_len, self.pad_id = vocab_size, d_model, max_len, pad_id
        self.positional = positional
        self.embedding = init_embedding(nn.Embedding(vocab_size, d_model, padding_idx=pad_id))
        if positional == "sinusoidal":
            self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        elif positional == "learned":
            self.pos_embedding = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation, layer_norm_eps)
            for _ in range(num_layers)
        )
        self.final_norm = nn.LayerNorm(d_model, eps=layer_norm_eps) if norm_first else nn.Identity()

    def forward(self, tokens: torch.Tensor, key_padding_mask: torch.Tensor | None = None,
                allow_mask: torch.Tensor | None = None, return_attention: bool = False):
        tokens, key_padding_mask = self.prepare_inputs(tokens, key_padding_mask)  # mask: True = padding
        x = self.embed(tokens)                                                      # (B, T, d_model)
        return self.run_layers(x, key_padding_mask, allow_mask, return_attention)

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """``embedding(tokens) * sqrt(d_model)`` plus the positions: the first layer's input."""
        x = self.embedding(tokens) * math.sqrt(self.d_model)                        # (B, T, d_model)
        t = tokens.shape[1]
        if self.positional == "sinusoidal":
            x = x + self.pe[:t].to(x.dtype)                                         # broadcast over B
        elif self.positional == "learned":
            x = x + self.pos_embedding(torch.arange(t, device=tokens.device)).to(x.dtype)
        return self.dropout(x)

    def run_layers(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None,
                   allow_mask: torch.Tensor | None = None, return_attention: bool = False):
        """The layer stack on embedded inputs ``x (B, T, d_model)``, then ``final_norm``.

        Returns ``(B, T, d_model)``, and with ``return_attention`` the list of each layer's weights
        ``(B, num_heads, T, T)``.
        """
        attentions = []
        for layer in self.layers:
            if return_attention:
                x, weights = layer(x, key_padding_mask, allow_mask, return_attention=True)
                attentions.append(weights)                                          # (B, H, T, T)
            else:
                x = layer(x, key_padding_mask, allow_mask)                           # (B, T, d_model)
        x = self.final_norm(x)
        return (x, attentions) if return_attention else x

    def prepare_inputs(self, tokens: torch.Tensor, key_padding_mask: torch.Tensor | None,
                       name: str = "tokens") -> tuple[torch.Tensor, torch.Tensor | None]:
        """Check the token ids; return them as long with the padding mask, ``tokens == pad_id`` by default.

        Without padding the default mask is None: no mask at all, the fused kernel's fastest path.
        The mask itself is checked by the attention (it knows the batch and length to expect).
        """
        check_token_ids(name, tokens, self.vocab_size)
        if self.positional != "none":
            check_length(name, tokens.shape[1], self.max_len)
        tokens = tokens.long()                                                      # int16/uint8 ids too
        if key_padding_mask is None:
            key_padding_mask = tokens == self.pad_id                                # (B, T), True = padding
            if not key_padding_mask.any():
                key_padding_mask = None
        return tokens, key_padding_mask


@torch.no_grad()
def init_embedding(embedding: nn.Embedding) -> nn.Embedding:
    """Draw ``embedding.weight`` from ``N(0, 1/d_model)``, the padding row zero; returns ``embedding``.

    After the encoder's ``* sqrt(d_model)`` a token vector has unit-variance entries, the same order
    as the positional table (see :class:`Encoder`).
    """
    d_model = embedding.embedding_dim
    nn.init.normal_(embedding.weight, mean=0.0, std=d_model ** -0.5)
    if embedding.padding_idx is not None:
        embedding.weight[embedding.padding_idx].zero_()
    return embedding
