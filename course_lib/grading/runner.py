"""Grade the parts of one submitted notebook: extract, check the rules, run sandboxed, judge.

``execute`` is what runs *inside* the sandbox (the only code here that touches student code);
everything else runs in the grader's process and only reads JSON and .npy arrays.
"""

from __future__ import annotations

import builtins
import math
import sys
from dataclasses import dataclass

import nbformat
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

import course_lib
from course_lib import checks
from course_lib.checks import DEPENDENCIES, NAMES, PARTS, REFERENCES

from . import policy, sandbox

CELL_FILE = "<submission:{}>"
_TORCH_DIR = torch.__file__.rsplit("/", 1)[0] + "/"
_COURSE_DIR = course_lib.__file__.rsplit("/", 1)[0] + "/"
_WATCH = ("scaled_dot_product", "multi_head_attention", "transformer_encoder", "native_multi_head",
          "flash_attention", "efficient_attention")


def part_of_test(grade_id: str) -> str | None:
    """``test_<part>`` or ``test_<part>_<anything>`` -> part (the longest part name that fits)."""
    for part in sorted(PARTS, key=len, reverse=True):
        if grade_id == f"test_{part}" or grade_id.startswith(f"test_{part}_"):
            return part
    return None


def solution_sources(nb) -> dict[str, str]:
    """The solution cells of the six parts, by grade_id (the last copy wins, as nbgrader's DeduplicateIds)."""
    found = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id")
        if cell.get("cell_type") == "code" and meta.get("solution") and gid in PARTS:
            src = cell.get("source", "")
            found[gid] = "".join(src) if isinstance(src, list) else str(src)
    return found


# ------------------------------------------------------------------ inside the sandbox

def _from_submission() -> bool:
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if name.startswith("<submission:"):
            return True
        if name.startswith(_COURSE_DIR):
            return False                       # a reference dependency (e.g. EncoderLayer's fused path)
        f = f.f_back
    return False


class _Spy(TorchFunctionMode):
    """Refuses torch's ready-made attention when called from the submission's own code."""

    def __init__(self, seen: list):
        super().__init__()
        self.seen = seen

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "") or ""
        if any(w in name for w in _WATCH) and _from_submission():
            self.seen.append(name)
            raise RuntimeError(f"{name} is torch's ready-made attention; this part must compute it explicitly")
        return func(*args, **(kwargs or {}))


def _boom(*args, **kwargs):
    raise RuntimeError("this calls course_lib's reference implementation of the part being graded")


def _tripwire(part: str) -> None:
    ref = REFERENCES[part]
    if isinstance(ref, type):
        ref.__init__ = _boom
        ref.forward = _boom
    else:
        ref.__code__ = _boom.__code__


def _fmt(e: BaseException) -> str:
    try:
        text = f"{type(e).__name__}: {e}"
    except BaseException:                                   # noqa: BLE001 (a hostile __str__)
        text = type(e).__name__
    if isinstance(e, NotImplementedError):
        text += " (not implemented yet?)"
    return text[:600]


def execute(part: str, source: str, cases: list, write_fd: int) -> None:
    """Inside the sandbox: define the part from ``source``, run every case, send the arrays."""
    torch.set_num_threads(1)
    _tripwire(part)
    seen: list = []
    header = {"part": part, "cell_error": None, "cases": [], "delegated": seen}
    arrays = []
    ns = {"__name__": "__submission__", "__builtins__": builtins, "math": math, "torch": torch, "nn": nn,
          "F": F, "np": np}
    for dep in DEPENDENCIES[part]:
        ns[NAMES[dep]] = REFERENCES[dep]
    spy = _Spy(seen)
    spy.__enter__()
    try:
        exec(compile(source, CELL_FILE.format(part), "exec"), ns)
    except BaseException as e:                              # noqa: BLE001 (SystemExit, KeyboardInterrupt too)
        header["cell_error"] = "the solution cell raised " + _fmt(e)
    for dep in DEPENDENCIES[part]:                          # the other parts are always course_lib's
        ns[NAMES[dep]] = REFERENCES[dep]
    candidate = ns.get(NAMES[part])
    if header["cell_error"] is None and candidate is None:
        header["cell_error"] = f"the solution cell does not define {NAMES[part]}"
    if header["cell_error"] is None:
        for case in cases:
            entry = {"error": None, "keys": []}
            try:
                out = checks.run_case(case, candidate)
                entry["keys"] = list(out)
                arrays.extend(out.values())
            except checks.ResultError as e:
                entry["error"] = str(e)[:600]
            except BaseException as e:                      # noqa: BLE001
                entry["error"] = "raised " + _fmt(e)
            header["cases"].append(entry)
    header["delegated"] = list(seen)
    sandbox.send(write_fd, header, arrays)


