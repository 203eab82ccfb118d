"""Grading a class in parallel: ``jobs`` worker processes, each with its own sandbox zygote.

The sandbox (:class:`.sandbox.Mother`) starts first, so that its one torch import overlaps the
grader's own start-up; it forks one zygote per worker, then judges: it makes the cases from the hidden
seeds (:meth:`ClassGrader.prepare`) and keeps the reference's answers, so this process never imports
torch. A worker is a fork of the grader (never of a zygote, and it never runs student code) that lives
for the whole run and takes one student at a time: it reads the student's notebooks without following
links, sends each part to its zygote, has the judge judge the arrays that come back and records the
verdicts with nbgrader. A worker that dies or overruns ``student_timeout`` costs that student a grader
error (the run exits 1); it and its zygote are replaced (by a zygote of its own interpreter).
"""

from __future__ import annotations

import json
import os
import select
import signal
import time

from . import references, runner, sandbox, wire


def _mother(level: str, jobs: int) -> sandbox.Mother:
    """The prespawned sandbox if it fits (level and number of zygotes), else a new one."""
    if sandbox.PRESPAWNED:
        pre_level, pre = sandbox.PRESPAWNED
        sandbox.PRESPAWNED.clear()
        if pre_level == level and len(pre.zygotes) == jobs:
            return pre
        pre.close()
    return sandbox.Mother(level, jobs)


class ClassGrader:
    """The sandbox, started now: ``jobs`` zygotes and the judge; :meth:`prepare` has the judge make
    the cases, :meth:`grade` grades with them; :meth:`close` ends it all."""

    def __init__(self, level: str, opts: sandbox.SandboxOptions, jobs: int, student_timeout: float = 300.0):
        self.level, self.opts, self.student_timeout = level, opts, student_timeout
        self.mother = _mother(level, max(1, jobs))
        self.zygotes = self.mother.zygotes                 # a replaced one is replaced in this list
        self.timing: dict = {}                             # seconds spent grading and recording, summed

    def ready(self) -> dict:
        """The first zygote's hello (level, cgroup, seccomp); SandboxError if one could not start."""
        infos = [z.ready() for z in self.zygotes]
        return infos[0]

    def prepare(self, seeds: dict, while_waiting=None) -> float:
        """The judge makes every part's cases from ``{part: hidden seed}`` (visible ones only without);
        they arrive here in wire form, with the references' code. Seconds the judge took. Meanwhile this
        process compiles the references once (not in every worker) and calls ``while_waiting()``."""
        self.mother.ask_cases(seeds)
        for part in runner.PARTS:
            references.compiled(part)
        if while_waiting is not None:
            while_waiting()
        header, arrays, seconds = self.mother.cases()
        runner.use_encoded(header, arrays)
        return seconds

    def close(self) -> None:
        self.mother.close()

    def grade(self, jobs: list, root: str, log=None, record=None) -> tuple[dict, dict]:
        """Grade [(student, notebook, path)] on the cases of :meth:`prepare`. ({(student, notebook):
        {part: verdict dict}}, {(student, notebook): why it is not a valid submission}).
        ``record(student, results)`` runs in the worker right after a student's parts are judged
        (nbgrader's gradebook and autograded notebook)."""
        by_student: dict = {}
        for student, notebook, path in jobs:
            by_student.setdefault(student, []).append((notebook, path))
        work = (root, record)
        queue, results, invalid = list(by_student.items()), {}, {}
        workers = [_Worker(z, self.mother.channel(), self.opts, work) for z in self.zygotes]
        busy: dict = {}                                     # result fd -> (worker, student, notebooks, start)
        try:
            while queue or busy:
                for w in workers:
                    if queue and w.results not in busy:
                        student, notebooks = queue.pop(0)
                        w.send(student, notebooks)
                        busy[w.results] = (w, student, notebooks, time.monotonic())
                for fd in select.select(list(busy), [], [], 0.5)[0]:
                    w, student, notebooks, _ = busy[fd]
                    out = w.receive()
                    if out is None:                         # not a whole answer yet
                        continue
                    del busy[fd]
                    if out is False:                        # the worker died
                        workers[workers.index(w)] = self._replace(w, log)
                    self._collect(student, notebooks, out or {}, results, invalid, log)
                for fd, (w, student, notebooks, start) in list(busy.items()):
                    if time.monotonic() - start > self.student_timeout:
                        del busy[fd]
                        workers[workers.index(w)] = self._replace(w, log)
                        self._collect(student, notebooks, {}, results, invalid, log)
        finally:
            for w in workers:
                w.stop()
        return results, invalid

    def _replace(self, worker: "_Worker", log) -> "_Worker":
        """A dead or overrunning worker: killed with its zygote, which may be mid-part; fresh ones."""
        worker.stop(kill=True)
        slot = self.zygotes.index(worker.zygote)
        if log:
            log.warning("Replacing the grading worker and sandbox zygote of slot %d", slot)
        worker.zygote.kill()
        self.zygotes[slot] = sandbox.Zygote(self.level)
        self.zygotes[slot].ready()                          # here, so that no worker waits for its hello
        return _Worker(self.zygotes[slot], self.mother.channel(), self.opts, worker.work)

    def _collect(self, student, notebooks, out: dict, results: dict, invalid: dict, log) -> None:
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


