"""The checks of lecture 04's practice say what is wrong for the usual mistakes, in one line."""

import math

import torch
import torch.nn.functional as F

from course_lib.practice import lecture04


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


def stable_softmax(z, tau=1.0):
    z = z / tau
    z = z - z.max(dim=-1, keepdim=True).values
    e = z.exp()
    return e / e.sum(dim=-1, keepdim=True)


def test_stable_softmax(capsys):
    assert said(capsys, lecture04.check_stable_softmax, stable_softmax).startswith("✓")
    naive = lambda z, tau=1.0: (z / tau).exp() / (z / tau).exp().sum(dim=-1, keepdim=True)
    assert "overflows" in said(capsys, lecture04.check_stable_softmax, naive)
    global_max = lambda z, tau=1.0: stable_softmax(z - z.max(), tau) if False else (
        ((z / tau) - (z / tau).max()).exp() / ((z / tau) - (z / tau).max()).exp().sum(dim=-1, keepdim=True))
    assert "over which axis" in said(capsys, lecture04.check_stable_softmax, global_max)
    times_tau = lambda z, tau=1.0: stable_softmax(z * tau)
    assert "sharpen" in said(capsys, lecture04.check_stable_softmax, times_tau)
    wrong_axis = lambda z, tau=1.0: (z - z.max()).exp() / (z - z.max()).exp().sum(dim=0, keepdim=True)
    assert "axis of the sum" in said(capsys, lecture04.check_stable_softmax, wrong_axis)
    assert said(capsys, lecture04.check_stable_softmax, lambda z, tau=1.0: ...).startswith("○")


def nearest(table, i, k=5):
    unit = table / table.norm(dim=-1, keepdim=True)
    sims = unit @ unit[i]
    sims[i] = -math.inf
    return sims.topk(k).indices


def test_nearest(capsys):
    assert said(capsys, lecture04.check_nearest, nearest).startswith("✓")

    def by_dot(table, i, k=5):
        sims = table @ table[i]
        sims[i] = -math.inf
        return sims.topk(k).indices
    assert "dot product" in said(capsys, lecture04.check_nearest, by_dot)

    def with_itself(table, i, k=5):
        return (F.normalize(table, dim=-1) @ F.normalize(table, dim=-1)[i]).topk(k).indices
    assert "its own neighbours" in said(capsys, lecture04.check_nearest, with_itself)

    def wrong_axis(table, i, k=5):
        unit = F.normalize(table, dim=0)
        sims = unit @ unit[i]
        sims[i] = -math.inf
        return sims.topk(k).indices
    assert said(capsys, lecture04.check_nearest, wrong_axis).startswith("✗")
    assert said(capsys, lecture04.check_nearest, lambda table, i, k=5: None).startswith("○")


def test_cold_softmax_and_temperature(capsys):
    z = torch.tensor([3.0, 2.2, 1.6, 1.2, 0.8, 0.3, 0.0, -1.5])
    words = ["tired", "wide", "big", "slow", "happy", "far", "late", "street"]
    cold = torch.softmax(z / 0.01, dim=-1)
    assert said(capsys, lecture04.check_cold_softmax, "argmax", cold, words).startswith("✓")
    assert "the other end" in said(capsys, lecture04.check_cold_softmax, "uniform", cold, words)
    assert said(capsys, lecture04.check_cold_softmax, ..., cold, words).startswith("○")
    p = lambda tau: torch.softmax(z / tau, dim=-1)
    assert said(capsys, lecture04.check_temperature, 1.0, p(1.0), words).startswith("○")
    assert said(capsys, lecture04.check_temperature, 0.3, p(0.3), words).startswith("✓")
    assert "flattens" in said(capsys, lecture04.check_temperature, 2.0, p(2.0), words)
    assert "further" in said(capsys, lecture04.check_temperature, 0.35, p(0.35), words)


def test_quizzes(capsys):
    assert said(capsys, lecture04.check_doubled_logits, 0.982).startswith("✓")
    assert "before the change" in said(capsys, lecture04.check_doubled_logits, 0.881)
    assert said(capsys, lecture04.check_doubled_logits, None).startswith("○")
    assert said(capsys, lecture04.check_tying_savings, 30_522 * 768).startswith("✓")
    assert "not two" in said(capsys, lecture04.check_tying_savings, 2 * 30_522 * 768)
    assert said(capsys, lecture04.check_dropout_scale, 1.25).startswith("✓")
    assert "0.8" in said(capsys, lecture04.check_dropout_scale, 0.8)
