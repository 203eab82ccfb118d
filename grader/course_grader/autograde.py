"""``python -m course_grader autograde ASSIGNMENT``: nbgrader's autograde, sandboxed and parallel.

Two phases:

1. **Grade** (parallel, ``--jobs`` workers, each with a sandbox zygote, :mod:`.pool`): for each
   submission (read without following links), the solution cells are taken out of the notebook and
   each part runs in its own confined process forked by the zygote (:mod:`.sandbox`, :mod:`.zygote`)
   on the grader's cases; the results are judged in the worker, which never runs student code.
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
import logging
import os
import select
import signal
import sys
import time

import nbformat
from nbgrader.apps.autogradeapp import AutogradeApp
from nbgrader.apps.autogradeapp import aliases as _nbgrader_aliases
from nbgrader.apps.autogradeapp import flags as _nbgrader_flags
from nbgrader.apps.baseapp import NbGrader
from nbgrader.converters import Autograde, NbGraderException
from traitlets import Bool, Float, Integer, List, Unicode
from traitlets.config import Configurable

from . import confine, notebook_in, recording, runner, sandbox
from .lms import restore_times, stale_times
from .pool import ClassGrader
from .submissions import (
    assignment_notebooks,
    find_submissions,
    missing_hidden,
    needs_grading,
    plain_id,
    public_seeds,
    quoted,
    seeds_of,
)


class SandboxGrader(Configurable):
    """Limits of the sandboxed grader (``c.SandboxGrader.*`` in nbgrader_config.py)."""

    jobs = Integer(2, help="Submissions graded in parallel (one sandbox zygote each).").tag(config=True)
    part_timeout = Float(20.0, help="Wall-clock seconds for one part (its cell and all its cases).").tag(config=True)
    student_timeout = Float(300.0, help="Wall-clock seconds for one whole submission (a safety net).").tag(config=True)
    memory_mb = Integer(2048, help="Memory of one part, MiB (its address space: a part is one process).").tag(
        config=True)
    cpu_seconds = Integer(40, help="CPU seconds of one part.").tag(config=True)
    max_processes = Integer(1, help="Ignored (kept for old configs): a part is one process (RLIMIT_NPROC=1)."
                            ).tag(config=True)
    tmp_mb = Integer(16, help="Size of a part's private /tmp, MiB.").tag(config=True)
    uid = Integer(65534, help="Unprivileged uid the student's code runs as when the grader is root (-1: nobody, "
                              "65534).").tag(config=True)
    gid = Integer(65534, help="Its gid (-1: 65534).").tag(config=True)
    level = Unicode("auto", help="root, userns, rlimits, or auto (the strongest available); see the README."
                    ).tag(config=True)
    allow_public_seeds = Bool(False, help="Grade even when the hidden tests use the repository's published "
                              "seeds (a throw-away test; a class must run `python -m course_grader new-seeds` "
                              "first).").tag(config=True)
    visible_only = Bool(False, help="Grade on the visible cases alone when parts have no hidden tests (else "
                        "the run stops).").tag(config=True)
    hide = List(Unicode(), help="Ignored (kept for old configs): the sandbox shows a part an allow-list of "
                                "directories, nothing else.").tag(config=True)

    def options(self) -> sandbox.SandboxOptions:
        return sandbox.SandboxOptions(timeout=self.part_timeout, memory_mb=self.memory_mb,
                                      cpu_seconds=self.cpu_seconds,
                                      tmp_mb=self.tmp_mb, uid=self.uid, gid=self.gid, level=self.level)


class SandboxAutogradeApp(AutogradeApp):
    name = "course_lib-autograde"
    description = "Autograde the encoder exercise: nbgrader's autograde with every part run in a sandbox."
    aliases = {**_nbgrader_aliases, "jobs": "SandboxGrader.jobs", "part-timeout": "SandboxGrader.part_timeout",
               "sandbox": "SandboxGrader.level"}
    flags = dict(_nbgrader_flags, **{"visible-only": ({"SandboxGrader": {"visible_only": True}},
                                                      "Grade on the visible cases alone if hidden tests are missing."),
                                     "allow-public-seeds": ({"SandboxGrader": {"allow_public_seeds": True}},
                                                            "Grade on the repository's published hidden seeds.")})

    def _classes_default(self):
        return [*super()._classes_default(), SandboxGrader]

    def _assignment(self) -> None:
        if len(self.extra_args) > 1:
            self.fail("Only one argument (the assignment id) may be specified")
        elif len(self.extra_args) == 1 and self.coursedir.assignment_id != "":
            self.fail("The assignment cannot both be specified in config and as an argument")
        elif len(self.extra_args) == 0 and self.coursedir.assignment_id == "":
            self.fail("An assignment id must be specified, either as an argument or with --assignment")
        elif len(self.extra_args) == 1:
            self.coursedir.assignment_id = self.extra_args[0]

    def start(self) -> None:
        NbGrader.start(self)
        self._assignment()
        settings = SandboxGrader(parent=self)
        try:
            level = sandbox.detect_level(settings.level)
            forced = sandbox.confirm_level(level, forced=True)
        except sandbox.SandboxError as e:
            self.log.error("Not grading: %s", e)
            sys.exit(1)
        if forced:
            self.log.warning("%s", forced)
        try:
            grader = ClassGrader(level, settings.options(), settings.jobs, settings.student_timeout)
        except sandbox.SandboxError as e:                # a level the judge cannot run at (userns, no Landlock)
            self.log.error("Not grading: %s", e)
            sys.exit(1)
        started, me = time.time(), os.getpid()

        def terminate(signum, frame):
            """SIGTERM (or SIGINT, SIGHUP): end the slots and the sandbox now, then exit (a
            slot's fork, which inherits this handler, just ends)."""
            if os.getpid() != me:
                os._exit(128 + signum)
            signal.signal(signum, signal.SIG_IGN)
            self.log.warning("Received %s: ending the grading processes and the sandbox", signal.Signals(signum).name)
            grader.kill()
            give_back(self.coursedir.root, started)
            logging.shutdown()
            os._exit(128 + signum)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, terminate)
        try:
            self._grade(grader, level, settings)
        finally:
            grader.close()
            give_back(self.coursedir.root, started)

    def _jobs(self, notebooks: list) -> list:
        """The submissions to grade: the assignment's notebooks only, of students whose id is a plain name."""
        force = bool(self.config.Autograde.get("force", False) or self.config.BaseConverter.get("force", False))
        found = find_submissions(self.coursedir, self.coursedir.assignment_id, self.coursedir.student_id,
                                 self.coursedir.notebook_id)
        if not found:
            self.log.error("No submissions match %s", self.coursedir.format_path(
                self.coursedir.submitted_directory, self.coursedir.student_id, self.coursedir.assignment_id))
            sys.exit(1)
        for student in sorted({s for s, _, _ in found if not plain_id(s)}):
            self.log.warning("Not graded: the student id %s is not a plain name (letters, digits, '_.@+-'; nbgrader "
                             "would strip it or read it as a pattern): rename the folder", quoted(student))
        extra = sorted({(s, nb) for s, nb, _ in found if plain_id(s) and nb not in notebooks})
        for student, nb in extra:
            self.log.warning("Ignored: %s/%s.ipynb is not a notebook of the assignment %s", student, quoted(nb),
                             notebooks)
        found = [j for j in found if plain_id(j[0]) and j[1] in notebooks]
        jobs = [j for j in found if needs_grading(self.coursedir, force, self.coursedir.assignment_id, j[0])]
        if len(jobs) < len(found):
            self.log.info("Skipping %d submission(s) autograded already (use --force to grade them again)",
                          len(found) - len(jobs))
        return jobs

    def _admit(self, jobs: list) -> None:
        """Each notebook to grade through the one gate in (:func:`.notebook_in.admit_file`), whatever
        route put it in ``submitted/``: made canonical in place, each repair said in the log; one that
        cannot be read is left for the grader's reader, which refuses it for that student alone."""
        root = self.coursedir.root
        for student, notebook, path in jobs:
            try:
                notes = notebook_in.admit_file(path, root)
            except (OSError, ValueError):
                continue
            if notes:
                self.log.warning("Repaired: %s: %s", quoted(f"{student}/{notebook}.ipynb"), "; ".join(notes))

    def _grade(self, grader, level: str, settings) -> None:
        recording.configure_recording(self.config)            # first: the gradebook's engine is then the workers' too
        notebooks = assignment_notebooks(self.coursedir, self.coursedir.assignment_id)
        if not notebooks:
            self.log.error("The assignment %s is in neither the gradebook nor the source folder: run nbgrader "
                           "generate_assignment first", quoted(self.coursedir.assignment_id))
            sys.exit(1)
        restored = restore_times(self.coursedir.root, self.coursedir.assignment_id)
        if restored:
            self.log.info("timestamp.txt written again from lms-times' record (lms-collect --force deletes them): "
                          "%s", ", ".join(restored))
        stale = stale_times(self.coursedir.root, self.coursedir.assignment_id)
        if stale:
            self.log.warning("No LMS time for the notebook now in submitted/ (downloaded again since lms-times): %s; "
                             "run lms-times on a fresh export: until then no score of theirs goes out",
                             ", ".join(stale))
        jobs = self._jobs(notebooks)
        self._admit(jobs)
        seeds = seeds_of(self.coursedir, self.coursedir.assignment_id, notebooks)
        missing = missing_hidden(seeds)
        if missing and not settings.visible_only:
            self.log.error("No hidden tests for %s (neither the gradebook nor the source notebook has their "
                           "'### BEGIN HIDDEN TESTS' block): not grading the class on the cases it already ran. "
                           "Run generate_assignment from the instructor's source, or pass --visible-only",
                           ", ".join(missing))
            sys.exit(1)
        if missing:
            self.log.warning("--visible-only: %s graded on the visible cases alone", ", ".join(missing))
        public = public_seeds(seeds)
        if public and not settings.allow_public_seeds:
            self.log.error("Not grading: the hidden tests of %s use the repository's published seeds, so anyone can "
                           "make those cases and look their answers up. Give the source notebook seeds of your own "
                           "(python -m course_grader new-seeds), run nbgrader generate_assignment again (before you "
                           "release it), or pass --allow-public-seeds for a throw-away test", ", ".join(public))
            sys.exit(1)
        if public:
            self.log.warning("--allow-public-seeds: %s graded on the repository's published seeds", ", ".join(public))
        t0 = time.monotonic()
        root = os.path.join(self.coursedir.root, self.coursedir.submitted_directory)
        judged = grader.prepare(seeds, while_waiting=lambda: _warm_up(jobs, root))
        info = grader.ready()
        self.log.info("Sandbox ready after %.1f s more (its judge made the cases in %.1f s)",
                      time.monotonic() - t0, judged)
        self.log.info("Grading %d notebook(s), %d at a time, in a sandbox: level %s, seccomp %s, "
                      "Landlock ABI %s, parts in a PID namespace of their own: %s", len(jobs), settings.jobs, level,
                      info.get("seccomp"), info.get("landlock") or "none",
                      "yes" if info.get("pidns") else f"no ({info.get('pidns_off') or 'no namespaces'})")
        if level in sandbox.WEAK and info.get("landlock"):
            self.log.info("Sandbox level %r: no namespaces; Landlock (ABI %s) confines each part's files (it reads "
                          "Python's own, writes nothing, sees no /proc): see docs/sandbox.md", level, info["landlock"])
        pattern = self.coursedir.student_id

        def record(student, results):
            """nbgrader's own Autograde for one student, test cells filled from ``results``."""
            recording.RESULTS.clear()
            recording.RESULTS.update(results)
            recording.HAND_GRADED.clear()
            recording.HAND_GRADED.update(recording.hand_graded(self.coursedir, self.coursedir.assignment_id, student))
            self.coursedir.student_id = glob.escape(student)
            Autograde(coursedir=self.coursedir, parent=self).start()

        start = time.monotonic()
        similarity = _similarity_summary(self)
        results, invalid = grader.grade(jobs, root, self.log, record)
        self.log.info("Sandboxed grading and recording took %.1f s (workers: %.1f s grading, %.1f s recording)",
                      time.monotonic() - start, grader.timing.get("grade", 0.0), grader.timing.get("record", 0.0))
        self.coursedir.student_id = pattern
        for (student, notebook), why in sorted(invalid.items()):
            self.log.warning("Not graded, not recorded: %s/%s is not a valid submission: %s", student, notebook, why)
        for (student, notebook), parts in sorted(results.items()):
            named = tampered_parts(parts)
            if named and (student, notebook) not in invalid:
                self.log.warning("GUARD TAMPERED: %s/%s switched the grader's guard off or reached into it (%s); "
                                 "its verdicts stand, but look at the submission: see docs/sandbox.md", student,
                                 notebook, named)
        path = write_verdicts(self.coursedir.root, self.coursedir.assignment_id, results, invalid)
        self.log.info("Verdicts of this run (passed parts, invalid submissions, guard_tampered): %s", path)
        t2 = time.monotonic()
        similarity()
        self.log.info("Similarity report (made while grading) %.1f s later", time.monotonic() - t2)
        failed = sorted({s for (s, _), parts in results.items() if any(v["status"] == "error" for v in parts.values())})
        if failed:
            # the grader failed (never a submission's doing: those are "failed"); record zeros with the reason
            for student in failed:
                if not any(k[0] == student for k in invalid):
                    try:
                        record(student, {k: v for k, v in results.items() if k[0] == student})
                    except NbGraderException:
                        pass
            self.log.error("Could not grade: %s", ", ".join(failed))
            sys.exit(1)


