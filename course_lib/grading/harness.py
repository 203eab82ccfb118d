"""Running a student's part on one case: the only code of the grader that calls student code.

This module imports only the standard library, numpy and torch (never course_lib), so that the
sandboxed part process can load it by file path without making course_lib's reference importable.
:func:`run_case` returns plain arrays; :mod:`course_lib.grading.judging` compares them with the
reference in a process that never ran student code.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F


@dataclass
class Case:
    """One call of a part, with the inputs (and weights) the grader chose.

    ``label`` is what a student is told about the case: for a hidden case it names the family of
    the case ("pre-LN with padding") but none of its sizes or values.
    """

    part: str
    label: str
    family: str
    inputs: dict = field(default_factory=dict)   # tensors
    kwargs: dict = field(default_factory=dict)   # plain numbers: sizes, flags, constructor arguments
    state: dict | None = None                    # weights to load (modules)
    hidden: bool = False
    training: bool = False                       # a module runs in training mode, torch seeded (dropout > 0)


#: the seed torch gets just before a module's forward in training mode, so dropout draws the same masks
#: in the student's module and in the reference (nn.Dropout or F.dropout, on tensors of the same shape)
TRAINING_SEED = 0


class ResultError(Exception):
    """The student's code returned something that is not what the contract asks for."""


def _array(x, what: str) -> np.ndarray:
    if not isinstance(x, torch.Tensor):
        raise ResultError(f"{what}: expected a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise ResultError(f"{what}: expected a floating-point tensor, got {x.dtype}")
    plain = torch.Tensor.cpu(torch.Tensor.detach(x)).to(torch.float64)
    return np.array(torch.Tensor.numpy(plain), dtype=np.float64)


def _pair(result, what: str):
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        length = f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""
        raise ResultError(f"{what}: expected a tuple (out, weights), got {type(result).__name__}{length}")
    return result


def _module(candidate, kwargs: dict, what: str):
    module = candidate(**kwargs)
    if not isinstance(module, torch.nn.Module):
        raise ResultError(f"{what}: expected an nn.Module, got {type(module).__name__}")
    return module


def _load(module, state: dict, what: str) -> None:
    """Load the case's weights; report missing keys, and extra ones (the contract adds nothing to the
    state_dict: a table that is not a weight, such as the positional table, is a non-persistent buffer)."""
    own = module.state_dict()
    missing = [k for k in state if k not in own]
    if missing:
        more = " ..." if len(missing) > 4 else ""
        raise ResultError(
            f"{what}: the state_dict has no {missing[:4]}{more} (its keys are {sorted(own)[:8]}"
            f"{' ...' if len(own) > 8 else ''}); use the attribute names of the contract so the "
            "reference weights can be loaded")
    extra = sorted(k for k in own if k not in state)
    if extra:
        raise ResultError(f"{what}: the state_dict has keys the contract does not have: {extra[:4]}"
                          f"{' ...' if len(extra) > 4 else ''} (the contract adds no parameters, and a table "
                          "that is not a weight is a buffer registered with persistent=False)")
    for k, v in state.items():
        if tuple(own[k].shape) != tuple(v.shape):
            raise ResultError(f"{what}: parameter '{k}' has shape {tuple(own[k].shape)}, expected {tuple(v.shape)}")
    module.load_state_dict(state, strict=False)


def _mask_kwargs(inputs: dict) -> dict:
    return {"key_padding_mask": inputs["key_padding_mask"].clone()} if "key_padding_mask" in inputs else {}


def _run_module(case: Case, candidate, what: str) -> dict:
    t = case.inputs
    module = _module(candidate, case.kwargs, what)
    _load(module, case.state, what)
    module.train(case.training)
    if case.training:
        torch.manual_seed(TRAINING_SEED)
    if case.part == "multi_head_attention":
        q = t["query"].clone()
        if "key" not in t:                                                # self-attention
            res = module(q, q, q, **_mask_kwargs(t))
        else:
            res = module(q, t["key"].clone(), t["value"].clone(), **_mask_kwargs(t))
        out, w = _pair(res, "MultiHeadAttention.forward")
        return {"out": _array(out, "out"), "weights": _array(w, "weights")}
    first = {"feed_forward": "x", "encoder_layer": "x", "encoder": "tokens"}[case.part]
    return {"out": _array(module(t[first].clone(), **_mask_kwargs(t)), "output")}


def _count(value) -> np.ndarray:
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float)):
        raise ResultError(f"expected an int (the number of parameters), got {type(value).__name__}")
    return np.array(float(value))


