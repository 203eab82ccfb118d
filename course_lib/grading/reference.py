"""course_lib's reference on a grader's case: its answer, as it is or with one known mistake put in.

:func:`reference_outputs` runs the real reference (``course_lib.attention``, ``feed_forward``,
``encoder``, ``positional``) in float64 and eval mode on a case (a case in training mode is judged against
it by :mod:`.dropout`). :mod:`course_lib.grading.mistakes` puts its perturbations in through
the ``patch``, ``attention`` and ``masks`` arguments.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from .. import attention as attention_module
from ..attention import MultiHeadAttention, scaled_dot_product_attention
from ..encoder import Encoder, EncoderLayer
from ..feed_forward import PositionwiseFeedForward
from ..positional import sinusoidal_positional_encoding
from .harness import Case

_CLASSES = {"multi_head_attention": MultiHeadAttention, "feed_forward": PositionwiseFeedForward,
            "encoder_layer": EncoderLayer, "encoder": Encoder}
_FIRST = {"multi_head_attention": "query", "feed_forward": "x", "encoder_layer": "x", "encoder": "tokens"}


def _double(tensors: dict) -> dict:
    return {k: (v.double() if v.is_floating_point() else v) for k, v in tensors.items()}


def _np(outputs: dict) -> dict[str, np.ndarray]:
    return {k: v.detach().to(torch.float64).numpy() for k, v in outputs.items()}


@contextlib.contextmanager
def _attention_hook(variant):
    """While active, MultiHeadAttention calls ``variant(scaled_dot_product_attention)`` instead."""
    if variant is None:
        yield
        return
    saved = attention_module.scaled_dot_product_attention
    attention_module.scaled_dot_product_attention = variant(saved)
    try:
        yield
    finally:
        attention_module.scaled_dot_product_attention = saved


@contextlib.contextmanager
def one_thread():
    """torch on one thread: tiny tensors run faster so, and a grader that forks after this never
    inherits a started OpenMP pool (a forked child that uses one deadlocks)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def reference_module(case: Case, patch=None) -> nn.Module:
    """The reference module of ``case`` with the case's weights, in float64 and eval mode (a case in
    training mode is judged against it: :mod:`.dropout` reads the student's dropout mask back)."""
    module = _CLASSES[case.part](**case.kwargs)
    module.load_state_dict(case.state)
    module.double().eval()
    if patch is not None:
        patch(module)
    return module


def reference_outputs(case: Case, patch=None, attention=None, masks=None) -> dict[str, np.ndarray]:
    """The reference's outputs on ``case``; ``patch(module)``, ``attention(sdpa) -> sdpa`` and
    ``masks(case) -> call kwargs`` put a mistake in (None: the right answer)."""
    with one_thread():
        return _outputs(case, patch, attention, masks)


def _outputs(case: Case, patch, attention, masks) -> dict[str, np.ndarray]:
    t = _double(case.inputs)
    if case.part == "positional_encoding":
        table = sinusoidal_positional_encoding(case.kwargs["max_len"], case.kwargs["d_model"]).double()
        return _np({"pe": patch(table) if patch else table})
    if case.part == "parameter_count":
        return {"count": np.array(float(_count(case, patch)))}
    kwargs = masks(case) if masks else {k: t[k] for k in ("key_padding_mask", "attn_mask") if k in t}
    with torch.no_grad(), _attention_hook(attention):
        if case.part == "attention":
            sdpa = attention(scaled_dot_product_attention) if attention else scaled_dot_product_attention
            out, w = sdpa(t["q"], t["k"], t["v"], **kwargs)
            return _np({"out": out, "weights": w})
        module = reference_module(case, patch)
        x = t[_FIRST[case.part]]
        if case.part == "multi_head_attention":
            out, w = module(x, t.get("key", x), t.get("value", x), **kwargs)
            return _np({"out": out, "weights": w})
        return _np({"out": module(x, **kwargs)})


def _count(case: Case, leave_out=None) -> int:
    """Parameters of the reference Encoder, built as it is but with its initialisers skipped."""
    with _SkipInit():
        model = Encoder(**case.kwargs)
    return sum(p.numel() for name, p in model.named_parameters() if leave_out is None or not leave_out(name))


class _SkipInit(TorchFunctionMode):
    """While active, ``nn.init``'s functions and ``Tensor.normal_``/``uniform_`` return their tensor as it
    is: a module's parameters are allocated (untouched pages, so no memory is used) and never filled.

    Counting the paper's base model so takes ~0.05 s instead of the ~0.3 s of its random fill; the
    meta device would allocate nothing, but its random fill and ``arange`` go through torch's Python
    references, whose first call imports torch._dynamo (~1 s of the grader's start-up)."""

    SKIPPED = frozenset({torch.Tensor.normal_, torch.Tensor.uniform_} |
                        {getattr(nn.init, n) for n in dir(nn.init) if n.endswith("_") and not n.startswith("_")})

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in self.SKIPPED:
            return args[0] if args else kwargs.get("tensor")
        return func(*args, **kwargs)
