"""The usual mistakes of each part, named: course_lib's reference with one known mistake put in.

:func:`course_lib.grading.reference.reference_outputs` runs the real reference on a case; a
*mistake* is a small perturbation of it: one
method of a reference instance replaced (``split_heads`` that splits the wrong way), one submodule
swapped (``w_o`` for ``nn.Identity``), a hook on the attention function (the softmax over the
queries), or a different mask handed to the reference. None of them re-implements a part: the
judge uses them only to *name* a student's bug ("the heads are split the wrong way").
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..attention import MultiHeadAttention, scaled_dot_product_attention
from ..encoder import Encoder, EncoderLayer
from ..errors import broadcast_shape
from ..feed_forward import PositionwiseFeedForward
from ..positional import sinusoidal_positional_encoding
from .harness import Case
from .reference import _FIRST


# ------------------------------------------------------------------ perturbations

class _Call(nn.Module):
    """A submodule that calls ``fn`` (to stand in a registered submodule's place)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _scale_queries(factor):
    """Queries times ``factor(d_k)``: the scores come out unscaled, or scaled the wrong way."""
    def variant(sdpa):
        return lambda q, k, v, attn_mask=None, dropout_p=0.0: sdpa(q * factor(q.shape[-1]), k, v, attn_mask, dropout_p)
    return variant


def _over_queries(sdpa):
    """The softmax over the queries (dim -2): the reference on swapped roles, transposed back."""
    def variant(q, k, v, attn_mask=None, dropout_p=0.0):
        mask = None if attn_mask is None else attn_mask.transpose(-2, -1)
        _, w = sdpa(k, q, q, attn_mask=mask)                                         # (..., T_k, T_q)
        w = w.transpose(-2, -1)
        return w @ v, w
    return variant


def _with_mask(make_mask):
    """The reference under another mask. A row left with no key gets uniform weights, as a student's
    ``masked_fill`` with a large negative number gives (the reference would give zeros)."""
    def variant(sdpa):
        def attend(q, k, v, attn_mask=None, dropout_p=0.0):
            mask = make_mask(q, k, attn_mask)
            out, w = sdpa(q, k, v, attn_mask=mask, dropout_p=dropout_p)
            shape = (*broadcast_shape(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])
            none = ~mask.expand(shape).any(dim=-1, keepdim=True)                    # (..., T_q, 1)
            w = torch.where(none, torch.full_like(w, 1.0 / k.shape[-2]), w)
            return w @ v, w
        return attend
    return variant


def _causal_mask(q, k, attn_mask):
    causal = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    return causal if attn_mask is None else attn_mask & causal


def _inverted_mask(q, k, attn_mask):
    if attn_mask is None:
        raise LookupError("no mask to invert")
    return ~attn_mask


def _padding(case: Case) -> torch.Tensor:
    t = case.inputs
    if "key_padding_mask" in t:
        return t["key_padding_mask"]
    if case.part == "encoder":
        return t["tokens"] == case.kwargs["pad_id"]
    raise LookupError("no padding in this case")


def _masks(kind: str):
    """Call kwargs that hand the reference a wrong mask."""
    def masks(case: Case) -> dict:
        if kind == "id_0":                                                          # tokens == 0, not == pad_id
            if case.part != "encoder" or "key_padding_mask" in case.inputs or case.kwargs["pad_id"] == 0:
                raise LookupError("only for an encoder that takes its padding from pad_id != 0")
            return {"key_padding_mask": case.inputs["tokens"] == 0}
        if kind == "causal":
            t = case.inputs[_FIRST[case.part]].shape[1]
            kpm = case.inputs.get("key_padding_mask")
            causal = {"allow_mask": torch.ones(t, t, dtype=torch.bool).tril()}   # course_lib modules: True = may attend
            return causal if kpm is None else {**causal, "key_padding_mask": kpm}
        kpm = _padding(case)
        if not kpm.any():
            raise LookupError("no padding to ignore or invert")
        return {"key_padding_mask": ~kpm if kind == "invert" else torch.zeros_like(kpm)}
    return masks


def _pe(kind: str):
    """A wrong positional table, from the reference tables of width d_model and 2 * d_model."""
    def patch(table: torch.Tensor) -> torch.Tensor:
        t, d = table.shape
        wide = sinusoidal_positional_encoding(t, 2 * d).double()                    # 10000^(i/d) in column 2i
        if kind == "swapped":                                                       # cos in 2i, sin in 2i+1
            return table.view(t, d // 2, 2).flip(-1).reshape(t, d)
        if kind == "halves":
            return torch.cat([table[:, 0::2], table[:, 1::2]], dim=1)
        if kind == "i_not_2i":
            return wide[:, :d]
        if kind == "per_feature":                                                   # column j: 10000^(j/d)
            out = table.clone()
            out[:, 1::2] = wide[:, 3::4][:, : d // 2]
            return out
        return torch.zeros_like(table)
    return patch


def _split(kind: str, merge_too: bool):
    """Heads taken as features [j*H + i] (``dk_h``) or by a reshape without the transpose (``view``)."""
    def patch(m: MultiHeadAttention) -> None:
        h, dk = m.num_heads, m.d_k

        def split(x):
            b, t, _ = x.shape
            return x.view(b, t, dk, h).permute(0, 3, 1, 2) if kind == "dk_h" else x.reshape(b, h, t, dk)

        def merge(x):
            b, _, t, _ = x.shape
            return x.permute(0, 2, 3, 1).reshape(b, t, h * dk) if kind == "dk_h" else x.reshape(b, t, h * dk)
        m.split_heads = split
        if merge_too:
            m.merge_heads = merge
    return patch


def _set(**attributes):
    """Replace attributes of the reference module (``w_o=nn.Identity()``, ``activation=...``)."""
    def patch(m: nn.Module) -> None:
        for name, value in attributes.items():
            setattr(m, name, value() if isinstance(value, type) else value)
    return patch


def _no_residual(sublayers):
    """x = norm(f(x)) instead of norm(x + f(x)): the dropout after ``f`` subtracts the residual again."""
    def patch(layer: EncoderLayer) -> None:
        seen = {}
        layer.register_forward_pre_hook(lambda mod, args: seen.__setitem__(1, args[0]))
        second = layer.norm2 if layer.norm_first else layer.ffn                    # sees the 2nd residual
        second.register_forward_pre_hook(lambda mod, args: seen.__setitem__(2, args[0]))
        for i in sublayers:
            setattr(layer, f"dropout{i}", _Call(lambda y, i=i: y - seen[i]))
    return patch


def _norm_inside(layer: EncoderLayer) -> None:
    """x + norm(f(x)): the norms move to where the dropouts are."""
    layer.dropout1, layer.dropout2 = layer.norm1, layer.norm2
    layer.norm1, layer.norm2 = nn.Identity(), nn.Identity()


def _flip_norm_first(m: nn.Module) -> None:
    for layer in (m.layers if isinstance(m, Encoder) else [m]):
        layer.norm_first = not layer.norm_first


def _unscaled_embedding(m: Encoder) -> None:
    m.embedding.weight.data /= math.sqrt(m.d_model)


def _only_pre_ln(patch):
    def checked(m):
        if not any(layer.norm_first for layer in m.layers):
            raise LookupError("only for norm_first=True")
        patch(m)
    return checked


def _scaled_by_d_model(m: MultiHeadAttention) -> None:
    """Queries times sqrt(d_k / d_model): the scores come out divided by sqrt(d_model)."""
    m.w_q = nn.Sequential(m.w_q, _Call(lambda y: y * math.sqrt(m.d_k / m.d_model)))


def _weights_after_dropout(sdpa):
    """The weights returned after dropout: the same mask as the one that multiplied v (the random state
    is put back, then the same F.dropout call runs on the same tensor)."""
    def attend(q, k, v, attn_mask=None, dropout_p=0.0):
        if dropout_p == 0.0:
            raise LookupError("only in training mode with dropout > 0")
        state = torch.get_rng_state()
        out, w = sdpa(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)
        torch.set_rng_state(state)
        return out, F.dropout(w, p=dropout_p)
    return attend


def _training_only(patch):
    """``patch`` for a case in training mode with dropout > 0 (elsewhere dropout does nothing)."""
    def checked(m: nn.Module) -> None:
        rates = [x.p if isinstance(x, nn.Dropout) else x.dropout for x in m.modules()
                 if isinstance(x, (nn.Dropout, MultiHeadAttention))]
        if not m.training or not any(p > 0 for p in rates):
            raise LookupError("only in training mode with dropout > 0")
        patch(m)
    return checked


def _mha_dropout_on_output(m: MultiHeadAttention) -> None:
    m.w_o, m.dropout = nn.Sequential(m.w_o, nn.Dropout(m.dropout)), 0.0


def _ffn_dropout_after_linear2(m: PositionwiseFeedForward) -> None:
    m.linear2, m.dropout = nn.Sequential(m.linear2, nn.Dropout(m.dropout.p)), nn.Identity()


def _encoder_dropout_before_positions(m: Encoder) -> None:
    m.embedding, m.dropout = nn.Sequential(m.embedding, nn.Dropout(m.dropout.p)), nn.Identity()


def _pre_ln(patch):
    def checked(layer: EncoderLayer) -> None:
        if not layer.norm_first:
            raise LookupError("only for norm_first=True")
        patch(layer)
    return checked


def _residual_from_norm(layer: EncoderLayer) -> None:
    """pre-LN with the residual taken after the norm: x = norm1(x) + attn(norm1(x)), and so for the ffn."""
    seen = {}
    layer.register_forward_pre_hook(lambda mod, args: seen.__setitem__(1, args[0]))
    layer.norm2.register_forward_pre_hook(lambda mod, args: seen.__setitem__(2, args[0]))
    for i, norm in ((1, layer.norm1), (2, layer.norm2)):
        drop = getattr(layer, f"dropout{i}")
        setattr(layer, f"dropout{i}", _Call(lambda y, i=i, drop=drop, norm=norm: drop(y) + norm(seen[i]) - seen[i]))


SPLIT_MESSAGE = ("the heads are split the wrong way: head i must take features [i*d_k, (i+1)*d_k) of every "
                 "position; look at the order of the axes in your split (and in the merge before w_o).")
CAUSAL = "a causal mask is applied: in an encoder every token attends in both directions."

#: the usual mistakes of each part: (how to make it from the reference, what to tell the student)
MISTAKES = {
    "positional_encoding": [
        (dict(patch=_pe("swapped")), "sin and cos are swapped: even features (2i) take sin, odd features (2i+1) take cos."),
        (dict(patch=_pe("halves")), "the sines and cosines are in two halves; the contract interleaves them "
                                    "(column 2i is sin, column 2i+1 is cos of the same frequency)."),
        (dict(patch=_pe("i_not_2i")), "the exponent uses i/d_model where the paper has 2i/d_model "
                                      "(columns 2i and 2i+1 share the frequency 1 / 10000^(2i/d_model))."),
        (dict(patch=_pe("per_feature")), "each column gets its own frequency; columns 2i and 2i+1 must share "
                                         "1 / 10000^(2i/d_model)."),
        (dict(patch=_pe("zeros")), "the table is all zeros."),
    ],
    "attention": [
        (dict(attention=_scale_queries(math.sqrt)), "the scores are not scaled by 1/sqrt(d_k) before the softmax."),
        (dict(attention=_scale_queries(lambda d: 1 / math.sqrt(d))), "the scores are divided by d_k; the formula divides "
                                                                      "by sqrt(d_k)."),
        (dict(attention=_over_queries), "the softmax runs over the queries (dim -2); each query's weights over the keys "
                                        "(dim -1) must sum to 1."),
        (dict(attention=_with_mask(_inverted_mask)), "the mask is inverted: attn_mask True means *may attend* "
                                    "(the F.scaled_dot_product_attention convention)."),
        (dict(attention=_with_mask(_causal_mask)), "a causal mask is applied: attention here sees every key the mask allows, in both "
                                  "directions."),
    ],
    "multi_head_attention": [
        *[(dict(patch=_split(kind, both)), SPLIT_MESSAGE) for kind in ("dk_h", "view") for both in (False, True)],
        (dict(patch=_set(w_o=nn.Identity)), "the output projection w_o is not applied to the concatenated heads."),
        (dict(attention=_scale_queries(math.sqrt)), "the scores are not scaled by 1/sqrt(d_k)."),
        (dict(patch=_scaled_by_d_model), "the scores are scaled by 1/sqrt(d_model); each head scales by 1/sqrt(d_k), d_k = d_model // num_heads."),
        (dict(attention=_with_mask(_inverted_mask)), "the padding mask is inverted: key_padding_mask True means "
                                                     "*padding, ignore* "
                                       "(nn.MultiheadAttention's convention), the opposite of attn_mask."),
        (dict(masks=_masks("ignore")), "key_padding_mask is ignored: padded keys must get zero weight."),
        (dict(attention=_with_mask(_causal_mask)), CAUSAL),
        (dict(attention=_over_queries), "the softmax runs over the queries (dim -2) instead of the keys (dim -1)."),
        (dict(attention=_weights_after_dropout), "in training mode (dropout > 0) the weights you return are the ones "
                                                 "after dropout, so their rows no longer sum to 1; the part returns the "
                                                 "weights before dropout."),
        (dict(patch=_training_only(_set(dropout=0.0))), "in training mode (dropout > 0) no dropout acts on the "
                                                        "attention weights."),
        (dict(patch=_training_only(_mha_dropout_on_output)), "in training mode dropout acts on the output; the part "
                                                             "drops the attention weights, before they multiply v."),
    ],
    "feed_forward": [
        (dict(patch=_set(activation=lambda x: x)), "the ReLU between linear1 and linear2 is missing."),
        (dict(patch=_set(activation=F.gelu)), "the activation is GELU; the contract (and the paper) uses ReLU."),
        (dict(patch=lambda m: _set(activation=lambda x: x, linear2=nn.Sequential(m.linear2, nn.ReLU()))(m)),
         "the ReLU comes after linear2; it belongs between linear1 and linear2."),
        (dict(patch=_training_only(_set(dropout=nn.Identity))), "in training mode (dropout > 0) no dropout acts "
                                                                "between the ReLU and linear2."),
        (dict(patch=_training_only(_ffn_dropout_after_linear2)), "in training mode dropout acts on linear2's output; "
                                                                 "the part drops the hidden layer, between the ReLU and "
                                                                 "linear2."),
    ],
    "encoder_layer": [
        (dict(patch=_no_residual((1, 2))), "the residual connections are missing: no sublayer's input is added to its output."),
        (dict(patch=_no_residual((1,))), "the residual connection around self-attention is missing (its input is not added to its output)."),
        (dict(patch=_no_residual((2,))), "the residual connection around the feed-forward network is missing (its "
                                         "input is not added to its output)."),
        (dict(patch=_norm_inside), "the norm is applied to the sublayer's output before the residual (x + norm(f(x))); "
                                   "post-LN is norm(x + f(x)), pre-LN is x + f(norm(x))."),
        (dict(patch=_flip_norm_first), "norm_first is read the wrong way round: your layer is pre-LN for "
                                       "norm_first=False and post-LN for norm_first=True."),
        (dict(patch=_pre_ln(_residual_from_norm)), "pre-LN (norm_first=True): the residual adds the normalized x; "
                                                   "only the sublayer's input is normalized, the residual stream "
                                                   "carries x itself."),
        (dict(patch=_pre_ln(_set(norm1=nn.Identity, norm2=nn.Identity))), "pre-LN (norm_first=True): neither "
                                                                          "sublayer reads a normalized input."),
        (dict(patch=_pre_ln(_set(norm1=nn.Identity))), "pre-LN (norm_first=True): self-attention reads x itself, "
                                                       "not norm1(x)."),
        (dict(patch=_pre_ln(_set(norm2=nn.Identity))), "pre-LN (norm_first=True): the feed-forward network reads x "
                                                       "itself, not norm2(x)."),
        (dict(masks=_masks("ignore")), "key_padding_mask is not passed to self-attention."),
        (dict(masks=_masks("invert")), "the padding mask reaches attention inverted (True must mean padding)."),
        (dict(masks=_masks("causal")), CAUSAL),
        (dict(patch=_training_only(_set(dropout1=nn.Identity, dropout2=nn.Identity))),
         "in training mode (dropout > 0) neither sublayer's output is dropped (dropout1, dropout2) before the "
         "residual sum."),
        (dict(patch=_training_only(_set(dropout1=nn.Identity))), "in training mode the self-attention output is not "
                                                                 "dropped (dropout1) before the residual sum."),
        (dict(patch=_training_only(_set(dropout2=nn.Identity))), "in training mode the feed-forward output is not "
                                                                 "dropped (dropout2) before the residual sum."),
    ],
    "encoder": [
        (dict(patch=_unscaled_embedding), "the embeddings are not multiplied by sqrt(d_model) before adding the positions."),
        (dict(patch=lambda m: m.pe.zero_()), "the positional encoding is not added."),
        (dict(patch=lambda m: setattr(m, "pe", _pe("swapped")(m.pe))), "the positional table has sin and cos swapped."),
        (dict(masks=_masks("id_0")), "the padding is taken from token id 0, not from pad_id (pad_id is not 0 here)."),
        (dict(masks=_masks("ignore")), "padding is not masked when no key_padding_mask is given (the padding is "
                                       "then where tokens == pad_id)."),
        (dict(masks=_masks("invert")), "the padding mask is inverted (True must mean padding)."),
        (dict(masks=_masks("causal")), CAUSAL),
        (dict(patch=_only_pre_ln(_set(final_norm=nn.Identity))), "final_norm is missing: with norm_first=True the output "
                                                                 "goes through a LayerNorm."),
        (dict(patch=_only_pre_ln(_flip_norm_first)), "norm_first is not passed on to the layers (or is inverted)."),
        (dict(patch=_training_only(_set(dropout=nn.Identity))), "in training mode (dropout > 0) the sum embedding * "
                                                                "sqrt(d_model) + positions is not dropped out."),
        (dict(patch=_training_only(_encoder_dropout_before_positions)), "in training mode dropout acts on the "
                                                                        "embeddings before the positions are added; the "
                                                                        "part drops their sum."),
    ],
    "parameter_count": [
        (dict(patch=lambda name: name.endswith("bias")), "the biases are not counted (every nn.Linear and LayerNorm has one)."),
        (dict(patch=lambda name: "norm" in name), "the LayerNorms' parameters are not counted (a weight and a bias of "
                                                  "d_model each)."),
        (dict(patch=lambda name: name.startswith("final_norm")), "final_norm (a LayerNorm, only with norm_first=True) "
                                                                 "is not counted."),
        (dict(patch=lambda name: name.startswith("embedding")), "the embedding table (vocab_size x d_model) is not counted."),
    ],
    "reverse_task": [],
}
