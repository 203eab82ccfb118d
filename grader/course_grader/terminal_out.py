"""Text for the instructor's terminal and log files, made inert in one place: every control byte a
student's name, file name, grade_id or message could carry is shown escaped (``\\x1b``), never sent.

File names beside a notebook that set the window title and cleared the screen reached the terminal ten
times in ``autograde`` and eight in ``generate_feedback``, through nbgrader's own log lines (issue 41
item 6); quoting each of our own lines with ``ascii()`` left nbgrader's and traitlets' open. So
:func:`install` puts one filter where every line passes:

* a log record factory (``logging.setLogRecordFactory``): every record of every logger (ours,
  nbgrader's, traitlets', SQLAlchemy's, in this process and the forks it makes) has its message, its
  arguments merged in, and its traceback escaped when it is made, before any handler or file sees it;
* ``sys.stdout`` and ``sys.stderr`` wrapped (:class:`EscapingStream`), and every stream handler that
  already writes to them pointed at the wrappers: a ``print`` or a handler's own text is escaped too.
  The wrappers say they are no terminal, so the log formatter adds no colour codes of its own.

Newlines and tabs stay; everything else below U+0020, DEL, the C1 controls (U+0080 to U+009F, which
some terminals read as escape sequences) and the bidirectional overrides (which reorder what is shown)
are written as Python writes them in ``ascii()``.
"""

from __future__ import annotations

import io
import logging
import re
import sys

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape(text: str) -> str:
    """``text`` with every control character written as an escape (``\\x1b``, ``\\u202e``)."""
    return _CONTROL.sub(lambda m: ascii(m.group(0))[1:-1], text)


class EscapingStream(io.TextIOBase):
    """A text stream that writes to ``stream`` with :func:`escape` applied; no terminal (no colours)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(escape(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self):
        return getattr(self._stream, "encoding", "utf-8")


def _escaping_factory(make):
    def record(*args, **kwargs):
        rec = make(*args, **kwargs)
        try:
            message = rec.getMessage()
        except Exception:                                    # noqa: BLE001 (a bad format: keep its parts)
            message = f"{rec.msg} {rec.args}"
        rec.msg, rec.args = escape(str(message)), ()
        if rec.exc_info and rec.exc_info[0] is not None:
            rec.exc_text = escape(logging.Formatter().formatException(rec.exc_info))
        if rec.stack_info:
            rec.stack_info = escape(rec.stack_info)
        return rec
    record.escapes = True
    return record


def install() -> None:
    """The filter on every log record and on ``sys.stdout``/``sys.stderr`` of this process (once)."""
    factory = logging.getLogRecordFactory()
    if not getattr(factory, "escapes", False):
        logging.setLogRecordFactory(_escaping_factory(factory))
    originals = {}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, EscapingStream):
            originals[id(stream)] = EscapingStream(stream)
            setattr(sys, name, originals[id(stream)])
    loggers = [logging.getLogger()] + [v for v in logging.Logger.manager.loggerDict.values()
                                       if isinstance(v, logging.Logger)]
    for logger in loggers:
        for handler in logger.handlers:
            stream = getattr(handler, "stream", None)
            if isinstance(handler, logging.StreamHandler) and id(stream) in originals:
                handler.setStream(originals[id(stream)])
