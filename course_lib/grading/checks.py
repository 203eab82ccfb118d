"""The checks the exercise notebook calls: ``check_attention(scaled_dot_product_attention)`` and friends.

A visible check runs the part's visible cases (every family the grade depends on) in the student's
kernel. The instructor's source notebook also calls ``check_attention(..., hidden_seed=<int>)``
inside a ``### BEGIN HIDDEN TESTS`` block, which nbgrader strips from the release: the hidden
cases exist only where that seed is. While a part is checked, the other parts it uses are
course_lib's references, so a bug in one part costs only that part.

A failed check raises :class:`PartFailed`, which IPython (and so Jupyter and nbgrader's Validate)
shows as one line, ``Part 3: the heads are split the wrong way: ...``, with no frames of course_lib.
Every verdict is also said in words where a screen reader hears it (:mod:`course_lib.announce`): a
passed check shows "✓ correct: Part 3: all 9 visible checks passed", a failed one "✗ wrong: Part 3:
...", an unfinished one "○ not done yet: Part 3", each one output with a ``role="status"`` region in
``text/html`` and the same line in ``text/plain``. The failure's status is shown when IPython shows the
error (:meth:`PartFailed._render_traceback_`), just before it: a check that a cell catches says nothing.
The error itself stays the bare line, which nbgrader's Validate reports and counts as the failure.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import sys
import traceback
import warnings

import torch.nn.functional as F
from torch import nn

from ..announce import verdict
from ..attention import MultiHeadAttention, scaled_dot_product_attention
from ..encoder import Encoder, EncoderLayer
from ..feed_forward import PositionwiseFeedForward
from ..positional import sinusoidal_positional_encoding
from .cases import make_cases
from .harness import ResultError, run_case
from .hints import forget_failure, hint, record_failure  # noqa: F401 (hint: the notebook imports it from here)
from .judging import HIDDEN_MESSAGES, contract_mistake, expected, judge
from .mistakes import section_of
from .parts import DEPENDENCIES, NAMES, NUMBERS
from .policy import check_source
from .probes import probe

#: course_lib's reference of each part of the contract (what a checked part's dependencies become)
REFERENCES = {
    "positional_encoding": sinusoidal_positional_encoding,
    "attention": scaled_dot_product_attention,
    "multi_head_attention": MultiHeadAttention,
    "feed_forward": PositionwiseFeedForward,
    "encoder_layer": EncoderLayer,
    "encoder": Encoder,
}

_LIBRARY = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(os.__file__))
_MISSING = object()


class PartFailed(AssertionError):
    """A part's check failed; shown by IPython as its spoken status, then one line (``_render_traceback_``).
    ``mistake`` is the stable id of what failed (``mistakes.IDS``), ``section`` the lecture section that
    teaches it."""

    def __init__(self, part: str, message: str, mistake: str = "values_differ", section: str | None = None,
                 probe: str = ""):
        self.part, self.mistake, self.section = part, mistake, section
        self._announced = False
        self.line = f"Part {NUMBERS[part]}: {message}"
        record_failure(part, mistake, message, probe)
        if mistake != "not_done":
            self.line += f'  [hint("{part}") for a hint]'
        super().__init__(self.line)

    @property
    def spoken(self) -> tuple[str, str]:
        """The spoken verdict as ``(kind, text)``, ``("not done", "Part 1")`` or ``("wrong", line)`` with
        the whole line."""
        if self.mistake == "not_done":
            return "not done", f"Part {NUMBERS[self.part]}"
        return "wrong", self.line

    def _render_traceback_(self) -> list[str]:
        if not self._announced:                 # IPython 9 renders an error twice: shown, then kept in its history
            self._announced = True
            verdict(*self.spoken)               # the status a screen reader announces, then the error line
        return [self.line]


def _globals_of(candidate) -> dict | None:
    if isinstance(candidate, type):
        for obj in vars(candidate).values():
            if callable(obj) and hasattr(obj, "__globals__"):
                return obj.__globals__
        return None
    return getattr(candidate, "__globals__", None)


@contextlib.contextmanager
def reference_dependencies(part: str, candidate):
    """While ``part`` is checked, the names of the parts it uses are course_lib's references."""
    g = _globals_of(candidate)
    saved = {}
    if g is not None:
        for dep in DEPENDENCIES[part]:
            saved[NAMES[dep]] = g.get(NAMES[dep], _MISSING)
            g[NAMES[dep]] = REFERENCES[dep]
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                g.pop(name, None)
            else:
                g[name] = value


