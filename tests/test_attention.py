"""Tests of course_lib.attention: the explicit formula, the fused path, torch parity, masks, errors."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_lib import (
    CourseTypeError,
    CourseValueError,
    MultiHeadAttention,
    padding_mask_from_lengths,
    scaled_dot_product_attention,
)
from course_lib.interop import copy_attention_to_torch

PROPERTY = settings(max_examples=25, deadline=None, derandomize=True)


def copy_to_torch_mha(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    """An ``nn.MultiheadAttention`` with ``mha``'s weights: ``in_proj = cat(w_q, w_k, w_v)``."""
    ref = nn.MultiheadAttention(mha.d_model, mha.num_heads, batch_first=True).to(mha.w_q.weight.dtype)
    return copy_attention_to_torch(mha, ref)


def random_mask(b, t, lengths=None):
    """A padding mask (True = padding) with the given real lengths (default: random, at least 1)."""
    if lengths is None:
        lengths = torch.randint(1, t + 1, (b,))
    return padding_mask_from_lengths(lengths, max_len=t)


# --- scaled_dot_product_attention ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("batch", [(), (3,), (2, 4)])
@pytest.mark.parametrize("t_q,t_k,d_k,d_v", [(1, 1, 1, 1), (5, 5, 8, 8), (3, 7, 4, 6)])
def test_sdpa_matches_formula_and_torch(batch, t_q, t_k, d_k, d_v, dtype):
    q = torch.randn(*batch, t_q, d_k, dtype=dtype)
    k = torch.randn(*batch, t_k, d_k, dtype=dtype)
    v = torch.randn(*batch, t_k, d_v, dtype=dtype)
    out, weights = scaled_dot_product_attention(q, k, v)
    expected_w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1)
    assert out.shape == (*batch, t_q, d_v) and weights.shape == (*batch, t_q, t_k)
    assert out.dtype == dtype
    torch.testing.assert_close(weights, expected_w)
    torch.testing.assert_close(out, expected_w @ v)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mask_shape", [(5, 7), (1, 7), (2, 1, 5, 7), (2, 3, 5, 7)])
def test_sdpa_bool_mask_matches_torch(mask_shape, dtype):
    q, k, v = (torch.randn(2, 3, t, 4, dtype=dtype) for t in (5, 7, 7))
    mask = torch.rand(mask_shape) > 0.3
    mask[..., 0] = True                                    # every row keeps one key (torch would give NaN)
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    assert (weights.masked_select(~mask.expand_as(weights)) == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 5, dtype=dtype))


def test_sdpa_row_with_no_key_is_zero_and_finite():
    q, k, v = (torch.randn(2, 3, 4, requires_grad=True) for _ in range(3))
    mask = torch.ones(2, 3, 3, dtype=torch.bool)
    mask[0, 1] = False                                     # query 1 of batch 0 may attend nowhere
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert (weights[0, 1] == 0).all() and (out[0, 1] == 0).all()
    torch.testing.assert_close(weights[mask.any(-1)].sum(-1), torch.ones(5))
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))


@PROPERTY
@given(t_q=st.integers(1, 6), t_k=st.integers(1, 6), d_k=st.integers(1, 8), scale=st.sampled_from([0.1, 1.0, 30.0]),
       seed=st.integers(0, 2**16))
def test_sdpa_rows_sum_to_one_and_masked_keys_get_zero(t_q, t_k, d_k, scale, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(2, t_q, d_k, generator=g) * scale
    k = torch.randn(2, t_k, d_k, generator=g) * scale
    v = torch.randn(2, t_k, 3, generator=g)
    mask = torch.rand(2, t_q, t_k, generator=g) > 0.5
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert (weights[~mask] == 0).all()                                    # exactly zero, not tiny
    row_sums = weights.sum(-1)
    has_key = mask.any(-1)
    torch.testing.assert_close(row_sums[has_key], torch.ones_like(row_sums[has_key]))
    assert (row_sums[~has_key] == 0).all()


def test_sdpa_dropout_keeps_weights_normalized():
    q, k, v = (torch.randn(2, 6, 4) for _ in range(3))
    out, weights = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 6))
    assert not torch.allclose(out, weights @ v)


@pytest.mark.parametrize("args,error,match", [
    ((torch.randn(2, 3, 4), torch.randn(2, 3, 5), torch.randn(2, 3, 4)), CourseValueError,
     r"^k: expected last dimension d_k=4"),
    ((torch.randn(2, 3, 4), torch.randn(2, 3, 4), torch.randn(2, 5, 4)), CourseValueError, r"^v: expected 3 positions"),
    ((torch.randn(4), torch.randn(2, 4), torch.randn(2, 4)), CourseValueError, r"^q: expected at least 2 dimensions"),
    (([[1.0]], torch.randn(1, 1), torch.randn(1, 1)), CourseTypeError, r"^q: expected a torch.Tensor, got list"),
])
def test_sdpa_errors(args, error, match):
    with pytest.raises(error, match=match):
        scaled_dot_product_attention(*args)


