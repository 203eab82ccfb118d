"""Hand grading without a hub: a sheet per teaching assistant out, their grades back in.

The TA gets a CSV file with the answers to the questions they grade, one row per student and question,
and fills in ``score`` and ``comment`` in any spreadsheet; the instructor reads the file back into the
gradebook. The TA needs no account on the grading machine and never reaches the gradebook, the
submissions' code, the hidden tests' seeds or the other questions::

    python -m course_grader ta-sheet 07_exercise answer_transpose answer_parameters --out ta1.csv
    python -m course_grader ta-grades 07_exercise ta1.csv

The answers are read from ``autograded/`` (what the formgrader shows: the submission after autograding).
A cell a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``, a tab or a carriage return first)
is written with a ``'`` in front. Reading back, a row is refused (and named) when its student, question or
score is not one the gradebook has (a score outside 0 to the question's points), or when the answer is
no longer the one in ``autograded/`` (handed in again since the sheet was made); a row without a score
is left pending. Standard library and nbgrader only.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys

from .submissions import plain_id, quoted

HEAD = ["student", "question", "points", "answer", "score", "comment"]


def _inert(text: str) -> str:
    """A cell no spreadsheet runs as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _answers(root: str, assignment: str, student: str) -> dict[str, str]:
    """``{grade_id: the student's text}`` of the graded markdown cells of their autograded notebooks."""
    folder = os.path.join(root, "autograded", student, assignment)
    out = {}
    if not plain_id(student) or not os.path.isdir(folder) or os.path.islink(folder):
        return out
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not name.endswith(".ipynb") or os.path.islink(path):
            continue
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        for cell in nb.get("cells", []):
            meta = (cell.get("metadata") or {}).get("nbgrader") or {}
            if cell.get("cell_type") == "markdown" and meta.get("grade") and meta.get("grade_id"):
                source = cell.get("source", "")
                out[meta["grade_id"]] = "".join(source) if isinstance(source, list) else str(source)
    return out


def _gradebook(root: str):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{os.path.join(root, 'gradebook.db')}")


def _written(gb, assignment: str, sub) -> dict[str, object]:
    """``{grade_id: Grade}`` of the submission's answers graded by hand (markdown grade cells)."""
    return {g.cell.name: g for nb in sub.notebooks for g in nb.grades if g.cell.cell_type == "markdown"}


def make_sheet(root: str, assignment: str, questions: list[str], out: str) -> int:
    """Write the TA's sheet; returns its number of rows."""
    rows = []
    with _gradebook(root) as gb:
        for sub in sorted(gb.assignment_submissions(assignment), key=lambda s: s.student.id):
            grades = _written(gb, assignment, sub)
            unknown = [q for q in questions if q not in grades]
            if unknown:
                raise ValueError(f"{', '.join(quoted(q) for q in unknown)}: not a written answer of {assignment} "
                                 f"({', '.join(sorted(grades))})")
            answers = _answers(root, assignment, sub.student.id)
            for q in questions:
                grade = grades[q]
                score = "" if grade.manual_score is None else f"{grade.manual_score:g}"
                comment = next((c.manual_comment or "" for c in grade.notebook.comments if c.cell.name == q), "")
                rows.append([sub.student.id, q, f"{grade.max_score:g}", _inert(answers.get(q, "")), score,
                             _inert(comment)])
    with open(out, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([HEAD] + rows)
    return len(rows)


def read_sheet(root: str, assignment: str, path: str) -> dict[str, list[str]]:
    """The TA's scores and comments into the gradebook. Returns ``graded``, ``left pending`` (no score)
    and ``refused`` (with the reason), each a list of ``student/question``."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    if rows and set(HEAD) - set(rows[0]):
        raise ValueError(f"{path}: not a TA sheet (columns {', '.join(HEAD)})")
    done = {"graded": [], "left pending": [], "refused": []}
    with _gradebook(root) as gb:
        subs = {s.student.id: s for s in gb.assignment_submissions(assignment)}
        for row in rows:
            student, q = (row.get("student") or "").strip(), (row.get("question") or "").strip()
            where = f"{student}/{q}"
            grade = _written(gb, assignment, subs[student]).get(q) if student in subs else None
            text = (row.get("score") or "").strip().replace(",", ".")
            if grade is None:
                done["refused"].append(f"{where} (no such student or written answer)")
            elif (row.get("answer") or "") != _inert(_answers(root, assignment, student).get(q, "")):
                done["refused"].append(f"{where} (the answer changed since the sheet was made: make a new one)")
            elif not text:
                done["left pending"].append(where)
            else:
                try:
                    score = float(text)
                except ValueError:
                    score = -1.0
                if not 0 <= score <= grade.max_score:
                    done["refused"].append(f"{where} (score {quoted(text)} is not between 0 and {grade.max_score:g})")
                    continue
                grade.manual_score, grade.needs_manual_grade = score, False
                comment = (row.get("comment") or "").strip()
                for c in grade.notebook.comments:
                    if c.cell.name == q and comment:
                        c.manual_comment = comment.removeprefix("'")
                done["graded"].append(where)
        gb.db.commit()
    return done


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_grader")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("ta-sheet", help="a TA's sheet: the answers to some questions, a score column to fill")
    s.add_argument("assignment")
    s.add_argument("questions", nargs="+", help="the written answers' grade_ids, e.g. answer_transpose")
    s.add_argument("--out", required=True)
    g = sub.add_parser("ta-grades", help="a TA's filled sheet into the gradebook")
    g.add_argument("assignment")
    g.add_argument("sheet")
    args = parser.parse_args(argv)
    root = os.getcwd()
    try:
        if args.command == "ta-sheet":
            n = make_sheet(root, args.assignment, args.questions, args.out)
            print(f"wrote {args.out}: {n} answers to grade (fill in 'score' and 'comment'; change nothing else)")
            return 0
        done = read_sheet(root, args.assignment, args.sheet)
        for outcome, items in done.items():
            if items:
                print(f"{outcome}: {len(items)} ({', '.join(items)})")
        return 1 if done["refused"] else 0
    except (OSError, ValueError, KeyError) as e:
        print(f"{args.command}: {e}", file=sys.stderr)
        return 2
