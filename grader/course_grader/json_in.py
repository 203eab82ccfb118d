"""Every JSON a student can write (a notebook, a hint record), parsed one way: with limits on its size
and its depth, checked before the parser runs.

Python's ``json`` recurses once per nested list or object: a record nested 200,000 lists deep raised
``RecursionError`` (neither ``OSError`` nor ``ValueError``) and stopped the class report (issue 41 item
7). :func:`loads` measures the nesting first, with one linear pass over the text that steps over
strings, and refuses anything deeper than :data:`MAX_DEPTH` or larger than the caller's limit with a
:class:`TooLarge` (a ``ValueError``), which the caller already treats as "not valid JSON".

What it returns can always be written again (issue 48 item 1). JSON may escape half of a UTF-16 pair
(``"\\ud800"``: plain ASCII on disk, valid JSON), which Python decodes to a lone surrogate that no UTF-8
writer accepts: nbgrader's recorder raised ``UnicodeEncodeError`` on one in a markdown cell and the
class's run ended "Could not grade". ``NaN`` and ``Infinity`` are not JSON at all, though ``json``
reads them; ``1e400`` is JSON, which Python reads as ``inf`` and writes back as ``Infinity`` (not JSON:
JupyterLab's reader refuses the notebook). :func:`read` repairs them (a lone surrogate becomes U+FFFD, a
non-number or a number out of a float's range ``null``) and says what it repaired; :func:`loads` is
:func:`read` without the notes.
"""

from __future__ import annotations

import json
import math
import re

MAX_DEPTH = 64                 # a notebook needs about 6 (outputs' data in cells in the notebook)

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")        # only these decode to a surrogate (UTF-8 has none)
_LONE = re.compile(r"[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


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


def _writable(value, notes: list):
    """``value`` with every lone surrogate (in a string or a key) replaced by U+FFFD, counted in ``notes``."""
    if isinstance(value, str):
        fixed, n = _LONE.subn(REPLACEMENT, value)
        notes.extend(["a lone surrogate"] * n)
        return fixed
    if isinstance(value, list):
        return [_writable(v, notes) for v in value]
    if isinstance(value, dict):
        return {_writable(k, notes): _writable(v, notes) for k, v in value.items()}
    return value


def read(data: bytes | str, max_bytes: int, max_depth: int = MAX_DEPTH) -> tuple[object, list[str]]:
    """(``json.loads(data)`` made writable, what was repaired: ``["a lone surrogate", "NaN", ...]``), or
    :class:`TooLarge` when it has more than ``max_bytes`` bytes or nests deeper than ``max_depth``; other
    bad JSON (bytes that are not UTF-8 included) raises ``ValueError`` as ``json`` does."""
    if len(data) > max_bytes:
        raise TooLarge(f"more than {max_bytes} bytes of JSON")
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if depth(text) > max_depth:
        raise TooLarge(f"JSON nested deeper than {max_depth}")
    notes: list[str] = []

    def constant(name: str) -> None:
        notes.append(name)
        return None

    def number(literal: str) -> float | None:          # 1e400 is valid JSON that Python reads as inf
        value = float(literal)
        return value if math.isfinite(value) else constant(literal)
    value = json.loads(text, parse_constant=constant, parse_float=number)
    if _ESCAPED_SURROGATE.search(text) or _LONE.search(text):
        value = _writable(value, notes)
    return value, notes


def loads(data: bytes | str, max_bytes: int, max_depth: int = MAX_DEPTH):
    """:func:`read`'s value: JSON parsed with limits, every string writable as UTF-8, no ``NaN``."""
    return read(data, max_bytes, max_depth)[0]


def said(notes: list[str]) -> str:
    """``notes`` in a log line: "2 lone surrogates replaced by U+FFFD, 1 NaN/Infinity read as null"."""
    lone = notes.count("a lone surrogate")
    words = [f"{lone} lone surrogate{'s' * (lone != 1)} replaced by U+FFFD"] if lone else []
    if len(notes) > lone:
        words.append(f"{len(notes) - lone} NaN/Infinity read as null")
    return ", ".join(words)