@pytest.mark.parametrize("mask,error,match", [
    (torch.ones(3, 4, dtype=torch.bool), CourseValueError,
     r"^attn_mask: expected a bool mask broadcastable to \(2, 3, 3\)"),
    (torch.ones(2, 3, 3, 1, dtype=torch.bool), CourseValueError, r"^attn_mask: .*broadcastable"),
    (torch.ones(3, 3), CourseTypeError, r"^attn_mask: expected bool with True = may attend.*torch.float32"),
    (torch.ones(3, 3, dtype=torch.long), CourseTypeError, r"^attn_mask: expected bool.*torch.int64"),
])
def test_sdpa_mask_errors(mask, error, match):
    q = torch.randn(2, 3, 4)
    with pytest.raises(error, match=match):
        scaled_dot_product_attention(q, q, q, attn_mask=mask)


# --- MultiHeadAttention ----------------------------------------------------------------------------

def test_mha_state_dict_keys_are_the_contracts():
    mha = MultiHeadAttention(8, 2)
    assert list(mha.state_dict()) == [f"w_{n}.{p}" for n in "qkvo" for p in ("weight", "bias")]
    assert all(tuple(getattr(mha, f"w_{n}").weight.shape) == (8, 8) for n in "qkvo")
    assert (mha.num_heads, mha.d_k, mha.d_model) == (2, 4, 8)
    assert list(MultiHeadAttention(8, 2, bias=False).state_dict()) == [f"w_{n}.weight" for n in "qkvo"]


def test_mha_head_i_uses_its_own_slice_of_features():
    torch.manual_seed(1)
    d_model, num_heads = 6, 3
    d_k = d_model // num_heads
    mha = MultiHeadAttention(d_model, num_heads)
    x = torch.randn(2, 5, d_model)
    out, weights = mha(x, x, x)
    q, k, v = mha.w_q(x), mha.w_k(x), mha.w_v(x)
    heads = []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)
        w_i = torch.softmax(q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(d_k), dim=-1)
        torch.testing.assert_close(weights[:, i], w_i)
        heads.append(w_i @ v[..., cols])
    torch.testing.assert_close(out, mha.w_o(torch.cat(heads, dim=-1)))


