"""Grading a class in parallel: ``jobs`` worker processes, each with its own sandbox zygote.

The sandbox (:class:`.sandbox.Mother`) starts first, so that its one torch import overlaps the
grader's own start-up; it forks one zygote per worker, then judges: it makes the cases from the hidden
seeds (:meth:`ClassGrader.prepare`) and keeps the reference's answers, so this process never imports
torch. Each slot has a worker and a recorder, forks of the grader (never of a zygote; neither runs
student code) that live for the whole run: the worker takes one student at a time, reads the student's
notebooks without following links, sends each part to its zygote and has the judge judge the arrays
that come back; the recorder records the verdicts with nbgrader while the worker grades the next
student. A slot whose worker or recorder dies, or whose student overruns ``student_timeout``, costs
that student a grader error (the run exits 1); the slot is replaced (with a zygote of its own
interpreter) and the student sent after it is graded again.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time

from . import confine, references, runner, sandbox, wire


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
        self.replaced: list = []                           # the zygotes killed with a failed slot
        self.workers: list = []                            # the slots' processes while :meth:`grade` runs

    def ready(self) -> dict:
        """The first zygote's hello (level, seccomp, Landlock); SandboxError if one could not start."""
        infos = [z.ready() for z in self.zygotes]
        return infos[0]

    def prepare(self, seeds: dict, while_waiting=None) -> float:
        """The judge makes every part's cases from ``{part: hidden seed}`` (visible ones only without);
        they arrive here in wire form, with the references' code. Seconds the judge took. Meanwhile this
        process compiles the references once (not in every worker) and calls ``while_waiting()``."""
        self.mother.ask_cases(seeds)
        from . import recording  # noqa: F401 (nbgrader's validator: once, before the forks)
        for part in runner.PARTS:
            references.compiled(part)
        if while_waiting is not None:
            while_waiting()
        header, arrays, seconds = self.mother.cases()
        runner.use_encoded(header, arrays)
        return seconds

    def close(self) -> None:
        self.mother.close()

    def kill(self) -> None:
        """At once (the grader was told to end): the slots' processes, the zygotes with their parts,
        the judge."""
        for w in self.workers:
            for pid in (w.pid, w.recorder) if w.pid is not None else ():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.mother.kill()

    def grade(self, jobs: list, root: str, log=None, record=None) -> tuple[dict, dict]:
        """Grade [(student, notebook, path)] on the cases of :meth:`prepare`. ({(student, notebook):
        {part: verdict dict}}, {(student, notebook): why it is not a valid submission}).
        ``record(student, results)`` runs in the slot's recorder right after a student's parts are judged
        (nbgrader's gradebook and autograded notebook), while the slot's worker grades the next one."""
        self.ready()                                        # here: so that this process can end each zygote
        by_student: dict = {}
        for student, notebook, path in jobs:
            by_student.setdefault(student, []).append((notebook, path))
        work = (root, record)
        queue, results, invalid = list(by_student.items()), {}, {}
        workers = self.workers = [_Worker(z, self.mother.channel(), self.opts, work) for z in self.zygotes]
        sent: dict = {}                                     # worker -> [[student, notebooks, since], ...], oldest first
        try:
            while queue or any(sent.values()):
                for w in workers:
                    while queue and len(sent.setdefault(w, [])) < DEPTH:
                        student, notebooks = queue.pop(0)
                        w.send(student, notebooks)
                        sent[w].append([student, notebooks, time.monotonic()])
                by_fd = {w.results: w for w in workers if sent.get(w)}
                for fd in select.select(list(by_fd), [], [], 0.5)[0]:
                    w = by_fd[fd]
                    answers = w.receive()
                    for out in answers or []:
                        student, notebooks, _ = sent[w].pop(0)
                        self._collect(student, notebooks, out, results, invalid, log)
                        if sent[w]:
                            sent[w][0][2] = time.monotonic()    # the next one's own time starts now
                    if answers is None:                     # the worker or its recorder ended
                        workers[workers.index(w)] = self._replace(w, sent.pop(w), queue, results, invalid, log)
                for w in list(workers):
                    if sent.get(w) and time.monotonic() - sent[w][0][2] > self.student_timeout:
                        workers[workers.index(w)] = self._replace(w, sent.pop(w), queue, results, invalid, log)
        finally:
            for w in workers:
                w.stop()
        return results, invalid

    def _replace(self, worker: _Worker, sent: list, queue: list, results: dict, invalid: dict, log) -> _Worker:
        """A slot whose worker or recorder died, or whose oldest student overran: its processes killed
        with its zygote, which may be mid-part; fresh ones. That oldest student gets a grader error (the
        run exits 1); the one sent after it goes back to the queue."""
        student, notebooks, _ = sent[0]
        self._collect(student, notebooks, {}, results, invalid, log)
        queue[:0] = [(s, n) for s, n, _ in sent[1:]]
        worker.stop(kill=True)
        slot = self.zygotes.index(worker.zygote)
        if log:
            log.warning("Replacing the grading worker and sandbox zygote of slot %d", slot)
        worker.zygote.kill()
        self.replaced.append(worker.zygote)
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
DEPTH = 2                                               # students sent to a slot at a time: one graded, one recorded


