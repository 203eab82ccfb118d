"""Running a student's part on one case: the only code of the grader that calls student code.

This module imports only the standard library, numpy and torch (never course_lib), so that the
sandboxed part process can load it by file path without making course_lib's reference importable.
:func:`run_case` returns plain arrays; :mod:`course_lib.grading.judging` compares them with the
reference in a process that never ran student code.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch.optim.optimizer import register_optimizer_step_pre_hook


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


#: the seed torch gets just before a module's forward in training mode, so a run is reproducible (the
#: judge accepts any dropout mask that acts in the right place at the right rate: :mod:`.dropout`)
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
    state_dict: a table that is not a weight, such as the positional table, is a non-persistent buffer).

    Extra keys that only alias a contract key (the same tensor under a second name: ``linear1`` also held by
    an ``nn.Sequential``) cost nothing; extra *parameters* stay as the module made them and the outputs are
    judged (a LayerNorm where the contract has none changes them, and the judge names it); an extra
    persistent buffer is refused, by name."""
    own = module.state_dict()
    missing = sorted(k for k in state if k not in own)            # sorted: the grader may name them
    if missing:
        more = " ..." if len(missing) > 4 else ""
        raise ResultError(
            f"{what}: the state_dict has no {missing[:4]}{more} (its keys are {sorted(own)[:8]}"
            f"{' ...' if len(own) > 8 else ''}); look at the attribute names in the cell's docstring, which the "
            "test loads its weights by")
    contract = {(own[k].data_ptr(), tuple(own[k].shape)) for k in state if own[k].numel()}
    parameters = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    extra = sorted(k for k in own if k not in state and k not in parameters
                   and (own[k].data_ptr(), tuple(own[k].shape)) not in contract)
    if extra:
        raise ResultError(f"{what}: the state_dict has keys the contract does not have: {extra[:8]}"
                          f"{' ...' if len(extra) > 8 else ''}; look at how the module stores a table that is not "
                          "a weight (the docstring says: not part of the state_dict)")
    for k, v in state.items():
        if tuple(own[k].shape) != tuple(v.shape):
            raise ResultError(f"{what}: parameter '{k}' has shape {tuple(own[k].shape)}, expected {tuple(v.shape)}")
    module.load_state_dict(state, strict=False)


def _changed(given: dict, inputs: dict) -> dict:
    """{"input_changed": 1.0} when the part changed a tensor it was given (an in-place ``x += ...``: the
    caller's tensor is not what it passed, and backward through it fails), else 0.0."""
    changed = any(not torch.equal(given[k], inputs[k]) for k in given)
    return {"input_changed": np.array(1.0 if changed else 0.0)}


def _run_module(case: Case, candidate, what: str) -> dict:
    t = case.inputs
    module = _module(candidate, case.kwargs, what)
    _load(module, case.state, what)
    module.train(case.training)
    if case.training:
        torch.manual_seed(TRAINING_SEED)
    given = {k: v.clone() for k, v in t.items()}
    mask = {"key_padding_mask": given["key_padding_mask"]} if "key_padding_mask" in given else {}
    if case.part == "multi_head_attention":
        q = given["query"]
        if "key" not in t:                                                # self-attention
            res = module(q, q, q, **mask)
        else:
            res = module(q, given["key"], given["value"], **mask)
        out, w = _pair(res, "MultiHeadAttention.forward")
        return {"out": _array(out, "out"), "weights": _array(w, "weights"), **_changed(given, t)}
    first = {"feed_forward": "x", "encoder_layer": "x", "encoder": "tokens"}[case.part]
    return {"out": _array(module(given[first], **mask), "output"), **_changed(given, t)}


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
            given = {k: v.clone() for k, v in t.items()}
            mask = {"attn_mask": given["attn_mask"]} if "attn_mask" in t else {}
            out, w = _pair(candidate(given["q"], given["k"], given["v"], **mask), "scaled_dot_product_attention")
            return {"out": _array(out, "out"), "weights": _array(w, "weights"), **_changed(given, t)}
        if case.part == "parameter_count":
            return {"count": _count(candidate(**kw))}
        return _run_module(case, candidate, {"multi_head_attention": "MultiHeadAttention",
                                             "feed_forward": "PositionwiseFeedForward",
                                             "encoder_layer": "EncoderLayer", "encoder": "Encoder"}[case.part])


def train_reverser(case: Case, candidate) -> dict[str, np.ndarray]:
    """Train ``candidate(**model)`` with the student's own ``train_reverser(model, optimizer, batches)`` on
    the case's batches; predict the test set before and after, and ask ``reverse_accuracy(model, tokens)``.

    The predictions come from the same computation before and after training, made here from the model's
    own parts, ``head(encoder(tokens))`` (``head`` an ``nn.Linear``, ``encoder`` the Encoder of Part 6, not
    a class of the Reverser's cell): the Reverser's ``forward`` is not called for them, so a model that
    behaves differently from one call to the next cannot make the grader see a learned answer. The seed,
    the batches and the optimizer are the case's, so the run is reproducible (on one thread, bit for bit).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                                  # the same sums in the same order everywhere
    try:
        with warnings.catch_warnings():
            # ``float(loss)`` on a loss that still has its graph is correct code; torch warns about it, and
            # nbgrader's Validate fails a cell that writes anything to stderr.
            warnings.filterwarnings("ignore", message="Converting a tensor with requires_grad=True to a scalar")
            return _train(case, candidate)
    finally:
        torch.set_num_threads(threads)


def _cell_function(candidate, name: str):
    """The function ``name`` that the candidate's cell defines (a class's cell: its methods' globals)."""
    for obj in vars(candidate).values() if isinstance(candidate, type) else ():
        g = getattr(obj, "__globals__", None)
        if g is not None and callable(g.get(name)):
            return g[name]
    raise ResultError(f"the Reverser's cell defines no {name}(...) (the part asks for it)")