def tampered_parts(parts: dict) -> str:
    """``"part: why; ..."`` for the parts whose guard was switched off or reached into, or ""."""
    return "; ".join(f"{p}: {v['guard_tampered']}" for p, v in sorted(parts.items()) if v.get("guard_tampered"))


VERDICT_FIELDS = ("student", "notebook", "status", "passed", "parts", "failed", "guard_tampered", "why")


def write_verdicts(root: str, assignment: str, results: dict, invalid: dict) -> str:
    """``verdicts_<assignment>.csv`` in the course root, for the class report and the instructor: one
    row a submission graded by this run (rows of students graded earlier are kept), with its status
    (graded, invalid, grader error), its passed parts and ``guard_tampered`` (the parts whose guard was
    switched off or reached into, and how). Student ids are plain names (the grader refuses others)."""
    import csv
    path = os.path.join(root, f"verdicts_{assignment}.csv")
    rows: dict = {}
    if os.path.isfile(path) and not os.path.islink(path):
        with open(path, newline="", encoding="utf-8") as f:
            rows = {(r["student"], r["notebook"]): r for r in csv.DictReader(f) if r.get("student")}
    for (student, notebook), parts in results.items():
        status = ("invalid" if (student, notebook) in invalid else
                  "grader error" if any(v["status"] == "error" for v in parts.values()) else "graded")
        rows[(student, notebook)] = {
            "student": student, "notebook": notebook, "status": status,
            "passed": sum(v["status"] == "passed" for v in parts.values()), "parts": len(parts),
            "failed": " ".join(sorted(p for p, v in parts.items() if v["status"] != "passed")),
            "guard_tampered": tampered_parts(parts),
            "why": invalid.get((student, notebook)) or ""}
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, VERDICT_FIELDS)
        out.writeheader()
        out.writerows(rows[k] for k in sorted(rows))
    os.replace(tmp, path)
    return path


