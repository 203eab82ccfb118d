"""The checks of lecture 03's practice say what is wrong for the usual mistakes, in one line."""

import torch

from course_lib.practice import lecture03


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


def masked_batch_norm(x, key_padding_mask, eps=1e-5):
    real = (~key_padding_mask).unsqueeze(-1).to(x.dtype)
    count = real.sum()
    mean = (x * real).sum(dim=(0, 1)) / count
    var = (((x - mean) * real) ** 2).sum(dim=(0, 1)) / count
    return (x - mean) / torch.sqrt(var + eps) * real


def test_masked_batch_norm(capsys):
    from torch import nn

    check = lecture03.check_masked_batch_norm
    assert said(capsys, check, masked_batch_norm).startswith("✓")

    def by_batch_norm(x, key_padding_mask, eps=1e-5):          # nn.BatchNorm1d on the real tokens alone
        out = torch.zeros_like(x)
        out[~key_padding_mask] = nn.BatchNorm1d(x.shape[-1], eps=eps, affine=False).double()(x[~key_padding_mask])
        return out

    assert said(capsys, check, by_batch_norm).startswith("✓")
    assert "padding positions enter" in said(capsys, check, lambda x, m, eps=1e-5: masked_batch_norm(x, m & False))
    assert "inverted" in said(capsys, check, lambda x, m, eps=1e-5: masked_batch_norm(x, ~m))
    assert said(capsys, check, lambda x, m, eps=1e-5: ...).startswith("○")


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


def test_quizzes(capsys):
    assert said(capsys, lecture03.check_layer_norm_value, 1.342).startswith("✓")
    assert "d - 1" in said(capsys, lecture03.check_layer_norm_value, 1.162)
    assert said(capsys, lecture03.check_layer_norm_value, 1.5).startswith("✗")
    assert said(capsys, lecture03.check_causal_zeros, 1225).startswith("✓")
    assert "the diagonal" in said(capsys, lecture03.check_causal_zeros, 1275)
    assert "too few" in said(capsys, lecture03.check_causal_zeros, 1000)
    assert said(capsys, lecture03.check_causal_zeros, ...).startswith("○")


def test_new_writes_pass_their_solution_and_wait_for_it(capsys):
    from torch import nn
    from torch.nn import functional as F

    class SwiGLU(nn.Module):
        def __init__(self, d_model, d_ff):
            super().__init__()
            d_hidden = 2 * d_ff // 3
            self.w_gate = nn.Linear(d_model, d_hidden, bias=False)
            self.w_up = nn.Linear(d_model, d_hidden, bias=False)
            self.w_down = nn.Linear(d_hidden, d_model, bias=False)

        def forward(self, x):
            return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))

    class RMS(nn.Module):
        def __init__(self, d_model, eps=1e-6):
            super().__init__()
            self.eps, self.weight = eps, nn.Parameter(torch.ones(d_model))

        def forward(self, x):
            return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    def stream_sizes(num_layers, norm_first, d=64, seed=0):
        from course_lib import EncoderLayer

        torch.manual_seed(seed)
        layers = [EncoderLayer(d, 4, 4 * d, norm_first=norm_first).eval() for _ in range(num_layers)]
        x, sizes = torch.randn(8, 16, d), []
        with torch.no_grad():
            for layer in layers:
                x = layer(x)
                sizes.append(x.norm(dim=-1).mean().item())
        return sizes

    class Empty(nn.Module):
        def __init__(self, *args, **kwargs):
            super().__init__()

    assert said(capsys, lecture03.check_swiglu, SwiGLU).startswith("✓")
    assert said(capsys, lecture03.check_swiglu, Empty).startswith("○")
    assert said(capsys, lecture03.check_rms_norm, RMS).startswith("✓")
    assert said(capsys, lecture03.check_rms_norm, Empty).startswith("○")
    assert said(capsys, lecture03.check_stream_sizes, stream_sizes).startswith("✓")
    assert said(capsys, lecture03.check_stream_sizes, lambda n, norm_first, d=64, seed=0: ...).startswith("○")
