"""Rung 1 of the hint ladder, made from the failure at hand: the failing case's call and shapes, where the
outputs differ (which head, which query row, which positions, which rows and columns of a table), then
what to print or compare for that symptom (:func:`.mistakes.probe_of`, else the part's own).

Never the fix and never a value of the reference: positions, heads and sizes only. On a hidden case only
the family is named (its sizes stay hidden). Called by :mod:`.checks` in the student's kernel, after the
judge (:mod:`.judging`) has named the failure.
"""

from __future__ import annotations

import numpy as np

from .harness import Case
from .hints import PART_PROBES
from .judging import ATOL, RTOL, _either_way, _graded_rows
from .mistakes import probe_of
from .parts import NAMES

_CALLED = {"multi_head_attention": "MultiHeadAttention", "feed_forward": "PositionwiseFeedForward",
           "encoder_layer": "EncoderLayer", "encoder": "Encoder"}


def _indices(values, limit: int = 6) -> str:
    values = [int(v) for v in values]
    return ", ".join(map(str, values[:limit])) + (", ..." if len(values) > limit else "")


def case_call(case: Case) -> str:
    """The failing call as the student can rebuild it: the constructor's arguments and the inputs' shapes."""
    if case.hidden:
        return f"a hidden case of the family '{case.family}' (run its visible case: the same kind, other sizes)"
    shapes = ", ".join(f"{k} {tuple(v.shape)}" for k, v in case.inputs.items() if hasattr(v, "shape"))
    if case.part in _CALLED:
        args = ", ".join(f"{k}={v}" for k, v in case.kwargs.items())
        mode = "in training mode" if case.training else "after .eval()"
        return f"{_CALLED[case.part]}({args}) {mode}, called on {shapes}"
    if case.part == "positional_encoding":
        return f"{NAMES[case.part]}({case.kwargs['max_len']}, {case.kwargs['d_model']})"
    if case.part == "parameter_count":
        return f"{NAMES[case.part]}({', '.join(f'{k}={v}' for k, v in case.kwargs.items())})"
    if case.part == "attention":
        return f"{NAMES[case.part]} on {shapes}"
    return case.label


def _wrong(case: Case, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """A bool of the entries that differ beyond the tolerance (padded query rows never do)."""
    wrong = np.abs(got - want) > ATOL + RTOL * np.abs(want)
    rows = _graded_rows(case)
    if rows is not None and wrong.ndim == 3 and rows.shape == wrong.shape[:2]:
        wrong &= rows[..., None]
    return wrong


def where_it_differs(case: Case, outputs: dict, want: dict) -> str:
    """Where the outputs differ from the reference's, in positions, heads, rows and columns (no values)."""
    outputs = _either_way(case, outputs, want)
    said = []
    for key in ("weights", "out", "pe"):
        if key not in want or key not in outputs:
            continue
        got, w = outputs[key], want[key]
        if got.shape != w.shape:
            said.append(f"'{key}' has the shape {tuple(got.shape)} where {tuple(w.shape)} is expected: print the shape "
                        "of each tensor your code makes on the way")
            continue
        wrong = _wrong(case, got, w)
        if not wrong.any():
            said.append(f"'{key}' agrees")
            continue
        if key == "weights" and case.part == "multi_head_attention":         # (B, H, T_q, T_k)
            heads = wrong.any(axis=(0, 2, 3))
            b, h, q, _ = np.unravel_index(np.argmax(np.abs(got - w) * wrong), w.shape)
            agree = f", heads {_indices(np.flatnonzero(~heads))} agree" if (~heads).any() else ""
            said.append(f"'weights' differs in heads {_indices(np.flatnonzero(heads))}{agree}; most at batch {b}, "
                        f"head {h}, query {q}")
        elif key == "weights":                                               # (..., T_q, T_k)
            rows = wrong.any(axis=-1)
            at = np.unravel_index(np.argmax(np.abs(got - w) * wrong), w.shape)
            said.append(f"'weights' differs in {int(rows.sum())} of {rows.size} query rows; most at index "
                        f"{tuple(int(i) for i in at[:-1])} (batch dimensions, then the query)")
        elif key == "out" and got.ndim == 3:                                 # (B, T, d)
            positions = wrong.any(axis=(0, 2))
            agree = f", positions {_indices(np.flatnonzero(~positions))} agree" if (~positions).any() else ""
            b, t, _ = np.unravel_index(np.argmax(np.abs(got - w) * wrong), w.shape)
            said.append(f"'out' differs at positions {_indices(np.flatnonzero(positions))}{agree}; most at batch {b}, "
                        f"position {t}")
        elif key == "out":
            said.append(f"'out' differs in {int(wrong.any(axis=-1).sum())} of {int(np.prod(w.shape[:-1]))} rows")
        else:                                                                # the table (max_len, d_model)
            rows, cols = wrong.any(axis=1), wrong.any(axis=0)
            said.append(f"the table differs in rows {_indices(np.flatnonzero(rows))} and columns "
                        f"{_indices(np.flatnonzero(cols))}")
    return "; ".join(said)


def probe(case: Case, mistake: str, outputs: dict | None = None, want: dict | None = None, error: str = "") -> str:
    """Rung 1 for a failure of ``case``: the call, where it differs (when outputs came back), and what to print."""
    parts = [f"the failing case is {case_call(case)}"]
    if outputs is not None and want is not None and not case.hidden and case.part not in ("reverse_task",
                                                                                         "parameter_count"):
        if not case.training:
            found = where_it_differs(case, outputs, want)
            if found:
                parts.append(found)
    elif error.startswith("raised") and not case.hidden:
        parts.append("run that call yourself and read the last line of the traceback that is in your cell; print "
                     "the shape of each tensor just before it")
    return "; ".join(parts) + f". Then {probe_of(mistake, case.part) or PART_PROBES[case.part]}"
