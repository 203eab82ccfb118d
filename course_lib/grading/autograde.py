"""``python -m course_lib.grading autograde ASSIGNMENT``: nbgrader's autograde, sandboxed and parallel.

Two phases:

1. **Grade** (parallel, ``--jobs`` processes): for each submission, the six solution cells are taken
   out of the notebook and each part runs in its own sandboxed process (:mod:`.sandbox`) on the
   grader's cases; the results are judged here, in processes that never run student code.
2. **Record** (nbgrader's own ``Autograde`` converter): the notebook is sanitized as usual (outputs
   cleared, locked and test cells restored from the gradebook by their checksums, deleted test
   cells added back), then -- instead of executing the notebook in a kernel -- each test cell gets
   the verdict of its part as its output, and nbgrader's ``SaveAutoGrades`` writes the scores to
   the gradebook. So ``nbgrader generate_feedback``, ``nbgrader export`` and the formgrader work as
   after a plain ``nbgrader autograde``; written answers still wait for manual grading.

Options (also settable in nbgrader_config.py as ``c.SandboxGrader.<name>``): ``--jobs N``,
``--part-timeout S`` (wall clock per part), ``--sandbox root|userns|rlimits``, plus every option of
``nbgrader autograde`` (``--student``, ``--force``, ``--notebook``, ...).
"""

from __future__ import annotations

import glob
import json
import os
import re
import select
import signal
import sys
import tempfile
import time

from nbformat.v4 import new_output
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader import utils
from nbgrader.apps.autogradeapp import AutogradeApp
from nbgrader.apps.autogradeapp import aliases as _nbgrader_aliases
from nbgrader.apps.autogradeapp import flags as _nbgrader_flags
from nbgrader.apps.baseapp import NbGrader
from nbgrader.converters import Autograde, NbGraderException
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput,
                                    NbGraderPreprocessor, SaveAutoGrades)
from traitlets import Float, Integer, List, Unicode
from traitlets.config import Configurable

import course_lib

from . import runner, sandbox

_RESULTS: dict = {}          # (student, notebook) -> {part: {"passed": bool, "message": str}}


class SandboxGrader(Configurable):
    """Limits of the sandboxed grader (``c.SandboxGrader.*`` in nbgrader_config.py)."""

    jobs = Integer(2, help="Submissions graded in parallel (one process each).").tag(config=True)
    part_timeout = Float(20.0, help="Wall-clock seconds for one part (its cell and all its cases).").tag(config=True)
    student_timeout = Float(300.0, help="Wall-clock seconds for one whole submission (a safety net).").tag(config=True)
    memory_mb = Integer(2048, help="Address space a part may add, MiB.").tag(config=True)
    cpu_seconds = Integer(40, help="CPU seconds of one part.").tag(config=True)
    max_processes = Integer(64, help="RLIMIT_NPROC of the sandbox user.").tag(config=True)
    uid = Integer(65534, help="Unprivileged uid the student's code runs as (when the grader is root).").tag(config=True)
    gid = Integer(65534, help="Its gid.").tag(config=True)
    level = Unicode("auto", help="root (uid drop + namespaces), userns (namespaces as a normal user), "
                                 "rlimits (limits only), or auto (the strongest available).").tag(config=True)
    hide = List(Unicode(), help="More directories the student's code must not see.").tag(config=True)

    def options(self, coursedir, exchange_root: str | None = None) -> sandbox.SandboxOptions:
        """What the student's code must not see (the course, temp and home directories, the exchange,
        the gradebook) and what it needs (Python, the virtual environment, course_lib), read-only."""
        hide = [coursedir.root, "/tmp", "/var/tmp", "/dev/shm", "/root", "/home", tempfile.gettempdir(), *self.hide]
        if exchange_root:
            hide.append(exchange_root)
        db = coursedir.db_url
        if db.startswith("sqlite:///"):
            path = os.path.realpath(db[len("sqlite:///"):])
            if not any(path.startswith(os.path.realpath(h).rstrip("/") + "/") for h in hide if os.path.exists(h)):
                hide.append(path)
        keep = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(course_lib.__file__)]
        return sandbox.SandboxOptions(timeout=self.part_timeout, memory_mb=self.memory_mb,
                                      cpu_seconds=self.cpu_seconds, max_processes=self.max_processes,
                                      uid=self.uid, gid=self.gid, hide=hide, keep=keep, level=self.level)


