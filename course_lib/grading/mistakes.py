"""The usual mistakes of each part, named: course_lib's reference with one known mistake put in.

:func:`course_lib.grading.reference.reference_outputs` runs the real reference on a case; a
*mistake* is a small perturbation of it: one
method of a reference instance replaced (``split_heads`` that splits the wrong way), one submodule
swapped (``w_o`` for ``nn.Identity``), a hook on the attention function (the softmax over the
queries), or a different mask handed to the reference. None of them re-implements a part: the
judge uses them only to *name* a student's bug ("the heads are split the wrong way").

A catalogue, read part by part: what a :class:`Mistake` is and what several parts share (rules, masks,
tables), then one section per part of the exercise with its own rules and perturbations and then its list
(id, message, section, rule, probe, and how the reference makes it); :data:`MISTAKES` gathers the lists,
and :data:`FAILURES` the kinds of failure that are not one named mistake.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..attention import MultiHeadAttention
from ..encoder import Encoder, EncoderLayer
from ..errors import broadcast_shape
from ..positional import sinusoidal_positional_encoding
from .harness import Case
from .reference import _FIRST
from .sections import PLACES, SECTIONS, title  # noqa: F401 (SECTIONS: the titles, for callers)

# ------------------------------------------------------------------ what every mistake is

@dataclass(frozen=True, eq=False)
class Mistake:
    """One named mistake: a stable ``id`` (what the class report counts; never reworded), how to make it
    from the reference (``how``: keyword arguments of :func:`reference_outputs`), what the failed check says
    (``symptom``: what looks wrong and where to look, not the fix), and the three rungs of its hint:
    ``probe`` (rung 1, what to print or compare beyond the check's message; the part's own when empty),
    ``place`` (rung 2, the key of the lecture section that teaches it: ``section`` is its title) and
    ``rule`` (rung 3, the formula or invariant, never the value it gives). None of them is solution code."""

    id: str
    how: dict
    symptom: str
    place: str
    rule: str
    probe: str = ""

    @property
    def section(self) -> str:
        return title(self.place)


#: the lecture sections, by key (titles read from the notebooks: :mod:`.sections`)
S = {k: k for k in PLACES}


# ------------------------------------------------------------------ rules and perturbations that several parts share

_PE_RULE = "PE[pos, 2i] = sin (pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos (pos / 10000^(2i/d_model))"
_SCALE_RULE = "softmax (q kᵀ / √d_k) v, with d_k the last size of q (for a head: d_model / num_heads)"
_AXIS_RULE = "each query's weights are a distribution over the keys: weights.sum(-1) == 1"
_MASK_RULE = ("attn_mask True = may attend (F.scaled_dot_product_attention); key_padding_mask True = padding, "
              "never attended (nn.MultiheadAttention): the two are opposites")
_CAUSAL_RULE = "an encoder is bidirectional: every query may attend to every key that is not padding"
_LN_RULE = ("LayerNorm(x) = (x - mean) / √(var + eps) · weight + bias over the features, with nn.LayerNorm's "
            "own default eps (the contract builds every norm as nn.LayerNorm(d_model))")
_LINEAR_RULE = ("a module's parameters are its submodules': nn.Linear(n_in, n_out) holds an n_out × n_in weight and "
                "n_out biases, nn.LayerNorm(d) a weight and a bias of d each, nn.Embedding(n, d) an n × d table; a "
                "buffer is not a parameter")
_DROPOUT_RULE = ("in training, dropout(y) zeroes each entry with probability p and multiplies the others by "
                 "1/(1-p); in eval mode it is the identity")
_CAUSAL = ("queries get zero weight on keys that come after them although the mask allows those keys; look at "
           "which mask reaches the softmax.")


class _Call(nn.Module):
    """A submodule that calls ``fn`` (to stand in a registered submodule's place)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _set(**attributes):
    """Replace attributes of the reference module (``w_o=nn.Identity()``, ``activation=...``)."""
    def patch(m: nn.Module) -> None:
        for name, value in attributes.items():
            setattr(m, name, value() if isinstance(value, type) else value)
    return patch


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
        if kind == "shifted":                                                       # rows for pos = 1 .. max_len
            return sinusoidal_positional_encoding(t + 1, d).double()[1:]
        if kind == "i_not_2i":
            return wide[:, :d]
        if kind == "per_feature":                                                   # column j: 10000^(j/d)
            out = table.clone()
            out[:, 1::2] = wide[:, 3::4][:, : d // 2]
            return out
        return torch.zeros_like(table)
    return patch


def _eps(value: float, final_only: bool = False, only: str | None = None):
    """Every LayerNorm of the module (``final_only``: final_norm alone, pre-LN; ``only``: that norm of a layer)
    with another epsilon."""
    def patch(m: nn.Module) -> None:
        norms = ([m.final_norm] if final_only else [getattr(m, only)] if only else
                 [x for x in m.modules() if isinstance(x, nn.LayerNorm)])
        if not any(isinstance(x, nn.LayerNorm) for x in norms):
            raise LookupError("no LayerNorm to change")
        for x in norms:
            x.eps = value
    return patch


def _flip_norm_first(m: nn.Module) -> None:
    for layer in (m.layers if isinstance(m, Encoder) else [m]):
        layer.norm_first = not layer.norm_first


def _only_pre_ln(patch):
    def checked(m):
        if not any(layer.norm_first for layer in m.layers):
            raise LookupError("only for norm_first=True")
        patch(m)
    return checked


# ------------------------------------------------------------------ Part 1: the positional table

#: Part 1's mistakes: a wrong table (its perturbations: :func:`_pe`)
_POSITIONAL = [
    Mistake("pe_sin_cos_swapped", dict(patch=_pe("swapped")),
            "column 0 of the table is 1 at position 0 where it should be 0; look at which column gets which "
            "function.", S["table"], _PE_RULE),
    Mistake("pe_halves", dict(patch=_pe("halves")),
            "the columns are in another order than the reference's: look at where the sines and the cosines "
            "are written (which columns).", S["table"], _PE_RULE + " (columns interleaved)"),
    Mistake("pe_exponent_i", dict(patch=_pe("i_not_2i")),
            "the frequencies fall too slowly along the columns; look at the exponent of 10000.", S["table"],
            _PE_RULE),
    Mistake("pe_frequency_per_column", dict(patch=_pe("per_feature")),
            "columns 2i and 2i+1 do not oscillate at the same frequency; look at how the frequency of a "
            "column is computed.", S["table"], _PE_RULE + " (2i and 2i+1 share one frequency)"),
    Mistake("pe_off_by_one_row", dict(patch=_pe("shifted")),
            "row 0 of the table is not position 0's: every row holds the next position's values; look at "
            "where the positions start.", S["table"], _PE_RULE + ", pos = 0 .. max_len - 1",
            "print row 0 of your table: at pos = 0 every angle is 0, so what must the sines and the cosines be?"),
    Mistake("pe_zeros", dict(patch=_pe("zeros")),
            "the table is all zeros; look at what is written into it.", S["table"], _PE_RULE),
]


# ------------------------------------------------------------------ Part 2: scaled dot-product attention

#: Part 2's mistakes: the reference's attention with scaled queries, the softmax over the queries, another mask
_ATTENTION = [
    Mistake("attention_unscaled", dict(attention=_scale_queries(math.sqrt)),
            "the weights are more peaked than the reference's (rows closer to one-hot), most on the case "
            "with a large d_k; look at the line that computes the scores.", S["scaling"], _SCALE_RULE),
    Mistake("attention_scaled_by_d_k", dict(attention=_scale_queries(lambda d: 1 / math.sqrt(d))),
            "the weights are flatter than the reference's (closer to uniform); look at the line that "
            "computes the scores.", S["scaling"], _SCALE_RULE),
    Mistake("softmax_wrong_axis", dict(attention=_over_queries),
            "the weights of a query do not sum to 1 over the keys; look at the softmax line.", S["sdpa"],
            _AXIS_RULE),
    Mistake("attn_mask_inverted", dict(attention=_with_mask(_inverted_mask)),
            "keys the mask allows get weight 0 and keys it forbids get weight; look at how the mask fills "
            "the scores.", S["conventions"], _MASK_RULE),
    Mistake("causal_mask", dict(attention=_with_mask(_causal_mask)), _CAUSAL, S["causal"], _CAUSAL_RULE),
]


# ------------------------------------------------------------------ Part 3: multi-head attention

_SPLIT_RULE = ("head i reads features [i·d_k, (i+1)·d_k) of every position; its tensors are (B, num_heads, T, d_k), "
               "and the merge puts each position's heads back side by side, in order")
_SPLIT = ("the heads do not line up with the features: at position 0 your output can agree with the reference "
          "while at the later positions it does not; look at the line that splits (B, T, d_model) into heads, "
          "and the one that merges them before w_o.")


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


def _merge_only(m: MultiHeadAttention) -> None:
    """The heads split right, merged by a reshape of (B, H, T, d_k) without moving the head axis back."""
    m.merge_heads = lambda x: x.reshape(x.shape[0], x.shape[2], m.num_heads * m.d_k)


def _scaled_by_d_model(m: MultiHeadAttention) -> None:
    """Queries times sqrt(d_k / d_model): the scores come out divided by sqrt(d_model)."""
    m.w_q = nn.Sequential(m.w_q, _Call(lambda y: y * math.sqrt(m.d_k / m.d_model)))


#: Part 3's mistakes: the heads split or merged wrong, no w_o, the scaling, the masks
_MULTI_HEAD = [
    *[Mistake("heads_split_wrong", dict(patch=_split(kind, both)), _SPLIT, S["heads"], _SPLIT_RULE)
      for kind in ("dk_h", "view") for both in (False, True)],
    Mistake("heads_merged_wrong", dict(patch=_merge_only),
            "the weights are right but 'out' is not, from position 1 on: the heads are split the right way "
            "but not put back side by side per position; look at the line that merges the heads before w_o.",
            S["heads"], _SPLIT_RULE,
            "run only your merge on a (1, num_heads, T, d_k) tensor numbered with torch.arange and print "
            "position 1 of the result: which head's features, of which position, does it hold?"),
    Mistake("no_output_projection", dict(patch=_set(w_o=nn.Identity)),
            "the weights are right but 'out' is not: look at what happens to the heads after they are "
            "merged.", S["heads"], "MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O"),
    Mistake("attention_unscaled", dict(attention=_scale_queries(math.sqrt)),
            "the weights are more peaked than the reference's; look at the line that computes the scores.",
            S["scaling"], _SCALE_RULE),
    Mistake("scaled_by_d_model", dict(patch=_scaled_by_d_model),
            "the weights are flatter than the reference's whenever num_heads > 1 (with one head they "
            "agree); look at the number the scores are divided by.", S["scaling"], _SCALE_RULE),
    Mistake("padding_mask_inverted", dict(attention=_with_mask(_inverted_mask)),
            "padded keys get weight and real keys get none; look at how key_padding_mask becomes the mask "
            "of the scores.", S["conventions"], _MASK_RULE),
    Mistake("padding_mask_ignored", dict(masks=_masks("ignore")),
            "padded keys get weight; look at where key_padding_mask is used.", S["padded_attention"],
            _MASK_RULE),
    Mistake("causal_mask", dict(attention=_with_mask(_causal_mask)), _CAUSAL, S["causal"], _CAUSAL_RULE),
    Mistake("softmax_wrong_axis", dict(attention=_over_queries),
            "the weights of a query do not sum to 1 over the keys; look at the softmax line.", S["sdpa"],
            _AXIS_RULE),
]


# ------------------------------------------------------------------ Part 4: the feed-forward network

#: Part 4's mistakes: the activation missing, another one, or in another place
_FEED_FORWARD = [
    Mistake("ffn_no_relu", dict(patch=_set(activation=lambda x: x)),
            "the output is an affine function of x (negative hidden values get through); look at what "
            "happens between linear1 and linear2.", S["ffn"], "FFN(x) = max(0, x W1 + b1) W2 + b2"),
    Mistake("ffn_gelu", dict(patch=_set(activation=F.gelu)),
            "the output is close to the reference's but not equal, most where hidden values are near 0; "
            "look at the activation.", S["gelu"], "FFN(x) = max(0, x W1 + b1) W2 + b2"),
    Mistake("ffn_relu_after_linear2",
            dict(patch=lambda m: _set(activation=lambda x: x, linear2=nn.Sequential(m.linear2, nn.ReLU()))(m)),
            "the output has no negative entries; look at where the activation sits.", S["ffn"],
            "FFN(x) = max(0, x W1 + b1) W2 + b2"),
]


# ------------------------------------------------------------------ Part 5: the encoder layer

_RESIDUAL_RULE = "post-LN: x ← norm(x + dropout(f(x))); pre-LN: x ← x + dropout(f(norm(x)))"


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


#: Part 5's mistakes: the norms' eps, the residuals, where the norms sit, the masks
_LAYER = [
    *[Mistake("layer_norm_eps", dict(patch=_eps(eps, only=which)),
              "the output is close to the reference's but not equal, most where a position's features vary "
              "little; look at how norm1 and norm2 are built.", S["layernorm"], _LN_RULE,
              "print your norm1 and norm2 (their repr lists every argument) next to nn.LayerNorm(d_model)")
      for eps in (0.1, 0.01, 1e-3) for which in (None, "norm1", "norm2")],
    Mistake("no_residual", dict(patch=_no_residual((1, 2))),
            "the output does not depend on x beyond what the sublayers see; look at the lines that combine "
            "each sublayer's output with its input.", S["residual"], _RESIDUAL_RULE),
    Mistake("no_residual_attention", dict(patch=_no_residual((1,))),
            "after the self-attention sublayer its input is lost; look at the line that combines the "
            "self-attention output with its input.", S["residual"], _RESIDUAL_RULE),
    Mistake("no_residual_ffn", dict(patch=_no_residual((2,))),
            "after the feed-forward sublayer its input is lost; look at the line that combines the "
            "feed-forward output with its input.", S["residual"], _RESIDUAL_RULE),
    Mistake("norm_inside_residual", dict(patch=_norm_inside),
            "the output is not normalized where the reference's is; look at what each norm is applied "
            "to.", S["pre_post"], _RESIDUAL_RULE),
    Mistake("norm_first_inverted", dict(patch=_flip_norm_first),
            "the post-LN cases give the pre-LN answer and the pre-LN cases the post-LN one; look at the "
            "test of norm_first.", S["pre_post"], _RESIDUAL_RULE),
    Mistake("pre_ln_residual_normalized", dict(patch=_pre_ln(_residual_from_norm)),
            "pre-LN case: the residual stream is normalized where it should not be; look at which tensor "
            "each residual sum adds.", S["pre_post"], _RESIDUAL_RULE),
    Mistake("pre_ln_no_norm", dict(patch=_pre_ln(_set(norm1=nn.Identity, norm2=nn.Identity))),
            "pre-LN case: the output does not depend on norm1's and norm2's weights; look at what each "
            "sublayer reads.", S["pre_post"], _RESIDUAL_RULE),
    Mistake("pre_ln_no_norm1", dict(patch=_pre_ln(_set(norm1=nn.Identity))),
            "pre-LN case: the output does not depend on norm1's weights; look at what self-attention "
            "reads.", S["pre_post"], _RESIDUAL_RULE),
    Mistake("pre_ln_no_norm2", dict(patch=_pre_ln(_set(norm2=nn.Identity))),
            "pre-LN case: the output does not depend on norm2's weights; look at what the feed-forward "
            "network reads.", S["pre_post"], _RESIDUAL_RULE),
    Mistake("padding_mask_ignored", dict(masks=_masks("ignore")),
            "case with padding: the real positions' outputs change with the padded tokens; look at what "
            "self-attention is given.", S["padded_attention"], _MASK_RULE),
    Mistake("padding_mask_inverted", dict(masks=_masks("invert")),
            "case with padding: the real positions attend only to padding; look at the mask that reaches "
            "self-attention.", S["conventions"], _MASK_RULE),
    Mistake("causal_mask", dict(masks=_masks("causal")), _CAUSAL, S["causal"], _CAUSAL_RULE),
]


# ------------------------------------------------------------------ Part 6: the encoder

def _shifted_pe(m: Encoder) -> None:
    m.pe = _pe("shifted")(m.pe.double())


def _post_ln_final_norm(m: Encoder) -> None:
    """post-LN with final_norm a LayerNorm as nn.LayerNorm makes it (weight 1, bias 0): the case loads none."""
    if any(layer.norm_first for layer in m.layers):
        raise LookupError("only for norm_first=False")
    m.final_norm = nn.LayerNorm(m.d_model).double()


def _unscaled_embedding(m: Encoder) -> None:
    m.embedding.weight.data /= math.sqrt(m.d_model)


def _scaled_sum(m: Encoder) -> None:
    """(E + PE) · √d_model: the table scaled with the embedding."""
    m.pe = m.pe * math.sqrt(m.d_model)


def _shared_layers(m: Encoder) -> None:
    """``[EncoderLayer(...)] * num_layers``: one layer object in every place. Loading the state_dict writes each
    layer's weights into it in turn, so it computes with the last layer's, num_layers times."""
    if len(m.layers) < 2:
        raise LookupError("only for num_layers >= 2")
    m.layers = nn.ModuleList([m.layers[-1]] * len(m.layers))


#: Part 6's mistakes: the input (scale, table, rows), the norms, the padding mask, norm_first
_ENCODER = [
    Mistake("embedding_unscaled", dict(patch=_unscaled_embedding),
            "the token part of the first layer's input is smaller than the reference's, by a factor that "
            "grows with d_model; look at the line that builds x from the embedding and the table.",
            S["sqrt_d_model"], "x = embedding(tokens) · √d_model + PE[:T]"),
    Mistake("embedding_scale_on_sum", dict(patch=_scaled_sum),
            "the token part of the first layer's input is right but the positional part is larger than the "
            "reference's, by a factor that grows with d_model; look at what the line that builds x multiplies.",
            S["sqrt_d_model"], "x = embedding(tokens) · √d_model + PE[:T]: the factor is the embedding's alone",
            "print x - embedding(tokens) · √d_model (the positional part of your first layer's input) next to "
            "PE[:T] for a short sequence"),
    Mistake("layers_shared", dict(patch=_shared_layers),
            "every layer of your stack computes with the same weights, those the test loads into the last "
            "layer: the layers are one module, with the same parameter objects; look at how the list of "
            "layers is built.", S["encoder_stack"],
            "num_layers layers, each its own EncoderLayer with its own parameters",
            "print [id(layer) for layer in encoder.layers] and len(list(encoder.parameters())) for num_layers = 1 "
            "and 2"),
    Mistake("no_positions", dict(patch=lambda m: m.pe.zero_()),
            "a token gets the same output wherever it stands; look at the line that builds x.", S["added"],
            "x = embedding(tokens) · √d_model + PE[:T]"),
    Mistake("pe_sin_cos_swapped", dict(patch=lambda m: setattr(m, "pe", _pe("swapped")(m.pe))),
            "the positions differ from the table's; look at the table your Encoder adds.", S["table"], _PE_RULE),
    Mistake("pe_off_by_one_row", dict(patch=_shifted_pe),
            "each position gets the table's row of the next position; look at which rows of the table x "
            "receives.", S["table"], "position t (t = 0 .. T - 1) gets row t of the table",
            "print the rows of the table your forward adds for T = 3, with their indices"),
    Mistake("final_norm_in_post_ln", dict(patch=_post_ln_final_norm),
            "post-LN case: the output is normalized once more after the last layer (a LayerNorm the contract "
            "does not have there); look at what final_norm is when norm_first is False.", S["pre_post"],
            "post-LN: the last layer's norm2 already normalizes; final_norm is a LayerNorm only for pre-LN",
            "print encoder.final_norm and the keys of encoder.state_dict() for norm_first=False and True"),
    *[Mistake("layer_norm_eps", dict(patch=_only_pre_ln(_eps(eps, final_only=True))),
              "pre-LN case: the output is close to the reference's but not equal; look at how final_norm is "
              "built.", S["layernorm"], _LN_RULE, "print your final_norm next to nn.LayerNorm(d_model)")
      for eps in (0.1, 0.01, 1e-3)],
    Mistake("pad_id_hard_coded", dict(masks=_masks("id_0")),
            "case with pad_id != 0: the real token 0 is treated as padding and the padding is not; look at "
            "how the padding mask is made when none is given.", S["padding"],
            "without a key_padding_mask, padding is where tokens == pad_id"),
    Mistake("padding_mask_ignored", dict(masks=_masks("ignore")),
            "case without a key_padding_mask: the padded tokens change the real positions' outputs; look at "
            "what mask the layers get when none is given.", S["padding"],
            "without a key_padding_mask, padding is where tokens == pad_id"),
    Mistake("padding_mask_inverted", dict(masks=_masks("invert")),
            "case with padding: the real positions attend only to padding; look at the mask the layers "
            "get.", S["conventions"], _MASK_RULE),
    Mistake("causal_mask", dict(masks=_masks("causal")), _CAUSAL, S["causal"], _CAUSAL_RULE),
    Mistake("no_final_norm", dict(patch=_only_pre_ln(_set(final_norm=nn.Identity))),
            "pre-LN case: the output is not normalized; look at what comes after the last layer.",
            S["pre_post"], "pre-LN: the last residual stream goes through final_norm, a LayerNorm"),
    Mistake("norm_first_not_passed", dict(patch=_only_pre_ln(_flip_norm_first)),
            "pre-LN case: the layers behave as post-LN; look at how the layers are built.", S["pre_post"],
            "every layer gets the Encoder's norm_first"),
]


# ------------------------------------------------------------------ Part 7: the parameter count

#: Part 7's mistakes: a kind of parameter left out of the count (``patch``: the names not counted)
_COUNT = [
    Mistake("count_no_biases", dict(patch=lambda name: name.endswith("bias")),
            "your count is short, by an amount that grows with num_layers and with d_ff; look at which "
            "parameters of each nn.Linear and LayerNorm you count.", S["cost"], _LINEAR_RULE),
    Mistake("count_no_layer_norms", dict(patch=lambda name: "norm" in name),
            "your count is short by 4·d_model per layer and, in pre-LN, 2·d_model more: look at what you "
            "count for the LayerNorms.", S["layernorm"],
            "nn.LayerNorm(d) holds a weight and a bias of d entries each; every layer has two of them"),
    # the layers' LayerNorms and the attention projections' biases are both 4·d_model per layer: no size
    # tells them apart, so the id and the message name both
    Mistake("count_attention_biases_or_layer_norms",
            dict(patch=lambda name: "self_attn" in name and name.endswith("bias")),
            "your count is short by exactly 4·d_model per layer; two different omissions have that size: "
            "look at what you count for the biases of the four attention projections and for the two "
            "LayerNorms of a layer.", S["heads"],
            "each of w_q, w_k, w_v, w_o is an nn.Linear with a bias; nn.LayerNorm(d) holds a weight and a bias"),
    Mistake("count_final_norm", dict(patch=lambda name: name.startswith("final_norm")),
            "pre-LN case: your count is 2·d_model short; look at what pre-LN adds after the layers.",
            S["pre_post"], "final_norm is a LayerNorm (2·d_model) only for norm_first=True"),
    Mistake("count_no_embedding", dict(patch=lambda name: name.startswith("embedding")),
            "your count is short by an amount that grows with vocab_size; look at the embedding.",
            S["embedding"], "the embedding is a vocab_size × d_model table"),
]


# ------------------------------------------------------------------ Part 8: the reverse task

#: Part 8 has no perturbation of a reference (its judge reads the training run itself: FAILURES' reverse_* ids)
_REVERSE = []


# ------------------------------------------------------------------ the catalogue

#: the usual mistakes of each part
MISTAKES = {
    "positional_encoding": _POSITIONAL,
    "attention": _ATTENTION,
    "multi_head_attention": _MULTI_HEAD,
    "feed_forward": _FEED_FORWARD,
    "encoder_layer": _LAYER,
    "encoder": _ENCODER,
    "parameter_count": _COUNT,
    "reverse_task": _REVERSE,
}


# ------------------------------------------------------------------ failures that are not one named mistake

@dataclass(frozen=True)
class Failure:
    """A kind of failure that is not one named mistake (a crash, a wrong shape, values that differ):
    the same rungs as :class:`Mistake` (``place`` None: no section teaches it)."""

    id: str
    place: str | None
    rule: str | None
    probe: str = ""

    @property
    def section(self) -> str | None:
        return None if self.place is None else title(self.place)


#: every failure kind a verdict may carry besides the named mistakes (the judge's own, the notebook's checks',
#: and those the sandboxed grader reports: see course_lib.grading's docstring)
FAILURES = {f.id: f for f in [
    Failure("not_done", None, None),
    Failure("raised", None, "the visible cases run the same code on the same families: run them and read the error"),
    Failure("wrong_result", None, "the part's contract (names, types, shapes) is in the docstring of its cell"),
    Failure("wrong_shape", None, "the shapes are in the Shape: section of the cell's docstring"),
    Failure("not_finite", S["padded_attention"], "a masked score is a very negative finite number; "
            "exp of a large score overflows unless the largest score of the row is subtracted first"),
    Failure("overflow", S["sdpa"], "softmax (s) = softmax (s - max(s)): subtract each row's largest score before exp"),
    Failure("rows_not_normalized", S["sdpa"], _AXIS_RULE),
    Failure("masked_keys_weighted", S["conventions"], _MASK_RULE),
    Failure("values_differ", None, None),
    Failure("count_wrong", S["cost"], _LINEAR_RULE),
    Failure("input_modified", S["residual"], "a sublayer adds to the residual stream in a new tensor (x = x + ...): "
            "an in-place x += ... changes the caller's tensor and breaks backward"),
    Failure("dropout_missing", S["dropout"], _DROPOUT_RULE),
    Failure("dropout_misplaced", S["dropout"], _DROPOUT_RULE),
    Failure("dropout_wrong_rate", S["dropout"], _DROPOUT_RULE),
    Failure("dropout_not_scaled", S["dropout"], _DROPOUT_RULE),
    Failure("dropout_in_eval", S["dropout"], _DROPOUT_RULE),
    Failure("weights_after_dropout", S["dropout"], "the weights returned are those before dropout: each row sums "
            "to 1; only the copy that multiplies v is dropped"),
    Failure("reverse_not_learned", S["order"], "only the positional table tells the model where a token stands; "
            "train on cross_entropy of the logits of every position against the reversed tokens"),
    Failure("reverse_answer_built_in", S["order"], "the answer must be learned: before training the model is "
            "blind to the task"),
    Failure("reverse_no_zero_grad", S["training_loop"], "backward adds into .grad: each step's gradients must be "
            "that batch's alone, so they are cleared between two steps",
            "print a parameter's .grad norm just before each optimizer.step() of the first three batches"),
    Failure("reverse_loss_not_falling", S["training_loop"], "the loss starts near ln(vocab_size) and falls; the head "
            "returns logits (no softmax) and every step calls zero_grad, backward and step"),
    Failure("bias_missing", None, "nn.Linear(n_in, n_out) holds a weight and a bias (bias=True, its default); "
            "the contract's linear layers each have both, and the test loads both",
            "print sorted(module.state_dict()) next to the keys the check names"),
    Failure("reverse_loss_count", S["training_loop"], "one optimiser step per batch, every batch once (in any order): "
            "train_reverser returns as many losses as it is given batches",
            "print len(batches), len(losses) and how many times your loop called optimizer.step()"),
    Failure("reverse_too_many_steps", S["training_loop"], "the budget is one optimiser step per batch given: the "
            "optimiser's settings, a schedule and the batches' order are yours, the number of steps is not",
            "count your loop's calls of optimizer.step() (of every optimiser you made) and compare with len(batches)"),
    # named from the evidence of the run: the harness's contract message (the dtype, the state_dict's keys), or
    # the cases of the part that passed before the one that failed (judging.judge's ``passed``)
    Failure("pe_dtype", None, "the contract's table is float32, torch's default dtype: a tensor computed in float64 "
            "(an explicit dtype, numpy, math's floats) stays float64 until it is converted",
            "print the dtype of your table and of each tensor your function builds on the way to it"),
    Failure("buffer_persistent", None, "the contract's state_dict holds the weights the test loads and nothing "
            "else: a fixed table the module keeps is a buffer that is not saved with them (a non-persistent "
            "buffer)", "print sorted(encoder.state_dict()) next to [name for name, _ in encoder.named_parameters()] "
            "and [name for name, _ in encoder.named_buffers()]: which key is no parameter, and where did your "
            "__init__ make it?"),
    Failure("final_norm_missing", S["pre_post"], "pre-LN: the last layer's output goes through final_norm, an "
            "nn.LayerNorm(d_model) with a weight and a bias; post-LN has no final norm (final_norm is the identity)",
            "print encoder.final_norm and the keys of encoder.state_dict() that start with final_norm, for "
            "norm_first=False and for norm_first=True"),
    Failure("pre_ln_branch_wrong", S["pre_post"], "pre-LN: x ← x + dropout(sublayer(norm(x))) for each sublayer; "
            "the residual stream itself is not normalized inside the layer (post-LN: x ← norm(x + "
            "dropout(sublayer(x))))",
            "run your layer on one x with norm_first=False and with norm_first=True, and print after each step of "
            "the pre-LN branch the mean and the standard deviation over the features of one position: which tensor "
            "does each sublayer get, and which tensor is its output added to?"),
    Failure("count_final_norm_in_post_ln", S["pre_post"], "final_norm is a LayerNorm (2·d_model: a weight and a bias "
            "of d_model each) only for norm_first=True; a post-LN stack ends with its last layer's norm2",
            "print your formula's terms for the failing case with norm_first=False and with norm_first=True, next "
            "to course_lib.count_parameters(Encoder(...)) of each: which term does the post-LN Encoder not have?"),
    Failure("reverse_accuracy_wrong", S["order"], "accuracy = the share of positions whose argmax over the "
            "vocabulary is the reversed token, with the model in eval mode"),
    # reported by the sandboxed grader (course_grader), never by the judge itself
    Failure("ready_made_attention", S["sdpa"], "the exercise asks for the explicit computation"),
    Failure("reference_used", None, "the exercise asks for your own implementation, not course_lib's"),
    Failure("rule_broken", None, "a solution cell imports only what the notebook's rules allow"),
    Failure("timed_out", None, None),
    Failure("out_of_memory", None, None),
    Failure("cell_missing", None, None),
    Failure("cell_error", None, None),
    Failure("results_unreadable", None, None),
    Failure("grader_error", None, None),
]}


#: every id a verdict may carry: the named mistakes' and the failure kinds'
IDS = sorted({m.id for ms in MISTAKES.values() for m in ms} | set(FAILURES))


def section_of(mistake_id: str, part: str | None = None) -> str | None:
    """The lecture section that teaches ``mistake_id`` (rung 2; ``part``'s own where the id is shared), or None."""
    for _, ms in sorted(MISTAKES.items(), key=lambda item: item[0] != part):
        for m in ms:
            if m.id == mistake_id:
                return m.section
    f = FAILURES.get(mistake_id)
    return f.section if f else None


def rule_of(mistake_id: str, part: str | None = None) -> str | None:
    """The formula or invariant behind ``mistake_id`` (rung 3), or None."""
    for p, ms in MISTAKES.items():
        for m in ms:
            if m.id == mistake_id and (part is None or p == part):
                return m.rule
    f = FAILURES.get(mistake_id)
    return f.rule if f else None


_SCALE_PROBE = ("print the number your scores are divided by next to that case's d_model, num_heads and q.shape[-1], "
                "and one row of scores before the softmax")
_MASK_PROBE = ("print the mask of one sequence of that case next to the weights of its first query (one head): "
               "which keys get weight, and which does the mask mark?")
#: rung 1 of the mistakes that several parts share, when the mistake has no probe of its own
SHARED_PROBES = {
    "attention_unscaled": _SCALE_PROBE, "attention_scaled_by_d_k": _SCALE_PROBE, "scaled_by_d_model": _SCALE_PROBE,
    "attn_mask_inverted": _MASK_PROBE, "padding_mask_inverted": _MASK_PROBE, "padding_mask_ignored": _MASK_PROBE,
    "causal_mask": "print the weights of one head of that case as a T_q × T_k table: where are the zeros, and "
                   "where does the mask put them?",
    "softmax_wrong_axis": "print weights.sum(-1) and weights.sum(-2) for that case: which one is all ones?",
    "no_output_projection": "print 'out' just before your forward returns it and the last module it went through",
}


def probe_of(mistake_id: str, part: str | None = None) -> str | None:
    """What to print or compare to see ``mistake_id`` for oneself (rung 1), or None."""
    for p, ms in MISTAKES.items():
        for m in ms:
            if m.id == mistake_id and (part is None or p == part) and m.probe:
                return m.probe
    if mistake_id in SHARED_PROBES:
        return SHARED_PROBES[mistake_id]
    f = FAILURES.get(mistake_id)
    return f.probe if f and f.probe else None
