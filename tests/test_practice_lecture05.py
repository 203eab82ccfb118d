"""The checks of lecture 05's practice say what is wrong for the usual mistakes, in one line."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_lib.practice import lecture05


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


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


def probe_accuracy(h_train, pos_train, h_test, pos_test, T, ridge=0.0):
    X = torch.cat([h_train, torch.ones(len(h_train), 1, dtype=h_train.dtype)], dim=1)
    Y = F.one_hot(pos_train, T).to(h_train.dtype)
    penalty = ridge * len(X) * torch.eye(X.shape[1], dtype=X.dtype)
    penalty[-1, -1] = 0.0
    W = torch.linalg.solve(X.T @ X + penalty, X.T @ Y)
    X_test = torch.cat([h_test, torch.ones(len(h_test), 1, dtype=h_test.dtype)], dim=1)
    return ((X_test @ W).argmax(dim=1) == pos_test).double().mean().item()


def test_probe(capsys):
    check = lecture05.check_probe
    assert said(capsys, check, probe_accuracy).startswith("✓")
    on_train = lambda htr, ptr, hte, pte, T, ridge=0.0: probe_accuracy(htr, ptr, htr, ptr, T, ridge)
    assert "fit on" in said(capsys, check, on_train)
    fit_test = lambda htr, ptr, hte, pte, T, ridge=0.0: probe_accuracy(hte, pte, hte, pte, T, ridge)
    assert "fit on the test" in said(capsys, check, fit_test)
    percent = lambda *a, **kw: 100 * probe_accuracy(*a, **kw)
    assert "between 0 and 1" in said(capsys, check, percent)

    def no_bias(htr, ptr, hte, pte, T, ridge=0.0):
        W = torch.linalg.lstsq(htr, F.one_hot(ptr, T).to(htr.dtype)).solution
        return ((hte @ W).argmax(dim=1) == pte).double().mean().item()
    assert "constant column" in said(capsys, check, no_bias)

    def wrong_axis(htr, ptr, hte, pte, T, ridge=0.0):
        X = torch.cat([htr, torch.ones(len(htr), 1, dtype=htr.dtype)], dim=1)
        W = torch.linalg.lstsq(X, F.one_hot(ptr, T).to(htr.dtype)).solution
        scores = torch.cat([hte, torch.ones(len(hte), 1, dtype=hte.dtype)], dim=1) @ W
        return (scores.argmax(dim=0)[pte] == pte).double().mean().item()
    assert said(capsys, check, wrong_axis).startswith("✗")
    no_ridge = lambda htr, ptr, hte, pte, T, ridge=0.0: probe_accuracy(htr, ptr, hte, pte, T)
    assert "no effect" in said(capsys, check, no_ridge)
    assert "ridge" in said(capsys, check, lambda htr, ptr, hte, pte, T: probe_accuracy(htr, ptr, hte, pte, T))
    assert "not done yet" in said(capsys, check, lambda *a, **kw: ...)


def apply_rope(x, positions, theta):
    angle = positions.to(x.dtype)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def score_grid(q, k, theta, T):
    pos = torch.arange(T)
    return apply_rope(q.expand(T, -1), pos, theta) @ apply_rope(k.expand(T, -1), pos, theta).T


def test_rope(capsys):
    check = lecture05.check_rope
    assert said(capsys, check, apply_rope, score_grid).startswith("✓")
    from course_lib.rope import RotaryEmbedding
    assert torch.allclose(apply_rope(torch.eye(8, dtype=torch.float64)[None], torch.arange(8) + 5,
                                     10000 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)),
                          RotaryEmbedding(8, max_len=64)(torch.eye(8)[None], offset=5).double(), atol=1e-5)
    doubled = lambda x, p, t: 2 * apply_rope(x, p, t)
    assert "lengths change" in said(capsys, check, doubled, score_grid)
    assert "unchanged" in said(capsys, check, lambda x, p, t: x.clone(), score_grid)
    diag_only = lambda q, k, t, T: torch.full((T, T), torch.dot(q, k).item(), dtype=q.dtype) \
        + torch.diag(torch.zeros(T, dtype=q.dtype)) + torch.triu(torch.ones(T, T, dtype=q.dtype), 1)
    assert "diagonal is right" in said(capsys, check, apply_rope, diag_only)
    assert "not done yet" in said(capsys, check, lambda *a: ..., score_grid)


def test_quizzes(capsys):
    assert said(capsys, lecture05.check_rope_score, math.cos(2)).startswith("✓")
    for wrong, word in ((1.0, "unturned"), (math.cos(8), "subtract"), (math.cos(5), "key is turned"),
                        (math.cos(3), "query is turned"), (-math.cos(2), "sign"), (0.5, "cosine")):
        assert word in said(capsys, lecture05.check_rope_score, wrong)
    assert "not done yet: set score" in said(capsys, lecture05.check_rope_score, ...)
    assert said(capsys, lecture05.check_biased_weight, math.exp(3) / (math.exp(3) + 3)).startswith("✓")
    for wrong, word in ((0.25, "before the softmax"), (1.0, "argmax"), (0.75, "e^3"),
                        (math.exp(3) / (math.exp(3) + 4), "twice"), (0.5, "too small")):
        assert word in said(capsys, lecture05.check_biased_weight, wrong)
    assert "not done yet: set weight" in said(capsys, lecture05.check_biased_weight, ...)
