"""Text to the terminal (issue 41 item 6): one filter (course_grader.terminal_out) on every log record and
stream of the grader's process, so that no control byte a student chose reaches the instructor's terminal
or a log file, whoever's log line carries it (nbgrader's, traitlets', ours, a traceback, a print).

The fuzzer makes names from control bytes, C1 controls, bidirectional overrides and the window-title and
clear-screen sequences of the red-team case, and sends them the ways nbgrader's and traitlets' code does:
a handler made before the filter was installed (as traitlets' is), a log file, ``%s`` arguments, a
message that is the name itself, an exception's traceback, ``print`` and ``sys.stderr.write``.
"""

from __future__ import annotations

import io
import logging
import re
import sys

from hypothesis import given
from hypothesis import strategies as st

from course_grader import terminal_out
from fuzz_kit import fuzz

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SEQUENCES = ["\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x1b]8;;http://x.org\x1b\\", "\x9b2J", "\r\x1b[K",
             "\u202e", "\x07", "\x08" * 5, "\x1bP+q\x1b\\", "\x00"]
NAMES = st.lists(st.one_of(st.sampled_from(SEQUENCES), st.text(max_size=6),
                           st.characters(max_codepoint=0x9f)), max_size=6).map("".join)


def _emit(name: str, log: logging.Logger) -> None:
    log.info("Copying %s to the autograded folder", name)
    log.warning(name)
    log.error("%s: %r", name, {"grade_id": name})
    try:
        raise KeyError(name)
    except KeyError:
        log.exception("Could not grade %s", name)
    print(name)
    sys.stderr.write(name + "\n")


def _through_the_grader(name: str, folder, install=terminal_out.install) -> dict[str, str]:
    """What reaches the terminal, stdout and a log file when ``name`` goes the ways of nbgrader's and
    traitlets' code, with ``install`` (the filter) called first."""
    terminal, out = io.StringIO(), io.StringIO()
    log_file = folder / "grader.log"
    saved = sys.stdout, sys.stderr, logging.getLogRecordFactory()
    sys.stdout, sys.stderr = out, terminal
    log = logging.getLogger("NbGraderApp.fuzz")
    before = logging.StreamHandler()                 # on sys.stderr, made before the filter (as traitlets')
    to_file = logging.FileHandler(log_file, encoding="utf-8")
    log.addHandler(before)
    log.addHandler(to_file)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        install()
        _emit(name, log)
        logging.getLogger("traitlets").warning("Config option %s not recognized", name)
    finally:
        log.removeHandler(before)
        log.removeHandler(to_file)
        to_file.close()
        sys.stdout, sys.stderr = saved[0], saved[1]
        logging.setLogRecordFactory(saved[2])
    return {"terminal": terminal.getvalue(), "stdout": out.getvalue(),
            "log file": log_file.read_text(encoding="utf-8")}


@fuzz(150)
@given(name=NAMES)
def test_fuzz_no_control_byte_reaches_a_stream_or_a_log_file(name, tmp_path_factory):
    seen = _through_the_grader(name, tmp_path_factory.mktemp("log"))
    for where, text in seen.items():
        assert CONTROL.search(text) is None, (where, text)
    assert terminal_out.escape(name) in seen["terminal"]          # shown, escaped, not dropped


def test_without_the_filter_the_red_team_names_reach_every_stream(tmp_path):
    """The fuzzer can fail: with the filter not installed, the red-team case's window-title and
    clear-screen sequences reach the terminal, stdout and the log file."""
    seen = _through_the_grader("\x1b]0;pwned\x07\x1b[2J\x1b[H", tmp_path, install=lambda: None)
    assert all(CONTROL.search(text) for text in seen.values()), seen


def test_escape_keeps_newlines_and_tabs_and_shows_the_rest():
    assert terminal_out.escape("a\tb\nc") == "a\tb\nc"
    assert terminal_out.escape("\x1b]0;t\x07\u202e") == "\\x1b]0;t\\x07\\u202e"
