"""Tests of course_lib.positional: the sinusoidal table (both layouts) and learned positions."""

import math

import numpy as np
import pytest
import torch

from course_lib import (
    CourseTypeError,
    CourseValueError,
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    sinusoidal_positional_encoding,
)

# float32 rounding of a value in [-1, 1] moves it by at most half an ulp of 1.0: 2**-24.
ROUNDING = 2.0 ** -24


def paper_formula(max_len, d_model, base=10000.0):
    """PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(...), in float64 (Python floats)."""
    pe = np.zeros((max_len, d_model))
    for pos in range(max_len):
        for j in range(d_model):
            angle = pos / base ** ((j - j % 2) / d_model)
            pe[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return torch.from_numpy(pe)


def get_timing_signal_1d(length, channels, min_timescale=1.0, max_timescale=1.0e4):
    """tensor2tensor's ``common_attention.get_timing_signal_1d``, in NumPy float64 (batch axis dropped)."""
    position = np.arange(length, dtype=np.float64)
    num_timescales = channels // 2
    log_timescale_increment = math.log(max_timescale / min_timescale) / max(num_timescales - 1, 1)
    inv_timescales = min_timescale * np.exp(np.arange(num_timescales, dtype=np.float64) * -log_timescale_increment)
    scaled_time = position[:, None] * inv_timescales[None, :]
    signal = np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1)
    signal = np.pad(signal, [[0, 0], [0, channels % 2]])
    return torch.from_numpy(signal)


@pytest.mark.parametrize("max_len,d_model", [(1, 2), (50, 16), (512, 64), (7, 5), (3, 1)])
def test_interleaved_table_is_the_paper_formula_to_float32_rounding(max_len, d_model):
    pe = sinusoidal_positional_encoding(max_len, d_model)
    assert pe.shape == (max_len, d_model) and pe.dtype == torch.float32
    torch.testing.assert_close(pe.double(), paper_formula(max_len, d_model), rtol=0, atol=ROUNDING)


@pytest.mark.parametrize("max_len,d_model", [(1, 2), (50, 16), (512, 64), (7, 5), (9, 4)])
def test_concat_table_is_tensor2tensor_timing_signal(max_len, d_model):
    pe = sinusoidal_positional_encoding(max_len, d_model, layout="concat")
    assert pe.shape == (max_len, d_model) and pe.dtype == torch.float32
    torch.testing.assert_close(pe.double(), get_timing_signal_1d(max_len, d_model), rtol=0, atol=ROUNDING)


def test_concat_is_not_just_a_reordering_of_the_paper_table():
    # tensor2tensor spreads its d/2 timescales from 1 to 10000 inclusive ((n - 1) spacing), the paper's
    # from 1 to 10000^((d-2)/d): only the first frequency (1) is shared.
    d = 8
    inter = sinusoidal_positional_encoding(20, d)
    concat = sinusoidal_positional_encoding(20, d, layout="concat")
    torch.testing.assert_close(concat[:, 0], inter[:, 0])                   # frequency 1: sin(pos)
    torch.testing.assert_close(concat[:, d // 2], inter[:, 1])              # and cos(pos)
    assert not torch.allclose(concat[:, : d // 2], inter[:, 0::2])
    torch.testing.assert_close(concat[:, d // 2 - 1], torch.sin(torch.arange(20.0) / 10000))


def test_table_properties():
    pe = sinusoidal_positional_encoding(100, 32).double()
    torch.testing.assert_close(pe[0, 0::2], torch.zeros(16, dtype=torch.float64))   # sin(0)
    torch.testing.assert_close(pe[0, 1::2], torch.ones(16, dtype=torch.float64))    # cos(0)
    # sin^2 + cos^2 = 1 for each frequency
    torch.testing.assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(100, 16, dtype=torch.float64))
    assert pe.abs().max() <= 1


def test_base_argument():
    pe = sinusoidal_positional_encoding(10, 4, base=100.0).double()
    torch.testing.assert_close(pe, paper_formula(10, 4, base=100.0), rtol=0, atol=ROUNDING)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(max_len=0, d_model=4), CourseValueError, r"^max_len: expected a positive int, got 0"),
    (dict(max_len=4, d_model=-2), CourseValueError, r"^d_model: expected a positive int, got -2"),
    (dict(max_len=4.0, d_model=4), CourseTypeError, r"^max_len: expected a positive int, got float"),
    (dict(max_len=4, d_model=4, layout="split"), CourseValueError, r"^layout: expected one of .*got 'split'"),
    (dict(max_len=4, d_model=1, layout="concat"), CourseValueError,
     r"^d_model: expected at least 2 for layout='concat'"),
])
def test_table_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        sinusoidal_positional_encoding(**kwargs)


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_sinusoidal_module_adds_the_table_and_saves_nothing(layout):
    module = SinusoidalPositionalEncoding(8, max_len=16, layout=layout)
    assert list(module.state_dict()) == []                                 # non-persistent buffer
    assert [name for name, _ in module.named_buffers()] == ["pe"]
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(module(x), x + sinusoidal_positional_encoding(16, 8, layout)[:5])
    assert module.double()(x.double()).dtype == torch.float64 and module.pe.dtype == torch.float64
    torch.testing.assert_close(module(torch.zeros(1, 16, 8, dtype=torch.float64))[0], module.pe)


def test_learned_module():
    module = LearnedPositionalEmbedding(max_len=6, d_model=4)
    assert list(module.state_dict()) == ["embedding.weight"]
    x = torch.randn(3, 5, 4)
    torch.testing.assert_close(module(x), x + module.embedding.weight[:5])


@pytest.mark.parametrize("module", [SinusoidalPositionalEncoding(4, max_len=5), LearnedPositionalEmbedding(5, 4)])
def test_position_modules_errors(module):
    with pytest.raises(CourseValueError, match=r"^x: expected a sequence of at most max_len=5 positions, got 6"):
        module(torch.randn(1, 6, 4))
    with pytest.raises(CourseValueError, match=r"^x: expected shape \(batch, seq, d_model=4\)"):
        module(torch.randn(1, 3, 5))
    with pytest.raises(CourseValueError, match=r"^x: expected shape \(batch, seq, d_model=4\)"):
        module(torch.randn(3, 4))


def test_learned_constructor_errors():
    with pytest.raises(CourseValueError, match=r"^max_len: expected a positive int, got 0"):
        LearnedPositionalEmbedding(0, 4)
    with pytest.raises(CourseValueError, match=r"^d_model: expected a positive int"):
        LearnedPositionalEmbedding(4, 0)
