"""``python -m course_grader autograde ASSIGNMENT [nbgrader autograde options] [--jobs N]``, and
``python -m course_grader new-seeds NOTEBOOK`` and ``python -m course_grader points [NOTEBOOK] [PART=N ...]``."""

import sys

USAGE = """usage: python -m course_grader autograde ASSIGNMENT [--student ID] [--jobs N]
                                       [--part-timeout SECONDS] [--force] [other nbgrader autograde options]

Autograde the encoder exercise like `nbgrader autograde`, but with every part of every submission run
in a sandboxed process (see grader/course_grader/autograde.py). Run it from the course root.

       python -m course_grader new-seeds [NOTEBOOK]

Give the hidden tests of the source notebook (default notebooks/07_exercise/encoder_from_scratch.ipynb)
seeds of your own, before `nbgrader generate_assignment`: the repository's seeds are public. The reverse
task's seed is drawn again until the notebook's model solution and two honest training loops pass its
hidden case (a training run; a few seconds per seed drawn).

       python -m course_grader collect ASSIGNMENT [nbgrader collect options]

`nbgrader collect` from the hub's exchange, checked by the server: a folder in inbound/ that does not
belong to the account it names is refused, and a submission's time is the server's (the latest
status change of its files), written as its timestamp.txt (see grader/course_grader/collect.py).

       python -m course_grader lms-collect ASSIGNMENT [ZIP ...] [--lms moodle|canvas] [--force]

An LMS download (Moodle's or Canvas's zip, default downloaded/ASSIGNMENT/archive/*.zip) unpacked into
submitted/ by the course itself, not by `nbgrader zip_collect`: each student named by the download's
top level, on the roster, no archive inside unpacked, limits on sizes and counts, one notebook a
student (its capitals and copies' numbers aside), a bad upload refused for that student alone and
said (see grader/course_grader/lms_in.py).

       python -m course_grader points [NOTEBOOK] [PART=POINTS ...]

Show the points of each part (the nbgrader metadata of the source notebook, what nbgrader grades with),
or change them: `points multi_head_attention=5 answer_reverser=3` sets the points of a part's test cell
or of a written answer, and the table and headings of the notebook's text; then generate_assignment.

       python -m course_grader lms-times ASSIGNMENT EXPORT... [--timezone ZONE]
       python -m course_grader scores ASSIGNMENT
       python -m course_grader lms-feedback ASSIGNMENT WORKSHEET [--out moodle_feedback.zip]
       python -m course_grader moodle-grades ASSIGNMENT WORKSHEET [--out moodle_grades.csv] [--scale]
       python -m course_grader canvas-grades ASSIGNMENT GRADEBOOK [--column NAME] [--out canvas_grades.csv]

The LMS round trip (grader/course_grader/lms.py): write each submission's timestamp.txt from Moodle's
grading worksheet or Canvas's submissions list, show the score table (after the late penalty) before
export, pack feedback/ for Moodle's feedback-files upload, and write the grades back in Moodle's
grading worksheet or Canvas's gradebook import file.

       python -m course_grader roster-from-canvas GRADEBOOK [--out students.csv]
       python -m course_grader canvas-feedback ASSIGNMENT SUBMISSIONS.json... [--out canvas_feedback.zip]
       python -m course_grader handout ASSIGNMENT [--out ASSIGNMENT.zip]

nbgrader's class list from Canvas's gradebook export (for `nbgrader db student import`, the Test Student
and the Points Possible row left out); Canvas's Re-Upload Submissions zip of the feedback pages; the
released folder (notebook and figures) as one zip for the LMS.

       python -m course_grader ta-sheet ASSIGNMENT QUESTION... --out ta1.csv
       python -m course_grader ta-grades ASSIGNMENT ta1.csv

Hand grading without a hub (grader/course_grader/handgrades.py): a TA's sheet of the answers to some
questions, and their scores and comments read back into the gradebook.

       python -m course_grader report ASSIGNMENT [--out DIR]

After autograde: the class report (an offline HTML page and CSV files, student data) in
reports/ASSIGNMENT/ (git-ignored): per part, the named mistakes, visible/hidden disagreements, hints,
copies, the written answers."""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from .terminal_out import install
    install()                    # every log line and stream of this process: control bytes shown escaped
    import os
    os.umask(0o077)              # everything the grader writes (gradebook, submissions, CSVs, zip): private
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if argv[0] == "new-seeds":
        return _new_seeds(argv[1:])
    if argv[0] == "report":
        _skip_unused_imports()
        from .report import main as report_main
        return report_main(argv[1:])
    if argv[0] == "collect":
        from .collect import main as collect_main
        return collect_main(argv[1:])
    if argv[0] in ("ta-sheet", "ta-grades"):
        from .handgrades import main as hand_main
        return hand_main(argv)
    if argv[0] == "lms-collect":
        from .lms_in import main as lms_collect_main
        return lms_collect_main(argv[1:])
    if argv[0] == "points":
        from .points import main as points_main
        return points_main(argv[1:])
    if argv[0] in ("lms-times", "scores", "lms-feedback", "moodle-grades", "canvas-grades", "canvas-feedback",
                   "handout", "roster-from-canvas"):
        from .lms import main as lms_main
        return lms_main(argv)
    if argv[0] != "autograde":
        print(f"unknown command {argv[0]!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    _skip_unused_imports()
    _prespawn(argv[1:])
    from .autograde import main as autograde_main
    autograde_main(argv[1:])
    return 0


def _new_seeds(argv: list) -> int:
    import json

    from course_lib.grading.seeds import new_seeds
    path = argv[0] if argv else "notebooks/07_exercise/encoder_from_scratch.ipynb"
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)                           # as stored (key order, source lines): a diff of seeds only
    drawn = []

    def check_reverse(seed: int) -> bool:
        drawn.append(seed)
        return not _reverse_seed_fails(path, seed)
    try:
        seeds = new_seeds(nb, checks={"reverse_task": check_reverse})
    except (RuntimeError, ValueError) as e:
        print(f"{path}: {e}; the notebook is left as it was", file=sys.stderr)
        return 1
    if not seeds:
        print(f"{path}: no hidden-test seeds found", file=sys.stderr)
        return 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    print(f"{path}: new hidden seeds for {', '.join(sorted(seeds))}; now run nbgrader generate_assignment")
    if drawn:
        print(f"reverse_task: its seed was checked: the notebook's model solution and two honest training loops "
              f"pass its hidden case ({len(drawn)} seed{'s' if len(drawn) > 1 else ''} drawn, "
              f"{len(drawn) - 1} refused)")
    return 0


