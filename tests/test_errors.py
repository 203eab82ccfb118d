"""Tests of course_lib.errors: the error classes and the shared argument checks."""

import pytest
import torch

import course_lib
from course_lib.errors import (CourseTypeError, CourseValueError, check_attn_mask, check_dropout, check_features,
                               check_key_padding_mask, check_positive_int, describe)


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
                                         (float("nan"), CourseValueError), (None, CourseTypeError), (False, CourseTypeError)])
def test_check_dropout_rejects(value, error):
    with pytest.raises(error, match=r"^dropout: expected a float in \[0, 1\)"):
        check_dropout(value)


def test_check_features():
    check_features("x", torch.zeros(1, 2, 4), 4)
    with pytest.raises(CourseValueError, match=r"^x: expected shape \(batch, seq, d_model=4\), got torch.float32 of shape \(1, 2, 3\)"):
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
