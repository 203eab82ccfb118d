"""Judging a part's outputs on a case against course_lib's reference. Never calls student code.

:func:`expected` is the real reference's answer (``course_lib.attention``, ``feed_forward``,
``encoder``, ``positional``, through :func:`reference.reference_outputs`). :func:`judge_case` says
None when the outputs are right, else a message for the student that says *what* is wrong, by
trying the usual mistakes of the part (:data:`mistakes.MISTAKES`). A hidden case's message names
its family but none of its inputs.
"""

from __future__ import annotations

import builtins
import re

import numpy as np
import torch

from ..errors import broadcast_shape
from .harness import Case
from .mistakes import MISTAKES
from .reference import reference_outputs

ATOL, RTOL = 1e-4, 1e-4          # float32 maths done in a different order stays far inside this
REVERSE_MARGIN = 0.2             # the reverse task: accuracy above the position-blind ceiling by this much


def expected(case: Case) -> dict[str, np.ndarray]:
    """course_lib's outputs for ``case``, in float64 (for the reverse task: the accuracy to beat)."""
    if case.part == "reverse_task":
        return {"ceiling": np.float64(position_blind_ceiling(case.inputs["test"]))}
    return reference_outputs(case)


def _graded_rows(case: Case):
    """A bool (B, T) of the query positions that are graded (padded queries are not), or None."""
    kpm = case.inputs.get("key_padding_mask")
    if case.part == "encoder":
        kpm = case.inputs["tokens"] == case.kwargs["pad_id"] if kpm is None else kpm
        return ~kpm.numpy()
    if case.part == "encoder_layer" and kpm is not None:
        return ~kpm.numpy()
    return None