class _ReadyMade(Exception):
    """Raised by a tripwire: the part called torch's ready-made attention."""


#: torch's ready-made attention: (owner, attribute, the name a student knows it by)
_READY_MADE = ((F, "scaled_dot_product_attention", "F.scaled_dot_product_attention"),
               (F, "multi_head_attention_forward", "F.multi_head_attention_forward"),
               (nn.MultiheadAttention, "forward", "nn.MultiheadAttention"),
               (nn.TransformerEncoderLayer, "forward", "nn.TransformerEncoderLayer"),
               (nn.TransformerEncoder, "forward", "nn.TransformerEncoder"))


@contextlib.contextmanager
def _tripwires():
    """While a part is checked, torch's ready-made attention raises instead of computing (the grader's
    sandbox has its own tripwires; these give the same verdict in the notebook, at once)."""
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in _READY_MADE]

    def wire(name, original):
        def tripped(*args, **kwargs):
            frame = sys._getframe(1)
            while frame is not None and str(frame.f_globals.get("__name__")).startswith("torch"):
                frame = frame.f_back                                       # through nn.Module.__call__
            if frame is not None and str(frame.f_globals.get("__name__")).startswith("course_lib"):
                return original(*args, **kwargs)                           # a reference's fast path
            raise _ReadyMade(name)
        return tripped
    try:
        for (owner, attr, name), (_, _, original) in zip(_READY_MADE, saved):
            setattr(owner, attr, wire(name, original))
        yield
    finally:
        for owner, attr, value in saved:
            setattr(owner, attr, value)


def _cell_source(candidate) -> str | None:
    """The text of the notebook cell that defined ``candidate`` (IPython keeps each cell in linecache), or None."""
    codes = [candidate.__code__] if hasattr(candidate, "__code__") else [
        f.__code__ for f in vars(candidate).values() if hasattr(f, "__code__")] if isinstance(candidate, type) else []
    for code in codes:
        name = code.co_filename                  # a cell: not on disk, or dumped there by the debugger
        lines = linecache.getlines(name) if not os.path.isfile(name) or "ipykernel_" in name else []
        if lines:
            return "".join(lines)
    return None


def from_scratch(part: str, candidate) -> tuple[str, str] | None:
    """None when ``candidate`` may be the student's own work, else (id, why not): course_lib's own object,
    or a cell that breaks the grader's rules (:func:`policy.check_source`, the same rules the grader applies)."""
    if str(getattr(candidate, "__module__", "") or "").split(".")[0] == "course_lib":
        return "reference_used", (f"your {NAMES[part]} is course_lib's own, the reference solution: the exercise "
                                  "asks for your own implementation.")
    source = _cell_source(candidate)
    reason = check_source(source) if source is not None else None
    return None if reason is None else ("rule_broken", f"the solution cell {reason}")


