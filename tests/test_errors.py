"""Tests of course_lib.errors: the error classes and the shared argument checks."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import course_lib
from course_lib import scaled_dot_product_attention
from course_lib.errors import (
    CourseTypeError,
    CourseValueError,
    broadcast_shape,
    check_attn_mask,
    check_choice,
    check_dropout,
    check_features,
    check_float,
    check_floating,
    check_int,
    check_key_padding_mask,
    check_length,
    check_positive_int,
    check_str_list,
    check_token_ids,
    check_type,
    describe,
)


def test_error_classes():
    assert issubclass(CourseValueError, ValueError) and issubclass(CourseTypeError, TypeError)
    assert course_lib.CourseValueError is CourseValueError and course_lib.CourseTypeError is CourseTypeError


def test_describe():
    assert describe(torch.zeros(2, 3, dtype=torch.bool)) == "torch.bool of shape (2, 3)"
    assert describe(3) == "int 3"
    assert describe([1]) == "list [1]"


@pytest.mark.parametrize("value,error,match", [
    (0, CourseValueError, r"^n: expected a positive int, got 0"),
    (-3, CourseValueError, r"^n: expected a positive int, got -3"),
    (2.0, CourseTypeError, r"^n: expected a positive int, got float 2.0"),
    (True, CourseTypeError, r"^n: expected a positive int, got bool True"),
    ("4", CourseTypeError, r"^n: expected a positive int, got str '4'"),
])
def test_check_positive_int(value, error, match):
    with pytest.raises(error, match=match):
        check_positive_int("n", value)


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 0.999])
def test_check_dropout_accepts(value):
    check_dropout(value)


@pytest.mark.parametrize("value,error", [(1, CourseValueError), (1.0, CourseValueError), (-1e-9, CourseValueError),
                                         (float("nan"), CourseValueError), (None, CourseTypeError),
                                         (False, CourseTypeError)])
def test_check_dropout_rejects(value, error):
    with pytest.raises(error, match=r"^dropout: expected a float in \[0, 1\)"):
        check_dropout(value)


def test_check_features():
    check_features("x", torch.zeros(1, 2, 4), 4)
    with pytest.raises(CourseValueError, match=r"^x: expected shape \(batch, seq, d_model=4\), got torch.float32 of "
                                               r"shape \(1, 2, 3\)"):
        check_features("x", torch.zeros(1, 2, 3), 4)
    with pytest.raises(CourseTypeError, match=r"^x: expected a torch.Tensor, got ndarray"):
        import numpy as np
        check_features("x", np.zeros((1, 2, 4)), 4)


def test_check_key_padding_mask_message_is_the_style_guides():
    with pytest.raises(CourseValueError) as info:
        check_key_padding_mask(torch.zeros(2, 6, dtype=torch.bool), 2, 5)
    assert str(info.value) == "key_padding_mask: expected bool of shape (2, 5), got torch.bool of shape (2, 6)"
    check_key_padding_mask(None, 2, 5)


@pytest.mark.parametrize("shape", [(5, 5), (1, 5), (2, 1, 1, 5), (2, 4, 5, 5), (5,)])
def test_check_attn_mask_accepts_broadcastable(shape):
    check_attn_mask(torch.ones(shape, dtype=torch.bool), (2, 4, 5, 5))


@pytest.mark.parametrize("shape", [(5, 6), (3, 1, 5, 5), (1, 2, 4, 5, 5), (2, 4, 5, 1, 5)])
def test_check_attn_mask_rejects_non_broadcastable(shape):
    with pytest.raises(CourseValueError, match=r"^attn_mask: expected a bool mask broadcastable to \(2, 4, 5, 5\)"):
        check_attn_mask(torch.ones(shape, dtype=torch.bool), (2, 4, 5, 5))


@pytest.mark.parametrize("kwargs,value,error,match", [
    (dict(low=0), -1, CourseValueError, r"^n: expected a non-negative int, got -1"),
    (dict(low=2, optional=True), 1, CourseValueError, r"^n: expected an int >= 2 or None, got 1"),
    (dict(low=0, high=4), 5, CourseValueError, r"^n: expected an int in \[0, 4\], got 5"),
    (dict(low=0, high=4, what="an id in [0, 5)"), 2.0, CourseTypeError,
     r"^n: expected an id in \[0, 5\), got float 2.0"),
    (dict(), True, CourseTypeError, r"^n: expected an int, got bool True"),
])
def test_check_int(kwargs, value, error, match):
    with pytest.raises(error, match=match):
        check_int("n", value, **kwargs)
    check_int("n", None, optional=True)


def test_check_float_open_bounds():
    check_float("t", 0.5, low=0, low_open=True)
    with pytest.raises(CourseValueError, match=r"^t: expected a positive float, got 0"):
        check_float("t", 0, low=0, low_open=True)
    with pytest.raises(CourseValueError, match=r"^base: expected a float > 1, got 1.0"):
        check_float("base", 1.0, low=1, low_open=True)
    with pytest.raises(CourseTypeError, match=r"^t: expected a positive float, got str 'hot'"):
        check_float("t", "hot", low=0, low_open=True)


def test_check_choice_type_and_str_list():
    with pytest.raises(CourseValueError, match=r"^layout: expected one of \('a', 'b'\), got 'c'"):
        check_choice("layout", "c", ("a", "b"))
    with pytest.raises(CourseTypeError, match=r"^vocab: expected a dict, got list"):
        check_type("vocab", [], dict)
    assert check_str_list("texts", ("a", "b")) == ["a", "b"]
    with pytest.raises(CourseTypeError, match=r"^texts: expected a list of str, got a single str \(wrap it: "
                                              r"\['abc'\]\)"):
        check_str_list("texts", "abc")
    with pytest.raises(CourseTypeError, match=r"^texts\[1\]: expected a str, got int"):
        check_str_list("texts", ["a", 1])
    with pytest.raises(CourseTypeError, match=r"^texts: expected a str or a list of str, got int"):
        check_str_list("texts", 3, what="a str or a list of str")


def test_check_features_with_max_len_and_floating():
    check_features("x", torch.zeros(1, 3, 4), 4, max_len=3)
    with pytest.raises(CourseValueError, match=r"^x: expected a sequence of at most max_len=2 positions, got 3"):
        check_features("x", torch.zeros(1, 3, 4), 4, max_len=2)
    with pytest.raises(CourseTypeError, match=r"^x: expected a floating-point tensor, got torch.int64 of shape \(2,\)"):
        check_floating("x", torch.zeros(2, dtype=torch.long))
    check_length("tokens", 5, 5)


@pytest.mark.parametrize("ids,kwargs,error,match", [
    (torch.tensor([[0, 5]]), {}, CourseValueError,
     r"^ids: expected ids in \[0, 5\) \(vocab_size=5\), got ids from 0 to 5"),
    (torch.tensor([1, 2]), {}, CourseValueError,
     r"^ids: expected shape \(batch, seq\), got torch.int64 of shape \(2,\) \(add a batch axis: ids\[None\]\)"),
    (torch.ones(1, 2), {}, CourseTypeError, r"^ids: expected integer token ids \(torch.long\), got torch.float32"),
    (torch.ones(1, 2, dtype=torch.bool), {}, CourseTypeError, r"^ids: expected integer token ids"),
    (torch.ones(1, 2, dtype=torch.long), dict(shape=(1, 3)), CourseValueError,
     r"^ids: expected shape \(1, 3\) \(as the token ids\)"),
    (torch.full((1, 2), 5), dict(size_name="type_vocab_size"), CourseValueError,
     r"^ids: expected ids in \[0, 5\) \(type_vocab_size=5\)"),
])
def test_check_token_ids(ids, kwargs, error, match):
    check_token_ids("ids", torch.tensor([[0, 4]]), 5)
    with pytest.raises(error, match=match):
        check_token_ids("ids", ids, 5, **kwargs)


@settings(deadline=None)              # torch.broadcast_shapes imports sympy on its first call
@given(st.lists(st.lists(st.integers(0, 3), max_size=4), min_size=1, max_size=3))
def test_broadcast_shape_agrees_with_torch(shapes):
    try:
        want = tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        want = None
    assert broadcast_shape(*shapes) == want


def test_attention_with_batches_that_do_not_broadcast_names_k():
    q, k = torch.randn(2, 3, 4), torch.randn(5, 3, 4)
    with pytest.raises(CourseValueError, match=r"^k: expected leading dimensions broadcastable with q's \(2,\)"):
        scaled_dot_product_attention(q, k, k)
