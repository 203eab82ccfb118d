"""Practice in the lectures: the checks behind the short exercises of lectures 01-06 and 08.

Practice is not graded. An exercise is three cells in a lecture:

1. a code cell tagged ``exercise`` that the student completes (stored unsolved: ``...`` or ``None``
   where the answer goes). Its metadata ``practice`` says what kind of exercise it is and holds one
   typical mistake, which the tests run::

       "practice": {"kind": "write" | "predict" | "change" | "quiz",
                    "mistake": "<source of the cell with a typical mistake>",
                    "says": "<a piece of the one-line feedback that mistake must get>",
                    "answer": ["<text that gives the answer away>", ...],   # predict and quiz
                    "retrieval": "NN"}                                      # a quiz that re-asks lecture NN

   ``write``: the student writes the section's central computation (several lines); ``predict``: the
   student writes down what a cell will show before running it; ``change``: the student changes a
   given cell and explains what happens; ``quiz``: a self-check question, multiple choice or numeric,
   answered in the cell (:func:`choice`, :func:`number`). ``answer`` lists the strings that would give
   a prediction or a quiz away: none of them may appear anywhere on the page before its check (a
   stored output, a caption, a figure's text, an earlier sentence); ``tests/test_practice.py`` looks.
   ``retrieval`` marks a quiz that asks again what an earlier lecture taught.

2. the next code cell tagged ``check``: one call of a check from this package (``lectureNN.py``), which
   shows ONE line: ``✓ correct: ...`` when right, ``✗ wrong: <what is wrong> (<where to look>)`` when
   not, and ``○ not done yet: ...`` (:func:`todo`, not a failure: a page read without a kernel shows it
   as the exercise's open state, not as an error) while the answer is still the placeholder. The line
   is one output (``course_lib.announce.verdict``): ``text/plain`` for nbval and a terminal, and a
   ``role="status"`` region in ``text/html`` that a screen reader announces, the verdict said in words
   (speech engines skip ✓, ✗ and ○). A check never raises and never shows the line of code that fixes
   the mistake;
3. a markdown cell tagged ``solution``: the solution in a ``<details>`` block, one click away and not
   on the page.

``tests/test_practice.py`` runs every lecture once, and at each exercise also runs its solution and its
mistake, each followed by its check, and asserts both lines.
"""

from __future__ import annotations

import functools
import math

import torch

from ..announce import VERDICTS, verdict

__all__ = ["check", "passed", "failed", "todo", "unanswered", "attempt", "same_tensor", "choice", "number"]

PASS, FAIL, TODO = (VERDICTS[kind][0] for kind in ("correct", "wrong", "not done"))


def passed(message: str) -> bool:
    """Show the one-line success message (``✓ correct: ...``); returns True."""
    verdict("correct", message)
    return True


def failed(what: str, where: str | None = None) -> bool:
    """Show what is wrong and where to look, on one line (``✗ wrong: ...``); returns False."""
    verdict("wrong", f"{what}" + (f" ({where})" if where else ""))
    return False


def todo(what: str, where: str | None = None) -> bool:
    """Show that the exercise is still open (``○ not done yet: ...``), on one line; returns False.
    Not a failure: it is what a check says before the student has answered."""
    verdict("not done", f"{what}" + (f" ({where})" if where else ""))
    return False


def check(fn):
    """Make ``fn`` a practice check: it prints its one line and returns None, so a check cell shows
    that line and nothing else; an error inside the check becomes a ✗ line, never a traceback."""
    @functools.wraps(fn)
    def run(*args, **kwargs) -> None:
        try:
            fn(*args, **kwargs)
        except Exception as exc:  # a check reports, it never raises
            failed(f"the check could not read your answer ({type(exc).__name__}: {exc})", "the exercise cell")
    return run


def unanswered(value) -> bool:
    """True for the placeholders an unsolved exercise holds: ``...`` and ``None``."""
    return value is Ellipsis or value is None


