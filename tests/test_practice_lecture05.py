"""The checks of lecture 05's practice say what is wrong for the usual mistakes, in one line."""

import math

import torch

from course_lib import sinusoidal_positional_encoding
from course_lib.practice import lecture05

D = 64
PE = sinusoidal_positional_encoding(400, D).double()
OMEGA = 10000 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


def shift(k):
    m = torch.zeros(D, D, dtype=torch.float64)
    c, s = torch.cos(k * OMEGA), torch.sin(k * OMEGA)
    m[0::2, 0::2], m[0::2, 1::2] = torch.diag(c), torch.diag(-s)
    m[1::2, 0::2], m[1::2, 1::2] = torch.diag(s), torch.diag(c)
    return m


def scores_of(w_q, w_k, T=12):
    return (PE[:T] @ w_q) @ (PE[:T] @ w_k).T


def test_three_back(capsys):
    eye = torch.eye(D, dtype=torch.float64)
    for w_q, w_k in ((shift(-3), eye), (eye, shift(3)), (shift(3).T, eye)):         # every right answer passes
        assert said(capsys, lecture05.check_three_back, w_q, w_k, scores_of(w_q, w_k), PE).startswith("✓")
    assert "ahead" in said(capsys, lecture05.check_three_back, shift(3), eye, scores_of(shift(3), eye), PE)
    assert "itself" in said(capsys, lecture05.check_three_back, shift(3), shift(3), scores_of(shift(3), shift(3)), PE)
    assert "transposed" in said(capsys, lecture05.check_three_back, shift(-3), eye, scores_of(shift(-3), eye).T, PE)
    assert "(64, 64)" in said(capsys, lecture05.check_three_back, eye[:8], eye, scores_of(eye, eye), PE)
    assert "not done yet" in said(capsys, lecture05.check_three_back, ..., eye, ..., PE)
    assert "highest, not" in said(capsys, lecture05.check_three_back, shift(-5), eye, scores_of(shift(-5), eye), PE)


def test_relative_bias(capsys):
    def right(table, T):
        K = (len(table) - 1) // 2
        offset = torch.arange(T)[None, :] - torch.arange(T)[:, None]
        return table[offset.clamp(-K, K) + K]

    def mirrored(table, T):
        return right(table, T).T

    def unclipped(table, T):
        K = (len(table) - 1) // 2
        offset = torch.arange(T)[None, :] - torch.arange(T)[:, None]
        return table[(offset + K) % len(table)]

    assert said(capsys, lecture05.check_relative_bias, right).startswith("✓")
    assert "mirrored" in said(capsys, lecture05.check_relative_bias, mirrored)
    assert "clipping" in said(capsys, lecture05.check_relative_bias, unclipped)
    assert "not done yet" in said(capsys, lecture05.check_relative_bias, lambda table, T: ...)


def test_quizzes(capsys):
    assert said(capsys, lecture05.check_inverse_shift, "M_3.T").startswith("✓")
    assert "sign" in said(capsys, lecture05.check_inverse_shift, "-M_3")
    assert said(capsys, lecture05.check_wavelength, 2 * math.pi * 10000 ** (6 / 64)).startswith("✓")
    assert said(capsys, lecture05.check_wavelength, 14.9).startswith("✓")
    assert "too small" in said(capsys, lecture05.check_wavelength, 6.28)
    assert said(capsys, lecture05.check_embedding_scale, 32).startswith("✓")
    assert "too small" in said(capsys, lecture05.check_embedding_scale, math.sqrt(512))
    assert "not done yet" in said(capsys, lecture05.check_embedding_scale, ...)