MHA_SHAPES = [  # (B, T_q, T_k, d_model, num_heads)
    (1, 1, 1, 4, 1), (2, 5, 5, 8, 2), (3, 4, 6, 12, 3), (2, 7, 3, 16, 8),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("b,t_q,t_k,d_model,num_heads", MHA_SHAPES)
def test_mha_matches_torch_multihead_attention(b, t_q, t_k, d_model, num_heads, masked, dtype):
    mha = MultiHeadAttention(d_model, num_heads).to(dtype)
    ref = copy_to_torch_mha(mha).eval()
    query = torch.randn(b, t_q, d_model, dtype=dtype)
    memory = torch.randn(b, t_k, d_model, dtype=dtype)
    kpm = random_mask(b, t_k) if masked else None
    out, weights = mha(query, memory, memory, key_padding_mask=kpm)
    ref_out, ref_w = ref(query, memory, memory, key_padding_mask=kpm, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(weights, ref_w)
    fused, none = mha(query, memory, memory, key_padding_mask=kpm, need_weights=False)
    assert none is None
    torch.testing.assert_close(fused, ref_out)


def test_mha_allow_mask_matches_torch():
    # course_lib's allow_mask is True = may attend; nn.MultiheadAttention's bool attn_mask is True = masked.
    mha = MultiHeadAttention(8, 2)
    ref = copy_to_torch_mha(mha)
    x = torch.randn(2, 5, 8)
    allowed = torch.rand(5, 5) > 0.4
    allowed.fill_diagonal_(True)
    kpm = torch.tensor([[False] * 5, [False, False, True, True, True]])
    out, weights = mha(x, x, x, key_padding_mask=kpm, allow_mask=allowed)
    ref_out, ref_w = ref(x, x, x, key_padding_mask=kpm, attn_mask=~allowed, average_attn_weights=False)
    keep = (allowed[None] & ~kpm[:, None, :]).any(-1)       # query rows with at least one key
    torch.testing.assert_close(out[keep], ref_out[keep])
    torch.testing.assert_close(weights.transpose(1, 2)[keep], ref_w.transpose(1, 2)[keep])


FUSED_MASKS = {
    "none": lambda b, t: (None, None),
    "padding": lambda b, t: (random_mask(b, t, [t, max(1, t // 2), 1]), None),
    "all_padding_row": lambda b, t: (random_mask(b, t, [t, 0, 2]), None),
    "allow_mask": lambda b, t: (None, torch.rand(t, t) > 0.5),         # some rows may have no key
    "both": lambda b, t: (random_mask(b, t, [t, 0, 3]), torch.rand(b, 1, t, t) > 0.3),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mask_kind", list(FUSED_MASKS))
def test_fused_path_equals_explicit_path_with_gradients(mask_kind, dtype):
    torch.manual_seed(3)
    b, t, d_model = 3, 6, 16
    mha = MultiHeadAttention(d_model, 4).to(dtype).train()      # train mode, dropout 0
    kpm, allow_mask = FUSED_MASKS[mask_kind](b, t)
    x = torch.randn(b, t, d_model, dtype=dtype, requires_grad=True)
    results = []
    for need_weights in (True, False):
        mha.zero_grad()
        out, _ = mha(x, x, x, key_padding_mask=kpm, allow_mask=allow_mask, need_weights=need_weights)
        assert torch.isfinite(out).all()
        (g_x,) = torch.autograd.grad((out * torch.linspace(-1, 1, d_model, dtype=dtype)).sum(), x,
                                     retain_graph=True)
        out.square().sum().backward()
        results.append((out, g_x, [p.grad.clone() for p in mha.parameters()]))
    (out1, gx1, gp1), (out2, gx2, gp2) = results
    torch.testing.assert_close(out1, out2)
    torch.testing.assert_close(gx1, gx2)
    for a, c in zip(gp1, gp2):
        torch.testing.assert_close(a, c)
    assert all(torch.isfinite(g).all() for g in [gx1, gx2, *gp1, *gp2])


@pytest.mark.parametrize("bias", [True, False])
def test_fused_self_attention_packs_the_three_projections(bias):
    # need_weights=False with query is key is value runs one matrix product with [W^Q; W^K; W^V].
    mha = MultiHeadAttention(12, 3, bias=bias)
    x = torch.randn(2, 5, 12)
    kpm = random_mask(2, 5, [5, 3])
    explicit, _ = mha(x, x, x, key_padding_mask=kpm)
    torch.testing.assert_close(mha(x, x, x, key_padding_mask=kpm, need_weights=False)[0], explicit)
    torch.testing.assert_close(mha(x, x.clone(), x.clone(), key_padding_mask=kpm, need_weights=False)[0], explicit)
    q, k, v = mha.project_self_attention(x)
    torch.testing.assert_close(k, mha.split_heads(mha.w_k(x)))
    torch.testing.assert_close(v, mha.split_heads(mha.w_v(x)))
    torch.testing.assert_close(q, mha.split_heads(mha.w_q(x)))


def test_fused_path_cross_attention_equals_explicit():
    mha = MultiHeadAttention(8, 2)
    query, memory = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    kpm = random_mask(2, 5, [5, 2])
    explicit, _ = mha(query, memory, memory, key_padding_mask=kpm)
    fused, _ = mha(query, memory, memory, key_padding_mask=kpm, need_weights=False)
    torch.testing.assert_close(fused, explicit)


def test_mha_dropout_only_in_training():
    mha = MultiHeadAttention(8, 2, dropout=0.5)
    x = torch.randn(2, 6, 8)
    mha.eval()
    torch.testing.assert_close(mha(x, x, x)[0], mha(x, x, x)[0])
    torch.testing.assert_close(mha(x, x, x)[0], mha(x, x, x, need_weights=False)[0])
    mha.train()
    assert not torch.allclose(mha(x, x, x)[0], mha(x, x, x)[0])
    _, weights = mha(x, x, x)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 6))   # weights before dropout


@PROPERTY
@given(b=st.integers(1, 3), t=st.integers(1, 6), num_heads=st.sampled_from([1, 2, 4]), seed=st.integers(0, 2**16))
def test_mha_padded_keys_get_exactly_zero_weight(b, t, num_heads, seed):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    mha = MultiHeadAttention(8, num_heads)
    x = torch.randn(b, t, 8, generator=g) * 5
    kpm = torch.rand(b, t, generator=g) > 0.5
    out, weights = mha(x, x, x, key_padding_mask=kpm)
    assert torch.isfinite(out).all()
    assert (weights.masked_select(kpm[:, None, None, :].expand_as(weights)) == 0).all()
    sums = weights.sum(-1)                                               # (B, H, T)
    has_key = ~kpm.all(-1)
    torch.testing.assert_close(sums[has_key], torch.ones_like(sums[has_key]))
    assert (sums[~has_key] == 0).all()


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(d_model=10, num_heads=4), CourseValueError, r"^num_heads: expected a divisor of d_model=10, got 4"),
    (dict(d_model=0, num_heads=1), CourseValueError, r"^d_model: expected a positive int, got 0"),
    (dict(d_model=8, num_heads=0), CourseValueError, r"^num_heads: expected a positive int, got 0"),
    (dict(d_model=8, num_heads=-2), CourseValueError, r"^num_heads: expected a positive int, got -2"),
    (dict(d_model=8.0, num_heads=2), CourseTypeError, r"^d_model: expected a positive int, got float"),
    (dict(d_model=8, num_heads=2, dropout=1.0), CourseValueError, r"^dropout: expected a float in \[0, 1\), got 1.0"),
    (dict(d_model=8, num_heads=2, dropout=-0.1), CourseValueError, r"^dropout: expected a float in \[0, 1\), got -0.1"),
    (dict(d_model=8, num_heads=2, dropout="0.1"), CourseTypeError, r"^dropout: expected a float"),
])
def test_mha_constructor_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        MultiHeadAttention(**kwargs)


def _x(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype)


@pytest.mark.parametrize("inputs,kwargs,error,match", [
    ((_x(2, 5, 6), _x(2, 5, 8), _x(2, 5, 8)), {}, CourseValueError,
     r"^query: expected shape \(batch, seq, d_model=8\), got torch.float32 of shape \(2, 5, 6\)"),
    ((_x(2, 5, 8), _x(2, 5, 7), _x(2, 5, 8)), {}, CourseValueError, r"^key: expected shape \(batch, seq, d_model=8\)"),
    ((_x(2, 5, 8), _x(2, 5, 8), _x(2, 5, 9)), {}, CourseValueError,
     r"^value: expected shape \(batch, seq, d_model=8\)"),
    ((_x(5, 8), _x(5, 8), _x(5, 8)), {}, CourseValueError,
     r"^query: expected shape \(batch, seq, d_model=8\), got .* \(5, 8\)"),
    ((torch.ones(2, 5, 8, dtype=torch.long),) * 3, {}, CourseTypeError, r"^query: expected a floating-point tensor"),
    ((_x(2, 5, 8), _x(3, 5, 8), _x(3, 5, 8)), {}, CourseValueError, r"^key/value: expected batch size 2 \(as query\)"),
    ((_x(2, 5, 8), _x(2, 5, 8), _x(3, 5, 8)), {}, CourseValueError, r"^key/value: expected batch size 2"),
    ((_x(2, 5, 8), _x(2, 6, 8), _x(2, 4, 8)), {}, CourseValueError, r"^value: expected 6 positions \(as key\)"),
    ((_x(2, 5, 8),) * 3, dict(key_padding_mask=torch.zeros(2, 6, dtype=torch.bool)), CourseValueError,
     r"^key_padding_mask: expected bool of shape \(2, 5\), got torch.bool of shape \(2, 6\)"),
    ((_x(2, 5, 8),) * 3, dict(key_padding_mask=torch.zeros(5, dtype=torch.bool)), CourseValueError,
     r"^key_padding_mask: expected bool of shape \(2, 5\)"),
    ((_x(2, 5, 8),) * 3, dict(key_padding_mask=torch.ones(2, 5, dtype=torch.long)), CourseTypeError,
     r"^key_padding_mask: expected bool of shape \(2, 5\) with True = padding, got torch.int64.*ambiguous"),
    ((_x(2, 5, 8),) * 3, dict(key_padding_mask=[[0] * 5] * 2), CourseTypeError,
     r"^key_padding_mask: expected a torch.Tensor"),
    ((_x(2, 5, 8),) * 3, dict(allow_mask=torch.ones(4, 5, dtype=torch.bool)), CourseValueError,
     r"^allow_mask: expected a bool mask broadcastable to \(2, 2, 5, 5\), got torch.bool of shape \(4, 5\)"),
    ((_x(2, 5, 8),) * 3, dict(allow_mask=torch.ones(3, 1, 5, 5, dtype=torch.bool)), CourseValueError,
     r"^allow_mask: expected a bool mask broadcastable"),
    ((_x(2, 5, 8),) * 3, dict(allow_mask=torch.zeros(5, 5)), CourseTypeError,
     r"^allow_mask: expected bool with True = may attend"),
])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_forward_errors(inputs, kwargs, error, match, need_weights):
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(error, match=match):
        mha(*inputs, need_weights=need_weights, **kwargs)


def test_errors_are_value_and_type_errors():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError):
        mha(x, x, x, key_padding_mask=torch.zeros(2, 4, dtype=torch.bool))
    with pytest.raises(TypeError):
        mha(x, x, x, key_padding_mask=torch.zeros(2, 5, dtype=torch.int32))