class _Worker:
    """A slot's two forks of the grader, for the whole run (so that nbgrader's and SQLAlchemy's caches
    stay warm from one student to the next); neither runs student code (the zygote's parts do). The
    worker takes a student, reads the notebooks without following links, runs each part in the zygote,
    has the judge judge its outputs, and hands the verdicts to the recorder, which records them with
    nbgrader and answers for the student while the worker grades the next. Jobs, hand-offs and answers
    are length-prefixed JSON on pipes."""

    def __init__(self, zygote: sandbox.Zygote, channel, opts: sandbox.SandboxOptions, work: tuple):
        self.zygote, self.work, self.buffer = zygote, work, b""
        root, record = work
        jobs_r, self.jobs = os.pipe()
        self.results, results_w = os.pipe()
        handoff_r, handoff_w = os.pipe()
        mine = (self.jobs, self.results, *_OPEN)                 # other slots' pipes: theirs to end
        grader = os.getpid()
        self.recorder = os.fork()
        if self.recorder == 0:
            confine.die_with_parent(grader)                      # a grader killed takes its slots with it
            for fd in (*mine, jobs_r, handoff_w, channel.fileno()):
                os.close(fd)
            _record(handoff_r, results_w, record)
        self.pid = os.fork()
        if self.pid == 0:
            confine.die_with_parent(grader)
            for fd in (*mine, results_w, handoff_r):
                os.close(fd)
            _serve(jobs_r, handoff_w, zygote, verdict_over(channel), opts, root)
        channel.close()                                     # the worker's judging channel: its own
        for fd in (jobs_r, results_w, handoff_r, handoff_w):
            os.close(fd)
        _OPEN.update((self.jobs, self.results))

    def send(self, student: str, notebooks: list) -> None:
        wire.write_all(self.jobs, wire.frame(json.dumps([student, notebooks]).encode()))

    def receive(self):
        """The answers that are all here now (a list of dicts, oldest first; maybe empty), or None when
        the slot ended (its worker died, so its recorder ended too, or its recorder died)."""
        chunk = os.read(self.results, 1 << 20)
        self.buffer += chunk
        answers = []
        while len(self.buffer) >= 8 and len(self.buffer) >= 8 + int.from_bytes(self.buffer[:8], "big"):
            n = int.from_bytes(self.buffer[:8], "big")
            payload, self.buffer = self.buffer[8:8 + n], self.buffer[8 + n:]
            try:
                answers.append(json.loads(payload.decode()))
            except ValueError:
                answers.append({})
        return answers if chunk else (answers or None)

    def stop(self, kill: bool = False) -> None:
        if self.pid is None:
            return
        for pid in (self.pid, self.recorder) if kill else ():
            os.kill(pid, signal.SIGKILL)
        for fd in (self.jobs, self.results):
            os.close(fd)
            _OPEN.discard(fd)
        for pid in (self.pid, self.recorder):                # no more jobs: the worker ends, then its recorder
            os.waitpid(pid, 0)
        self.pid = None


def _serve(jobs_r: int, handoff_w: int, zygote, verdict, opts, root) -> None:
    """The worker's loop: a student's notebooks graded, handed to the recorder; never returns."""
    inherited = zygote.sock

    def grade(student, notebooks):
        out = _grade_student(notebooks, zygote, verdict, opts, root)
        wire.write_all(handoff_w, wire.frame(json.dumps([student, out]).encode()))

    def end():
        if zygote.sock is inherited:
            zygote.sock.close()                              # the grader's zygote: the grader ends it
        else:
            zygote.close()                                   # one this worker started (the first one failed)
    _loop(jobs_r, grade, end)


def _record(handoff_r: int, results_w: int, record) -> None:
    """The recorder's loop: each graded student recorded (unless a notebook was not a valid submission),
    then its answer to the grader; never returns. A recording that raises ends it (and the slot)."""
    def answer(student, out):
        start = time.monotonic()
        if record is not None and not any(v["invalid"] for nb, v in out.items() if nb != "\0timing"):
            record(student, {(student, nb): v["parts"] for nb, v in out.items() if nb != "\0timing"})
        out["\0timing"]["record"] = time.monotonic() - start
        wire.write_all(results_w, wire.frame(json.dumps(out).encode()))
    _loop(handoff_r, answer)


def _loop(read_fd: int, each, end=None) -> None:
    """A slot's process: ``each(*message)`` for every JSON frame on ``read_fd`` until it closes, then
    ``end()``; exit 0, or 1 on any exception (the grader sees the slot end); never returns."""
    import gc
    gc.freeze()                     # the grader's objects: no collection in this process walks them again
    code = 0
    try:
        while True:
            try:
                message = json.loads(wire.read_blob(read_fd).decode())
            except EOFError:
                break
            each(*message)
        if end is not None:
            end()
    except BaseException:                                    # noqa: BLE001
        code = 1
    finally:
        os._exit(code)


def _grade_student(notebooks, zygote, verdict, opts, root) -> dict:
    out, start = {}, time.monotonic()
    for notebook, path in notebooks:
        nb, problem = runner.read_notebook(path, root)
        verdicts = (runner.invalid(problem) if problem else
                    runner.grade_with(runner.solution_sources(nb), zygote, verdict, opts))
        out[notebook] = {"invalid": problem, "parts": {p: v.as_dict() for p, v in verdicts.items()}}
    out["\0timing"] = {"grade": time.monotonic() - start}
    return out


def verdict_over(channel):
    """``verdict(part, outcome)`` for :func:`runner.grade_with`: a part's failure is judged here, its
    outputs by the judge at the other end of ``channel``."""
    def verdict(part: str, outcome: sandbox.Outcome):
        if outcome.status != "ok":
            return runner.judge(part, [], [], outcome)
        wire.write_message(channel.fileno(), {"part": part, "header": outcome.header, "seconds": outcome.seconds},
                           list(outcome.arrays))
        try:
            answer, _ = wire.read_message(channel.fileno(), time.monotonic() + 300.0)
        except (EOFError, TimeoutError, ValueError) as e:
            return runner.PartResult("error", f"{part}: the judge did not answer ({type(e).__name__})",
                                     outcome.seconds)
        return runner.PartResult.from_dict(answer)
    return verdict
