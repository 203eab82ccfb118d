"""The checks of lecture 03's practice say what is wrong for the usual mistakes, in one line."""

import torch

from course_lib.practice import lecture03


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


def layer_norm(x, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(var + eps)


def test_layer_norm(capsys):
    assert said(capsys, lecture03.check_layer_norm, layer_norm).startswith("✓")
    unbiased = lambda x, eps=1e-5: (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + eps)
    assert "d - 1" in said(capsys, lecture03.check_layer_norm, unbiased)
    eps_outside = lambda x, eps=1e-5: ((x - x.mean(-1, keepdim=True))
                                       / (x.var(-1, keepdim=True, unbiased=False).sqrt() + eps))
    out = said(capsys, lecture03.check_layer_norm, eps_outside)
    assert "barely vary" in out and "where eps enters" in out and "mean" not in out
    by_var = lambda x, eps=1e-5: (x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True, unbiased=False) + eps)
    assert "divided by the variance" in said(capsys, lecture03.check_layer_norm, by_var)
    over_batch = lambda x, eps=1e-5: ((x - x.mean(0, keepdim=True))
                                      / torch.sqrt(x.var(0, keepdim=True, unbiased=False) + eps))
    assert "axis 0" in said(capsys, lecture03.check_layer_norm, over_batch)
    assert "not done yet" in said(capsys, lecture03.check_layer_norm, lambda x, eps=1e-5: ...)
    assert "keepdim" not in said(capsys, lecture03.check_layer_norm, lambda x, eps=1e-5: x.mean(-1))


def dropout(x, p, training=True):
    if not training:
        return x
    keep = (torch.rand(x.shape) >= p).to(x.dtype)
    return x * keep / (1 - p)


def test_dropout(capsys):
    before = torch.get_rng_state()
    assert said(capsys, lecture03.check_dropout, dropout).startswith("✓")
    assert torch.equal(torch.get_rng_state(), before)              # the lecture's random numbers are untouched
    no_scale = lambda x, p, training=True: x * (torch.rand(x.shape) >= p) if training else x
    assert "expected value" in said(capsys, lecture03.check_dropout, no_scale)
    times_keep = lambda x, p, training=True: x * (torch.rand(x.shape) >= p) * (1 - p) if training else x
    assert "expected value" in said(capsys, lecture03.check_dropout, times_keep)
    inverted = lambda x, p, training=True: x * (torch.rand(x.shape) < p) / (1 - p) if training else x
    assert "how the mask is drawn" in said(capsys, lecture03.check_dropout, inverted)
    always = lambda x, p, training=True: x * (torch.rand(x.shape) >= p) / (1 - p)
    assert "training=False" in said(capsys, lecture03.check_dropout, always)

    def seeded(x, p, training=True):
        g = torch.Generator().manual_seed(0)
        return x * (torch.rand(x.shape, generator=g) >= p) / (1 - p) if training else x
    assert "drawn anew" in said(capsys, lecture03.check_dropout, seeded)
    assert "not done yet" in said(capsys, lecture03.check_dropout, lambda x, p, training=True: None)


def test_pre_ln_block(capsys):
    right = lambda x, sublayer, norm, dropout: x + dropout(sublayer(norm(x)))
    assert said(capsys, lecture03.check_pre_ln_block, right).startswith("✓")
    mistakes = {
        "post-LN's order": lambda x, s, n, d: n(x + d(s(x))),
        "which x is added back": lambda x, s, n, d: n(x) + d(s(n(x))),
        "never added back": lambda x, s, n, d: d(s(n(x))),
        "dropout is never applied": lambda x, s, n, d: x + s(n(x)),
        "whole sum": lambda x, s, n, d: d(x + s(n(x))),
        "the block's input": lambda x, s, n, d: x + s(n(d(x))),
        "sublayer's output; pre-LN": lambda x, s, n, d: x + d(n(s(x))),
    }
    for says, fn in mistakes.items():
        assert says in said(capsys, lecture03.check_pre_ln_block, fn), says


def test_quizzes(capsys):
    assert said(capsys, lecture03.check_layer_norm_value, 1.342).startswith("✓")
    assert "d - 1" in said(capsys, lecture03.check_layer_norm_value, 1.162)
    assert said(capsys, lecture03.check_layer_norm_value, 1.5).startswith("✗")
    assert said(capsys, lecture03.check_causal_zeros, 1225).startswith("✓")
    assert "the diagonal" in said(capsys, lecture03.check_causal_zeros, 1275)
    assert "too few" in said(capsys, lecture03.check_causal_zeros, 1000)
    assert said(capsys, lecture03.check_causal_zeros, ...).startswith("○")


def ffn_cost(d_model, d_ff, T, biases=True, per_token=False, half=False, t_params=False):
    params = 2 * d_model * d_ff + (d_ff + d_model if biases else 0) + (T if t_params else 0)
    flops = (1 if per_token else T) * 4 * d_model * d_ff // (2 if half else 1)
    return params, flops


def test_ffn_cost(capsys):
    check = lecture03.check_ffn_cost
    assert said(capsys, check, ffn_cost).startswith("✓")
    assert "biases" in said(capsys, check, lambda d, f, t: ffn_cost(d, f, t, biases=False))
    assert "half the FLOPs" in said(capsys, check, lambda d, f, t: ffn_cost(d, f, t, half=True))
    assert "do not grow with T" in said(capsys, check, lambda d, f, t: ffn_cost(d, f, t, per_token=True))
    assert "changes with T" in said(capsys, check, lambda d, f, t: ffn_cost(d, f, t, t_params=True))
    assert "two numbers" in said(capsys, check, lambda d, f, t: 3)
    assert said(capsys, check, lambda d, f, t: ...).startswith("○")