def _predict(model, tokens: torch.Tensor) -> torch.Tensor:
    """Argmax of ``head(encoder(tokens))``, computed here from the model's parameters and its Encoder."""
    model.eval()
    with torch.no_grad():
        hidden = model.encoder(tokens.clone())
        if not isinstance(hidden, torch.Tensor):
            raise ResultError("Reverser: the encoder returned no tensor")
        return F.linear(hidden, model.head.weight, model.head.bias).argmax(dim=-1)


def _train(case: Case, candidate) -> dict[str, np.ndarray]:
    """One training run from each of the case's seeds in turn, until one learns (its accuracy reaches
    ``pass_accuracy``): a correct loop fails from about one start in 120 (a slow plateau, bad luck of the
    initialisation, not of the code), from two or three in a row practically never. The judge reads the
    last run; ``tries`` says how many there were."""
    kw = case.kwargs
    seeds = [kw["seed"], *kw.get("retry_seeds", ())]
    right = case.inputs["test"].flip(1)
    tries = 0
    for seed in seeds:
        outputs, tries = _train_once(case, candidate, seed), tries + 1
        if float((torch.from_numpy(outputs["predicted"]) == right).double().mean()) >= kw.get("pass_accuracy", 0):
            break
    return {**outputs, "tries": np.array(float(tries))}


def _train_once(case: Case, candidate, seed: int) -> dict[str, np.ndarray]:
    kw = case.kwargs
    train, accuracy = _cell_function(candidate, "train_reverser"), _cell_function(candidate, "reverse_accuracy")
    torch.manual_seed(seed)
    model = _module(candidate, kw["model"], "Reverser")
    head, encoder = getattr(model, "head", None), getattr(model, "encoder", None)
    if type(head) is not torch.nn.Linear or not isinstance(encoder, torch.nn.Module):
        raise ResultError("Reverser: expected the attributes encoder (your Encoder) and head (an nn.Linear)")
    if type(encoder).__module__ == getattr(candidate, "__module__", None):
        raise ResultError("Reverser: its encoder must be the Encoder of Part 6, not a class of this cell")
    test = case.inputs["test"]
    untrained = _predict(model, test)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=kw["lr"])
    watch = TrainingWatch(model.parameters())
    try:
        with torch.enable_grad():
            losses = train(model, optimizer, [x.clone() for x in case.inputs["train"]])
    finally:
        watch.close()
    try:
        losses = np.array([float(v) for v in losses], dtype=np.float64)
    except (TypeError, ValueError):
        raise ResultError("train_reverser: expected a list of the losses (floats), one per step") from None
    predicted = _predict(model, test)
    reported = accuracy(model, test.clone())
    if isinstance(reported, torch.Tensor) and reported.numel() == 1:
        reported = reported.item()
    if isinstance(reported, bool) or not isinstance(reported, (numbers.Real,)):
        raise ResultError(f"reverse_accuracy: expected a float, got {type(reported).__name__}")
    return {"predicted": _array(predicted.double(), "the predictions"), "losses": losses,
            "untrained": _array(untrained.double(), "the untrained model's predictions"),
            "reported": np.array(float(reported)), "stale_steps": np.array(float(watch.stale_steps)),
            "steps": np.array(float(watch.steps))}


class TrainingWatch:
    """What a training run did, seen from the model's parameters: how many optimiser steps each parameter
    took, and how many steps used gradients that still held an earlier batch's.

    The student's loop trains with any ``torch.optim`` optimiser (the one it is given, with its
    ``param_groups``, ``state_dict`` and a learning-rate scheduler, or one it builds itself, AdamW...): the
    watch sees every step through torch's public hook common to all optimisers
    (``torch.optim.optimizer.register_optimizer_step_pre_hook``) and every backward through a hook on each
    parameter. A leaf's hook runs before the new gradient is added to ``.grad``, so it sees what the loop
    left there: a backward that finds the last step's gradients still in ``.grad`` adds its batch's to
    them (no ``zero_grad`` in the loop). What a loop does to ``.grad`` between its backward and its step
    (clipping, scaling) is honest and not looked at. A step on a non-zero gradient that no backward has
    touched since that parameter's last step (a second ``step()`` on one backward) is stale too.
    ``close()`` removes every hook."""

    def __init__(self, params):
        self.params = [p for p in params if p.requires_grad]
        self._index = {id(p): i for i, p in enumerate(self.params)}
        n = len(self.params)
        self.used: list = [None] * n               # the gradient each parameter last stepped on
        self.fresh, self.found_stale, self.stepped = [False] * n, [False] * n, [0] * n
        self.stale_steps = 0
        self._handles = [p.register_hook(lambda g, i=i, p=p: self._backward(i, p)) for i, p in enumerate(self.params)]
        self._handles.append(register_optimizer_step_pre_hook(self._step))

    @property
    def steps(self) -> int:
        """The most optimiser steps any one parameter took (two optimisers of one model make one step)."""
        return max(self.stepped, default=0)

    def _backward(self, i: int, p) -> None:
        self.fresh[i] = True
        old, used = p.grad, self.used[i]
        if old is not None and used is not None and bool(old.any()) and torch.equal(old, used):
            self.found_stale[i] = True

    @torch.no_grad()
    def _step(self, optimizer, args, kwargs) -> None:
        stale = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                i = self._index.get(id(p))
                if i is None or p.grad is None:
                    continue
                stale = stale or self.found_stale[i] or (not self.fresh[i] and bool(p.grad.any()))
                self.used[i] = p.grad.detach().clone()
                self.fresh[i] = self.found_stale[i] = False
                self.stepped[i] += 1
        self.stale_steps += stale

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
