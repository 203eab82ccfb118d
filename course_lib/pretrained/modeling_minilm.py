"""MiniLM: course_lib's encoder with the input embedding of BERT.

The layers are the paper's post-LN :class:`~course_lib.encoder.EncoderLayer`, run by
:class:`~course_lib.encoder.Encoder`'s own layer stack; what BERT (and so all-MiniLM-L6-v2) changes is
the options and the input:

* learned position embeddings (``positional="learned"``) instead of the sinusoidal table, and a
  *token-type* (segment) embedding, added to the token embedding;
* a LayerNorm on the summed embeddings, and no ``sqrt(d_model)`` scaling of the token embedding;
* GELU instead of ReLU in the feed-forward network, and layer-norm epsilon 1e-12.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from ..encoder import Encoder
from ..errors import check_token_ids

if TYPE_CHECKING:                                            # pragma: no cover - annotations only
    from .tokenization_wordpiece import WordPieceTokenizer


class MiniLM(Encoder):
    """A BERT-style encoder (all-MiniLM-L6-v2's shape by default): an
    :class:`~course_lib.encoder.Encoder` with BERT's input embedding.

    ``x = LayerNorm(embedding(ids) + token_type_embedding(types) + pos_embedding(positions))``,
    dropout, then ``num_layers`` post-LN :class:`~course_lib.encoder.EncoderLayer` with GELU: the
    encoder's :meth:`~course_lib.encoder.Encoder.run_layers`. No final norm: in a post-LN stack every layer already
    ends with one.

    Shape:
        - input_ids: ``(B, T)`` integer ids
        - key_padding_mask: ``(B, T)`` bool, True = padding; None means ``input_ids == pad_id``
        - token_type_ids: ``(B, T)`` integer ids or None (all zeros, one segment)
        - output: ``(B, T, d_model)``, plus a list of ``num_layers`` attention tensors
          ``(B, num_heads, T, T)`` if ``return_attention``
    """

    def __init__(self, vocab_size: int = 30522, d_model: int = 384, num_heads: int = 12, d_ff: int = 1536,
                 num_layers: int = 6, max_len: int = 512, type_vocab_size: int = 2, dropout: float = 0.0,
                 pad_id: int = 0, layer_norm_eps: float = 1e-12):
        super().__init__(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len, dropout=dropout,
                         pad_id=pad_id, norm_first=False, activation="gelu", positional="learned",
                         layer_norm_eps=layer_norm_eps)
        self.num_heads = num_heads
        self.token_type_embedding = nn.Embedding(type_vocab_size, d_model)
        self.embedding_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)

    def forward(self, input_ids: torch.Tensor, key_padding_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, return_attention: bool = False):
        input_ids, key_padding_mask = self.prepare_inputs(input_ids, key_padding_mask, name="input_ids")
        x = self.embed(input_ids, token_type_ids)                                   # (B, T, d_model)
        return self.run_layers(x, key_padding_mask, return_attention=return_attention)

    def embed(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        """BERT's input: ``LayerNorm(word + token type + position)``, no ``sqrt(d_model)`` scaling."""
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)                            # (B, T), one segment
        check_token_ids("token_type_ids", token_type_ids, self.token_type_embedding.num_embeddings,
                        shape=input_ids.shape, size_name="type_vocab_size")
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)      # (T,)
        x = self.embedding(input_ids) + self.token_type_embedding(token_type_ids.long())
        x = x + self.pos_embedding(positions)                                       # broadcast over B
        return self.dropout(self.embedding_norm(x))                                 # (B, T, d_model)

    @torch.no_grad()
    def sentence_embedding(self, batch: dict, normalize: bool = True) -> torch.Tensor:
        """Mean of the last hidden states over the real (non-padding) tokens, L2-normalized.

        This is how sentence-transformers turns all-MiniLM-L6-v2 into one 384-d vector per
        sentence. ``batch`` is the tokenizer's output (moved to the model's device here).
        Returns ``(B, d_model)``.
        """
        device = self.embedding.weight.device
        ids = batch["input_ids"].to(device)
        pad = batch["key_padding_mask"].to(device)
        types = batch.get("token_type_ids")
        hidden = self(ids, key_padding_mask=pad,
                      token_type_ids=None if types is None else types.to(device))
        return mean_pool(hidden, pad, normalize=normalize)

    def encode(self, sentences: str | Sequence[str], tokenizer: WordPieceTokenizer,
               normalize: bool = True, max_length: int = 256) -> torch.Tensor:
        """Sentences in, ``(B, d_model)`` sentence embeddings out (as ``SentenceTransformer.encode``).

        Truncates to ``max_length`` word pieces (all-MiniLM-L6-v2 was trained with 256).
        """
        return self.sentence_embedding(tokenizer(sentences, max_length=max_length), normalize=normalize)


def mean_pool(hidden: torch.Tensor, key_padding_mask: torch.Tensor, normalize: bool = True) -> torch.Tensor:
    """Average ``hidden (B, T, d)`` over positions where ``key_padding_mask (B, T)`` is False."""
    keep = (~key_padding_mask).unsqueeze(-1).to(hidden.dtype)                       # (B, T, 1), 1 = real token
    summed = (hidden * keep).sum(dim=1)                                             # (B, d)
    pooled = summed / keep.sum(dim=1).clamp(min=1e-9)                               # (B, d)
    return F.normalize(pooled, p=2, dim=-1) if normalize else pooled
