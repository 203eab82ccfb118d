"""Every JSON a student can write (a notebook, a hint record), parsed one way: with limits on its size
and its depth, checked before the parser runs.

Python's ``json`` recurses once per nested list or object: a record nested 200,000 lists deep raised
``RecursionError`` (neither ``OSError`` nor ``ValueError``) and stopped the class report (issue 41 item
7). :func:`loads` measures the nesting first, with one linear pass over the text that steps over
strings, and refuses anything deeper than :data:`MAX_DEPTH` or larger than the caller's limit with a
:class:`TooLarge` (a ``ValueError``), which the caller already treats as "not valid JSON".
"""

from __future__ import annotations

import json
import re

MAX_DEPTH = 64                 # a notebook needs about 6 (outputs' data in cells in the notebook)

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


class TooLarge(ValueError):
    """JSON larger or deeper than the grader reads."""


def depth(text: str) -> int:
    """The deepest nesting of lists and objects in ``text`` (strings stepped over), in linear time."""
    deepest = level = 0
    for m in _TOKENS.finditer(text):
        token = m.group(0)
        if token in "[{":
            level += 1
            deepest = max(deepest, level)
        elif token in "]}":
            level -= 1
    return deepest


def loads(data: bytes | str, max_bytes: int, max_depth: int = MAX_DEPTH):
    """``json.loads(data)``, or :class:`TooLarge` when it has more than ``max_bytes`` bytes or
    nests deeper than ``max_depth``; other bad JSON raises ``ValueError`` as ``json`` does."""
    if len(data) > max_bytes:
        raise TooLarge(f"more than {max_bytes} bytes of JSON")
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if depth(text) > max_depth:
        raise TooLarge(f"JSON nested deeper than {max_depth}")
    return json.loads(text)