# ------------------------------------------------------------------ in the grader

@dataclass
class PartResult:
    passed: bool
    message: str
    seconds: float = 0.0


def judge(part: str, cases: list, outcome: sandbox.Outcome) -> PartResult:
    if outcome.failure:
        return PartResult(False, f"{part}: {outcome.failure}", outcome.seconds)
    h, arrays = outcome.header, list(outcome.arrays)
    try:
        if h.get("delegated"):
            names = sorted({str(x) for x in h["delegated"]})
            return PartResult(False, f"{part}: calls {', '.join(names)}, torch's ready-made attention; "
                                     "this part must compute attention explicitly.", outcome.seconds)
        if h.get("cell_error"):
            return PartResult(False, f"{part}: {str(h['cell_error'])[:600]}", outcome.seconds)
        entries = h.get("cases")
        if not isinstance(entries, list) or len(entries) != len(cases):
            raise ValueError("wrong number of cases")
        for case, entry in zip(cases, entries):
            keys = [str(k) for k in entry.get("keys", [])]
            outputs = {}
            for k in keys:
                outputs[k] = arrays.pop(0).astype(np.float64)
            err = entry.get("error")
            message = checks.judge_case(case, outputs, None if err is None else str(err)[:600])
            if message is not None:
                return PartResult(False, message, outcome.seconds)
    except Exception as e:                                  # noqa: BLE001 (malformed results)
        return PartResult(False, f"{part}: the results could not be read ({type(e).__name__}).", outcome.seconds)
    n_hidden = sum(c.hidden for c in cases)
    return PartResult(True, f"{part}: all {len(cases)} checks passed ({len(cases) - n_hidden} visible, "
                            f"{n_hidden} hidden).", outcome.seconds)


def grade_sources(sources: dict, opts: sandbox.SandboxOptions, level: str, cases_by_part: dict,
                  parts=PARTS) -> dict:
    """{part: PartResult} for the solution sources of one notebook."""
    results = {}
    for part in parts:
        if part not in sources:
            results[part] = PartResult(False, f"{part}: the solution cell '{part}' is missing from the submission.")
            continue
        rule = policy.check_source(sources[part])
        if rule:
            results[part] = PartResult(False, f"{part}: the solution cell {rule} No points for this part.")
            continue
        outcome = sandbox.run(lambda fd, p=part: execute(p, sources[p], cases_by_part[p], fd), opts, level)
        results[part] = outcome
    # judged only now: the expected outputs must not be in memory while any sandbox is forked
    for part, outcome in results.items():
        if isinstance(outcome, sandbox.Outcome):
            results[part] = judge(part, cases_by_part[part], outcome)
    return results


def grade_notebook(path: str, opts: sandbox.SandboxOptions, level: str, cases_by_part: dict) -> dict:
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as e:                                  # noqa: BLE001
        return {p: PartResult(False, f"{p}: the notebook could not be read ({type(e).__name__}).") for p in PARTS}
    return grade_sources(solution_sources(nb), opts, level, cases_by_part)


def all_cases(warm: bool = True) -> dict:
    """Every case of every part (inputs and weights only: the reference outputs are computed after the
    sandboxes of a submission have run, so that no sandbox inherits them in its memory)."""
    out = {}
    for part in PARTS:
        out[part] = checks.make_cases(part)
    if warm:                              # run every case once here, so that the forks start warm
        seen: list = []
        with _Spy(seen):
            for part in PARTS:
                for c in out[part]:
                    checks.run_case(c, REFERENCES[part])
    return out