class InjectSandboxResults(NbGraderPreprocessor):
    """Instead of executing: each test cell's output is the verdict of its part (pass / error)."""

    def preprocess(self, nb, resources):
        key = (resources["nbgrader"]["student"], resources["nbgrader"]["notebook"])
        self._results = _RESULTS.get(key)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
            return cell, resources
        part = runner.part_of_test(cell.metadata.nbgrader.get("grade_id", ""))
        result = None if (self._results is None or part is None) else self._results.get(part)
        if result is None:
            message = "this test cell was not graded by the sandboxed grader"
            cell.outputs = [_error(message)]
        elif result["passed"]:
            cell.outputs = [new_output("stream", name="stdout",
                                       text=f"Graded in a sandbox: {result['message']}\n")]
        else:
            cell.outputs = [_error(result["message"])]
        return cell, resources


def _error(message: str):
    return new_output("error", ename="AssertionError", evalue=message,
                      traceback=[f"\x1b[0;31mAssertionError\x1b[0m: {message}"])


def find_submissions(coursedir, assignment_id: str, student_id: str, notebook_id: str) -> list:
    """[(student, notebook_id, path)] as nbgrader's autograde would find them."""
    pattern = coursedir.format_path(coursedir.submitted_directory, student_id, assignment_id)
    regexp = re.escape(os.path.sep).join([
        coursedir.format_path(coursedir.submitted_directory, "(?P<student_id>[^/]*)", re.escape(assignment_id),
                              escape=True),
        "(?P<notebook_id>.*).ipynb"])
    found = []
    for folder in sorted(glob.glob(pattern)):
        for path in sorted(glob.glob(os.path.join(folder, notebook_id + ".ipynb"))):
            m = re.match(regexp, path)
            if m:
                found.append((m.group("student_id"), m.group("notebook_id"), path))
    return found


def _needs_grading(coursedir, force: bool, assignment_id: str, student: str) -> bool:
    dest = coursedir.format_path(coursedir.autograded_directory, student, assignment_id)
    if force or not os.path.exists(dest):
        return True
    src = coursedir.format_path(coursedir.submitted_directory, student, assignment_id)
    new, old = coursedir.get_existing_timestamp(src), coursedir.get_existing_timestamp(dest)
    return new is not None and old is not None and new > old


def grade_all(jobs: list, opts: sandbox.SandboxOptions, level: str, n_jobs: int, student_timeout: float,
              log=None, record=None) -> dict:
    """Grade [(student, notebook, path)] with ``n_jobs`` processes; {(student, notebook): {part: result}}.

    ``record(student, results)``, when given, runs in the same process right after a student's parts
    are graded (the gradebook and the autograded notebook), so recording overlaps other students' grading.
    """
    import torch
    torch.set_num_threads(1)
    cases = runner.all_cases()                                   # computed once, shared by every fork
    by_student: dict = {}
    for student, notebook, path in jobs:
        by_student.setdefault(student, []).append((notebook, path))
    queue = list(by_student.items())
    running: dict = {}                                           # fd -> (pid, student, notebooks, chunks, start)
    results: dict = {}
    while queue or running:
        while queue and len(running) < max(1, n_jobs):
            student, notebooks = queue.pop(0)
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:                                         # one grader process per student
                code = 0
                results.clear()                                  # other students' verdicts: not here
                queue.clear()
                try:
                    os.close(r)
                    out = {}
                    for notebook, path in notebooks:
                        res = runner.grade_notebook(path, opts, level, cases)
                        out[notebook] = {p: {"passed": v.passed, "message": v.message, "seconds": v.seconds}
                                         for p, v in res.items()}
                    if record is not None:
                        record(student, {(student, nb): parts for nb, parts in out.items()})
                    sandbox._write_all(w, json.dumps(out).encode())
                except BaseException:                            # noqa: BLE001
                    code = 1
                finally:
                    os._exit(code)
            os.close(w)
            running[r] = (pid, student, notebooks, [], time.monotonic())
        ready, _, _ = select.select(list(running), [], [], 0.5)
        for fd in ready:
            chunk = os.read(fd, 1 << 20)
            if chunk:
                running[fd][3].append(chunk)
                continue
            pid, student, notebooks, chunks, _ = running.pop(fd)
            os.close(fd)
            os.waitpid(pid, 0)
            _collect(results, student, notebooks, b"".join(chunks), log)
        now = time.monotonic()
        for fd, (pid, student, notebooks, chunks, start) in list(running.items()):
            if now - start > student_timeout:                     # a safety net; parts have their own
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(fd)
                running.pop(fd)
                _collect(results, student, notebooks, b"", log)
    return results