def _warm_up(jobs: list, root: str) -> None:
    """While the judge makes the cases: read and write one submission as a worker will, so that
    nbformat's schema validators are compiled once here, before the workers fork, not once in each."""
    for _, _, path in jobs[:1]:
        nb, problem = runner.read_notebook(path, root)
        if problem is None:
            nbformat.validate(nb, relax_add_props=True)              # as nbconvert checks it
            nbformat.writes(nb)


def give_back(root: str, since: float) -> None:
    """Run as root in a course directory that someone else owns: what this run made or changed there
    (the autograded notebooks, the gradebook, the similarity CSV, nbgrader's log) goes back to that
    owner, so that the instructor goes on without sudo. Links are changed, never followed."""
    if os.geteuid() != 0:
        return
    owner = os.stat(root)
    if owner.st_uid == 0:
        return
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if info.st_uid == 0 and info.st_ctime >= since - 2.0:      # the kernel's clock is coarser
                os.lchown(path, owner.st_uid, owner.st_gid)


SIMILARITY_DEADLINE = 120.0     # seconds the report may take after the grading is done


def _similarity_summary(app, deadline: float = SIMILARITY_DEADLINE) -> callable:
    """EXERCISE's similarity report of the solution cells (a flag to look at, never a penalty), made by
    a fork of this process while the class is graded (it reads the submitted notebooks, not the
    grades); the returned call logs it, once it is done, or ends the fork ``deadline`` seconds after
    it was called, with a warning."""
    try:
        from .similarity import summary
    except ImportError:
        return lambda: None
    r, w = os.pipe()
    grader = os.getpid()
    pid = os.fork()
    if pid == 0:                                             # the report, on the pipe; nothing else
        confine.die_with_parent(grader)
        os.close(r)
        code = 0
        try:
            text = "ok " + summary(app.coursedir, app.coursedir.assignment_id)
        except Exception as e:                               # noqa: BLE001 (a report must not fail the run)
            text, code = f"failed {type(e).__name__}: {e}", 1
        try:
            with os.fdopen(w, "w", encoding="utf-8") as f:
                f.write(text)
        finally:
            os._exit(code)
    os.close(w)

    def log() -> None:
        chunks, end = [], time.monotonic() + deadline
        while True:
            ready = select.select([r], [], [], max(0.0, end - time.monotonic()))[0]
            chunk = os.read(r, 1 << 16) if ready else None
            if not chunk:
                break
            chunks.append(chunk)
        os.close(r)
        if chunk is None:                                    # past the deadline
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            app.log.warning("The similarity report was not done %g s after the grading: stopped, no report", deadline)
            return
        os.waitpid(pid, 0)
        text = b"".join(chunks).decode("utf-8", "replace")
        status, _, text = text.partition(" ")
        if status != "ok":
            app.log.warning("The similarity report failed: %s", text or "its process ended without one")
        elif text:
            app.log.info("%s", text)
    return log


def main(argv=None) -> None:
    SandboxAutogradeApp.launch_instance(argv=argv)