def _diff(case: Case, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    rows = _graded_rows(case)
    return (np.abs(got - want) - RTOL * np.abs(want))[rows] if rows is not None else np.abs(got - want) - RTOL * np.abs(want)


def _close(case: Case, got: dict, want: dict, atol: float = ATOL) -> bool:
    return all(k in got and got[k].shape == w.shape and not (_diff(case, got[k], w) > atol).any()
               for k, w in want.items())


def _allowed(case: Case):
    """Where the weights may be non-zero (bool, the weights' shape), or None."""
    t = case.inputs
    if case.part == "attention" and "attn_mask" in t:
        shape = (*broadcast_shape(t["q"].shape[:-2], t["k"].shape[:-2]), t["q"].shape[-2], t["k"].shape[-2])
        return t["attn_mask"].expand(shape).numpy()
    if case.part == "multi_head_attention" and "key_padding_mask" in t:
        b, tq, h = t["query"].shape[0], t["query"].shape[1], case.kwargs["num_heads"]
        return (~t["key_padding_mask"])[:, None, None, :].expand(b, h, tq, -1).numpy()
    return None


#: where the part applies dropout, for a failed case in training mode
_DROPOUT = {"multi_head_attention": "on the attention weights, before they multiply v",
            "feed_forward": "on the hidden layer, between the ReLU and linear2",
            "encoder_layer": "dropout1 and dropout2 on each sublayer's output, before the residual sum",
            "encoder": "on embedding * sqrt(d_model) + positions, before the first layer"}

_SHAPES = {"multi_head_attention": " = (B, num_heads, T_q, T_k): keep the heads as their own axis",
           "attention": " (out is (..., T_q, d_v), weights (..., T_q, T_k))",
           "positional_encoding": " = (max_len, d_model)", "parameter_count": " (a single int)"}


def _form(case: Case, outputs: dict | None, want: dict) -> str | None:
    """What is wrong with the outputs' presence, type, shape or finiteness."""
    for key, w in want.items():
        if outputs is None or key not in outputs:
            return f"no '{key}' came back."
        g = outputs[key]
        if not isinstance(g, np.ndarray) or g.dtype.kind != "f":
            return f"'{key}' is not a floating-point tensor."
        if g.shape != w.shape:
            sizes = "" if case.hidden else f" {tuple(g.shape)}, expected {tuple(w.shape)}"
            return f"'{key}' has the wrong shape{sizes}{_SHAPES.get(case.part, '')}."
        if not np.all(np.isfinite(g)):
            return (f"'{key}' contains NaN or inf: look at how masked scores are filled (a softmax over a row of "
                    "-inf is NaN) and at any division.")
    return None


def _weights(case: Case, g: np.ndarray) -> str | None:
    """Rows summing to 1 over the keys, and zero weight where the mask forbids it."""
    sums = g.sum(axis=-1)
    if not np.allclose(sums, 1.0, atol=1e-4):
        hint = ""
        if np.allclose(g.sum(axis=-2), 1.0, atol=1e-4):
            hint = " (they sum to 1 over the queries: the softmax runs over the wrong axis)"
        return f"the attention weights of each query must sum to 1 over the keys{hint}."
    mask = _allowed(case)
    leaked = np.abs(g * ~mask).max() if mask is not None and g.size else 0.0
    if leaked > 1e-6:
        rule = ("attn_mask True = may attend, False = never attend." if case.part == "attention" else
                "key_padding_mask True = padding: those keys must get zero weight.")
        return f"keys that must be ignored get weight up to {leaked:.4f}; {rule}"
    return None


def _name_the_mistake(case: Case, outputs: dict, want: dict) -> str | None:
    for how, message in MISTAKES[case.part]:
        try:
            variant = reference_outputs(case, **how)
        except LookupError:                                 # a mistake that does not apply to this case
            continue
        if _close(case, outputs, variant, atol=1e-3) and not _close(case, variant, want):
            return message
    return None


def _generic(case: Case, outputs: dict, want: dict) -> str:
    worst = max(want, key=lambda k: float(_diff(case, outputs[k], want[k]).max(initial=0.0)))
    size = float(np.abs(outputs[worst] - want[worst]).max(initial=0.0))
    hint = ""
    if case.training:
        hint = (" This case runs in training mode with dropout > 0, torch seeded just before the call, and expects "
                f"the reference's dropout masks: look at where your dropout acts ({_DROPOUT[case.part]}) and that "
                "it is one nn.Dropout (or F.dropout) call, not a mask of your own.")
    elif case.kwargs.get("dropout", 0) > 0:
        hint = (" This case has dropout > 0 and runs after model.eval(), where dropout does nothing: look at "
                "whether your dropout follows the module's training mode.")
    elif case.kwargs.get("norm_first") and case.part == "encoder_layer":
        hint = (" This case uses norm_first=True (pre-LN) and none of the usual pre-LN mistakes fits: look at "
                "your pre-LN branch, at which tensor each sublayer reads and which one each residual adds.")
    elif case.kwargs.get("norm_first"):
        hint = " This case uses norm_first=True (pre-LN): look at what your Encoder does differently for pre-LN."
    if case.part == "parameter_count":
        return (f"the count is off by {outputs[worst].item() - want[worst].item():+.0f}: look at which parameters "
                "your formula counts; the Encoder has every nn.Linear (weight and bias), both LayerNorms of each "
                "layer, the embedding, and final_norm only for pre-LN.")
    return f"'{worst}' differs from the reference by up to {size:.4g} (tolerance {ATOL:g}).{hint}"


def position_blind_ceiling(tokens: torch.Tensor) -> float:
    """The best accuracy on the reverse task of any model that cannot see positions.

    Such a model gives every position the same answer for the same token and the same bag of
    tokens; for an even length the mirrored token is then any of the other T - 1 tokens, equally
    likely, so the best guess is the commonest of them.
    """
    hits = 0
    for row in tokens.tolist():
        for i, token in enumerate(row):
            others = row[:i] + row[i + 1:]
            hits += max(others.count(v) for v in set(others)) / len(others)
    return hits / tokens.numel() if tokens.numel() else 0.0


def judge_reverse(case: Case, outputs: dict | None, want: dict | None = None) -> str | None:
    test = case.inputs["test"]
    if not outputs or "predicted" not in outputs or outputs["predicted"].shape != tuple(test.shape):
        return "no predictions of the right shape came back."
    losses = outputs.get("losses", np.zeros(0))
    if losses.size and not np.all(np.isfinite(losses)):
        return "the training loss became NaN or inf."
    accuracy = float((outputs["predicted"] == test.flip(1).numpy()).mean())
    ceiling = float((want or expected(case))["ceiling"])
    vocab = case.kwargs["model"]["vocab_size"]
    blind = _blind_before_training(test, outputs, ceiling)
    if blind is not None:
        return blind
    if accuracy >= ceiling + REVERSE_MARGIN:
        return _loss_fell(outputs["losses"], vocab)
    return (f"after training, your Reverser gets {accuracy:.0%} of the reversed tokens right; a model blind to "
            f"positions can reach {ceiling:.0%}, the part asks for {ceiling + REVERSE_MARGIN:.0%}. Does forward "
            "return head(encoder(tokens)) as logits (B, T, vocab_size), without a softmax or a causal mask?")


def _blind_before_training(test: torch.Tensor, outputs: dict, ceiling: float) -> str | None:
    """A model that learns the task starts blind: before training it does no better than a model blind
    to positions. Else the answer was not learned."""
    untrained = outputs.get("untrained")
    if untrained is None or untrained.shape != tuple(test.shape):
        return "the model made no predictions before training."
    before = float((untrained == test.flip(1).numpy()).mean())
    if before >= ceiling:
        return (f"before any training your Reverser already gets {before:.0%} of the reversed tokens right: the "
                "answer must be learned by the encoder and the head, not built from the input tokens.")
    return None


def _loss_fell(losses: np.ndarray, vocab: int) -> str | None:
    """A model that learned starts at about chance, ln(vocab_size), and its loss falls."""
    if losses.size >= 10 and losses[0] >= 0.5 * np.log(vocab) and losses[-5:].mean() <= 0.8 * losses[0]:
        return None
    first, last = (float(losses[0]), float(losses[-5:].mean())) if losses.size else (0.0, 0.0)
    return (f"the training loss does not fall from chance as a model that learns does (first {first:.2f}, "
            f"last {last:.2f}; chance is ln(vocab_size) = {np.log(vocab):.2f}).")


def hide_inputs(text: str) -> str:
    """A message about a hidden case without its sizes: shapes and indices become "..."."""
    text = re.sub(r"[\[(]\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*[\])]", "(...)", text)
    return re.sub(r"\b(size|sizes|dimension|dim|index|length|shape)\s+-?\d+", r"\1 ...", text)


_BUILTIN_ERRORS = {name for name, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}


def hidden_error(error: str) -> str:
    """What a hidden case's error may tell: the kind of exception, never its text (a message that
    formats its inputs would show the hidden case). Only Python's own exception names pass; the part
    process's text is not trusted."""
    if not error.startswith("raised "):
        return "returned something the part's contract does not allow (its visible cases say what)."
    name = re.match(r"raised (\w+)", error)
    kind = name.group(1) if name and name.group(1) in _BUILTIN_ERRORS else "an exception"
    return f"raised {kind} (the text of an error on a hidden case is not shown)."


def judge_case(case: Case, outputs: dict | None, error: str | None = None, want: dict | None = None) -> str | None:
    """None when ``outputs`` (from :func:`harness.run_case`) are right, else a message for the student.

    ``want``: ``expected(case)`` if the caller keeps it (it does not depend on the submission).
    """
    head = f"{case.label}: "
    if error is not None:
        return head + (hidden_error(error) if case.hidden else error)
    if case.part == "reverse_task":
        message = judge_reverse(case, outputs, want)
        return None if message is None else head + message
    want = expected(case) if want is None else want
    message = _form(case, outputs, want)
    if message is None and _close(case, outputs, want):
        return None
    if message is None:
        message = (_name_the_mistake(case, outputs, want)
                   or ("weights" in want and _weights(case, outputs["weights"]))
                   or _generic(case, outputs, want))
    return head + message