_OPEN: set = set()                                      # the grader's ends of its workers' pipes


class _Worker:
    """A fork of the grader that grades and records one student at a time, as long as the run lasts
    (so nbgrader's and SQLAlchemy's caches stay warm from one student to the next). Jobs and answers
    are length-prefixed JSON on two pipes; it never runs student code (its zygote's parts do)."""

    def __init__(self, zygote: sandbox.Zygote, channel, opts: sandbox.SandboxOptions, work: tuple):
        self.zygote, self.work, self.buffer = zygote, work, b""
        jobs_r, self.jobs = os.pipe()
        self.results, results_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            for fd in (self.jobs, self.results, *_OPEN):     # other workers' pipes: theirs to end
                os.close(fd)
            _serve(jobs_r, results_w, zygote, sandbox.verdict_over(channel), opts, *work)
        channel.close()                                     # the worker's judging channel: its own
        os.close(jobs_r)
        os.close(results_w)
        _OPEN.update((self.jobs, self.results))

    def send(self, student: str, notebooks: list) -> None:
        wire.write_all(self.jobs, wire.frame(json.dumps([student, notebooks]).encode()))

    def receive(self):
        """The answer for the student it was sent (a dict), None if it is not all here yet, False if
        the worker ended."""
        chunk = os.read(self.results, 1 << 20)
        if not chunk:
            return False
        self.buffer += chunk
        if len(self.buffer) < 8:
            return None
        n = int.from_bytes(self.buffer[:8], "big")
        if len(self.buffer) < 8 + n:
            return None
        payload, self.buffer = self.buffer[8:8 + n], self.buffer[8 + n:]
        try:
            return json.loads(payload.decode())
        except ValueError:
            return {}

    def stop(self, kill: bool = False) -> None:
        if self.pid is None:
            return
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        for fd in (self.jobs, self.results):
            os.close(fd)
            _OPEN.discard(fd)
        os.waitpid(self.pid, 0)                             # no more jobs: it closes its zygote and ends
        self.pid = None


def _serve(jobs_r: int, results_w: int, zygote, verdict, opts, root, record) -> None:
    """The worker's loop: a student's notebooks, graded and recorded, one answer each; never returns."""
    import gc
    gc.freeze()                     # the grader's objects: no collection in this worker walks them again
    code, inherited = 0, zygote.sock
    try:
        while True:
            try:
                student, notebooks = json.loads(wire.read_blob(jobs_r).decode())
            except EOFError:
                break
            out = _grade_student(student, notebooks, zygote, verdict, opts, root, record)
            wire.write_all(results_w, wire.frame(json.dumps(out).encode()))
        if zygote.sock is inherited:
            zygote.sock.close()                              # the grader's zygote: the grader ends it
        else:
            zygote.close()                                   # one this worker started (the first one failed)
    except BaseException:                                    # noqa: BLE001 (the grader sees it end)
        code = 1
    finally:
        os._exit(code)


def _grade_student(student, notebooks, zygote, verdict, opts, root, record) -> dict:
    out, start = {}, time.monotonic()
    for notebook, path in notebooks:
        nb, problem = runner.read_notebook(path, root)
        verdicts = (runner.invalid(problem) if problem else
                    runner.grade_with(runner.solution_sources(nb), zygote, verdict, opts))
        out[notebook] = {"invalid": problem, "parts": {p: v.as_dict() for p, v in verdicts.items()}}
    graded = time.monotonic()
    if record is not None and not any(v["invalid"] for v in out.values()):
        record(student, {(student, nb): v["parts"] for nb, v in out.items()})
    out["\0timing"] = {"grade": graded - start, "record": time.monotonic() - graded}
    return out