def _where(error: BaseException) -> str:
    """' (in forward, line 12 of its cell)': the last frame of the student's own code."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not any(os.path.abspath(f.filename).startswith(lib) for lib in _LIBRARY)]
    frames = [f for f in frames if "site-packages" not in f.filename]
    return f" (in {frames[-1].name}, line {frames[-1].lineno} of its cell)" if frames else ""


def _raised(part: str, case, error: Exception) -> str:
    if case.hidden:                       # the message could show the hidden inputs' sizes
        return f"{case.label}: {HIDDEN_MESSAGES['raised']}"
    return f"{case.label}: your {NAMES[part]} raised {type(error).__name__}: {error}{_where(error)}"


def check(part: str, candidate, hidden_seed: int | None = None) -> None:
    """Run the visible cases of ``part`` (or the hidden ones drawn from ``hidden_seed``) on ``candidate``.

    Raises :class:`PartFailed` with a message that says what is wrong. Returns None on purpose: a
    test cell whose last line has a value would show it, and nbgrader reads a number there as
    partial credit.
    """
    cases = make_cases(part, hidden_seed)
    broken = from_scratch(part, candidate)
    if broken is not None:
        raise PartFailed(part, broken[1], broken[0], section_of(broken[0]))
    with reference_dependencies(part, candidate), _tripwires(), _warnings_to_stdout(part):
        for i, case in enumerate(cases):
            try:
                outputs = run_case(case, candidate)
            except NotImplementedError:
                raise PartFailed(part, "not done yet", "not_done") from None
            except _ReadyMade as e:
                raise PartFailed(part, f"your {NAMES[part]} calls {e}, torch's ready-made attention; this part "
                                       "must compute it explicitly.", "ready_made_attention",
                                 section_of("ready_made_attention")) from None
            except ResultError as e:
                mistake, text = contract_mistake(str(e)) or ("wrong_result", str(e))
                if case.hidden:
                    text = HIDDEN_MESSAGES[mistake]
                raise PartFailed(part, f"{case.label}: {text}", mistake, section_of(mistake, part),
                                 probe(case, mistake)) from None
            except Exception as e:                                  # noqa: BLE001 (the student's bug)
                raise PartFailed(part, _raised(part, case, e), "raised", probe=probe(case, "raised",
                                                                                     error="raised")) from None
            want = expected(case)
            judged = judge(case, outputs, want=want, passed=cases[:i])      # the cases before it passed
            if judged is not None:
                raise PartFailed(part, judged.message, judged.mistake, judged.section,
                                 probe(case, judged.mistake, outputs, want))
    forget_failure(part)
    kind = "visible" if hidden_seed is None else "hidden"
    passed = f"all {len(cases)} {kind} checks" if len(cases) > 1 else f"the {kind} check"
    verdict("correct", f"Part {NUMBERS[part]}: {passed} passed")


@contextlib.contextmanager
def _warnings_to_stdout(part: str):
    """Python's warnings while the student's code runs, printed once each on stdout as a note: on stderr,
    nbgrader's Validate would fail the test cell for them (torch warns about ``float(loss)`` on a loss
    that still has its graph, which is correct code)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            seen = []
            for w in caught:
                line = f"{w.category.__name__}: {str(w.message).splitlines()[0] if str(w.message) else ''}"
                if line not in seen:
                    seen.append(line)
            for line in seen[:3]:
                print(f"Note: while Part {NUMBERS[part]} ran, Python warned ({line}); it costs no points.")


def _checker(part: str, doc: str):
    def check_part(candidate, hidden_seed: int | None = None) -> None:
        check(part, candidate, hidden_seed)
    check_part.__name__ = check_part.__qualname__ = f"check_{part}" if part != "reverse_task" else "check_reverser"
    check_part.__doc__ = doc
    return check_part


check_positional_encoding = _checker("positional_encoding",
                                     "Check ``sinusoidal_positional_encoding(max_len, d_model)``.")
check_attention = _checker("attention", "Check ``scaled_dot_product_attention(q, k, v, attn_mask=None)``.")
check_multi_head_attention = _checker(
    "multi_head_attention",
    "Check ``MultiHeadAttention`` (its scaled_dot_product_attention is course_lib's while checked).")
check_feed_forward = _checker("feed_forward", "Check ``PositionwiseFeedForward``.")
check_encoder_layer = _checker(
    "encoder_layer", "Check ``EncoderLayer`` (its MultiHeadAttention and PositionwiseFeedForward are course_lib's).")
check_encoder = _checker("encoder", "Check ``Encoder`` (its EncoderLayer and positional table are course_lib's).")
check_parameter_count = _checker(
    "parameter_count", "Check ``encoder_parameter_count(...)`` against the parameters of course_lib's Encoder.")
check_reverser = _checker(
    "reverse_task", "Train ``Reverser`` with the cell's ``train_reverser`` (course_lib's Encoder while checked) on the "
                    "reverse task; check that it learns and that ``reverse_accuracy`` measures it.")
