"""Wrong answers a student would give to the lectures' practice checks, one module per lecture
(``lectureNN.py``, a dict ``WRONG``: check name -> list of :class:`Wrong`). tests/test_lecture_kinds.py
hands each to its check and asserts a one-line ✗ that holds the word naming the answer's cause."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Wrong:
    """One wrong answer: ``args`` (or a function returning ``(args, kwargs)``, for answers built from
    tensors), and ``word``, the word of the check's message that names the cause."""
    label: str
    args: tuple | Callable = ()
    kwargs: dict = field(default_factory=dict)
    word: str = ""
