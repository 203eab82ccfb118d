"""``python -m course_grader report ASSIGNMENT [--out DIR]``: the class report, after ``autograde``.

What the class got wrong, part by part, for the next session: one offline HTML page (inline CSS and
SVG, no script, nothing fetched) and CSV files for a spreadsheet, written to ``reports/<assignment>/``
of the course directory (git-ignored; never under ``release/``, ``source/`` or the site). It holds
student data and says so at its top.

* **parts.csv**: per part, how many passed, failed, did not try (the solution cell left as released),
  the score distribution and the grading time (median and slowest);
* **mistakes.csv**: the named mistakes, most common first: how many students, the parts they lost
  (points), the lecture section that teaches it, the students;
* **disagreements.csv**: parts where the visible cases passed and a hidden one failed;
* **hints.csv**: how far each student climbed the hint ladder, per part;
* **copies.csv**: the similarity report's flags, pairs of students and students against course_lib, each
  with the part whose flag joined it (``flagged_as``, empty when the part is flagged on its own);
* **written.csv**: Part 9's written answers, graded or pending, and their scores;
* **scores.csv**: one row per student, a column per part;
* **uploads.csv**: every upload refused, skipped, chosen among several or repaired before grading, per
  student, with the reason (``lms-collect``'s log and autograde's invalid notebooks: :mod:`.uploads`),
  and whether the student has a graded submission.

Where the data come from: nbgrader's gradebook (scores, manual grades), the autograded notebooks (each
test cell's verdict, recorded by :mod:`.recording` in the cell's metadata ``course_grader.verdict``;
the solution cells), the hint records beside the submitted notebooks, and :mod:`.similarity`. Every
verdict is read through :func:`verdict_of`; a field an older grader did not record (a mistake's id, its
section, which kind of case failed) is shown as "not recorded", never guessed from a message.
"""

from __future__ import annotations

import argparse
import csv
import html
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.grading.hints import PART_SECTIONS
from course_lib.grading.parts import NUMBERS, PARTS, part_of_test

from . import files_in, json_in, uploads
from .html_out import clean_page

NOT_RECORDED = "not recorded"
#: Okabe and Ito's colour-blind-safe palette (https://jfly.uni-koeln.de/color/)
COLOURS = {"passed": "#0072B2", "failed": "#D55E00", "not tried": "#999999", "bar": "#009E73",
           "pending": "#E69F00"}
MAX_RUNG = 3                       # the hint ladder: symptom, lecture section, formula (issue 29)


# ------------------------------------------------------------------ the one adapter of recorded verdicts

@dataclass
class Verdict:
    """One part's verdict for one student, as recorded; None where the grader did not record a field."""
    status: str | None = None          # "passed" | "failed" | "error" | None (no verdict recorded)
    message: str | None = None
    seconds: float | None = None
    mistake: str | None = None         # a stable id ("heads_split_wrong"), never parsed from the message
    section: str | None = None         # the lecture section that teaches it ("02 §5")
    failed_on: str | None = None       # "visible" | "hidden": the kind of the first case that failed
    visible_passed: bool | None = None  # the grader ran visible cases and all passed; None: not recorded


def verdict_of(cell_metadata) -> Verdict:
    """The verdict :mod:`.recording` stored in a test cell's metadata (``course_grader.verdict``), any
    version of it: unknown fields are ignored, missing ones stay None ("not recorded")."""
    record = (cell_metadata or {}).get("course_grader", {})
    record = record.get("verdict") if isinstance(record, dict) else None
    if not isinstance(record, dict):
        return Verdict()

    def text(*keys):
        for key in keys:
            value = record.get(key)
            if isinstance(value, str) and value:
                return value
        return None
    seconds = record.get("seconds")
    failed_on = text("failed_on", "case_kind")
    if failed_on is None and isinstance(record.get("hidden"), bool):
        failed_on = "hidden" if record["hidden"] else "visible"
    status = text("status")
    visible_passed = record.get("visible_passed")
    return Verdict(status=status if status in ("passed", "failed", "error") else None, message=text("message"),
                   seconds=float(seconds) if isinstance(seconds, (int, float)) and seconds >= 0 else None,
                   mistake=text("id", "mistake", "mistake_id"), section=text("section", "lecture_section"),
                   failed_on=failed_on if failed_on in ("visible", "hidden") else None,
                   visible_passed=visible_passed if isinstance(visible_passed, bool) else None)


