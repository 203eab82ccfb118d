"""Each step of a Canvas class of 120 without a hub, timed as the instructor runs it (issue 49).

Builds a course in a temporary folder (a copy of notebooks/07_exercise and nbgrader_config.py, the
release generated, the due date set), the class of tests/grading/test_lms.py's replay (``canvas_class``:
120 students, extensions, late, excused, a late-policy status, the last never handed in) with real
notebooks (every other one with one bug of the corpus), Canvas's download (named as Canvas names its
files; three students with a second copy), the submissions list in two pages and the gradebook export.
Then runs each documented command as a fresh process, in order, and prints its wall-clock and CPU
seconds (its whole process tree, as reaped):

roster (roster-from-canvas + nbgrader db student import), collect (lms-collect), times (lms-times),
autograde (the sandboxed grader, --jobs 2), TA sheets (ta-sheet, two TAs), hand-grade import
(ta-grades, two sheets filled in), feedback (nbgrader generate_feedback), grades (canvas-grades),
canvas-feedback (the Re-Upload Submissions zip).

    .venv/bin/python benchmarks/canvas_replay.py [--jobs 2] [--keep DIR]

Figures only, no pass/fail; the load average is printed before and after (compare runs made on the
same machine in one session only).
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "grading")]

import nbformat  # noqa: E402

from test_lms import _pages, canvas_class  # noqa: E402
from tests.exercise_corpus.submissions import MISTAKES, apply, solved  # noqa: E402

ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"
BIN = Path(sys.executable).parent
TA1 = ["answer_scores_shape", "answer_finite_min", "answer_transpose"]
TA2 = ["answer_parameters", "answer_reverser"]


def run(args: list, cwd: Path, ok=(0,)) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the reaped process tree, stdout) of one command."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok:
        sys.exit(f"{' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n"
                 f"{proc.stderr[-3000:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def make_class(root: Path) -> tuple[list[Path], Path, Path]:
    """The course, Canvas's download, its submissions pages and its gradebook export."""
    shutil.copytree(REPO / "notebooks" / ASSIGNMENT, root / "notebooks" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    run([BIN / "nbgrader", "generate_assignment", ASSIGNMENT], root)
    run([BIN / "nbgrader", "db", "assignment", "add", ASSIGNMENT, "--duedate=2026-12-04 23:59:00 UTC"], root)
    release = nbformat.read(root / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    source = nbformat.read(root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    good = solved(release, source)
    rounds, _, _ = canvas_class(120)
    rows = rounds[1]
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for i, row in enumerate(rows):
            if not row["attachments"]:
                continue                                           # never handed in
            nb = good if i % 2 == 0 else apply(good, MISTAKES[(i // 2) % len(MISTAKES)][1])
            slug = row["user"]["sortable_name"].replace(", ", "").lower()
            late = "_LATE" if row["late"] else ""
            text = nbformat.writes(nb)
            z.writestr(f"{slug}{late}_{row['user_id']}_{row['attachments'][0]['id']}_{NOTEBOOK}.ipynb", text)
            if i % 40 == 7:                                         # an older copy beside it: the newest is taken
                z.writestr(f"{slug}{late}_{row['user_id']}_{row['attachments'][0]['id'] - 500}_{NOTEBOOK} (1).ipynb",
                           text)
    pages = _pages(root / "lms", rows)
    export = root / "lms" / "canvas_gradebook.csv"
    with open(export, "w", newline="", encoding="utf-8-sig") as f:
        w = csv.writer(f)
        w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section", "Exercise 07 (4321)",
                    "Current Score"])
        w.writerow(["    Points Possible", "", "", "", "", "", "30.00", "(read only)"])
        for row in rows:
            w.writerow([row["user"]["sortable_name"], row["user_id"], f"s{row['user_id']}",
                        f"u{row['user_id']}@example.org", "", "T 2026", "EX" if row["excused"] else "", ""])
        w.writerow(["Student, Test", "9999", "", "4f1c2e9ab07d", "", "T 2026", "", ""])
    return pages, export, archive


def fill(sheet: Path, seed: int) -> None:
    """A TA's work: every row given a score within the question's points."""
    with open(sheet, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for k, row in enumerate(rows):
        row["score"] = str((k + seed) % (int(float(row["points"])) + 1))
        row["comment"] = "See the rubric's second line." if k % 3 == 0 else ""
    with open(sheet, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="the grader's parallel jobs (default 2)")
    ap.add_argument("--keep", help="build the course in this (new) folder and keep it")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start, "
          f"niceness {os.nice(0)}")
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="canvas-replay-")
    root = Path(args.keep or tmp.name) / "course"
    t0 = time.perf_counter()
    pages, export, _ = make_class(root)
    print(f"the class built (release, 119 notebooks, the download, 2 pages, the export): "
          f"{time.perf_counter() - t0:.1f} s")
    py = [sys.executable, "-m", "course_grader"]
    steps = [
        ("roster", [[*py, "roster-from-canvas", export, "--out", "students.csv"],
                    [BIN / "nbgrader", "db", "student", "import", "students.csv"]]),
        ("collect", [[*py, "lms-collect", ASSIGNMENT, "--lms", "canvas"]]),
        ("times", [[*py, "lms-times", ASSIGNMENT, *pages]]),
        ("autograde", [[*py, "autograde", ASSIGNMENT, "--jobs", str(args.jobs), "--allow-public-seeds"]]),
        ("TA sheets", [[*py, "ta-sheet", ASSIGNMENT, *TA1, "--out", "ta1.csv"],
                       [*py, "ta-sheet", ASSIGNMENT, *TA2, "--out", "ta2.csv"]]),
        ("hand-grade import", [[*py, "ta-grades", ASSIGNMENT, "ta1.csv"], [*py, "ta-grades", ASSIGNMENT, "ta2.csv"]]),
        ("feedback", [[BIN / "nbgrader", "generate_feedback", ASSIGNMENT]]),
        ("grades", [[*py, "canvas-grades", ASSIGNMENT, export, "--column", "Exercise 07 (4321)",
                     "--out", "canvas_grades.csv"]]),
        ("canvas-feedback", [[*py, "canvas-feedback", ASSIGNMENT, *pages, "--out", "canvas_feedback.zip"]]),
    ]
    total_wall = total_cpu = 0.0
    print(f"{'step':<18} {'wall s':>8} {'CPU s':>8}  what it said")
    for name, commands in steps:
        if name == "hand-grade import":
            fill(root / "ta1.csv", 1)
            fill(root / "ta2.csv", 2)
        wall = cpu = 0.0
        said = []
        for command in commands:
            w, c, out = run(command, root)
            wall, cpu = wall + w, cpu + c
            said += [line for line in out.splitlines() if line.strip()][-2:]
        total_wall, total_cpu = total_wall + wall, total_cpu + cpu
        print(f"{name:<18} {wall:8.1f} {cpu:8.1f}  {' | '.join(s[:70] for s in said[-2:])}")
    print(f"{'all steps':<18} {total_wall:8.1f} {total_cpu:8.1f}")
    print("(CPU: the reaped processes only; the sandbox's, in bubblewrap's PID namespace, are undercounted: "
          "benchmarks/autograde_speed.py counts them from a cgroup)")
    feedback = list((root / "feedback").glob(f"*/{ASSIGNMENT}/*.html"))
    with zipfile.ZipFile(root / "canvas_feedback.zip") as z:
        packed = len(z.namelist())
    load = os.getloadavg()
    print(f"{len(feedback)} feedback pages, {packed} files in canvas_feedback.zip; load average {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f} at the end")
    print(f"{len(list((root / 'autograded').iterdir()))} students autograded")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
