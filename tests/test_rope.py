"""Tests of course_lib.rope: rotary position embeddings (RoPE)."""

import math

import pytest
import torch

from course_lib.errors import CourseTypeError, CourseValueError
from course_lib.rope import RotaryEmbedding, apply_rotary, rotary_tables

LAYOUTS = ["interleaved", "half"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(7, 8), (2, 3, 7, 8)])
def test_preserves_norms_and_shape(shape, layout):
    torch.manual_seed(0)
    rope = RotaryEmbedding(8, max_len=32, layout=layout)
    x = torch.randn(shape, dtype=torch.float64)
    out = rope(x, offset=5)
    assert out.shape == x.shape and out.dtype == x.dtype
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1))


def test_matches_hand_rotation_of_pairs():
    """Pair i at position m is turned by m * base^(-2i/d), as 2x2 rotation matrices."""
    d, m = 6, 3
    rope = RotaryEmbedding(d, max_len=8)
    x = torch.arange(1.0, d + 1, dtype=torch.float64)
    expected = []
    for i in range(d // 2):
        angle = m * 10000.0 ** (-2 * i / d)
        rot = torch.tensor([[math.cos(angle), -math.sin(angle)],
                            [math.sin(angle), math.cos(angle)]], dtype=torch.float64)
        expected.append(rot @ x[2 * i : 2 * i + 2])
    out = rope(x.repeat(m + 1, 1))[m]  # row m sits at position m
    torch.testing.assert_close(out, torch.cat(expected), atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(rope(x[None])[0], x)  # position 0: no rotation


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d_head", [2, 8, 16])
def test_scores_depend_only_on_offset(d_head, layout):
    """q placed at every position m, k at every n: the score matrix is constant along diagonals."""
    torch.manual_seed(d_head)
    T = 40
    rope = RotaryEmbedding(d_head, max_len=64, layout=layout)
    q, k = torch.randn(2, d_head, dtype=torch.float64)
    scores = rope(q.expand(T, d_head)) @ rope(k.expand(T, d_head)).T  # (T, T): [m, n]
    for shift in range(-T + 1, T):
        diag = scores.diagonal(shift)
        torch.testing.assert_close(diag, diag[:1].expand_as(diag), atol=1e-5, rtol=1e-5)
    # and the offset matters: without RoPE all scores are equal, with it they are not
    assert scores.diagonal(0).mean() != pytest.approx(scores.diagonal(3).mean().item())


def test_offset_continues_the_sequence():
    torch.manual_seed(0)
    rope = RotaryEmbedding(8, max_len=16)
    x = torch.randn(2, 10, 8)
    torch.testing.assert_close(rope(x[:, 6:], offset=6), rope(x)[:, 6:])


def test_layouts_are_the_same_rotation_permuted():
    torch.manual_seed(0)
    d = 8
    perm = torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))  # interleaved -> halves
    x = torch.randn(5, d)
    inter = RotaryEmbedding(d, max_len=8, layout="interleaved")(x)
    half = RotaryEmbedding(d, max_len=8, layout="half")(x[:, perm])
    torch.testing.assert_close(half, inter[:, perm])


def test_tables_are_non_persistent_buffers():
    rope = RotaryEmbedding(4, max_len=10)
    assert rope.state_dict() == {} and list(rope.parameters()) == []
    assert rope.cos.shape == rope.sin.shape == (10, 4)
    cos, sin = rotary_tables(10, 4)
    torch.testing.assert_close(apply_rotary(torch.ones(10, 4), cos, sin), rope(torch.ones(10, 4)))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: RotaryEmbedding(7), CourseValueError, r"d_head: expected an even number .*got 7"),
        (lambda: RotaryEmbedding(0), CourseValueError, r"d_head: expected a positive int, got 0"),
        (lambda: rotary_tables(4, 5), CourseValueError, r"d_head: expected an even number .*got 5"),
        (lambda: RotaryEmbedding(4, layout="diagonal"), CourseValueError,
         r"layout: expected one of \('interleaved', 'half'\), got 'diagonal'"),
        (lambda: RotaryEmbedding(4, base=1.0), CourseValueError, r"base: expected a float > 1, got 1.0"),
        (lambda: RotaryEmbedding(4, max_len=8)(torch.randn(2, 4, 6)), CourseValueError,
         r"x: expected shape \(\.\.\., T, 4\), got torch.float32 of shape \(2, 4, 6\)"),
        (lambda: RotaryEmbedding(4, max_len=8)(torch.randn(9, 4)), CourseValueError,
         r"x: expected a sequence of at most max_len=8 positions, got 9"),
        (lambda: RotaryEmbedding(4, max_len=8)(torch.randn(5, 4), offset=4), CourseValueError,
         r"offset: expected offset \+ T <= max_len=8, got offset=4 with T=5"),
        (lambda: RotaryEmbedding(4, max_len=8)(torch.randn(5, 4), offset=-1), CourseValueError,
         r"offset: expected a non-negative int, got -1"),
        (lambda: RotaryEmbedding(4, max_len=8)(torch.randn(5, 4), offset=1.0), CourseTypeError,
         r"offset: expected a non-negative int, got float"),
        (lambda: RotaryEmbedding(4)(torch.ones(5, 4, dtype=torch.long)), CourseTypeError,
         r"x: expected a floating-point tensor"),
        (lambda: apply_rotary(torch.randn(5, 4), *rotary_tables(6, 4)), CourseValueError,
         r"cos: expected a table broadcastable to x's shape \(5, 4\), got torch.float32 of shape \(6, 4\)"),
        (lambda: apply_rotary(torch.randn(5, 3), torch.ones(5, 3), torch.ones(5, 3)), CourseValueError,
         r"x: expected shape \(\.\.\., T, d_head\) with d_head even"),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
