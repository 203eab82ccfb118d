"""Grading a class in parallel: a worker process per student, a sandbox zygote per worker slot.

The zygotes (:class:`.sandbox.Zygote`) start first, so their torch import overlaps the grader's own
start-up; each of ``jobs`` slots owns one. A worker is a fork of the grader (never of a zygote, and
it never runs student code): it reads the student's notebooks without following links, sends each
part to its slot's zygote, judges the arrays that come back and records the verdicts with nbgrader.
A worker that dies or overruns ``student_timeout`` costs that student a grader error (the run exits 1);
its slot's zygote is replaced.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time

from . import runner, sandbox, wire


PRESPAWNED: list = []                                   # [level, [Zygote]] started by __main__, if any


def _zygotes(level: str, jobs: int) -> list:
    """``jobs`` zygotes at ``level``: the prespawned ones if they fit, else new ones."""
    found = []
    if PRESPAWNED:
        pre_level, pre = PRESPAWNED
        PRESPAWNED.clear()
        if pre_level == level:
            found, extra = pre[:jobs], pre[jobs:]
        else:
            extra = pre
        for z in extra:
            z.close()
    return found + [sandbox.Zygote(level) for _ in range(jobs - len(found))]


class ClassGrader:
    """``jobs`` zygotes, started now; :meth:`grade` uses them; :meth:`close` ends them."""

    def __init__(self, level: str, opts: sandbox.SandboxOptions, jobs: int, student_timeout: float = 300.0):
        self.level, self.opts, self.student_timeout = level, opts, student_timeout
        self.zygotes = _zygotes(level, max(1, jobs))
        self.timing: dict = {}                             # seconds spent grading and recording, summed

    def ready(self) -> dict:
        """The first zygote's hello (level, cgroup, seccomp); SandboxError if one could not start."""
        infos = [z.ready() for z in self.zygotes]
        return infos[0]

    def close(self) -> None:
        for z in self.zygotes:
            z.close()

    def grade(self, jobs: list, cases: dict, wants: dict, root: str, log=None, record=None) -> tuple[dict, dict]:
        """Grade [(student, notebook, path)]. ({(student, notebook): {part: verdict dict}},
        {(student, notebook): why it is not a valid submission}). ``record(student, results)`` runs in the
        worker right after a student's parts are judged (nbgrader's gradebook and autograded notebook)."""
        runner.prepare(cases)                               # once here, not in every worker
        by_student: dict = {}
        for student, notebook, path in jobs:
            by_student.setdefault(student, []).append((notebook, path))
        queue, running, free = list(by_student.items()), {}, list(range(len(self.zygotes)))
        results, invalid = {}, {}
        while queue or running:
            while queue and free:
                slot = free.pop(0)
                student, notebooks = queue.pop(0)
                r, w = os.pipe()
                pid = os.fork()
                if pid == 0:
                    os.close(r)
                    _worker(student, notebooks, self.zygotes[slot], cases, wants, self.opts, root, record, w)
                os.close(w)
                running[r] = (pid, slot, student, notebooks, [], time.monotonic())
            for fd in select.select(list(running), [], [], 0.5)[0]:
                chunk = os.read(fd, 1 << 20)
                if chunk:
                    running[fd][4].append(chunk)
                    continue
                free.append(self._finish(running.pop(fd), fd, False, results, invalid, log))
            for fd, job in list(running.items()):
                if time.monotonic() - job[5] > self.student_timeout:
                    free.append(self._finish(running.pop(fd), fd, True, results, invalid, log))
        return results, invalid

    def _finish(self, job, fd, overrun: bool, results: dict, invalid: dict, log) -> int:
        pid, slot, student, notebooks, chunks, _ = job
        if overrun:
            os.kill(pid, signal.SIGKILL)
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        zygote = self.zygotes[slot]
        if overrun or status != 0 or zygote.proc.poll() is not None:
            if log:
                log.warning("Replacing the sandbox zygote of slot %d (worker status %s, zygote %s)", slot, status,
                            zygote.proc.poll())
            zygote.kill()                                   # it may be mid-part: a fresh one
            self.zygotes[slot] = sandbox.Zygote(self.level)
            self.zygotes[slot].ready()                      # here, so that no worker waits for its hello
        try:
            out = json.loads(b"".join(chunks).decode()) if status == 0 else {}
        except ValueError:
            out = {}
        timing = out.pop("\0timing", {})
        for key in ("grade", "record"):
            self.timing[key] = self.timing.get(key, 0.0) + float(timing.get(key, 0.0))
        for notebook, _ in notebooks:
            got = out.get(notebook)
            if got is None:
                if log:
                    log.error("Grading %s/%s failed; every part scores 0", student, notebook)
                got = {"invalid": None, "parts": {p: r.as_dict() for p, r in runner.invalid(
                    "the grader could not grade this submission.").items()}}
                for verdict in got["parts"].values():
                    verdict["status"] = "error"
            results[(student, notebook)] = got["parts"]
            if got["invalid"]:
                invalid[(student, notebook)] = got["invalid"]
        return slot


def _worker(student, notebooks, zygote, cases, wants, opts, root, record, w) -> None:
    """One student's notebooks, graded and recorded; JSON on ``w``; never returns."""
    code = 0
    try:
        out, start = {}, time.monotonic()
        for notebook, path in notebooks:
            nb, problem = runner.read_notebook(path, root)
            verdicts = (runner.invalid(problem) if problem else
                        runner.grade_sources(runner.solution_sources(nb), zygote, cases, wants, opts))
            out[notebook] = {"invalid": problem, "parts": {p: v.as_dict() for p, v in verdicts.items()}}
        graded = time.monotonic()
        if record is not None and not any(v["invalid"] for v in out.values()):
            record(student, {(student, nb): v["parts"] for nb, v in out.items()})
        out["\0timing"] = {"grade": graded - start, "record": time.monotonic() - graded}
        wire.write_all(w, json.dumps(out).encode())
    except BaseException:                                    # noqa: BLE001
        code = 1
    finally:
        os._exit(code)