def hints_of(path: Path) -> dict[str, int]:
    """{part: highest rung climbed} from a student's hint record (a JSON file beside the notebook), any of
    ``{"parts": {part: rung}}``, ``{part: rung}`` or ``{part: {"rung": n}}``; rungs are clamped to
    0..MAX_RUNG and anything else is ignored (a tampered record costs only itself): read without
    following a link, a regular file of at most 1 MiB, parsed with limits (:mod:`.json_in`)."""
    try:
        data = json_in.loads(files_in.read_file(str(path), str(Path(path).parent), 1 << 20), 1 << 20)
    except (OSError, ValueError):                    # files_in.Refused and json_in.TooLarge included
        return {}
    if isinstance(data, dict) and isinstance(data.get("parts"), dict):
        data = data["parts"]
    out = {}
    for part, value in (data.items() if isinstance(data, dict) else ()):
        if isinstance(value, dict):
            value = value.get("rung", value.get("level"))
        if part in PARTS and isinstance(value, int) and not isinstance(value, bool):
            out[part] = max(0, min(MAX_RUNG, value))
    return out


# ------------------------------------------------------------------ reading a graded class

@dataclass
class Student:
    id: str
    scores: dict = field(default_factory=dict)         # part -> (score, max)
    verdicts: dict = field(default_factory=dict)       # part -> Verdict
    not_tried: set = field(default_factory=set)
    written: dict = field(default_factory=dict)        # answer id -> (score or None when pending, max)
    hints: dict | None = None                          # part -> rung, None: no record
    cells: dict = field(default_factory=dict, repr=False)   # part -> solution source, for the similarity report


def _same_code(a: str, b: str) -> bool:
    """The cell as released, but for blank space (cheap: a class has thousands of cells)."""
    return "".join(a.split()) == "".join(b.split())


def read_class(root: Path, assignment: str) -> tuple[list[Student], dict]:
    """The graded class of ``assignment`` in the course directory ``root``, and facts about the run."""
    from nbgrader.api import Gradebook

    from .runner import read_notebook, solution_sources
    from .similarity import answer_sources

    root = Path(root)
    released = {}
    for path in sorted((root / "release" / assignment).glob("*.ipynb")):
        nb, _ = read_notebook(str(path), str(root / "release"))
        if nb is not None:
            released[path.stem] = solution_sources(nb)
    students: dict[str, Student] = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for student, name, score, manual, needs_manual, most in _grades(gb, assignment):
            st = students.setdefault(student, Student(student))
            part = part_of_test(name)
            if part is not None:
                st.scores[part] = (float(score or 0.0), float(most or 0.0))
            else:                                   # a written answer: pending until graded by hand
                st.written[name] = (None if needs_manual and manual is None else float(score or 0.0),
                                    float(most or 0.0))
    for st in students.values():
        folder = root / "autograded" / st.id / assignment
        for path in sorted(folder.glob("*.ipynb")):
            nb, _ = read_notebook(str(path), str(root / "autograded"))
            if nb is None:
                continue
            for cell in nb.cells:
                meta = cell.get("metadata", {}).get("nbgrader", {})
                is_test = meta.get("grade") and not meta.get("solution")
                part = part_of_test(meta.get("grade_id", "")) if is_test else None
                if part is not None:
                    st.verdicts[part] = verdict_of(cell.get("metadata"))
            skeleton = released.get(path.stem, {})
            cells = solution_sources(nb)
            st.cells.update(cells)
            st.cells.update(answer_sources(nb))                 # Part 9's written answers, for the similarity report
            for part in PARTS:
                if part in skeleton and (part not in cells or _same_code(cells[part], skeleton[part])):
                    st.not_tried.add(part)
        records = sorted((root / "submitted" / st.id / assignment).glob("*hint*.json"))
        if records:
            st.hints = {}
            for record in records:
                for part, rung in hints_of(record).items():
                    st.hints[part] = max(rung, st.hints.get(part, 0))
    return sorted(students.values(), key=lambda s: s.id), {"notebooks": sorted(released)}