def _collect(results, student, notebooks, data: bytes, log) -> None:
    try:
        out = json.loads(data.decode())
    except ValueError:
        out = {}
    for notebook, _ in notebooks:
        parts = out.get(notebook)
        if parts is None:
            if log:
                log.error("Grading %s/%s failed; every part scores 0", student, notebook)
            parts = {p: {"passed": False, "message": f"{p}: the grader could not grade this submission."}
                     for p in runner.PARTS}
        results[(student, notebook)] = parts


class SandboxAutogradeApp(AutogradeApp):
    name = "course_lib-autograde"
    description = "Autograde the encoder exercise: nbgrader's autograde with every part run in a sandbox."
    aliases = {**_nbgrader_aliases, "jobs": "SandboxGrader.jobs", "part-timeout": "SandboxGrader.part_timeout",
               "sandbox": "SandboxGrader.level"}
    flags = dict(_nbgrader_flags)

    def _classes_default(self):
        return [*super()._classes_default(), SandboxGrader]

    def start(self) -> None:
        NbGrader.start(self)
        if len(self.extra_args) > 1:
            self.fail("Only one argument (the assignment id) may be specified")
        elif len(self.extra_args) == 1 and self.coursedir.assignment_id != "":
            self.fail("The assignment cannot both be specified in config and as an argument")
        elif len(self.extra_args) == 0 and self.coursedir.assignment_id == "":
            self.fail("An assignment id must be specified, either as an argument or with --assignment")
        elif len(self.extra_args) == 1:
            self.coursedir.assignment_id = self.extra_args[0]
        settings = SandboxGrader(parent=self)
        exchange_root = None
        try:
            exchange_root = self.config.Exchange.root if "root" in self.config.Exchange else "/srv/nbgrader/exchange"
        except Exception:                                        # noqa: BLE001
            pass
        opts = settings.options(self.coursedir, exchange_root)
        level = sandbox.detect_level(settings.level)
        if level in ("rlimits", "uid"):
            self.log.warning("No namespaces available (sandbox level %r): student code cannot be hidden from the "
                             "course directory or the network (run as root where mount and network namespaces "
                             "are allowed, or enable unprivileged user namespaces, for the full sandbox)", level)
        force = bool(self.config.Autograde.get("force", False) or self.config.BaseConverter.get("force", False))
        found = find_submissions(self.coursedir, self.coursedir.assignment_id, self.coursedir.student_id,
                                 self.coursedir.notebook_id)
        if not found:
            self.log.error("No submissions match %s", self.coursedir.format_path(
                self.coursedir.submitted_directory, self.coursedir.student_id, self.coursedir.assignment_id))
            sys.exit(1)
        jobs = [j for j in found if _needs_grading(self.coursedir, force, self.coursedir.assignment_id, j[0])]
        if len(jobs) < len(found):
            self.log.info("Skipping %d submission(s) autograded already (use --force to grade them again)",
                          len(found) - len(jobs))
        self.log.info("Grading %d notebook(s) in a sandbox (%s), %d at a time", len(jobs), level, settings.jobs)
        self.config.Autograde.autograde_preprocessors = [
            InjectSandboxResults, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
            AssignLatePenalties, CheckCellMetadata]
        self.config.OverwriteCells.add_missing_cells = True
        pattern = self.coursedir.student_id

        def record(student, results):
            """nbgrader's own Autograde for one student, test cells filled from ``results``."""
            _RESULTS.clear()
            _RESULTS.update(results)
            self.coursedir.student_id = glob.escape(student)
            Autograde(coursedir=self.coursedir, parent=self).start()

        start = time.monotonic()
        results = grade_all(jobs, opts, level, settings.jobs, settings.student_timeout, self.log, record)
        self.log.info("Sandboxed grading and recording took %.1f s", time.monotonic() - start)
        failed = sorted({s for (s, _), parts in results.items()
                         if any("could not grade" in p["message"] for p in parts.values())})
        self.coursedir.student_id = pattern
        if failed:
            # a grader process died (not a submission's fault: those stay in the sandbox); record zeros
            # with the reason through nbgrader, once, here
            for student in failed:
                try:
                    record(student, {k: v for k, v in results.items() if k[0] == student})
                except NbGraderException:
                    pass
            self.log.error("Could not grade: %s", ", ".join(failed))
            sys.exit(1)


def main(argv=None) -> None:
    SandboxAutogradeApp.launch_instance(argv=argv)
