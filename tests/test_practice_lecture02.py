"""The checks of lecture 02's practice say what is wrong for the usual mistakes, in one line."""

import math

import torch

from course_lib.practice import lecture02


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


QUERY = torch.tensor([1.0, 1.0, 0.0])
KEYS = {"north-east": torch.tensor([0.9, 1.1, 0.0]), "east": torch.tensor([3.0, 0.5, 0.0]),
        "up": torch.tensor([0.0, 0.2, 2.0])}


def test_prediction(capsys):
    assert said(capsys, lecture02.check_prediction, "east", QUERY, KEYS).startswith("✓")
    assert "length" in said(capsys, lecture02.check_prediction, "north-east", QUERY, KEYS)
    assert "largest score" in said(capsys, lecture02.check_prediction, "up", QUERY, KEYS)
    assert "not one of the keys" in said(capsys, lecture02.check_prediction, "west", QUERY, KEYS)
    assert "not done yet" in said(capsys, lecture02.check_prediction, None, QUERY, KEYS)


def test_no_scaling(capsys):
    g = torch.Generator().manual_seed(3)
    q = torch.randn(512, generator=g, dtype=torch.float64)
    K = torch.randn(16, 512, generator=g, dtype=torch.float64)
    largest = torch.softmax(K @ q, dim=0).max().item()
    assert said(capsys, lecture02.check_no_scaling, 1.0, round(largest, 3), q, K).startswith("✓")
    assert "still divided" in said(capsys, lecture02.check_no_scaling, 1 / math.sqrt(512), None, q, K)
    assert "still rescales" in said(capsys, lecture02.check_no_scaling, 0.5, largest, q, K)
    assert "not done yet" in said(capsys, lecture02.check_no_scaling, 1, None, q, K)
    assert "not the largest" in said(capsys, lecture02.check_no_scaling, 1.0, 0.21, q, K)


def test_additive_scores(capsys):
    def right(q, K, W_a, U_a, v_a):
        return torch.tanh(q @ W_a + K @ U_a) @ v_a

    def softmaxed(q, K, W_a, U_a, v_a):
        return torch.softmax(right(q, K, W_a, U_a, v_a), dim=0)

    def apart(q, K, W_a, U_a, v_a):
        return torch.tanh(q @ W_a) @ v_a + torch.tanh(K @ U_a) @ v_a

    def one_key(q, K, W_a, U_a, v_a):
        return torch.tanh(q @ W_a + K[0] @ U_a) @ v_a

    def raises(q, K, W_a, U_a, v_a):
        return q @ K

    assert said(capsys, lecture02.check_additive_scores, right).startswith("✓")
    assert "sum to 1" in said(capsys, lecture02.check_additive_scores, softmaxed)
    assert "on their own" in said(capsys, lecture02.check_additive_scores, apart)
    assert "shape ()" in said(capsys, lecture02.check_additive_scores, one_key)
    assert "raised RuntimeError" in said(capsys, lecture02.check_additive_scores, raises)
