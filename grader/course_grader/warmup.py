"""The zygote's warm-up: torch, numpy and what parts use imported, and every lazy first-call set-up done
once, before any part is forked (so no part pays for it, and none of it happens under the guard).

Loaded by the zygote by file path (:mod:`zygote`), like :mod:`guard` and :mod:`confine`.
"""

import sys

EXTRA_MODULES = ("math", "typing", "functools", "itertools", "collections", "dataclasses", "warnings", "numbers",
                 "io", "json", "struct", "copy", "abc", "enum", "operator", "numpy.lib.format", "torch.optim",
                 "torch.nn.init", "torch.nn.functional")


def _load(name: str, path: str):
    """A module from a file, under ``name`` (registered, so dataclasses and pickling-free code work)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _warm_up(torch, harness) -> None:
    """Run once what every part runs (lazy imports and first-call set-ups happen here, not in a part)."""
    from torch import nn
    torch.manual_seed(0)

    class Tiny(nn.Module):
        def __init__(self, d_model=4, d_ff=8, dropout=0.0):
            super().__init__()
            self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
            self.norm, self.drop, self.emb = nn.LayerNorm(d_model), nn.Dropout(dropout), nn.Embedding(5, d_model)
            self.layers = nn.ModuleList([nn.Identity()])
            self.register_buffer("pe", torch.zeros(3, d_model), persistent=False)

        def forward(self, x, key_padding_mask=None):
            # the operations a part uses, each once (their lazy set-up happens here, before the guard)
            s = torch.softmax(x.masked_fill(torch.zeros(1, dtype=torch.bool), -1e9), -1) + x @ x.transpose(-2, -1) @ x
            return self.norm(x + self.drop(self.linear2(torch.relu(self.linear1(s)))))

    state = {k: v.clone() for k, v in Tiny().state_dict().items()}
    case = harness.Case("feed_forward", "warm-up", "warm-up", {"x": torch.randn(2, 3, 4)}, {}, state)
    harness.run_case(case, Tiny)
    # Part 8 trains with torch.optim: the first optimiser imports torch._dynamo (~1 s), once here for the class;
    # the watch's hooks, a scheduler and clipping, as a student's loop may use them
    model = Tiny()
    watch = harness.TrainingWatch(model.parameters())
    for opt in (torch.optim.Adam(model.parameters(), lr=0.01), torch.optim.AdamW(model.parameters(), lr=0.01)):
        schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0)
        loss = torch.nn.functional.cross_entropy(model(torch.randn(2, 3, 4)).reshape(-1, 4), torch.zeros(6).long())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        schedule.step()
        opt.state_dict()
    watch.close()
    F = torch.nn.functional
    repr(torch.arange(3.0).sin().cos().exp().log1p()), torch.finfo(torch.float32).min
    F.gelu(torch.ones(2)), F.dropout(torch.ones(2), 0.1, False), torch.ones(2, 2).triu(1).tril()
    import io

    import numpy as np
    np.save(io.BytesIO(), np.zeros(2), allow_pickle=False)


def warm(harness_path: str) -> tuple:
    """(torch, harness): torch and what parts use imported, every first-call set-up done."""
    import numpy  # noqa: F401
    import torch
    torch.set_num_threads(1)
    for name in EXTRA_MODULES:
        __import__(name)
    harness = _load("_harness", harness_path)
    _cpu_only(torch)
    _warm_up(torch, harness)
    return torch, harness


def _cpu_only(torch) -> None:
    """Parts compute on the CPU: seeding skips the accelerators (whose lazy seeding records a stack
    trace with sys._getframe, which the guard refuses)."""
    for name in ("cuda", "xpu", "mtia"):
        module = getattr(torch, name, None)
        if module is not None and not module.is_available():
            module.manual_seed_all = _no_seed(name)


def _no_seed(name: str):
    def manual_seed_all(seed) -> None:
        """No such device in the sandbox: nothing to seed."""
    manual_seed_all.__qualname__ = f"{name}_manual_seed_all"
    return manual_seed_all