def _grades(gb, assignment: str) -> list[tuple]:
    """(student, cell, score, manual score, needs manual grade, max score) of every grade of the
    assignment, in one query (nbgrader's objects would load each submission's grades one by one)."""
    from nbgrader.api import (
        Assignment,
        Grade,
        GradeCell,
        SubmittedAssignment,
        SubmittedNotebook,
    )
    return (gb.db.query(SubmittedAssignment.student_id, GradeCell.name, Grade.score, Grade.manual_score,
                        Grade.needs_manual_grade, GradeCell.max_score)
            .select_from(Grade)
            .join(GradeCell, GradeCell.id == Grade.cell_id)
            .join(SubmittedNotebook, SubmittedNotebook.id == Grade.notebook_id)
            .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id)
            .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
            .filter(Assignment.name == assignment)
            .all())


# ------------------------------------------------------------------ the tables

def part_table(students: list[Student]) -> list[dict]:
    rows = []
    for part in PARTS:
        got = [s for s in students if part in s.scores]
        if not got:
            continue
        tried = [s for s in got if part not in s.not_tried]
        passed = [s for s in tried if s.scores[part][0] >= s.scores[part][1] > 0]
        seconds = [s.verdicts[part].seconds for s in got if part in s.verdicts and s.verdicts[part].seconds is not None]
        rows.append({
            "part": part, "number": NUMBERS.get(part, ""), "points": got[0].scores[part][1],
            "students": len(got), "passed": len(passed), "failed": len(tried) - len(passed),
            "not_tried": len(got) - len(tried),
            "distribution": sorted(Counter(s.scores[part][0] for s in got).items()),
            "mean": statistics.fmean(s.scores[part][0] for s in got),
            "median_seconds": statistics.median(seconds) if seconds else None,
            "max_seconds": max(seconds) if seconds else None,
        })
    return rows


def mistake_table(students: list[Student]) -> list[dict]:
    """The named mistakes, most students first; failures whose verdict has no id are one row per part,
    "not recorded"."""
    groups: dict = defaultdict(lambda: {"students": [], "parts": Counter(), "lost": 0.0, "sections": set()})
    for s in students:
        for part, v in s.verdicts.items():
            if v.status != "failed" or part in s.not_tried:
                continue
            key = (v.mistake, None) if v.mistake else (None, part)
            g = groups[key]
            g["students"].append(s.id)
            g["parts"][part] += 1
            score, most = s.scores.get(part, (0.0, 0.0))
            g["lost"] += most - score
            if v.section:
                g["sections"].add(v.section)
            elif v.mistake and part in PART_SECTIONS:    # a generic failure ("raised"): the part's own section,
                g["sections"].add(PART_SECTIONS[part])   # as the student's hint ladder gives it at rung 2
    rows = []
    for (mistake, _), g in groups.items():
        rows.append({"mistake": mistake or NOT_RECORDED, "named": mistake is not None,
                     "count": len(set(g["students"])), "parts": dict(sorted(g["parts"].items())),
                     "points_lost": g["lost"],
                     "section": ", ".join(sorted(g["sections"])) or NOT_RECORDED,
                     "students": sorted(set(g["students"]))})
    return sorted(rows, key=lambda r: (not r["named"], -r["count"], r["mistake"], list(r["parts"])))


def disagreement_table(students: list[Student]) -> list[dict]:
    """Per part: the students whose visible cases passed and a hidden one failed, as the grader's verdict
    records it (``visible_passed``: a hidden case failed after every visible case the grader ran had
    passed; a training part, graded on its hidden case alone, never says so), how many failed on a
    hidden case with no visible case run by the grader, and how many failed verdicts do not record it."""
    rows = []
    for part in PARTS:
        failed = [(s, s.verdicts[part]) for s in students if part in s.verdicts and s.verdicts[part].status == "failed"
                  and part not in s.not_tried]
        if not failed:
            continue
        hidden = sorted(s.id for s, v in failed if v.failed_on == "hidden" and v.visible_passed is True)
        rows.append({"part": part, "failed": len(failed), "hidden_only": len(hidden), "students": hidden,
                     "no_visible_run": sum(v.failed_on == "hidden" and v.visible_passed is False for _, v in failed),
                     "not_recorded": sum(v.failed_on is None or (v.failed_on == "hidden" and v.visible_passed is None)
                                         for _, v in failed)})
    return rows


