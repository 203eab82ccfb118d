"""The checks of lecture 01's practice say what is wrong for the usual mistakes, in one line."""

import torch
import torch.nn.functional as F
from torch import nn

from course_lib.practice import lecture01


def said(capsys, check, *args, **kwargs) -> str:
    assert check(*args, **kwargs) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


def rnn_loop(x, W_xh, W_hh, recurrent=True, transpose_hh=False, squash=True, last_only=False):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    states = []
    for t in range(x.shape[1]):
        pre = x[:, t] @ W_xh + (h @ (W_hh.T if transpose_hh else W_hh) if recurrent else 0)
        h = torch.tanh(pre) if squash else pre
        states.append(h)
    return h if last_only else torch.stack(states, dim=1)


def test_rnn_loop(capsys):
    assert said(capsys, lecture01.check_rnn_loop, rnn_loop).startswith("✓")
    assert "ignores the one before" in said(capsys, lecture01.check_rnn_loop,
                                            lambda x, a, b: rnn_loop(x, a, b, recurrent=False))
    assert "transpose" in said(capsys, lecture01.check_rnn_loop, lambda x, a, b: rnn_loop(x, a, b, transpose_hh=True))
    assert "not squashed" in said(capsys, lecture01.check_rnn_loop, lambda x, a, b: rnn_loop(x, a, b, squash=False))
    assert "one state per sentence" in said(capsys, lecture01.check_rnn_loop,
                                            lambda x, a, b: rnn_loop(x, a, b, last_only=True))
    assert said(capsys, lecture01.check_rnn_loop, lambda x, a, b: ...).startswith("○")


D = 8
torch.manual_seed(0)
RNN = nn.RNN(D, D, batch_first=True).double()
W = [nn.Linear(D, D).double() for _ in range(3)]
LAYERS = {"the RNN": lambda x: RNN(x[None])[0][0],
          "causal attention": lambda x: F.scaled_dot_product_attention(W[0](x), W[1](x), W[2](x), is_causal=True)}


def by_hand(f, x, transpose=False, square=False, summed=False):
    x = x.clone().requires_grad_(True)
    y = f(x)
    T, d = y.shape
    D2 = torch.zeros(T, T, dtype=x.dtype)
    for t in range(T):
        for i in ([None] if summed else range(d)):
            out = y[t].sum() if summed else y[t, i]
            (g,) = torch.autograd.grad(out, x, retain_graph=True)
            D2[t] += g.pow(2).sum(dim=1) if not summed else g.norm(dim=1).pow(2)
    D2 = D2 if square else D2.sqrt()
    return D2.T if transpose else D2


def test_dependency_map(capsys):
    check = lecture01.check_dependency_map
    assert said(capsys, check, by_hand, LAYERS, d=D).startswith("✓")
    assert "transpose" in said(capsys, check, lambda f, x: by_hand(f, x, transpose=True), LAYERS, d=D)
    assert "square" in said(capsys, check, lambda f, x: by_hand(f, x, square=True), LAYERS, d=D)
    assert "sum of y_t" in said(capsys, check, lambda f, x: by_hand(f, x, summed=True), LAYERS, d=D)
    assert "shape" in said(capsys, check, lambda f, x: torch.zeros(3, D), LAYERS, d=D)
    assert said(capsys, check, lambda f, x: None, LAYERS, d=D).startswith("○")


def test_quizzes(capsys):
    assert said(capsys, lecture01.check_pipeline_steps, 105).startswith("✓")
    assert "layer 1 alone" in said(capsys, lecture01.check_pipeline_steps, 100)
    assert "need not wait" in said(capsys, lecture01.check_pipeline_steps, 600)
    assert said(capsys, lecture01.check_pipeline_steps, None).startswith("○")
    assert said(capsys, lecture01.check_attention_memory, 4).startswith("✓")
    assert "MiB" in said(capsys, lecture01.check_attention_memory, 4 * 1024 * 1024)
    assert "one float32" in said(capsys, lecture01.check_attention_memory, 1)
