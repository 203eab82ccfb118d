"""`nbgrader validate` on the command line, with each message whole.

nbgrader's validator prints every line of a failing cell's error cut at its ``width`` (90 columns:
"Part 3: a hidden case of the family 'padding': the heads are split the wr..."), so the diagnosis
the grader wrote is lost exactly where it starts. :func:`wrap_long_lines` makes it wrap such a line
at that width instead, its continuation indented once more; short lines print as before.
nbgrader_config.py calls it, so `nbgrader validate` from the course directory prints whole messages
(the Validate button of JupyterLab shows the messages untouched either way).

This replaces a private method, :data:`PRIVATE`: nbgrader 0.9.6 offers no public way to format the
report (``ValidateApp`` makes a plain ``Validator``, whose only formatting options are ``indent`` and
``width``, the width also drawing its rules and wrapping its warnings). If the installed nbgrader has
no such method, :func:`wrap_long_lines` raises :class:`NbgraderChanged` rather than patch blindly, and
tests/grading/test_validation.py fails.
"""

from __future__ import annotations

import inspect
import textwrap

#: the private method of nbgrader that :func:`wrap_long_lines` replaces: every block of the report
#: (a cell's source, its error) goes through it, and nbgrader's cuts each line at ``width``
PRIVATE = "nbgrader.validator.Validator._indent(self, val)"


class NbgraderChanged(RuntimeError):
    """The installed nbgrader has no :data:`PRIVATE` with that signature."""


def wrapped(text: str, indent: str = "    ", width: int = 90) -> str:
    """``text`` with each line indented, a line wider than ``width`` wrapped (nothing is cut)."""
    from nbconvert.filters import strip_ansi

    out = []
    for line in text.split("\n"):
        line = strip_ansi(line)
        if len(indent + line) <= width:
            out.append(indent + line)
            continue
        out += textwrap.wrap(line, width=width, initial_indent=indent, subsequent_indent=indent * 2,
                             break_long_words=True, break_on_hyphens=False)
    return "\n".join(out)


def _indent(self, val: str) -> str:
    """The Validator's ``_indent``, at its own ``indent`` and ``width``, wrapping instead of cutting."""
    return wrapped(val, self.indent, self.width)


def wrap_long_lines() -> None:
    """nbgrader's Validator indents with :func:`wrapped`; raises :class:`NbgraderChanged` if the
    installed nbgrader has no :data:`PRIVATE` to replace."""
    import nbgrader
    from nbgrader.validator import Validator

    current = getattr(Validator, "_indent", None)
    if current is _indent:
        return
    params = list(inspect.signature(current).parameters) if callable(current) else None
    if params != ["self", "val"]:
        found = "nothing" if current is None else f"{type(current).__name__} with parameters {params}"
        raise NbgraderChanged(
            f"nbgrader {nbgrader.__version__}: expected {PRIVATE}, found {found}; course_lib/grading/validation.py "
            "cannot make `nbgrader validate` print whole messages with this nbgrader (the course pins "
            "nbgrader==0.9.6; see 'Private APIs' in docs/development.md)")
    Validator._indent = _indent
