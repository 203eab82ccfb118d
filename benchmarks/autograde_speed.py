"""Autograding time per submission for the encoder exercise, sandboxed grader against plain nbgrader.

Builds a temporary course (a copy of notebooks/07_exercise and nbgrader_config.py), generates the
release, makes N submissions (correct ones and ones with one bug each, from
tests/exercise_corpus), then times

* ``python -m course_grader autograde 07_exercise --jobs J`` (sandboxed, parallel), and
* ``nbgrader autograde 07_exercise`` (plain nbgrader: one kernel per notebook, sequential)

on the same submissions, each in its own copy of the course, and prints seconds per submission.
Wall-clock times include start-up (imports), the sandbox and the gradebook writes. The sandboxed
grader also runs on twice as many submissions: the difference is the cost of each further
submission, the rest the fixed cost of a run (start-up and the end), which a larger class spreads.

    .venv/bin/python benchmarks/autograde_speed.py [--n 20] [--jobs 2] [--no-plain]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import nbformat  # noqa: E402

from tests.exercise_corpus.submissions import MISTAKES, apply, solved  # noqa: E402

ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"
BIN = Path(sys.executable).parent


CPUACCT = next((p for p in ("/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct")
                if os.path.exists(os.path.join(p, "cpuacct.usage"))), None)


def run(args, cwd):
    """Runs ``args``; its wall-clock seconds and stderr, and in ``run.cpu`` the CPU seconds of its whole
    process tree. As root with cgroup v1's cpuacct, from a cgroup of its own: the sandbox's processes
    live in bubblewrap's PID namespace, whose end takes them without the grader reaping them, so the
    reaped children's rusage (the fallback, marked '~') misses most of them."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    group = None
    if CPUACCT and os.geteuid() == 0:
        group = os.path.join(CPUACCT, f"autograde-bench-{os.getpid()}-{time.monotonic_ns()}")
        os.mkdir(group)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()

    def join():                                          # in the child, before it runs args
        if group:
            with open(os.path.join(group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, preexec_fn=join)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run.how = "~"
    if group:
        with open(os.path.join(group, "cpuacct.usage")) as f:
            run.cpu, run.how = int(f.read()) / 1e9, ""
        for _ in range(50):                              # the last processes may still be leaving
            try:
                os.rmdir(group)
                break
            except OSError:
                time.sleep(0.1)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{proc.stderr[-3000:]}")
    return seconds, proc.stderr


def make_course(root: Path, n: int) -> None:
    shutil.copytree(REPO / "notebooks" / ASSIGNMENT, root / "notebooks" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    run([BIN / "nbgrader", "generate_assignment", ASSIGNMENT], root)
    release = nbformat.read(root / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    source = nbformat.read(root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    good = solved(release, source)
    for i in range(n):                                   # every other submission has one bug
        nb = good if i % 2 == 0 else apply(good, MISTAKES[(i // 2) % len(MISTAKES)][1])
        folder = root / "submitted" / f"student{i:03d}" / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{NOTEBOOK}.ipynb")


def sandboxed(base: Path, tmp: Path, n: int, jobs: int) -> float:
    """Seconds for the sandboxed grader on the first ``n`` submissions of ``base`` (its own copy)."""
    course = tmp / f"sandboxed-{n}"
    shutil.copytree(base, course)
    for folder in sorted((course / "submitted").iterdir())[n:]:
        shutil.rmtree(folder)
    seconds, log = run([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--jobs", str(jobs),
                        "--allow-public-seeds"],
                       course)
    phase = [line for line in log.splitlines() if "took" in line and "Sandboxed" in line]
    print(f"sandboxed grader (--jobs {jobs}), {n:3d} submissions: {seconds:5.1f} s = {seconds / n:.2f} s per "
          f"submission (CPU {run.how}{run.cpu / n:.2f} s per submission)"
          + (f"   [{phase[0].split('] ')[-1]}]" if phase else ""))
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20, help="submissions (default 20; the grader also runs on twice as many)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel jobs of the sandboxed grader (default 2)")
    ap.add_argument("--no-plain", action="store_true", help="skip plain nbgrader autograde (slow)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="autograde-bench-") as tmp:
        base = Path(tmp) / "course"
        make_course(base, 2 * args.n)
        t1 = sandboxed(base, Path(tmp), args.n, args.jobs)
        t2 = sandboxed(base, Path(tmp), 2 * args.n, args.jobs)
        each = (t2 - t1) / args.n
        print(f"  each further submission: {each:.2f} s (the difference of the two runs / {args.n}); "
              f"the fixed part of a run (start-up and end): {t1 - args.n * each:.1f} s")
        if not args.no_plain:
            plain = Path(tmp) / "plain"
            shutil.copytree(base, plain)
            for folder in sorted((plain / "submitted").iterdir())[args.n:]:
                shutil.rmtree(folder)
            seconds_plain, _ = run([BIN / "nbgrader", "autograde", ASSIGNMENT], plain)
            print(f"plain nbgrader autograde,      {args.n:3d} submissions: {seconds_plain:5.1f} s = "
                  f"{seconds_plain / args.n:.2f} s per submission "
                  f"(CPU {run.how}{run.cpu / args.n:.2f} s per submission)")
            print(f"speed-up on {args.n} submissions: {seconds_plain / t1:.1f}x")
    print(f"(machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; wall-clock figures are only "
          "comparable on an otherwise idle machine, CPU seconds are less sensitive to other load; '~': CPU of the "
          "reaped processes only, an undercount)")


if __name__ == "__main__":
    main()
