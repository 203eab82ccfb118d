"""How long the class report takes for a large class (issue 31: "a report for 400 students takes seconds").

Builds a temporary course (the exercise released by ``nbgrader generate_assignment``) and a graded
class of N students without running the grader: each submission is the source's solution with one of
the corpus's mistakes (tests/exercise_corpus/submissions.py) or one of the honest styles
(tests/exercise_corpus/styles.py), its autograded notebook carries a verdict per test cell as
:mod:`course_grader.recording` records it (a failure with a mistake's id, section and kind of case, so
the named mistakes and the disagreements are counted as in a real class), and the gradebook gets the
scores through nbgrader's API. Each solution cell starts with a comment naming its student, so that no
two students' texts are alike, as in a real class (a comment changes no fingerprint; without it the
class would share 63 texts, which the similarity comparison fingerprints once each).
Then it times ``python -m course_grader report`` (a fresh process: imports included) and, in this
process, the similarity comparison alone, and prints seconds.

    .venv/bin/python benchmarks/class_report.py [--n 400] [--course DIR]

``--course DIR`` keeps the class in DIR and times the report of the class already there on the next
run (building 400 students takes one to two minutes). Figures: docs/development.md, *Benchmarks*.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "grading"))

ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"


def build(root: Path, n: int) -> None:
    import nbformat
    from nbgrader.api import Gradebook

    from attack_kit import released_course
    from course_lib.grading.hints import PART_SECTIONS
    from course_lib.grading.parts import ONE_RUN, PARTS, part_of_test
    from exercise_corpus import honest, styles
    from exercise_corpus.submissions import MISTAKES, apply

    good = released_course(root)
    release = nbformat.read(root / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    honest.BODIES.update(styles.BODIES)
    rng = random.Random(0)
    kinds = [("style", s) for s in styles.BODIES] + [("mistake", m) for m in MISTAKES] + [("good", None)] * 20
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        for i in range(n):
            student = f"student{i:04d}"
            kind, what = rng.choice(kinds)
            lost = set()
            if kind == "style":
                filled = honest.notebook(release, what)
                nb = nbformat.from_dict(json.loads(json.dumps(good)))
                donor = {c["metadata"]["nbgrader"]["grade_id"]: c["source"] for c in filled["cells"]
                         if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
                for cell in nb["cells"]:
                    gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                    if gid in PARTS:
                        cell["source"] = donor.get(gid, cell["source"]) if cell["metadata"]["nbgrader"].get(
                            "solution") else cell["source"]
            elif kind == "mistake":
                _, edits, lost = what
                nb = apply(good, edits)
            else:
                nb = good
            nb = nbformat.from_dict(json.loads(json.dumps(nb)))
            for cell in nb["cells"]:            # no two students' texts alike, as in a real class (the comment
                meta = cell.get("metadata", {}).get("nbgrader", {})     # changes no fingerprint)
                if meta.get("solution") and meta.get("grade_id") in PARTS:
                    cell["source"] = f"# {student}\n" + "".join(cell["source"])
            for folder in ("submitted", "autograded"):
                path = root / folder / student / ASSIGNMENT
                path.mkdir(parents=True)
                if folder == "autograded":
                    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
                    for cell in nb["cells"]:
                        part = part_of_test(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))
                        if part is not None and not cell["metadata"]["nbgrader"].get("solution"):
                            failed = part in lost          # a failure carries its stable id, as the grader's
                            kind = "hidden" if part in ONE_RUN else rng.choice(("visible", "hidden"))
                            cell["metadata"]["course_grader"] = {"verdict": {
                                "status": "failed" if failed else "passed", "message": "...",
                                "seconds": rng.uniform(0.05, 0.5), "mistake": what[0] if failed else "",
                                "section": PART_SECTIONS[part] if failed else "",
                                "failed_on": kind if failed else "",   # a training part runs its hidden case only
                                "visible_passed": failed and kind == "hidden" and part not in ONE_RUN}}
                nbformat.write(nb, path / f"{NOTEBOOK}.ipynb")
            gb.add_student(student)
            sub = gb.add_submission(ASSIGNMENT, student)
            for notebook in sub.notebooks:
                for grade in notebook.grades:
                    part = part_of_test(grade.name)
                    if part is not None:
                        grade.auto_score = 0.0 if part in lost else grade.max_score
            gb.db.commit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--course", default=None, help="build the class here, or reuse the one built here before")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.course) if args.course else Path(tmp) / "course"
        if not (root / "gradebook.db").exists() or not (root / "autograded").exists():
            root.mkdir(parents=True, exist_ok=True)
            start = time.monotonic()
            build(root, args.n)
            print(f"built a graded class of {args.n} in {time.monotonic() - start:.1f} s (not part of the report)")
        args.n = len(list((root / "autograded").iterdir()))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "course_grader", "report", ASSIGNMENT], cwd=root,
                              capture_output=True, text=True)
        seconds = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode:
            sys.exit(proc.stderr[-3000:])
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        print(f"python -m course_grader report for {args.n} students: {seconds:.1f} s wall clock, {cpu:.1f} s CPU "
              "(a fresh process, imports included; on a shared machine the CPU time is the steadier figure)")
        from course_grader import similarity
        similarity.reference_hashes()
        start = time.process_time()
        text = similarity.report(root, ASSIGNMENT, csv_path=Path(tmp) / "similarity.csv")[0]
        flagged = next((line for line in text.splitlines() if "submissions have flagged parts" in line), "")
        print(f"  for comparison, the similarity command alone (it reads the {args.n} submitted notebooks again; "
              f"course_lib's fingerprints made before): {time.process_time() - start:.1f} s CPU. {flagged[:60]}")
        from course_grader.report import read_class
        cells = {s.id: s.cells for s in read_class(root, ASSIGNMENT)[0]}
        skeleton = similarity.skeletons(similarity._read(root / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"))
        model = similarity.solutions(similarity._read(root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"))
        start = time.process_time()
        similarity.compare(cells, skeleton, model)
        shared = time.process_time() - start
        distinct = {s: {p: f"# {s}\n{text}" for p, text in parts.items()} for s, parts in cells.items()}
        start = time.process_time()
        similarity.compare(distinct, skeleton, model)
        print(f"  the comparison of the report's cells: {shared:.1f} s CPU as built (the class shares "
              f"{len({t for parts in cells.values() for t in parts.values()})} texts, each fingerprinted once); "
              f"{time.process_time() - start:.1f} s CPU with every student's texts made distinct by a comment "
              "(as in a real class: no two texts alike, the same fingerprints)")


if __name__ == "__main__":
    main()
