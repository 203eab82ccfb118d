"""`nbgrader validate` on the command line, with each message whole.

nbgrader's validator prints every line of a failing cell's error cut at its ``width`` (90 columns:
"Part 3: a hidden case of the family 'padding': the heads are split the wr..."), so the diagnosis
the grader wrote is lost exactly where it starts. :func:`wrap_long_lines` makes it wrap such a line
at that width instead, its continuation indented once more; short lines print as before.
nbgrader_config.py calls it, so `nbgrader validate` from the course directory prints whole messages
(the Validate button of JupyterLab shows the messages untouched either way).
"""

from __future__ import annotations

import textwrap


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


def wrap_long_lines() -> None:
    """nbgrader's Validator indents with :func:`wrapped` (at its own ``indent`` and ``width``)."""
    from nbgrader.validator import Validator

    def _indent(self, val: str) -> str:
        return wrapped(val, self.indent, self.width)

    Validator._indent = _indent