def hint_table(students: list[Student]) -> list[dict]:
    recorded = [s for s in students if s.hints is not None]
    rows = []
    for part in PARTS:
        rungs = Counter(s.hints.get(part, 0) for s in recorded)
        rows.append({"part": part, "records": len(recorded), "rungs": [rungs.get(r, 0) for r in range(MAX_RUNG + 1)],
                     "not_recorded": len(students) - len(recorded)})
    return rows


def written_table(students: list[Student]) -> list[dict]:
    rows = []
    for answer in sorted({a for s in students for a in s.written}):
        got = [s.written[answer] for s in students if answer in s.written]
        graded = [score for score, _ in got if score is not None]
        rows.append({"answer": answer, "points": got[0][1], "graded": len(graded), "pending": len(got) - len(graded),
                     "distribution": sorted(Counter(graded).items())})
    return rows


def copy_tables(root: Path, assignment: str, students: list[Student]) -> tuple[list[dict], list[dict], list[dict], str]:
    """(pairs of students, students against a public solution, groups that share one cell, a note) from
    :mod:`.similarity`: every solution cell and written answer against course_lib, the model solution
    and the model answers (the source notebook's cells, under ``notebooks/`` or ``source/``), and
    against the class; only the released notebook's text is subtracted, so a cell many students share
    stays flagged, with how many share it. A row's ``as_part`` is the part whose own flag joined this one
    (``Match.corroborated``: the same student flagged against the same source there; "" when the part is
    flagged on its own share), what the similarity command prints as "as <part>"."""
    from . import similarity
    try:                             # the autograded notebooks' solution cells: the submitted ones, read once
        release = next(iter(sorted((root / "release" / assignment).glob("*.ipynb"))), None)
        skeleton = similarity.skeletons(similarity._read(release)) if release else {}
        sources = [root / folder / assignment / release.name for folder in ("notebooks", "source")] if release else []
        source = next((p for p in sources if p.is_file()), None)
        model = similarity.solutions(similarity._read(source)) if source else None
        cells = {s.id: s.cells for s in students if s.cells}
        matches = similarity.compare(cells, skeleton, model)
        skipped = {s.id: "no autograded notebook" for s in students if not s.cells}
    except Exception as e:                                        # noqa: BLE001 (a report without copies, said so)
        return [], [], [], f" The similarity report failed: {type(e).__name__}: {e}."
    pairs, library, groups = {}, [], defaultdict(set)
    for m in matches:
        if not m.flagged:
            continue
        if m.other in similarity.PUBLIC:
            library.append({"student": m.student, "part": m.part, "other": m.other, "score": m.score,
                            "shared": m.shared, "as_part": m.corroborated})
            groups[(m.part, m.other)].add(m.student)
        else:
            key = (*sorted((m.student, m.other)), m.part)
            prev = pairs.get(key)                  # each of the two students' side: on its own if either is
            as_part = m.corroborated if prev is None else min(prev[2], m.corroborated)
            pairs[key] = (max(prev[0] if prev else 0.0, m.score), m.shared, as_part)
    pair_rows = [{"student": a, "other": b, "part": p, "score": sc, "shared": n, "as_part": as_part}
                 for (a, b, p), (sc, n, as_part) in sorted(pairs.items())]
    clusters: dict = defaultdict(lambda: defaultdict(set))        # part -> union-find root -> students
    parent: dict = {}

    def root_of(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x
    for a, b, p in pairs:
        parent[root_of((p, a))] = root_of((p, b))
    for (p, s) in list(parent):
        clusters[p][root_of((p, s))].add(s)
    size = len(cells)
    group_rows = [{"part": p, "label": f"{other} ({len(who)} of {size} students)", "students": sorted(who)}
                  for (p, other), who in sorted(groups.items())]
    group_rows += [{"part": p, "label": f"one cell ({len(who)} of {size} students)", "students": sorted(who)}
                   for p in sorted(clusters) for who in sorted(clusters[p].values(), key=sorted)]
    note = "".join(f" Not compared: {s} ({why})." for s, why in sorted(skipped.items()))
    if release and source is None:
        note += (f" Not compared with the model solution: no source notebook {release.name} under notebooks/ or "
                 f"source/{assignment}/.")
    return (pair_rows, sorted(library, key=lambda r: (r["student"], r["part"], r["other"])),
            sorted(group_rows, key=lambda r: (r["part"], -len(r["students"]), r["label"])), note)


# ------------------------------------------------------------------ writing

def safe_cell(value) -> str:
    """A CSV cell a spreadsheet shows as text: a cell starting with = + - @ (or a tab or carriage return)
    would be read as a formula (OWASP's CSV injection), so it gets a leading apostrophe."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _write_csv(path: Path, header: list, rows: list) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(header)
        for row in rows:
            out.writerow([safe_cell(x) for x in row])


def _number(x) -> str:
    return "" if x is None else f"{x:g}" if isinstance(x, float) else str(x)


def _distribution(pairs) -> str:
    return "; ".join(f"{_number(score)}: {n}" for score, n in pairs)


def upload_table(root: Path, assignment: str, students: list[Student]) -> list[dict]:
    """One row per note on a student's upload (:func:`.uploads.problems`), students in order: the kind
    ("invalid notebook", "not the notebook", "skipped", "chosen", "repaired"), the note, and whether the
    student has a graded submission (in the gradebook)."""
    graded = {s.id for s in students}
    return [{"student": student, "kind": kind, "note": text, "graded": student in graded}
            for student, notes in sorted(uploads.problems(str(root), assignment).items()) for kind, text in notes]


def write_csvs(out: Path, data: dict) -> list[Path]:
    files = []

    def write(name, header, rows):
        files.append(out / name)
        _write_csv(out / name, header, rows)
    write("parts.csv", ["part", "number", "points", "students", "passed", "failed", "not_tried", "mean_score",
                        "score_distribution", "median_seconds", "max_seconds"],
          [[r["part"], r["number"], _number(r["points"]), r["students"], r["passed"], r["failed"], r["not_tried"],
            f"{r['mean']:.2f}", _distribution(r["distribution"]), _number(r["median_seconds"]) or NOT_RECORDED,
            _number(r["max_seconds"]) or NOT_RECORDED] for r in data["parts"]])
    write("mistakes.csv", ["rank", "mistake", "students", "parts", "points_lost", "section", "student_ids"],
          [[i + 1, r["mistake"], r["count"], "; ".join(f"{p} ({n})" for p, n in r["parts"].items()),
            _number(r["points_lost"]), r["section"], " ".join(r["students"])] for i, r in enumerate(data["mistakes"])])
    write("disagreements.csv", ["part", "failed", "visible_passed_hidden_failed", "hidden_failed_no_visible_run",
                                "not_recorded", "student_ids"],
          [[r["part"], r["failed"], r["hidden_only"], r["no_visible_run"], r["not_recorded"], " ".join(r["students"])]
           for r in data["disagreements"]])
    write("hints.csv", ["part", "records", *[f"rung_{i}" for i in range(MAX_RUNG + 1)], "not_recorded"],
          [[r["part"], r["records"], *r["rungs"], r["not_recorded"]] for r in data["hints"]])
    write("copies.csv", ["student", "compared_with", "part", "score", "students_sharing", "flagged_as"],
          [[r["student"], r["other"], r["part"], f"{r['score']:.2f}", r["shared"], r["as_part"]]
           for r in [*data["pairs"], *data["library"]]])
    write("written.csv", ["answer", "points", "graded", "pending", "score_distribution"],
          [[r["answer"], _number(r["points"]), r["graded"], r["pending"], _distribution(r["distribution"])]
           for r in data["written"]])
    write("scores.csv", ["student", *[p for p in PARTS], *data["answers"]],
          [[s.id, *[_number(s.scores.get(p, (None,))[0]) if p not in s.not_tried else "not tried" for p in PARTS],
            *[_number(s.written.get(a, (None,))[0]) if s.written.get(a, (None,))[0] is not None else "pending"
              for a in data["answers"]]] for s in data["students"]])
    write("uploads.csv", ["student", "kind", "graded", "note"],
          [[r["student"], r["kind"], "yes" if r["graded"] else "no", r["note"]] for r in data.get("uploads", [])])
    return files


# ------------------------------------------------------------------ figures (inline SVG, numbers in text)

def _esc(x) -> str:
    return html.escape(str(x), quote=True)


def stacked_bars(rows: list[dict]) -> str:
    """Passed / failed / not tried per part: one horizontal bar each, counts written on the bars (white on
    the blue, 5.2:1; black on the vermilion, 5.4:1, and on the grey: white there would be 3.9:1 and 2.8:1)."""
    width, left, height = 640, 170, 24
    total = max((r["students"] for r in rows), default=1) or 1
    kinds = [("passed", "passed"), ("failed", "failed"), ("not_tried", "not tried")]
    summary = "; ".join(f"{r['part']}: {r['passed']} passed, {r['failed']} failed, {r['not_tried']} not tried"
                        for r in rows)
    svg = [(f'<svg role="img" width="{width}" '
           f'height="{height * len(rows) + 40}" aria-label="{_esc(summary)}"><title>{_esc(summary)}</title>')]
    for i, r in enumerate(rows):
        y, x = 10 + i * height, left
        svg.append(f'<text x="{left - 6}" y="{y + 16}" text-anchor="end" font-size="12">{_esc(r["part"])}</text>')
        for key, label in kinds:
            w = (width - left - 10) * r[key] / total
            if r[key]:
                svg.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{height - 6}" '
                           f'fill="{COLOURS[label]}"><title>{_esc(label)}: {r[key]}</title></rect>')
                if w > 18:
                    svg.append(f'<text x="{x + w / 2:.1f}" y="{y + 13}" text-anchor="middle" font-size="11" '
                               f'fill="{"#fff" if label == "passed" else "#000"}">{r[key]}</text>')
            x += w
    y = 20 + len(rows) * height
    for j, (_, label) in enumerate(kinds):
        svg.append(f'<rect x="{left + j * 110}" y="{y - 9}" width="12" height="12" fill="{COLOURS[label]}"/>'
                   f'<text x="{left + j * 110 + 16}" y="{y + 1}" font-size="12">{_esc(label)}</text>')
    svg.append("</svg>")
    return "".join(svg)


def histogram(pairs, points, label: str) -> str:
    """A small bar chart of a score distribution, its counts written above the bars."""
    width, height, base = 220, 110, 90
    most = max((n for _, n in pairs), default=1) or 1
    summary = f"{label}: " + (", ".join(f"{n} scored {_number(s)}" for s, n in pairs) or "no scores")
    step = (width - 20) / max(len(pairs), 1)
    svg = [(f'<svg role="img" width="{width}" height="{height}" '
           f'aria-label="{_esc(summary)}"><title>{_esc(summary)}</title>')]
    for i, (score, n) in enumerate(pairs):
        h = 70 * n / most
        x = 10 + i * step
        svg.append(f'<rect x="{x + 2:.1f}" y="{base - h:.1f}" width="{max(step - 4, 2):.1f}" height="{h:.1f}" '
                   f'fill="{COLOURS["bar"]}"/><text x="{x + step / 2:.1f}" y="{base - h - 3:.1f}" font-size="11" '
                   f'text-anchor="middle">{n}</text><text x="{x + step / 2:.1f}" y="{base + 14}" font-size="11" '
                   f'text-anchor="middle">{_esc(_number(score))}</text>')
    svg.append("</svg>")
    return "".join(svg)


def mistake_bars(rows: list[dict]) -> str:
    named = [r for r in rows if r["named"]][:15]
    if not named:
        return ""
    width, left, height = 640, 230, 22
    most = max(r["count"] for r in named)
    summary = "; ".join(f"{r['mistake']}: {r['count']} students" for r in named)
    svg = [(f'<svg role="img" width="{width}" height="{height * len(named) + 10}" '
           f'aria-label="{_esc(summary)}"><title>{_esc(summary)}</title>')]
    for i, r in enumerate(named):
        y = 5 + i * height
        w = (width - left - 40) * r["count"] / most
        svg.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end" font-size="12">{_esc(r["mistake"])}</text>'
                   f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{height - 6}" fill="{COLOURS["failed"]}"/>'
                   f'<text x="{left + w + 4:.1f}" y="{y + 13}" font-size="12">{r["count"]}</text>')
    svg.append("</svg>")
    return "".join(svg)


# ------------------------------------------------------------------ the report

def build(root: Path, assignment: str) -> dict:
    students, _ = read_class(root, assignment)
    data = {"assignment": assignment, "students": students, "parts": part_table(students),
            "mistakes": mistake_table(students), "disagreements": disagreement_table(students),
            "hints": hint_table(students), "written": written_table(students),
            "answers": sorted({a for s in students for a in s.written}),
            "uploads": upload_table(Path(root), assignment, students)}
    data["pairs"], data["library"], data["groups"], data["copy_note"] = copy_tables(Path(root), assignment, students)
    data["any_mistake_named"] = any(r["named"] for r in data["mistakes"])
    data["any_hints"] = any(s.hints is not None for s in students)
    data["any_kind"] = any(r["failed"] > r["not_recorded"] for r in data["disagreements"])
    return data


def render(data: dict) -> str:
    import jinja2
    from markupsafe import Markup
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates" / "report"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    figures = {"status": stacked_bars(data["parts"]),
               "scores": {r["part"]: histogram(r["distribution"], r["points"], f"{r['part']} scores")
                          for r in data["parts"]},
               "written": {r["answer"]: histogram(r["distribution"], r["points"], f"{r['answer']} scores")
                           for r in data["written"] if r["distribution"]},
               "mistakes": mistake_bars(data["mistakes"])}
    return env.get_template("index.html.j2").render(
        **data, figures={k: (Markup(v) if isinstance(v, str) else {a: Markup(b) for a, b in v.items()})
                         for k, v in figures.items()},
        colours=COLOURS, not_recorded=NOT_RECORDED, number=_number, distribution=_distribution,
        max_rung=MAX_RUNG, generated=time.strftime("%Y-%m-%d %H:%M"))


def write_report(root: Path, assignment: str, out: Path | None = None) -> tuple[Path, list[Path]]:
    """Write the page and the CSVs to ``out`` (default ``root/reports/<assignment>``), private to the
    instructor (mode 0700, files 0600); returns (the page, the CSV files)."""
    root = Path(root)
    out = Path(out) if out else root / "reports" / assignment
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(out, 0o700)
    data = build(root, assignment)
    page = out / "index.html"
    old = os.umask(0o077)
    try:
        page.write_text(clean_page(render(data)), encoding="utf-8")     # cleaned after rendering
        files = write_csvs(out, data)
    finally:
        os.umask(old)
    return page, files


#: folders of the course directory that a release, the site or the students receive
PUBLIC_FOLDERS = ("release", "source", "notebooks", "site", "feedback", "outbound", "_build", "docs")


def public_place(root: Path, out: Path) -> str | None:
    """Why ``out`` would publish the report (inside a folder that a release, the site or the feedback
    takes, or one that a git commit would take), or None."""
    import subprocess
    root, out = Path(root).resolve(), Path(out).resolve()
    for name in PUBLIC_FOLDERS:
        if out.is_relative_to(root / name):
            return f"{out} is inside {name}/, which a release, the site or the feedback takes"
    where = out
    while not where.is_dir() and where != where.parent:          # git asks from a folder that exists
        where = where.parent
    try:
        ignored = subprocess.run(["git", "-C", str(where), "check-ignore", "-q", str(out / "index.html")],
                                 capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None                                               # no git: nothing would commit it
    # 0: ignored; 1: in a work tree and not ignored; 128: not in a work tree
    return f"{out} is in a git work tree and not ignored: a commit would take it" if ignored.returncode == 1 else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_grader report", description=__doc__.split("\n")[0])
    parser.add_argument("assignment")
    parser.add_argument("--root", default=".", help="the course directory (default: here)")
    parser.add_argument("--out", default=None, help="where to write it (default: reports/<assignment>/, git-ignored)")
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not (root / "gradebook.db").exists():
        print(f"report: no gradebook.db in {root.resolve()}: run autograde first", file=sys.stderr)
        return 1
    why = public_place(root, Path(args.out)) if args.out else None
    if why:
        print(f"report: not written: it holds student data and {why}; pick a private folder", file=sys.stderr)
        return 1
    start = time.monotonic()
    page, files = write_report(root, args.assignment, args.out)
    print(f"The class report (student data: keep it private) in {time.monotonic() - start:.1f} s:\n  {page}\n"
          + "".join(f"  {f}\n" for f in files), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
