"""Training an encoder on real text (lecture 09): masked-language-model data, warm-up, a small loop.

BERT's pretraining task (Devlin et al. 2019), at a laptop's scale: hide some tokens of a sentence and
train the encoder, with a linear head on top, to put them back.

* :func:`mlm_vocab`: a word vocabulary with a ``<mask>`` token (id 2, after ``<pad>`` 0 and ``<unk>`` 1);
* :func:`mask_tokens`: pick 15 % of the real tokens; of those, 80 % become ``<mask>``, 10 % a random
  word, 10 % stay as they are (BERT's 80/10/10 rule); the labels are the original ids there and
  :data:`IGNORE` everywhere else;
* :func:`masked_lm_loss`: the cross-entropy at the picked positions only;
* :class:`MaskedLM`: an encoder and a linear head over the vocabulary;
* :func:`without_residuals`: the ablation that cuts both residual connections of every layer;
* :func:`exercise_encoder`: the student's ``Encoder`` from the exercise notebook, or the reference's.

The experiment of lecture 09 (data, baselines, schedule, runs) is :mod:`course_lib.mlm_runs`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .encoder import EncoderLayer
from .errors import CourseValueError, check_int
from .tokenizer import PAD_ID, UNK_ID, Vocab, WordTokenizer

IGNORE = -100                  # the label of a position the loss skips (F.cross_entropy's ignore_index)
MASK = "<mask>"
MASK_ID = 2

__all__ = ["IGNORE", "MASK", "MASK_ID", "mlm_vocab", "encode_texts", "mask_tokens", "masked_lm_loss", "MaskedLM",
           "without_residuals", "exercise_encoder"]


def mlm_vocab(texts: Sequence[str], min_freq: int = 2, max_size: int | None = None) -> WordTokenizer:
    """A :class:`~course_lib.tokenizer.WordTokenizer` over the words seen ``min_freq`` times or more in
    ``texts``, with ``<mask>`` at id :data:`MASK_ID` (after ``<pad>`` and ``<unk>``). ``max_size`` caps
    the size, the three specials included: the most frequent words are kept (ties in alphabetical order)."""
    check_int("max_size", max_size, low=MASK_ID + 2, optional=True)
    vocab = Vocab.build(texts, min_freq=min_freq, max_size=None if max_size is None else max_size - 1)
    vocab.itos.insert(MASK_ID, MASK)                      # Vocab(tokens) would check each for repeats: slow
    vocab.stoi = {token: i for i, token in enumerate(vocab.itos)}
    return WordTokenizer(vocab)


def encode_texts(tokenizer: WordTokenizer, texts: Sequence[str], max_len: int) -> torch.Tensor:
    """The token ids of ``texts``, cut to ``max_len`` and padded with :data:`PAD_ID`: LongTensor ``(N, T)``."""
    return tokenizer.batch(list(texts), max_len=max_len)["input_ids"]


def mask_tokens(tokens: torch.Tensor, vocab_size: int, generator: torch.Generator, p: float = 0.15,
                n_special: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: ``(inputs, labels)``, both ``(B, T)`` long.

    Each real token (not ``<pad>``; ``<unk>`` is never a target either) is picked with probability
    ``p``. A picked token becomes ``<mask>`` with probability 0.8, a random word (an id in
    ``[n_special, vocab_size)``) with probability 0.1, and stays itself with probability 0.1. ``labels``
    holds the original id at the picked positions and :data:`IGNORE` elsewhere.
    """
    if not 0 < p < 1:
        raise CourseValueError(f"p: expected a probability in (0, 1), got {p}")
    check_int("vocab_size", vocab_size, low=n_special + 1)
    u = torch.rand(tokens.shape, generator=generator)                          # (B, T) in [0, 1)
    picked = (u < p) & (tokens != PAD_ID) & (tokens != UNK_ID)                 # (B, T)
    labels = torch.where(picked, tokens, torch.full_like(tokens, IGNORE))
    which = torch.rand(tokens.shape, generator=generator)                      # 80 / 10 / 10
    random_ids = torch.randint(n_special, vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(picked & (which < 0.8), torch.full_like(tokens, MASK_ID), tokens)
    inputs = torch.where(picked & (which >= 0.8) & (which < 0.9), random_ids, inputs)
    return inputs, labels


def masked_lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy over the positions whose label is not :data:`IGNORE`.

    Shape: logits ``(B, T, V)``, labels ``(B, T)``; a scalar out.
    """
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE)


class MaskedLM(nn.Module):
    """An encoder and a linear head: a score for every word of the vocabulary at every position.

    Args:
        encoder: any module with the exercise's ``Encoder`` interface, ``(B, T)`` ids to
            ``(B, T, d_model)``, and an ``embedding`` attribute (yours or course_lib's).
        vocab_size: the number of words the head scores.

    Shape:
        tokens: ``(B, T)``; output: logits ``(B, T, vocab_size)``.
    """

    def __init__(self, encoder: nn.Module, vocab_size: int):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.embedding.embedding_dim, vocab_size)

    def forward(self, tokens: torch.Tensor, at: torch.Tensor | None = None) -> torch.Tensor:
        """Logits ``(B, T, V)``; with a bool ``at (B, T)``, only at those positions: ``(at.sum(), V)``
        (the head is the costly part, and the loss needs only the masked positions)."""
        h = self.encoder(tokens)                                              # (B, T, d_model)
        return self.head(h if at is None else h[at])


class _NoResidualLayer(EncoderLayer):
    """An EncoderLayer whose two sublayers replace ``x`` instead of adding to it (an ablation)."""

    def forward(self, x, key_padding_mask=None, allow_mask=None, return_attention=False):
        if self.norm_first:
            a, weights = self.attend(self.norm1(x), key_padding_mask, allow_mask, return_attention)
            x = self.dropout1(a)                                               # no "x +"
            x = self.dropout2(self.ffn(self.norm2(x)))
        else:
            a, weights = self.attend(x, key_padding_mask, allow_mask, return_attention)
            x = self.norm1(self.dropout1(a))
            x = self.norm2(self.dropout2(self.ffn(x)))
        return (x, weights) if return_attention else x


def without_residuals(encoder: nn.Module) -> nn.Module:
    """Cut both residual connections in every layer of course_lib's ``encoder`` (in place; returns it)."""
    for layer in encoder.layers:
        if type(layer) is not EncoderLayer:
            raise CourseValueError("encoder: expected course_lib's EncoderLayer in every layer, "
                                   f"got {type(layer).__name__}")
        layer.__class__ = _NoResidualLayer
    return encoder


def exercise_encoder(notebook, check_size: int = 11) -> tuple[type, str]:
    """Your ``Encoder`` from the exercise notebook, or course_lib's when yours is not ready: ``(class, message)``.

    The six graded cells of ``notebook`` (those whose nbgrader ``grade_id`` is a part of the exercise
    contract) run, in order, in a fresh namespace that holds what the exercise's first cell imports
    (``math``, ``np``, ``torch``, ``F``, ``nn``, ``course_lib``); nothing else of the notebook runs. Your
    ``Encoder`` then gets a quick check: course_lib's weights loaded into it (the contract's names),
    it must give course_lib's output on a small padded batch. A part that still raises
    ``NotImplementedError``, any other error, or a different output: course_lib's ``Encoder`` comes back
    instead, and the message says why, in one line.
    """
    import json
    from pathlib import Path

    import numpy as np

    from . import encoder as reference
    from .grading.parts import CONTRACT_PARTS

    path = Path(notebook)
    fallback = "course_lib's reference Encoder is used instead"
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError) as exc:
        return reference.Encoder, f"could not read {path} ({type(exc).__name__}): {fallback}"
    graded = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): "".join(c["source"]) for c in cells
              if c.get("cell_type") == "code"}
    namespace = {"math": math, "np": np, "torch": torch, "F": F, "nn": nn,
                 "course_lib": __import__("course_lib"), "__name__": "exercise"}
    for part in CONTRACT_PARTS:
        if part not in graded:
            return reference.Encoder, f"{path.name} has no cell for the part {part!r}: {fallback}"
        try:
            exec(compile(graded[part], f"{path.name}:{part}", "exec"), namespace)   # defines the part
        except Exception as exc:
            return reference.Encoder, f"the part {part!r} raised {type(exc).__name__}: {fallback}"
    mine = namespace.get("Encoder")
    if not isinstance(mine, type):
        return reference.Encoder, f"the part 'encoder' defines no class Encoder: {fallback}"
    try:
        with torch.random.fork_rng():
            torch.manual_seed(0)
            sizes = dict(vocab_size=check_size, d_model=8, num_heads=2, d_ff=16, num_layers=2, max_len=8)
            ref, yours = reference.Encoder(**sizes).eval(), mine(**sizes).eval()
            yours.load_state_dict(ref.state_dict())
            tokens = torch.randint(1, check_size, (2, 6))
            tokens[1, 4:] = 0                                                   # padding in the second row
            with torch.no_grad():
                same = torch.allclose(yours(tokens)[tokens != 0], ref(tokens)[tokens != 0], atol=1e-5)
    except NotImplementedError:
        return reference.Encoder, f"a part still raises NotImplementedError: {fallback}"
    except Exception as exc:
        return reference.Encoder, f"your Encoder raised {type(exc).__name__} on a small batch: {fallback}"
    if not same:
        return reference.Encoder, f"your Encoder's output differs from the reference's: {fallback}"
    return mine, f"your Encoder, from {path.name}: it gives the reference's output on a small batch"
