"""Tests of course_lib.feed_forward: the formula, activations, dropout, the contract's names, errors."""

import pytest
import torch
import torch.nn.functional as F

from course_lib import CourseTypeError, CourseValueError, PositionwiseFeedForward


@pytest.mark.parametrize("activation,function", [
    ("relu", F.relu), ("gelu", F.gelu), ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
    (torch.tanh, torch.tanh),
])
def test_formula(activation, function):
    ffn = PositionwiseFeedForward(8, 32, activation=activation)
    x = torch.randn(2, 5, 8)
    expected = function(x @ ffn.linear1.weight.T + ffn.linear1.bias) @ ffn.linear2.weight.T + ffn.linear2.bias
    torch.testing.assert_close(ffn(x), expected)


def test_positions_do_not_mix():
    ffn = PositionwiseFeedForward(8, 16)
    x = torch.randn(1, 6, 8)
    torch.testing.assert_close(ffn(x)[:, 2], ffn(x[:, 2:3])[:, 0])


def test_state_dict_keys_and_shapes():
    ffn = PositionwiseFeedForward(8, 32, dropout=0.1)
    assert list(ffn.state_dict()) == ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"]
    assert ffn.linear1.weight.shape == (32, 8) and ffn.linear2.weight.shape == (8, 32)


def test_dropout_only_in_training():
    ffn = PositionwiseFeedForward(8, 64, dropout=0.5)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(ffn.eval()(x), ffn(x))
    assert not torch.allclose(ffn.train()(x), ffn(x))


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(d_model=0, d_ff=4), CourseValueError, r"^d_model: expected a positive int, got 0"),
    (dict(d_model=4, d_ff=-1), CourseValueError, r"^d_ff: expected a positive int, got -1"),
    (dict(d_model=4, d_ff=8, dropout=1.0), CourseValueError, r"^dropout: expected a float in \[0, 1\), got 1.0"),
    (dict(d_model=4, d_ff=8, dropout=True), CourseTypeError, r"^dropout: expected a float in \[0, 1\), got bool"),
    (dict(d_model=4, d_ff=8, activation="swish"), CourseValueError,
     r"^activation: expected one of \['gelu', 'gelu_tanh', 'relu'\] or a callable, got 'swish'"),
    (dict(d_model=4, d_ff=8, activation=3), CourseTypeError, r"^activation: expected one of .* or a callable, got int"),
])
def test_constructor_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        PositionwiseFeedForward(**kwargs)


def test_forward_errors():
    ffn = PositionwiseFeedForward(8, 16)
    with pytest.raises(CourseValueError, match=r"^x: expected shape \(\.\.\., d_model=8\), e\.g\. \(batch, seq, 8\), "
                                               r"got torch.float32 of shape \(2, 5, 4\)"):
        ffn(torch.randn(2, 5, 4))
    with pytest.raises(CourseTypeError, match=r"^x: expected a floating-point tensor"):
        ffn(torch.ones(2, 5, 8, dtype=torch.long))


def test_any_leading_axes_are_positions():
    """Position-wise: a (B, T, d) batch, one sequence (T, d) and one token (d,) give the same numbers."""
    ffn = PositionwiseFeedForward(8, 16).eval()
    x = torch.randn(2, 5, 8)
    batched = ffn(x)
    torch.testing.assert_close(ffn(x[1]), batched[1], rtol=0, atol=1e-6)
    torch.testing.assert_close(ffn(x[1, 3]), batched[1, 3], rtol=0, atol=1e-6)
