"""The harness's own Adam: the numbers of torch.optim.Adam, without importing torch._dynamo."""

import subprocess
import sys

import torch

from course_lib.grading import harness


def _train(make_optimizer, steps=6):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))
    model[0].bias.requires_grad_(False)                       # a frozen parameter is left alone
    optimizer = make_optimizer(model.parameters())
    x, y = torch.randn(16, 5), torch.randint(0, 3, (16,))
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


def test_adam_matches_torch_bit_for_bit():
    ours = _train(lambda ps: harness.Adam(ps, lr=0.015))
    theirs = _train(lambda ps: torch.optim.Adam(ps, lr=0.015, foreach=False))
    moved = _train(lambda ps: harness.Adam(ps, lr=0.0))
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))
    assert not all(torch.equal(a, b) for a, b in zip(ours, moved))


def test_adam_does_not_import_dynamo():
    # harness.py alone, from its folder: the child imports nothing else of course_lib
    folder = str(harness.__file__).rsplit("/", 1)[0]
    code = (f"import sys, torch\nsys.path.insert(0, {folder!r})\nimport harness\n"
            "m = torch.nn.Linear(2, 2)\no = harness.Adam(m.parameters(), lr=0.1)\n"
            "m(torch.ones(1, 2)).sum().backward()\n"
            "o.step()\nprint('torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_graders_adam_takes_zero_grad_as_torch_does():
    """A student's loop calls ``optimizer.zero_grad()`` either way torch allows; the grader's Adam too."""
    import torch

    w = torch.nn.Parameter(torch.ones(3))
    opt = harness.Adam([w])
    (w * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and torch.equal(w.grad, torch.zeros(3))
    opt.zero_grad(set_to_none=True)
    assert w.grad is None


def _stale_steps(loop: str, steps: int = 5) -> int:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))
    optimizer = harness.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 5), torch.randint(0, 3, (16,))
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if loop == "zero_grad at the top, kept as zeros":
            optimizer.zero_grad(set_to_none=False)
        loss.backward()
        if loop == "clipped":
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.01)     # every step clipped
        optimizer.step()
        if loop == "clipped":
            model.zero_grad()
    return optimizer.stale_steps


def test_a_loop_without_zero_grad_steps_on_stale_gradients_and_clipping_is_not_that():
    """Issue 40: gradient clipping changes .grad between backward and step, which is honest; the grader's Adam
    counted every such step as one that kept earlier batches' gradients (reverse_no_zero_grad). A stale step is
    now one whose backward found the last step's gradients still in .grad."""
    assert _stale_steps("no zero_grad") == 4                      # every step after the first
    assert _stale_steps("zero_grad at the top, kept as zeros") == 0
    assert _stale_steps("clipped") == 0
