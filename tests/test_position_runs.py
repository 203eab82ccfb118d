"""Lecture 05's experiment (course_lib.position_runs): the task, the four arms, and that they differ in one thing."""

import pytest
import torch

from course_lib import position_runs
from course_lib.errors import CourseValueError


def test_copy_batch_asks_for_the_previous_token():
    tokens, targets = position_runs.copy_batch(3, 6, 32, torch.Generator().manual_seed(0))
    assert tokens.shape == targets.shape == (3, 6)
    assert (targets[:, 0] == -100).all() and torch.equal(targets[:, 1:], tokens[:, :-1])


@pytest.mark.parametrize("scheme", position_runs.SCHEMES)
def test_the_arms_differ_only_in_how_a_position_enters(scheme):
    torch.manual_seed(0)
    model = position_runs.PreviousTokenHead(scheme, vocab=32, d=16, max_len=64).double()
    torch.manual_seed(0)
    plain = position_runs.PreviousTokenHead("none", vocab=32, d=16, max_len=64).double()
    shared = {k: v for k, v in plain.state_dict().items()}
    assert {k: v for k, v in model.state_dict().items() if k in shared}.keys() == shared.keys()
    tokens = torch.randint(32, (2, 40))
    assert model(tokens).shape == (2, 40, 32)
    extra = set(model.state_dict()) - set(shared)
    assert extra == ({"positions.weight"} if scheme == "learned" else set())
    if scheme == "none":                                   # no position: a permutation permutes the outputs
        perm = torch.randperm(40)
        assert torch.allclose(model(tokens[:, perm]), model(tokens)[:, perm], atol=1e-10)


def test_rope_scores_depend_on_the_offset_only():
    model = position_runs.PreviousTokenHead("rope", vocab=8, d=8, max_len=64).double()
    x = torch.randn(1, 2, 8, dtype=torch.float64)
    q, k = model.rope(x), model.rope(torch.cat([torch.zeros(1, 5, 8, dtype=torch.float64), x], dim=1))[:, 5:]
    assert torch.allclose(q[0, 0] @ q[0, 1], k[0, 0] @ k[0, 1])


def test_a_short_run_learns_and_is_scored_past_the_training_length():
    model, losses = position_runs.train_head("rope", seed=0, steps=40)
    assert losses[-1] < losses[0]
    acc = position_runs.accuracy_by_length(model, lengths=(16, 32), n=4)
    assert set(acc) == {16, 32, "32 past 16"} and all(0 <= v <= 1 for v in acc.values())
    with pytest.raises(CourseValueError):
        position_runs.PreviousTokenHead("alibi", 8, 8)