def _reverse_seed_fails(path: str, seed: int) -> list:
    """The styles of correct code that fail the reverse task's hidden case drawn from ``seed``
    (course_lib/grading/reverse_seeds.py), asked of a child process: this one never imports torch."""
    import json
    import subprocess
    proc = subprocess.run([sys.executable, "-m", "course_lib.grading.reverse_seeds", path, str(seed)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"the check of the reverse task's seed failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["failed"]


def _skip_unused_imports() -> None:
    """jsonschema imports ``rfc3987_syntax`` when it is installed (jupyter_server's dependencies install
    it), only for its optional "iri" format checker, and that import compiles some forty grammars (about
    1 to 2 s, the largest part of the grader's start-up: benchmarks/grader_start_and_exit.py). Neither
    nbformat nor nbgrader validates with a format checker, so the grader's process goes without it
    (jsonschema treats it as not installed). tests/grading/test_grader_process.py fails when jsonschema
    no longer imports it (the block is then dead) or the block costs more than the "iri" formats."""
    sys.modules.setdefault("rfc3987_syntax", None)


def _option(argv: list, name: str, default: str) -> str:
    for i, arg in enumerate(argv):
        if arg == f"--{name}" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(f"--{name}="):
            return arg.split("=", 1)[1]
    return default


def _prespawn(argv: list) -> None:
    """Start the sandbox now, so that its torch import overlaps nbgrader's start-up (the app adopts it
    if its settings agree, else it starts its own)."""
    from . import confine, sandbox  # not torch: the sandbox imports it while we import nbgrader
    confine.prctl(confine.PR_SET_DUMPABLE, 0)      # same-uid processes cannot read our memory or environment
    try:
        level = sandbox.detect_level(_option(argv, "sandbox", "auto"))
        jobs = max(1, int(_option(argv, "jobs", "2")))
        sandbox.PRESPAWNED[:] = [level, sandbox.Mother(level, jobs)]
    except (ValueError, sandbox.SandboxError):           # the app says why
        return


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        # The interpreter's own end (atexit handlers, flushed output), with what is left frozen first, so
        # that its final collections skip it: 0.05 s instead of 0.45 s at the end of an autograde run
        # (benchmarks/grader_start_and_exit.py; os._exit, which skipped the whole clean-up, took 0.01 s).
        import gc
        gc.freeze()
