"""The harness's TrainingWatch: a student's loop trains with any torch.optim optimiser, and a loop without
zero_grad is still seen."""

import torch
from torch.optim import optimizer as torch_optimizer

from course_lib.grading import harness


def _model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))
    model[0].bias.requires_grad_(False)                       # a frozen parameter is left alone
    return model


def _run(loop: str, steps: int = 5, watched: bool = True):
    """(stale steps, steps, the parameters after training) of ``loop`` on a small model."""
    model = _model()
    unused = torch.nn.Parameter(torch.ones(2))                # never reached by backward
    params = [*model.parameters(), unused]
    optimizer = torch.optim.Adam(params, lr=0.01)
    watch = harness.TrainingWatch(params) if watched else None
    x, y = torch.randn(16, 5), torch.randint(0, 3, (16,))
    if loop == "scheduler and AdamW":
        optimizer = torch.optim.AdamW(params, lr=0.02, weight_decay=0.1)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 3))
    if loop == "two optimisers":
        optimizer = torch.optim.Adam(model[0].parameters(), lr=0.01)
        second = torch.optim.SGD([*model[2].parameters(), unused], lr=0.1, momentum=0.9)
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if loop in ("zero_grad at the top, kept as zeros", "scheduler and AdamW"):
            optimizer.zero_grad(set_to_none=False)
        if loop == "param_groups":
            for group in optimizer.param_groups:
                group["lr"] *= 0.9
            optimizer.zero_grad()
        if loop == "two optimisers":
            optimizer.zero_grad()
            second.zero_grad(set_to_none=False)
        loss.backward()
        if loop == "clipped":
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.01)     # every step clipped
        optimizer.step()
        if loop == "stepped twice":
            optimizer.step()
            optimizer.zero_grad()
        if loop == "two optimisers":
            second.step()
        if loop == "scheduler and AdamW":
            schedule.step()
        if loop == "clipped":
            model.zero_grad()
    if watch is not None:
        watch.close()
    state = optimizer.state_dict()
    assert len(state["state"]) > 0 and "param_groups" in state
    after = [p.detach().clone() for p in model.parameters()]
    return (watch.stale_steps, watch.steps, after) if watch is not None else (None, None, after)


def test_honest_loops_of_any_torch_optimiser_take_no_stale_step():
    """Issue 52: the grader's optimiser is torch's own, so param_groups, state_dict, a scheduler, AdamW, clipping
    and a second optimiser all work; none of them is a step on stale gradients. Issue 40: clipping changes .grad
    between backward and step, which is honest."""
    for loop in ("zero_grad at the top, kept as zeros", "clipped", "param_groups", "scheduler and AdamW",
                 "two optimisers"):
        stale, steps, _ = _run(loop)
        assert (stale, steps) == (0, 5), loop


def test_a_loop_without_zero_grad_steps_on_stale_gradients():
    """A stale step is one whose backward found the last step's gradients still in .grad, or a second step on
    one backward."""
    assert _run("no zero_grad")[:2] == (4, 5)                      # every step after the first
    assert _run("stepped twice")[:2] == (5, 10)                    # each second step of a backward


def test_the_watch_changes_no_number():
    """Watched or not, training gives the same parameters bit for bit (the hooks only read)."""
    for loop in ("no zero_grad", "scheduler and AdamW"):
        assert all(torch.equal(a, b) for a, b in zip(_run(loop)[2], _run(loop, watched=False)[2]))


def test_the_watch_removes_its_hooks():
    before = len(torch_optimizer._global_optimizer_pre_hooks)
    _run("clipped")
    assert len(torch_optimizer._global_optimizer_pre_hooks) == before
