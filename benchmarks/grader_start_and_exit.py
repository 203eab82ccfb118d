"""What the sandboxed grader's two process-level shortcuts buy, each measured in fresh processes.

* Start: ``python -m course_grader autograde`` (and ``report``) import jsonschema, through nbformat,
  and jsonschema imports ``rfc3987_syntax`` when it is installed (jupyter_server's dependencies install
  it) for its optional "iri" format, compiling its grammars. The grader blocks that import
  (``__main__._skip_unused_imports``). Timed: importing the grader's modules, with and without it.
* End: a real ``autograde`` of a small class (a fresh copy of a course with ``--n`` submissions each
  time), then the interpreter's exit timed three ways: ``sys.exit`` as it is, ``gc.freeze()`` then
  ``sys.exit`` (what ``__main__`` does), and ``os._exit`` (what it did: no clean-up at all).

Each figure is the median of ``--runs`` runs, the runs of each way interleaved.

    .venv/bin/python benchmarks/grader_start_and_exit.py [--runs 5] [--n 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from autograde_speed import ASSIGNMENT, BIN, make_course  # noqa: E402

ENV = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "grader"), os.environ.get("PYTHONPATH", "")]))

IMPORTS = """
import sys, time
if {blocked}:
    from course_grader.__main__ import _skip_unused_imports
    _skip_unused_imports()
start = time.perf_counter()
import course_grader.autograde, course_grader.report
print(time.perf_counter() - start, sys.modules.get("rfc3987_syntax") is not None)
"""

# the child grades the class as `python -m course_grader autograde` does, then notes the time and exits
AUTOGRADE = """
import gc, os, sys, time
from course_grader.__main__ import main
try:
    status = main({argv!r})
except SystemExit as e:
    status = e.code
with open({mark!r}, "w") as f:
    f.write(repr(time.monotonic()))
if {way!r} == "os._exit":
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
if {way!r} == "gc.freeze":
    gc.freeze()
sys.exit(status)
"""


def start(runs: int) -> None:
    seconds = {True: [], False: []}
    imported = {}
    for _ in range(runs):
        for blocked in (True, False):
            out = subprocess.run([sys.executable, "-c", IMPORTS.format(blocked=blocked)], env=ENV, check=True,
                                 capture_output=True, text=True).stdout.split()
            seconds[blocked].append(float(out[0]))
            imported[blocked] = out[1] == "True"
    for blocked in (False, True):
        print(f"importing the grader's modules, rfc3987_syntax {'blocked' if blocked else 'importable'}: "
              f"{statistics.median(seconds[blocked]):.2f} s (median of {runs}; rfc3987_syntax imported: "
              f"{imported[blocked]})")
    print(f"  the block buys {statistics.median(seconds[False]) - statistics.median(seconds[True]):.2f} s per start")


def end(runs: int, n: int) -> None:
    ways = ("sys.exit", "gc.freeze", "os._exit")
    seconds = {w: [] for w in ways}
    with tempfile.TemporaryDirectory(prefix="grader-exit-bench-") as tmp:
        base = Path(tmp) / "base"
        make_course(base, n)
        for i in range(runs):
            for way in ways:
                course, mark = Path(tmp) / f"course-{i}-{way}", Path(tmp) / "mark"
                shutil.copytree(base, course)
                code = AUTOGRADE.format(argv=["autograde", ASSIGNMENT, "--allow-public-seeds"], mark=str(mark), way=way)
                proc = subprocess.run([sys.executable, "-c", code], cwd=course, env=ENV, capture_output=True, text=True)
                ended = time.monotonic()
                if proc.returncode != 0:
                    sys.exit(f"autograde ({way}) failed:\n{proc.stderr[-3000:]}")
                seconds[way].append(ended - float(mark.read_text()))
                shutil.rmtree(course)
    for way in ways:
        median = statistics.median(seconds[way]) * 1e3
        print(f"the end of an autograde run ({n} submissions), {way:9s}: {median:4.0f} ms "
              f"(median of {runs}: {', '.join(f'{s * 1e3:.0f}' for s in seconds[way])})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of each way (default 5)")
    ap.add_argument("--n", type=int, default=2, help="submissions in the autograded class (default 2)")
    args = ap.parse_args()
    start(args.runs)
    end(args.runs, args.n)
    print(f"(machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; wall-clock figures are only "
          "comparable on an otherwise idle machine)")


if __name__ == "__main__":
    main()
