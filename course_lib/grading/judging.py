"""Judging a part's outputs on a case against course_lib's reference. Never calls student code.

:func:`expected` is the real reference's answer (``course_lib.attention``, ``feed_forward``,
``encoder``, ``positional``, through :func:`reference.reference_outputs`). :func:`judge` says None
when the outputs are right, else a :class:`Verdict`: a stable mistake id, the lecture section that
teaches it, and a message that says *what* looks wrong and where to look (rung 1 of the hints), found
by trying the usual mistakes of the part (:data:`mistakes.MISTAKES`). A case in training mode is
judged by what its dropout does (:mod:`.dropout`). A hidden case's message names its family and one
fixed text per kind of failure, nothing its outputs choose. :func:`judge_case` gives the message only.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import numpy as np
import torch

from ..errors import broadcast_shape
from . import dropout
from .harness import Case
from .mistakes import MISTAKES, section_of
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
    diff = np.abs(got - want) - RTOL * np.abs(want)
    return diff[rows] if rows is not None else diff


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


_SHAPES = {"multi_head_attention": " = (B, num_heads, T_q, T_k): the heads are their own axis",
           "attention": " (out is (..., T_q, d_v), weights (..., T_q, T_k))",
           "positional_encoding": " = (max_len, d_model)", "parameter_count": " (a single int)"}


@dataclass(frozen=True)
class Verdict:
    """What the judge says about a part on a case that failed (see course_lib.grading's docstring).

    ``mistake`` is a stable id (``mistakes.IDS``): what the class report counts, never reworded.
    ``message`` is rung 1 of the hint ladder, for the student: the case's label, then what looks wrong
    and where to look. ``section`` is the lecture section that teaches it (rung 2), or None."""

    part: str
    mistake: str
    message: str
    section: str | None
    family: str
    hidden: bool

    def as_dict(self) -> dict:
        return {"part": self.part, "mistake": self.mistake, "message": self.message, "section": self.section,
                "family": self.family, "hidden": self.hidden}


#: a part whose cell still raises NotImplementedError (as released)
NOT_ATTEMPTED = "not attempted: its cell still raises NotImplementedError."

#: on a hidden case, the one message of each kind of failure (nothing in it depends on the outputs)
HIDDEN_MESSAGES = {
    "raised": "raised an exception (an error on a hidden case is not shown: the visible case of the same family "
              "runs the same code).",
    "wrong_result": "returned something the part's contract does not allow (its visible cases say what).",
    "wrong_shape": "an output has the wrong shape (the visible case of the same family shows which).",
    "not_finite": "an output contains NaN or inf.",
    "overflow": "an output contains NaN or inf.",
    "rows_not_normalized": "the attention weights of a query do not sum to 1 over the keys.",
    "masked_keys_weighted": "keys that must be ignored get weight.",
    "values_differ": "the outputs differ from the reference's.",
    "dropout_in_eval": "after model.eval() the outputs differ from the reference's: dropout must do nothing there.",
    "count_wrong": "the count differs from the number of parameters of the Encoder.",
    "input_modified": "the call changed its input tensor in place.",
    "bias_missing": "the state_dict lacks biases that the contract's linear layers hold.",
    "pe_dtype": "the table is not float32, torch's default dtype.",
    "buffer_persistent": "the state_dict holds buffers the contract does not save (not part of the state_dict).",
    "final_norm_missing": "the state_dict lacks final_norm's weight and bias, which a pre-LN Encoder holds.",
    "pre_ln_branch_wrong": "the post-LN cases before it passed and this pre-LN case's outputs differ from the "
                           "reference's.",
    "count_final_norm_in_post_ln": "the count is 2·d_model too many on this post-LN case, where the pre-LN case "
                                   "before it was right: a final LayerNorm counted where post-LN has none.",
}


_STATE_KEYS = re.compile(r"the state_dict has (no|keys the contract does not have:) (\[[^\]]*\])")


def _keys(listed: str) -> list[str] | None:
    """The keys of a contract message's list, or None (masked by the grader, or not a list of names)."""
    try:
        keys = ast.literal_eval(listed)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return keys if isinstance(keys, list) and keys and all(isinstance(k, str) for k in keys) else None


def contract_mistake(error: str) -> tuple[str, str] | None:
    """(id, message) of a contract message that names its mistake, else None: the table in float64
    (``pe_dtype``); a state_dict that lacks only biases (``bias_missing``: a linear layer built with
    ``bias=False``, each key named, as the contract fixes them), or final_norm's weight and bias
    (``final_norm_missing``); a state_dict with keys the contract does not have, which the harness reports
    only for persistent buffers (``buffer_persistent``). The text is the harness's, or the grader's rebuilt
    from fixed words (``course_grader.runner.fixed_result_error``)."""
    text = str(error)
    if "expected float32 (torch's default dtype), got" in text:
        return "pe_dtype", f"{text}; look at the dtype of each tensor your table is computed from."
    found = _STATE_KEYS.search(text)
    if found is None:
        return None
    keys = _keys(found.group(2))
    more = text[found.end():].startswith(" ...")
    if found.group(1) != "no":
        listed = f" ({', '.join(keys)}{' and more' if more else ''})" if keys else ""
        return "buffer_persistent", (f"the state_dict has keys the contract does not have{listed}: buffers saved with "
                                     "the weights, where the contract's state_dict holds only the weights the test "
                                     "loads (the docstring says of the positional table: not part of the "
                                     "state_dict); look at how your __init__ registers the table that is not a "
                                     "weight.")
    if keys is None:
        return None
    if not more and "final_norm.weight" in keys and all(k.startswith("final_norm.") for k in keys):
        return "final_norm_missing", (f"the state_dict has no {', '.join(keys)}: the test loads a weight and a bias "
                                      "into final_norm, the LayerNorm a pre-LN Encoder applies after its last layer; "
                                      "look at what final_norm is when norm_first is True.")
    if not all(k.endswith("bias") for k in keys):
        return None
    listed = ", ".join(keys) + (" and more" if more else "")
    return "bias_missing", (f"the state_dict has no {listed}: the test loads a bias into each of those layers, as "
                            "the contract has one there; look at how the layers are built.")


def _verdict(case: Case, mistake: str, message: str) -> Verdict:
    if case.hidden and mistake in HIDDEN_MESSAGES:
        message = HIDDEN_MESSAGES[mistake]
    section = section_of(mistake, case.part)
    return Verdict(case.part, mistake, f"{case.label}: {message}", section, case.family, case.hidden)


def _form(case: Case, outputs: dict | None, want: dict) -> tuple[str, str] | None:
    """(id, message) of what is wrong with the outputs' presence, type, shape or finiteness."""
    for key, w in want.items():
        if outputs is None or key not in outputs:
            return "wrong_result", f"no '{key}' came back."
        g = outputs[key]
        if not isinstance(g, np.ndarray) or g.dtype.kind != "f":
            return "wrong_result", f"'{key}' is not a floating-point tensor."
        if g.shape != w.shape:
            return "wrong_shape", (f"'{key}' has the wrong shape {tuple(g.shape)}, expected {tuple(w.shape)}"
                                   f"{_SHAPES.get(case.part, '')}.")
        if not np.all(np.isfinite(g)):
            if case.family.startswith("large scores"):
                return "overflow", (f"'{key}' contains NaN or inf on the case with large scores (a few hundred); "
                                    "look at the line that takes the exponential of the scores.")
            empty = _empty_rows(case)
            if empty is not None and case.part == "multi_head_attention" and key == "out":
                empty = empty.all(axis=1)                                       # (B, T_q): no head sees a key
            if empty is not None and case.part == "multi_head_attention" and np.all(np.isfinite(g[~empty])):
                continue                        # a sequence of padding only: not graded, NaN as torch's own gives
            if empty is not None and key in ("out", "weights") and np.all(np.isfinite(g[~empty])):
                return "not_finite", (f"'{key}' contains NaN or inf in the row of the query that may attend to no "
                                      "key; look at the value the masked scores are filled with.")
            return "not_finite", (f"'{key}' contains NaN or inf; look at how masked scores are filled and at any "
                                  "division.")
    return None


def _empty_rows(case: Case) -> np.ndarray | None:
    """A bool (..., T_q) of the attention queries whose mask allows no key, or None."""
    mask = _allowed(case)
    if mask is None:
        return None
    empty = ~mask.any(axis=-1)
    return empty if empty.any() else None


def _either_way(case: Case, outputs: dict, want: dict) -> dict:
    """The outputs with each query that may attend to no key set to the reference's, when it is uniform
    weights (what a large negative fill gives) or zero weights (what the reference gives): either passes."""
    empty = _empty_rows(case)
    if empty is None or "weights" not in outputs or outputs["weights"].shape != want["weights"].shape:
        return outputs
    if case.part == "multi_head_attention":                  # a sequence of padding only: its rows are not graded
        w, out = outputs["weights"].copy(), outputs["out"].copy()
        w[empty] = want["weights"][empty]
        rows = empty.all(axis=1)                                                # (B, T_q): no head sees a key
        if out.shape == want["out"].shape:
            out[rows] = want["out"][rows]
        return {**outputs, "weights": w, "out": out}
    w, out = outputs["weights"], outputs.get("out")
    if out is None or out.shape != want["out"].shape:
        return outputs
    v = case.inputs["v"].double().numpy()
    t_k = w.shape[-1]
    uniform_out = np.broadcast_to(v.mean(axis=-2, keepdims=True), want["out"].shape)
    ok_zero = (np.abs(w).max(axis=-1) <= ATOL) & (np.abs(out).max(axis=-1) <= ATOL)
    ok_uniform = (np.abs(w - 1.0 / t_k).max(axis=-1) <= ATOL) & (np.abs(out - uniform_out).max(axis=-1) <= ATOL)
    fix = empty & (ok_zero | ok_uniform)
    w, out = w.copy(), out.copy()
    w[fix], out[fix] = want["weights"][fix], want["out"][fix]
    return {**outputs, "weights": w, "out": out}


def _weights(case: Case, g: np.ndarray) -> tuple[str, str] | None:
    """Rows summing to 1 over the keys, and zero weight where the mask forbids it."""
    sums = g.sum(axis=-1)
    empty = _empty_rows(case)
    rows = ~empty if empty is not None else np.ones(sums.shape, bool)
    if not np.allclose(sums[rows], 1.0, atol=1e-4):
        return "rows_not_normalized", ("the attention weights of a query do not sum to 1 over the keys; look at the "
                                       "softmax line.")
    mask = _allowed(case)
    leaked = np.abs(g * ~mask).max() if mask is not None and g.size else 0.0
    if leaked > 1e-6:
        which = "attn_mask" if case.part == "attention" else "key_padding_mask"
        return "masked_keys_weighted", (f"keys that {which} rules out get weight (up to {leaked:.4f}); look at how "
                                        f"{which} reaches the scores.")
    return None


def _name_the_mistake(case: Case, outputs: dict, want: dict) -> tuple[str, str] | None:
    for m in MISTAKES[case.part]:
        try:
            variant = _either_way(case, reference_outputs(case, **m.how), want)
        except LookupError:                                 # a mistake that does not apply to this case
            continue
        if _close(case, outputs, variant, atol=1e-3) and not _close(case, variant, want):
            return m.id, m.symptom
    return None


def _from_the_run(case: Case, outputs: dict, want: dict, passed) -> tuple[str, str] | None:
    """(id, message) of a failure that the part's earlier cases name: the checks and the grader judge a part's
    cases in order and stop at the first that fails, so every case in ``passed`` passed with the same code.
    A layer right on a post-LN case and wrong on a pre-LN one has a wrong pre-LN branch; a count right on a
    pre-LN case and 2·d_model too many on a post-LN one counts a final LayerNorm post-LN does not have."""
    earlier = [c for c in passed if c.part == case.part and not c.training]
    if case.part == "encoder_layer" and case.kwargs.get("norm_first") and not case.kwargs.get("dropout", 0) \
            and any(not c.kwargs.get("norm_first") for c in earlier):
        worst = max(want, key=lambda k: float(_diff(case, outputs[k], want[k]).max(initial=0.0)))
        size = float(np.abs(outputs[worst] - want[worst]).max(initial=0.0))
        return "pre_ln_branch_wrong", (f"'{worst}' differs from the reference by up to {size:.4g} (tolerance "
                                       f"{ATOL:g}) on this pre-LN case, while the post-LN cases before it passed: "
                                       "your post-LN branch is right and your pre-LN branch is not; look at the "
                                       "pre-LN branch step by step: what each sublayer is given and what is added "
                                       "to the residual stream.")
    if case.part == "parameter_count" and not case.kwargs.get("norm_first") \
            and any(c.kwargs.get("norm_first") for c in earlier):
        d_model = case.kwargs["d_model"]
        off = sum(float(outputs[k]) - float(want[k]) for k in want)
        if off == 2 * d_model:
            return "count_final_norm_in_post_ln", (f"your count is {off:.0f} too many on this post-LN case, where the "
                                                   f"pre-LN case before it was right: 2·d_model (d_model = {d_model}), "
                                                   "a final LayerNorm's weight and bias counted for a post-LN stack, "
                                                   "which has none; look at what your formula adds after the layers "
                                                   "when norm_first is False.")
    return None


def _generic(case: Case, outputs: dict, want: dict) -> tuple[str, str]:
    worst = max(want, key=lambda k: float(_diff(case, outputs[k], want[k]).max(initial=0.0)))
    size = float(np.abs(outputs[worst] - want[worst]).max(initial=0.0))
    where = ""
    if case.kwargs.get("dropout", 0) > 0:
        where = (" This case has dropout > 0 and runs after model.eval(), where dropout does nothing: look at "
                 "whether your dropout follows the module's training mode.")
    elif case.kwargs.get("norm_first") and case.part == "encoder_layer":
        where = " This case is pre-LN (norm_first=True): look at your pre-LN branch."
    elif case.kwargs.get("norm_first"):
        where = " This case is pre-LN (norm_first=True): look at what your Encoder does for pre-LN."
    if case.kwargs.get("dropout", 0) > 0:
        return "dropout_in_eval", (f"'{worst}' differs from the reference by up to {size:.4g} "
                                   f"(tolerance {ATOL:g}).{where}")
    if case.part == "parameter_count":
        return "count_wrong", (f"the count is off by {outputs[worst].item() - want[worst].item():+.0f}; look at "
                               "which parameters your formula counts, layer by layer.")
    return "values_differ", f"'{worst}' differs from the reference by up to {size:.4g} (tolerance {ATOL:g}).{where}"


def position_blind_ceiling(tokens: torch.Tensor) -> float:
    """The best accuracy on the reverse task of any model that cannot see positions.

    Such a model gives every position the same answer for the same token and the same bag of
    tokens; for an even length the mirrored token is then any of the other T - 1 tokens, equally
    likely, so the best guess is the commonest of them.
    """
    hits = 0
    for row in tokens.tolist():
        for i in range(len(row)):
            others = row[:i] + row[i + 1:]
            hits += max(others.count(v) for v in set(others)) / len(others)
    return hits / tokens.numel() if tokens.numel() else 0.0


def judge_reverse(case: Case, outputs: dict | None, want: dict | None = None) -> tuple[str, str] | None:
    """(id, message) unless the Reverser learned the task: the harness computed the predictions before and
    after the student's training loop from the same forward (``head(encoder(tokens))``)."""
    test = case.inputs["test"]
    if not outputs or any(k not in outputs or outputs[k].shape != tuple(test.shape)
                          for k in ("predicted", "untrained")):
        return "wrong_result", "no predictions of the right shape came back."
    losses = outputs.get("losses", np.zeros(0))
    if not np.all(np.isfinite(losses)):
        return "not_finite", "the losses train_reverser returns contain NaN or inf."
    stale = outputs.get("stale_steps")
    if stale is not None and stale.shape == () and float(stale) > 0:
        return "reverse_no_zero_grad", (f"in {float(stale):.0f} of the optimiser's steps the gradients were not "
                                        "those of that step's batch alone: earlier batches' were still in them. "
                                        "Look at what happens to the gradients between two steps of your loop.")
    budget, steps = case.kwargs.get("steps"), outputs.get("steps")
    if budget is not None and steps is not None and steps.shape == () and float(steps) > budget:
        return "reverse_too_many_steps", (f"your loop took {float(steps):.0f} optimiser steps on {budget} batches; the "
                                          "part's budget is one step per batch. Look at how often your loop visits "
                                          "each batch.")
    if budget is not None and (losses.ndim != 1 or losses.size != budget):
        return "reverse_loss_count", (f"train_reverser returned {losses.size} losses for {budget} batches; it takes "
                                      "one optimiser step per batch, every batch once, and returns each step's loss. "
                                      "Look at which batches your loop visits.")
    right = test.flip(1).numpy()
    accuracy = float((outputs["predicted"] == right).mean())
    before = float((outputs["untrained"] == right).mean())
    ceiling = float((want or expected(case))["ceiling"])
    vocab = case.kwargs["model"]["vocab_size"]
    if before >= ceiling:
        return "reverse_answer_built_in", (f"before any training your Reverser already gets {before:.0%} of the "
                                           "reversed tokens right: the answer must be learned.")
    if accuracy < ceiling + REVERSE_MARGIN:
        fell = _loss_fell(losses, vocab, case.kwargs.get("steps"))
        if fell is not None:
            return "reverse_loss_not_falling", fell
        return "reverse_not_learned", (f"after training, head(encoder(tokens)) gets {accuracy:.0%} of the reversed "
                                       f"tokens right; a model blind to positions can reach {ceiling:.0%}, the part "
                                       f"asks for {ceiling + REVERSE_MARGIN:.0%}. Look at what your loss compares and "
                                       "at the logits your forward returns.")
    fell = _loss_fell(losses, vocab, case.kwargs.get("steps"))
    if fell is not None:
        return "reverse_loss_not_falling", fell
    reported = outputs.get("reported")
    if reported is None or reported.shape != () or abs(float(reported) - accuracy) > 1e-6:
        got = "nothing" if reported is None or reported.shape != () else f"{float(reported):.4f}"
        return "reverse_accuracy_wrong", (f"your reverse_accuracy says {got} for the held-out sequences, where "
                                          f"{accuracy:.4f} of their reversed tokens are predicted; look at what it "
                                          "compares the predictions with.")
    return None


def _loss_fell(losses: np.ndarray, vocab: int, steps: int | None) -> str | None:
    """A model that learns starts at about chance, ln(vocab_size), and its loss falls."""
    if (losses.ndim == 1 and losses.size >= 10 and (steps is None or losses.size == steps)
            and losses[0] >= 0.5 * np.log(vocab) and losses[-5:].mean() <= 0.8 * losses[0]):
        return None
    if losses.ndim != 1 or (steps is not None and losses.size != steps):
        return (f"train_reverser returned {losses.size} losses for {steps} batches; it returns one loss (a float) "
                "per optimiser step.")
    first, last = (float(losses[0]), float(losses[-5:].mean())) if losses.size else (0.0, 0.0)
    return (f"the losses train_reverser returns do not fall from chance as a model's that learns do (first "
            f"{first:.2f}, last {last:.2f}; chance is ln(vocab_size) = {np.log(vocab):.2f}); look at the loss and at "
            "the optimiser's calls in your loop.")


_REVERSE_HIDDEN = {
    "wrong_result": "no predictions of the right shape came back.",
    "not_finite": "the losses contain NaN or inf.",
    "reverse_answer_built_in": "before any training the Reverser already predicts the reversed tokens: the answer "
                               "must be learned.",
    "reverse_not_learned": "after training the Reverser does not beat the position-blind ceiling by the margin.",
    "reverse_loss_not_falling": "the losses train_reverser returns do not fall from chance.",
    "reverse_accuracy_wrong": "reverse_accuracy does not give the share of reversed tokens predicted.",
    "reverse_no_zero_grad": "the optimiser stepped with gradients that still held earlier batches'.",
    "reverse_too_many_steps": "the loop took more optimiser steps than it was given batches (one step per batch).",
    "reverse_loss_count": "train_reverser did not return one loss per batch: it takes one step per batch, every batch "
                          "once, and returns each step's loss.",
}


def hide_inputs(text: str) -> str:
    """A message about a hidden case without its sizes: shapes and indices become "..."."""
    text = re.sub(r"[\[(]\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*[\])]", "(...)", text)
    return re.sub(r"\b(size|sizes|dimension|dim|index|length|shape)\s+-?\d+", r"\1 ...", text)


def judge(case: Case, outputs: dict | None, error: str | None = None, want: dict | None = None,
          passed=()) -> Verdict | None:
    """None when ``outputs`` (from :func:`.run_case`) are right, else the :class:`Verdict`.

    ``error``: what the harness reported instead of outputs (``"raised <Type>: <text>"``, or a contract
    message). ``want``: ``expected(case)`` if the caller keeps it (it does not depend on the submission).
    ``passed``: the cases of the same submission judged right before this one (evidence that names some
    failures: ``_from_the_run``).
    On a hidden case every message is one fixed text per kind of failure (``HIDDEN_MESSAGES``): no
    number, no exception name, nothing the part's outputs choose but the kind."""
    if error is not None:
        if error.startswith("raised NotImplementedError"):             # the cell as released: no case to name
            return Verdict(case.part, "not_done", NOT_ATTEMPTED, None, case.family, case.hidden)
        if error.startswith("raised "):
            return _verdict(case, "raised", error)
        return _verdict(case, *(contract_mistake(error) or ("wrong_result", error)))
    if case.part == "reverse_task":
        found = judge_reverse(case, outputs, want)
        if found is None:
            return None
        mistake, message = found
        return Verdict(case.part, mistake, f"{case.label}: {_REVERSE_HIDDEN[mistake] if case.hidden else message}",
                       section_of(mistake), case.family, case.hidden)
    want = expected(case) if want is None else want
    found = _form(case, outputs, want)
    if found is None and outputs.get("input_changed") is not None and float(outputs["input_changed"]) != 0:
        found = "input_modified", ("the call changed its input tensor in place: after it, the caller's tensor "
                                   "holds other values; look at the lines that add to the tensor you were given.")
    if found is None and case.training:
        found = dropout.judge(case, outputs, hidden=case.hidden)
        return None if found is None else _verdict(case, *found)
    if found is None:
        outputs = _either_way(case, outputs, want)
        if _close(case, outputs, want):
            return None
        found = (_name_the_mistake(case, outputs, want)
                 or ("weights" in want and _weights(case, outputs["weights"]))
                 or _from_the_run(case, outputs, want, passed)
                 or _generic(case, outputs, want))
    return _verdict(case, *found)


def judge_case(case: Case, outputs: dict | None, error: str | None = None, want: dict | None = None,
               passed=()) -> str | None:
    """None when ``outputs`` are right, else the message of :func:`judge`'s verdict (for callers that keep
    text only)."""
    verdict = judge(case, outputs, error, want, passed)
    return None if verdict is None else verdict.message
