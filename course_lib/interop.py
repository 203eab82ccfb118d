"""Weights across to ``torch.nn``: course_lib's modules and PyTorch's built-in ones compute the same
function, and these helpers prove it by copying weights by the contract's names.

``nn.MultiheadAttention`` keeps W^Q, W^K and W^V stacked in one ``in_proj_weight``
``(3 * d_model, d_model)``, in that order; W^O is its ``out_proj``. The rest has the same names.

Masks do not copy as they are. ``key_padding_mask`` means the same on both sides (True = padding),
but course_lib's ``allow_mask`` is True = may attend, while ``nn.MultiheadAttention``'s bool
``attn_mask`` (and ``nn.TransformerEncoderLayer``'s ``src_mask``) is True = NOT allowed: pass
``course_lib.allow_to_torch_attn_mask(allow_mask)`` to torch (``tests/test_masks.py`` shows that an
unconverted causal mask lets every query see only its future).
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import MultiHeadAttention
from .encoder import EncoderLayer


@torch.no_grad()
def copy_attention_to_torch(mha: MultiHeadAttention, ref: nn.MultiheadAttention) -> nn.MultiheadAttention:
    """Load ``mha``'s weights into ``ref`` (``in_proj = cat(w_q, w_k, w_v)``, ``out_proj = w_o``); returns ``ref``."""
    ref.in_proj_weight.copy_(torch.cat([mha.w_q.weight, mha.w_k.weight, mha.w_v.weight]))
    if ref.in_proj_bias is not None:
        ref.in_proj_bias.copy_(torch.cat([mha.w_q.bias, mha.w_k.bias, mha.w_v.bias]))
    ref.out_proj.load_state_dict(mha.w_o.state_dict())
    return ref


@torch.no_grad()
def copy_layer_to_torch(layer: EncoderLayer, ref: nn.TransformerEncoderLayer) -> nn.TransformerEncoderLayer:
    """Load an ``EncoderLayer``'s weights into an ``nn.TransformerEncoderLayer``; returns ``ref``."""
    copy_attention_to_torch(layer.self_attn, ref.self_attn)
    ref.linear1.load_state_dict(layer.ffn.linear1.state_dict())
    ref.linear2.load_state_dict(layer.ffn.linear2.state_dict())
    ref.norm1.load_state_dict(layer.norm1.state_dict())
    ref.norm2.load_state_dict(layer.norm2.state_dict())
    return ref
