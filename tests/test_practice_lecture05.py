"""The checks of lecture 05's practice say what is wrong for the usual mistakes, in one line."""

import math

import torch
import torch.nn.functional as F
from torch import nn

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


class RelativePositionBias(nn.Module):
    def __init__(self, K):
        super().__init__()
        self.K = K
        self.table = nn.Parameter(torch.zeros(2 * K + 1))

    def forward(self, scores):
        T = scores.shape[-1]
        offset = torch.arange(T)[None, :] - torch.arange(T)[:, None]
        return scores + self.table[offset.clamp(-self.K, self.K) + self.K]


def test_relative_position_bias(capsys):
    check = lecture05.check_relative_position_bias
    assert said(capsys, check, RelativePositionBias).startswith("✓")

    class Mirrored(RelativePositionBias):
        def forward(self, scores):
            return super().forward(scores.transpose(-2, -1)).transpose(-2, -1)
    assert "mirrored" in said(capsys, check, Mirrored)

    class Wrapped(RelativePositionBias):
        def forward(self, scores):
            T = scores.shape[-1]
            offset = torch.arange(T)[None, :] - torch.arange(T)[:, None]
            return scores + self.table[(offset + self.K) % len(self.table)]
    assert "clipping" in said(capsys, check, Wrapped)

    class Absolute(RelativePositionBias):                   # indexed by the key's position, not the offset
        def forward(self, scores):
            T = scores.shape[-1]
            return scores + self.table[torch.arange(T).clamp(max=2 * self.K)][None, :]
    assert "along a diagonal" in said(capsys, check, Absolute)

    class Fixed(RelativePositionBias):
        def __init__(self, K):
            nn.Module.__init__(self)
            self.K = K
            self.table = torch.zeros(2 * K + 1)
    assert "2K + 1" in said(capsys, check, Fixed)

    class RandomStart(RelativePositionBias):
        def __init__(self, K):
            super().__init__(K)
            nn.init.normal_(self.table)
    assert "unchanged" in said(capsys, check, RandomStart)
    assert "not done yet" in said(capsys, check, lambda K: None)


def probe_accuracy(h_train, pos_train, h_test, pos_test, T):
    X = torch.cat([h_train, torch.ones(len(h_train), 1, dtype=h_train.dtype)], dim=1)
    Y = F.one_hot(pos_train, T).to(h_train.dtype)
    W = torch.linalg.lstsq(X, Y).solution
    X_test = torch.cat([h_test, torch.ones(len(h_test), 1, dtype=h_test.dtype)], dim=1)
    return ((X_test @ W).argmax(dim=1) == pos_test).double().mean().item()


def test_probe(capsys):
    check = lecture05.check_probe
    assert said(capsys, check, probe_accuracy).startswith("✓")
    on_train = lambda htr, ptr, hte, pte, T: probe_accuracy(htr, ptr, htr, ptr, T)
    assert "fit on" in said(capsys, check, on_train)
    fit_test = lambda htr, ptr, hte, pte, T: probe_accuracy(hte, pte, hte, pte, T)
    assert "fit on the test" in said(capsys, check, fit_test)
    percent = lambda *a: 100 * probe_accuracy(*a)
    assert "between 0 and 1" in said(capsys, check, percent)

    def no_bias(htr, ptr, hte, pte, T):
        W = torch.linalg.lstsq(htr, F.one_hot(ptr, T).to(htr.dtype)).solution
        return ((hte @ W).argmax(dim=1) == pte).double().mean().item()
    assert "constant column" in said(capsys, check, no_bias)

    def wrong_axis(htr, ptr, hte, pte, T):
        X = torch.cat([htr, torch.ones(len(htr), 1, dtype=htr.dtype)], dim=1)
        W = torch.linalg.lstsq(X, F.one_hot(ptr, T).to(htr.dtype)).solution
        scores = torch.cat([hte, torch.ones(len(hte), 1, dtype=hte.dtype)], dim=1) @ W
        return (scores.argmax(dim=0)[pte] == pte).double().mean().item()
    assert said(capsys, check, wrong_axis).startswith("✗")
    assert "not done yet" in said(capsys, check, lambda *a: ...)


def test_quizzes(capsys):
    assert said(capsys, lecture05.check_inverse_shift, "M_3.T").startswith("✓")
    assert "sign" in said(capsys, lecture05.check_inverse_shift, "-M_3")
    assert said(capsys, lecture05.check_embedding_scale, 32).startswith("✓")
    assert said(capsys, lecture05.check_embedding_scale, math.sqrt(2 * 768), 768).startswith("✓")
    assert "too small" in said(capsys, lecture05.check_embedding_scale, math.sqrt(768), 768)
    assert "too small" in said(capsys, lecture05.check_embedding_scale, math.sqrt(512))
    assert "not done yet" in said(capsys, lecture05.check_embedding_scale, ...)