def run_case(case: Case, candidate) -> dict[str, np.ndarray]:
    """Call ``candidate`` (the student's function or class) on ``case``; return its outputs as arrays.

    Exceptions raised by the student's code propagate; a result of the wrong type raises ResultError.
    """
    if case.part == "reverse_task":
        return train_reverser(case, candidate)
    t, kw = case.inputs, case.kwargs
    with torch.no_grad():
        if case.part == "positional_encoding":
            table = candidate(kw["max_len"], kw["d_model"])
            if isinstance(table, torch.Tensor) and table.dtype != torch.float32:
                raise ResultError(f"the returned table: expected float32 (torch's default dtype), got {table.dtype}")
            return {"pe": _array(table, "the returned table")}
        if case.part == "attention":
            mask = {"attn_mask": t["attn_mask"].clone()} if "attn_mask" in t else {}
            out, w = _pair(candidate(t["q"].clone(), t["k"].clone(), t["v"].clone(), **mask),
                           "scaled_dot_product_attention")
            return {"out": _array(out, "out"), "weights": _array(w, "weights")}
        if case.part == "parameter_count":
            return {"count": _count(candidate(**kw))}
        return _run_module(case, candidate, {"multi_head_attention": "MultiHeadAttention",
                                             "feed_forward": "PositionwiseFeedForward",
                                             "encoder_layer": "EncoderLayer", "encoder": "Encoder"}[case.part])


def train_reverser(case: Case, candidate) -> dict[str, np.ndarray]:
    """Train ``candidate(**model)`` to reverse sequences on the case's batches; predict its test set.

    The seed, the batches and the optimizer are the case's, so the run is reproducible (on one
    thread, bit for bit). Returns the predicted ids of the test sequences, the training losses, and the
    ids the model predicted before its first step ("untrained": a model that learns starts blind).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                                  # the same sums in the same order everywhere
    try:
        return _train(case, candidate)
    finally:
        torch.set_num_threads(threads)


def _train(case: Case, candidate) -> dict[str, np.ndarray]:
    kw = case.kwargs
    torch.manual_seed(kw["seed"])
    model = _module(candidate, kw["model"], "Reverser")
    vocab = kw["model"]["vocab_size"]
    optimizer = Adam(model.parameters(), lr=kw["lr"])
    model.eval()
    with torch.no_grad():                                                # what it knows before it learns
        untrained = model(case.inputs["test"])
        untrained = untrained.argmax(dim=-1) if isinstance(untrained, torch.Tensor) else None
    losses = []
    with torch.enable_grad():
        model.train()
        for x in case.inputs["train"]:                                   # (B, T) per step
            logits = model(x)
            if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != (*x.shape, vocab):
                got = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
                raise ResultError(f"Reverser: expected logits of shape (B, T, vocab_size) = {(*x.shape, vocab)}, "
                                  f"got {got}")
            loss = F.cross_entropy(logits.reshape(-1, vocab), x.flip(1).reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        predicted = model(case.inputs["test"]).argmax(dim=-1)
    out = {"predicted": _array(predicted.double(), "the predictions"), "losses": np.array(losses)}
    if untrained is not None:
        out["untrained"] = _array(untrained.double(), "the untrained model's predictions")
    return out


class Adam:
    """Adam (Kingma & Ba, 2015) with torch.optim.Adam's defaults, written out: the same operations in
    the same order as its single-tensor step, so the same numbers. The sandbox trains with this one
    because making a torch.optim optimizer imports torch._dynamo, about 1 s in every fresh process.
    Each operation runs on all the parameters at once (``torch._foreach_*``: on the CPU, the same
    kernel per tensor, without a Python loop over the parameters)."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.eps, self.steps = lr, betas, eps, 0
        self.exp_avg = [torch.zeros_like(p) for p in self.params]        # first moment, m
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]     # second moment, v

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.steps += 1
        beta1, beta2 = self.betas
        step_size = self.lr / (1 - beta1 ** self.steps)
        correction2_sqrt = (1 - beta2 ** self.steps) ** 0.5
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        params = [self.params[i] for i in live]
        grads = [p.grad for p in params]
        m, v = [self.exp_avg[i] for i in live], [self.exp_avg_sq[i] for i in live]
        torch._foreach_lerp_(m, grads, 1 - beta1)                        # m = b1 m + (1 - b1) g
        torch._foreach_mul_(v, beta2)                                    # v = b2 v + (1 - b2) g^2
        torch._foreach_addcmul_(v, grads, grads, value=1 - beta2)
        denom = torch._foreach_sqrt(v)                                   # sqrt(v / (1 - b2^t)) + eps
        torch._foreach_div_(denom, correction2_sqrt)
        torch._foreach_add_(denom, self.eps)
        torch._foreach_addcdiv_(params, m, denom, value=-step_size)
