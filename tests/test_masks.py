"""Tests of course_lib.masks: building masks and converting between the three conventions."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import (
    CourseTypeError,
    CourseValueError,
    MultiHeadAttention,
    allow_to_torch_attn_mask,
    causal_mask,
    copy_attention_to_torch,
    hf_to_key_padding_mask,
    key_padding_to_attn_mask,
    key_padding_to_hf,
    padding_mask_from_lengths,
    torch_attn_mask_to_allow,
)

PROPERTY = settings(max_examples=30, deadline=None, derandomize=True)


def test_padding_mask_from_lengths():
    expected = torch.tensor([[False, False, False], [False, True, True], [True, True, True]])
    assert torch.equal(padding_mask_from_lengths([3, 1, 0]), expected)
    assert torch.equal(padding_mask_from_lengths(torch.tensor([3, 1, 0])), expected)
    wider = padding_mask_from_lengths([3, 1, 0], max_len=5)
    assert wider.shape == (3, 5) and wider.dtype == torch.bool and wider[:, 3:].all()


@PROPERTY
@given(lengths=st.lists(st.integers(0, 8), min_size=1, max_size=5), extra=st.integers(0, 3))
def test_lengths_round_trip(lengths, extra):
    mask = padding_mask_from_lengths(lengths, max_len=max(lengths) + extra)
    assert (~mask).sum(-1).tolist() == lengths
    hf = key_padding_to_hf(mask)
    assert hf.dtype == torch.long and hf.sum(-1).tolist() == lengths
    assert torch.equal(hf_to_key_padding_mask(hf), mask)
    attn = key_padding_to_attn_mask(mask)
    assert attn.shape == (len(lengths), 1, 1, mask.shape[1]) and torch.equal(attn[:, 0, 0], ~mask)


@pytest.mark.parametrize("lengths,kwargs,error,match", [
    ([3, -1], {}, CourseValueError, r"^lengths: expected non-negative lengths, got \[3, -1\]"),
    ([1.5, 2.0], {}, CourseTypeError, r"^lengths: expected a 1-D sequence of ints, got torch.float32"),
    ([[1, 2]], {}, CourseTypeError, r"^lengths: expected a 1-D sequence of ints"),
    ([True, False], {}, CourseTypeError, r"^lengths: expected a 1-D sequence of ints"),
    ([3, 5], dict(max_len=4), CourseValueError, r"^max_len: expected at least the longest length 5, got 4"),
])
def test_padding_mask_from_lengths_errors(lengths, kwargs, error, match):
    with pytest.raises(error, match=match):
        padding_mask_from_lengths(lengths, **kwargs)


def test_causal_mask():
    mask = causal_mask(4)
    assert mask.dtype == torch.bool and mask.shape == (4, 4)
    assert torch.equal(mask, torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool))
    q = k = v = torch.randn(1, 4, 8)
    torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                               F.scaled_dot_product_attention(q, k, v, is_causal=True))
    with pytest.raises(CourseValueError, match=r"^size: expected a positive int, got 0"):
        causal_mask(0)


def test_key_padding_to_attn_mask_agrees_with_multi_head_attention():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    kpm = padding_mask_from_lengths([5, 2])
    with_kpm, _ = mha(x, x, x, key_padding_mask=kpm)
    with_allow_mask, _ = mha(x, x, x, allow_mask=key_padding_to_attn_mask(kpm))
    torch.testing.assert_close(with_kpm, with_allow_mask)


def test_hf_conversions():
    hf = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0]])
    kpm = hf_to_key_padding_mask(hf)
    assert torch.equal(kpm, torch.tensor([[False, False, False, True], [False, True, True, True]]))
    assert torch.equal(key_padding_to_hf(kpm), hf)
    assert torch.equal(hf_to_key_padding_mask(hf.float()), kpm)          # float 0./1. masks too


@pytest.mark.parametrize("mask,error,match", [
    (torch.ones(2, 3, dtype=torch.bool), CourseTypeError, r"^attention_mask: expected Hugging Face's integer mask"),
    (torch.tensor([[1, 2, 0]]), CourseValueError, r"^attention_mask: expected only 0 and 1, got values \[0, 1, 2\]"),
    (torch.ones(3, dtype=torch.long), CourseValueError, r"^attention_mask: expected shape \(batch, seq\)"),
    ([[1, 0]], CourseTypeError, r"^attention_mask: expected a torch.Tensor"),
])
def test_hf_to_key_padding_mask_errors(mask, error, match):
    with pytest.raises(error, match=match):
        hf_to_key_padding_mask(mask)


@pytest.mark.parametrize("function", [key_padding_to_attn_mask, key_padding_to_hf])
@pytest.mark.parametrize("mask", [torch.ones(2, 3, dtype=torch.long), torch.zeros(2, 3, 1, dtype=torch.bool)])
def test_key_padding_converters_errors(function, mask):
    with pytest.raises(CourseTypeError, match=r"^key_padding_mask: expected bool of shape \(batch, seq\) with True = "
                                              r"padding"):
        function(mask)


def test_causal_mask_copied_to_nn_multihead_attention_needs_converting():
    # course_lib's allow_mask is True = may attend; nn.MultiheadAttention's bool attn_mask is
    # True = NOT allowed. The same causal tensor passed to both gives different outputs; converted,
    # the same. This is why the argument is called allow_mask and not attn_mask.
    torch.manual_seed(0)
    d_model, heads, t = 16, 4, 6
    ours = MultiHeadAttention(d_model, heads).eval()
    ref = copy_attention_to_torch(ours, torch.nn.MultiheadAttention(d_model, heads, batch_first=True).eval())
    x = torch.randn(2, t, d_model)
    causal = causal_mask(t)                                                    # True = may attend
    with torch.no_grad():
        out, weights = ours(x, x, x, allow_mask=causal)
        right, right_w = ref(x, x, x, attn_mask=allow_to_torch_attn_mask(causal), average_attn_weights=False)
        wrong, wrong_w = ref(x, x, x, attn_mask=causal, average_attn_weights=False)   # not converted
    torch.testing.assert_close(out, right)
    torch.testing.assert_close(weights, right_w)
    assert (weights[..., ~causal] == 0).all()                                  # no query sees its future
    # unconverted, torch reads the causal mask upside down: each query sees only its future (the
    # last query nothing at all, a NaN row), and the outputs differ everywhere else
    assert torch.isnan(wrong[:, -1]).all()
    assert (wrong_w[:, :, :-1][..., causal[:-1]] == 0).all()
    assert (wrong[:, :-1] - out[:, :-1]).abs().max() > 0.1
    with pytest.raises(TypeError, match="attn_mask"):
        ours(x, x, x, attn_mask=causal)                                        # torch's name is refused


def test_torch_attn_mask_converters_round_trip():
    allow = torch.rand(3, 5, 5) > 0.5
    torch_mask = allow_to_torch_attn_mask(allow)
    assert torch.equal(torch_mask, ~allow) and torch.equal(torch_attn_mask_to_allow(torch_mask), allow)
    with pytest.raises(CourseTypeError, match=r"^allow_mask: expected a bool mask, got torch.float32"):
        allow_to_torch_attn_mask(allow.float())
    with pytest.raises(CourseTypeError, match=r"^attn_mask: expected a bool mask, got torch.int64"):
        torch_attn_mask_to_allow(allow.long())
