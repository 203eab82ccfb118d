"""The sandbox's judge: the hidden cases, the reference's answers and the verdicts, in a process that
holds course_lib and torch but neither the grader's state nor any student's code.

It is the warm interpreter the zygotes were forked from (:func:`zygote._mother`), after they were
forked: so their parts never hold the reference or the expected answers, and the class grader's own
process (:mod:`.pool`), which reads the gradebook and the class roster, never imports torch. Two kinds
of socket:

* ``control`` (the grader): ``{"op": "cases", "seeds": {part: seed}}`` -> every part's cases, made
  here from the seeds (:func:`runner.make_all_cases`) and sent back in wire form
  (:func:`runner.encoded_cases`); then the reference's answers (:func:`runner.expected_answers`),
  which stay here, are made while the first parts run;
* judging channels, one per grading worker, each passed over ``channels`` (``SCM_RIGHTS``): a part's
  outcome (its header and arrays) -> the verdict (:func:`runner.judge`), as a dict.

The grader closing ``control`` ends it.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import time

from . import runner, wire
from .sandbox import Outcome


def serve(control: int, channels: int) -> None:
    cases: dict = {}
    wants: dict = {}
    judges: set = set()
    passing = socket.socket(fileno=channels)
    while True:
        for fd in select.select([control, passing.fileno(), *judges], [], [])[0]:
            if fd == control:
                try:
                    request, _ = wire.read_message(control)
                except (EOFError, OSError, ValueError):
                    for fd_ in judges:
                        os.close(fd_)
                    return
                start = time.monotonic()
                cases = runner.make_all_cases({str(p): int(s) for p, s in request.get("seeds", {}).items()})
                header, arrays = runner.encoded_cases(cases)
                wire.write_message(control, {"cases": header, "seconds": time.monotonic() - start}, arrays)
                wants = runner.expected_answers(cases)          # while the first parts run
            elif fd == passing.fileno():
                _, fds, _, _ = socket.recv_fds(passing, 1, 8)
                judges.update(fds)
            else:
                try:
                    request, arrays = wire.read_message(fd)
                    wire.write_message(fd, verdict_in_time(request, arrays, cases, wants))
                except (EOFError, OSError, ValueError):            # the worker ended (or was ended)
                    judges.discard(fd)
                    os.close(fd)


JUDGING_SECONDS = 20.0      # one judging; the judge serves every worker, so none may hold it longer


class _Late(BaseException):
    """The judging's deadline passed (a BaseException: no ``except Exception`` of the judging catches it)."""


def _late(signum, frame):
    raise _Late()


def verdict_in_time(request: dict, arrays: list, cases: dict, wants: dict, seconds: float = JUDGING_SECONDS) -> dict:
    """:func:`_verdict` with a deadline (``ITIMER_REAL``): a result that takes longer to judge fails,
    and the judge goes on with the next worker's."""
    previous = signal.signal(signal.SIGALRM, _late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return _verdict(request, arrays, cases, wants)
    except _Late:
        return runner.PartResult("failed", f"{request.get('part')}: its results took longer than {seconds:g} s "
                                           "to judge.").as_dict()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _verdict(request: dict, arrays: list, cases: dict, wants: dict) -> dict:
    part = request.get("part")
    if part not in cases:
        return runner.PartResult("error", f"{part}: the judge has no cases for this part").as_dict()
    outcome = Outcome("ok", request.get("header"), tuple(arrays), None, float(request.get("seconds", 0.0)))
    return runner.judge(part, cases[part], wants[part], outcome).as_dict()
