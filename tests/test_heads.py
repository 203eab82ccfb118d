"""Tests of course_lib.heads.OutputHead: logits, probabilities, predict, weight tying."""

import pytest
import torch
from torch import nn

from course_lib.errors import CourseTypeError, CourseValueError
from course_lib.heads import OutputHead

D, V = 8, 11


def _unique_params(*modules):
    seen = {id(p): p for m in modules for p in m.parameters()}
    return sum(p.numel() for p in seen.values())


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("tied", [True, False])
def test_forward_matches_linear_formula(bias, tied):
    torch.manual_seed(0)
    emb = nn.Embedding(V, D)
    head = OutputHead(D, V, tie_to=emb if tied else None, bias=bias)
    x = torch.randn(2, 5, D)
    expected = x @ head.linear.weight.T + (head.linear.bias if bias else 0)
    logits = head(x)
    assert logits.shape == (2, 5, V)
    torch.testing.assert_close(logits, expected)
    assert head.predict(x).tolist() == expected.argmax(-1).tolist()
    assert head(x[:, 0]).shape == (2, V)  # one vector per sequence works too


def test_tying_shares_the_parameter_and_saves_v_times_d():
    emb = nn.Embedding(V, D, padding_idx=0)
    tied = OutputHead(D, V, tie_to=emb)
    untied = OutputHead(D, V)
    assert tied.linear.weight is emb.weight and tied.tied and not untied.tied
    assert tied.linear.weight.data_ptr() == emb.weight.data_ptr()
    assert _unique_params(emb, untied) - _unique_params(emb, tied) == V * D
    with torch.no_grad():  # an update through one is seen by the other
        emb.weight[3].fill_(7.0)
    assert (tied.linear.weight[3] == 7.0).all()
    # gradients from the head and from the embedding meet in one .grad
    loss = tied(emb(torch.tensor([[1, 2]]))).sum()
    loss.backward()
    assert emb.weight.grad is tied.linear.weight.grad
    # a model holding both stores the matrix once
    model = nn.ModuleDict({"emb": emb, "head": tied})
    assert sum(p.numel() for p in model.parameters()) == V * D + V


@pytest.mark.parametrize("temperature", [0.5, 1, 2.0])
def test_probabilities(temperature):
    torch.manual_seed(0)
    head = OutputHead(D, V)
    x = torch.randn(3, 4, D)
    probs = head.probabilities(x, temperature=temperature)
    torch.testing.assert_close(probs.sum(-1), torch.ones(3, 4))
    torch.testing.assert_close(probs, torch.softmax(head(x) / temperature, -1))


def test_temperature_sharpens():
    torch.manual_seed(0)
    head = OutputHead(D, V)
    x = torch.randn(1, 1, D)
    peaks = [head.probabilities(x, temperature=t).max().item() for t in (4.0, 1.0, 0.25)]
    assert peaks[0] < peaks[1] < peaks[2]


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: OutputHead(D, V, tie_to=nn.Embedding(V, D + 1)), CourseValueError,
         r"tie_to: expected an nn.Embedding\(11, 8\) .* got weight of shape \(11, 9\)"),
        (lambda: OutputHead(D, V, tie_to=nn.Embedding(V + 1, D)), CourseValueError,
         r"tie_to: .*got weight of shape \(12, 8\)"),
        (lambda: OutputHead(D, V, tie_to=nn.Linear(D, V)), CourseTypeError,
         r"tie_to: expected an nn.Embedding or None, got Linear"),
        (lambda: OutputHead(0, V), CourseValueError, r"d_model: expected a positive int, got 0"),
        (lambda: OutputHead(D, 2.5), CourseTypeError, r"vocab_size: expected a positive int, got float"),
    ],
)
def test_construction_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda h: h.probabilities(torch.randn(1, 2, D), temperature=-1.0), CourseValueError,
         r"temperature: expected a positive float, got -1.0"),
        (lambda h: h.probabilities(torch.randn(1, 2, D), temperature=0), CourseValueError,
         r"temperature: expected a positive float, got 0"),
        (lambda h: h.probabilities(torch.randn(1, 2, D), temperature="hot"), CourseTypeError,
         r"temperature: expected a positive float, got str"),
        (lambda h: h(torch.randn(1, 2, D + 1)), CourseValueError,
         r"x: expected shape \(\.\.\., d_model=8\).*got torch.float32 of shape \(1, 2, 9\)"),
        (lambda h: h(torch.ones(1, 2, D, dtype=torch.long)), CourseTypeError,
         r"x: expected a floating-point tensor, got torch.int64"),
        (lambda h: h([1.0] * D), CourseTypeError, r"x: expected a torch.Tensor, got list"),
    ],
)
def test_call_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(OutputHead(D, V))