def attempt(fn, *args, where: str | None = None, **kwargs):
    """Call the student's ``fn``; on an exception, print its type and message as a failure.

    Returns ``(ok, result)``: ``ok`` is False when the call raised or returned a placeholder.
    """
    try:
        result = fn(*args, **kwargs)
    except NotImplementedError:
        todo("not done yet: the function still raises NotImplementedError", where)
        return False, None
    except Exception as exc:  # the student's error, reported on one line
        first = (str(exc).splitlines() or [""])[0]
        failed(f"your code raised {type(exc).__name__}: {first}", where)
        return False, None
    if unanswered(result):
        todo(f"not done yet: {getattr(fn, '__name__', 'the function')} returned {result!r}", where)
        return False, None
    return True, result


def same_tensor(got, expected: torch.Tensor, name: str, where: str | None = None,
                atol: float = 1e-6, rtol: float = 1e-5) -> bool:
    """Check a student's tensor against the expected one; print the first difference found."""
    if not isinstance(got, torch.Tensor):
        return failed(f"{name} should be a tensor, got {type(got).__name__}", where)
    if tuple(got.shape) != tuple(expected.shape):
        return failed(f"{name} has shape {tuple(got.shape)}, expected {tuple(expected.shape)}", where)
    if not torch.allclose(got.to(expected.dtype), expected, atol=atol, rtol=rtol):
        diff = (got.to(expected.dtype) - expected).abs().max().item()
        return failed(f"{name} has the right shape but wrong values (largest difference "
                      f"{diff:.2g})" if math.isfinite(diff) else f"{name} holds NaN or inf", where)
    return True


def choice(answer, right, wrong: dict, explain: str, where: str | None = None, name: str = "answer") -> bool:
    """A multiple-choice self-check: ``answer`` is the student's pick, ``right`` the right option,
    ``wrong`` maps every other option to why it is wrong (and where to look); ``name`` is the variable
    the exercise cell sets, as the open line names it. Prints one line."""
    options = sorted([right, *wrong], key=str)          # never the right one first: the open line gives nothing away
    if unanswered(answer):
        return todo(f"not done yet: set {name} to one of " + ", ".join(repr(o) for o in options), where)
    if isinstance(answer, str):
        answer = answer.strip()
    if answer == right:
        return passed(explain)
    if answer in wrong:
        return failed(wrong[answer], where)
    return failed(f"{name} should be one of {', '.join(repr(o) for o in options)}, got {answer!r}", where)


def number(answer, value: float, explain: str, rel_tol: float = 0.02, abs_tol: float = 0.0,
           low: str = "too small", high: str = "too large", where: str | None = None, name: str = "answer",
           wrong: dict[float, str] | None = None, wrong_rel_tol: float = 0.0, wrong_where: str | None = None
           ) -> bool:
    """A numeric self-check: ``answer`` within ``rel_tol`` (or ``abs_tol``) of ``value``; ``low`` and
    ``high`` say what a too-small or too-large answer probably missed; ``name`` is the variable the
    exercise cell sets, as the open line names it. ``wrong``: answers a student gives for a known cause,
    each with the line naming it, checked first (within ``wrong_rel_tol`` or ``abs_tol``) and pointed at
    ``wrong_where`` (default ``where``). Prints one line."""
    if unanswered(answer):
        return todo(f"not done yet: set {name} to a number", where)
    try:
        got = float(answer)
    except (TypeError, ValueError):
        return failed(f"{name} should be a number, got {answer!r}", where)
    for known, why in (wrong or {}).items():
        if math.isclose(got, known, rel_tol=wrong_rel_tol, abs_tol=abs_tol):
            return failed(why, wrong_where or where)
    if math.isclose(got, value, rel_tol=rel_tol, abs_tol=abs_tol):
        return passed(explain)
    return failed(low if got < value else high, where)
