"""Tests of course_lib.norms.RMSNorm against a hand formula and torch.nn.RMSNorm."""

import pytest
import torch
from torch import nn

from course_lib.errors import CourseTypeError, CourseValueError
from course_lib.norms import RMSNorm


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(4,), (2, 3, 4), (1, 5, 2, 4)])
def test_hand_formula(shape, dtype):
    torch.manual_seed(0)
    norm = RMSNorm(4).to(dtype)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor([0.5, 1.0, 2.0, -1.0]))
    x = torch.randn(shape, dtype=dtype) * 3
    rms = (x.pow(2).sum(-1, keepdim=True) / 4 + 1e-6).sqrt()
    out = norm(x)
    assert out.shape == x.shape and out.dtype == dtype
    torch.testing.assert_close(out, x / rms * norm.weight)


def test_unit_rms_with_unit_weight():
    x = torch.randn(3, 7, 16) * 10 + 5
    out = RMSNorm(16, eps=0.0 + 1e-12)(x)
    torch.testing.assert_close(out.pow(2).mean(-1), torch.ones(3, 7))


@pytest.mark.parametrize("eps", [1e-6, 1e-2])
def test_matches_torch_rmsnorm(eps):
    torch.manual_seed(0)
    ours, ref = RMSNorm(8, eps=eps), nn.RMSNorm(8, eps=eps)
    with torch.no_grad():
        ref.weight.copy_(torch.randn(8))
    ours.load_state_dict(ref.state_dict())  # same key: "weight"
    x = torch.randn(2, 5, 8) * 0.1
    torch.testing.assert_close(ours(x), ref(x))
    x.requires_grad_(True)
    (g_ours,) = torch.autograd.grad(ours(x).square().sum(), x)
    (g_ref,) = torch.autograd.grad(ref(x).square().sum(), x)
    torch.testing.assert_close(g_ours, g_ref)


def test_state_dict_and_parameters():
    norm = RMSNorm(6)
    assert list(norm.state_dict()) == ["weight"]
    assert sum(p.numel() for p in norm.parameters()) == 6
    assert (norm.weight == 1).all()


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: RMSNorm(0), CourseValueError, r"d_model: expected a positive int, got 0"),
        (lambda: RMSNorm(4, eps=0), CourseValueError, r"eps: expected a positive float, got 0"),
        (lambda: RMSNorm(4, eps="tiny"), CourseTypeError, r"eps: expected a positive float, got str"),
        (lambda: RMSNorm(4)(torch.randn(2, 5)), CourseValueError,
         r"x: expected shape \(\.\.\., d_model=4\).*got torch.float32 of shape \(2, 5\)"),
        (lambda: RMSNorm(4)(torch.ones(2, 4, dtype=torch.long)), CourseTypeError,
         r"x: expected a floating-point tensor"),
    ],
)
def test_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()
