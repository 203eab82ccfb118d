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
    assert "waits only" in said(capsys, lecture01.check_pipeline_steps, 600)
    assert said(capsys, lecture01.check_pipeline_steps, None).startswith("○")
    assert said(capsys, lecture01.check_attention_crossover, 32).startswith("✓")
    assert "per head" in said(capsys, lecture01.check_attention_crossover, 384)
    assert "too small" in said(capsys, lecture01.check_attention_crossover, 8)
    assert said(capsys, lecture01.check_attention_crossover, ...).startswith("○")


def additive_module(squash=True, bias=False, sum_axis=-1, context_ok=True, names=("W_a", "U_a", "v_a")):
    class AdditiveAttention(nn.Module):
        def __init__(self, d_dec, d_enc, d_attn):
            super().__init__()
            for name, (n_in, n_out) in zip(names, ((d_dec, d_attn), (d_enc, d_attn), (d_attn, 1))):
                setattr(self, name, nn.Linear(n_in, n_out, bias=bias))

        def forward(self, s, H):
            W_a, U_a, v_a = (getattr(self, n) for n in names)
            pre = W_a(s)[:, None, :] + U_a(H)
            scores = v_a(torch.tanh(pre) if squash else pre).squeeze(-1)              # (B, T)
            weights = torch.softmax(scores, dim=sum_axis)
            context = (weights[:, :, None] * H).sum(dim=1) if context_ok else H.mean(dim=1)
            return context, weights
    return AdditiveAttention


def test_additive_attention(capsys):
    check = lecture01.check_additive_attention
    assert said(capsys, check, additive_module()).startswith("✓")
    assert "linear in s and h_j" in said(capsys, check, additive_module(squash=False))
    assert "has a bias" in said(capsys, check, additive_module(bias=True))
    assert "do not sum to 1" in said(capsys, check, additive_module(sum_axis=0))
    assert "the context is not" in said(capsys, check, additive_module(context_ok=False))
    assert "no nn.Linear called v_a" in said(capsys, check, additive_module(names=("W_a", "U_a", "v")))

    class Empty(nn.Module):
        def __init__(self, *sizes):
            super().__init__()

        def forward(self, s, H):
            return ..., ...
    assert said(capsys, check, Empty).startswith("○")


def truncated(x, W_xh, W_hh, k, every=None, offset=0, cut=True):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    states = []
    for t in range(x.shape[1]):
        if cut and (t - offset) % (every or k) == 0:
            h = h.detach()
        h = torch.tanh(x[:, t] @ W_xh + h @ W_hh)
        states.append(h)
    return torch.stack(states, dim=1)


def test_truncated_rnn(capsys):
    check = lecture01.check_truncated_rnn
    assert said(capsys, check, truncated).startswith("✓")
    assert "still reaches x_1" in said(capsys, check, lambda x, a, b, k: truncated(x, a, b, k, cut=False))
    assert "expected the" in said(capsys, check, lambda x, a, b, k: truncated(x, a, b, k, every=1))
    assert "expected the" in said(capsys, check, lambda x, a, b, k: truncated(x, a, b, k, offset=1))
    assert "no gradient reaches x" in said(capsys, check, lambda x, a, b, k: truncated(x.detach(), a, b, k))
    assert "differ from the full loop" in said(capsys, check, lambda x, a, b, k: truncated(x, a, b, k) * 2)
    assert said(capsys, check, lambda x, a, b, k: ...).startswith("○")


def traffic(T, d, bytes_per_number=4, reads=True, writes=True):
    steps = [(2 * T * d, T * T), (T * T, T * T), (T * T, T * T), (T * T + T * d, T * d)]
    return bytes_per_number * sum(r * reads + w * writes for r, w in steps)


def test_attention_traffic(capsys):
    check = lecture01.check_attention_traffic
    assert said(capsys, check, traffic).startswith("✓")
    assert "not bytes" in said(capsys, check, lambda T, d, b=4: traffic(T, d, 1))
    assert "not what it reads" in said(capsys, check, lambda T, d, b=4: traffic(T, d, reads=False))
    assert "fused kernel" in said(capsys, check, lambda T, d, b=4: 16 * T * d)
    assert "more than its" in said(capsys, check, lambda T, d, b=4: traffic(T, d) + 4)
    assert said(capsys, check, lambda T, d, b=4: None).startswith("○")


def test_decoder_scores(capsys):
    check = lecture01.check_decoder_scores
    assert said(capsys, check, 35, 15).startswith("✓")
    assert said(capsys, check, 84, 28, target_length=7).startswith("✓")     # n(n+1)(n+2)/6 and n(n+1)/2
    assert "count passes" in said(capsys, check, 5, 1)
    assert "recomputes" in said(capsys, check, 15, 15)
    assert "mask hides" in said(capsys, check, 35, 25)
    assert "whole numbers" in said(capsys, check, 35.0, 15)
    assert said(capsys, check, ..., 15).startswith("○")
