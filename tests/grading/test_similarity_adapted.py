"""Copies found however the reference is adapted (issue 52): course_lib's classes moved into the exercise's
cells with the contract's names kept, the helpers inlined and the argument checks dropped, as they are,
with independent statements reordered, renamed or reformatted, are flagged on each of the six parts they
copy; in the same class, the honest corpus and three honest encoders (which the contract leaves few ways
to write) are flagged on none. One comparison of one class: a second or two."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import nbformat
import pytest

from course_grader import rewrite, similarity
from course_grader.runner import solution_sources
from exercise_corpus import adapted, honest, styles
from exercise_corpus.styles import RUNNABLE

SOURCE = Path(__file__).resolve().parents[2] / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"
honest.BODIES.update(styles.BODIES)
COPIES = ("adapted", "shuffled", "adapted_renamed", "shuffled_reformatted", *adapted.DISGUISED)


def _cells(source, bodies: dict) -> dict:
    """The solution cells of the release filled with ``bodies`` ({part: bodies}), those parts only."""
    nb = copy.deepcopy(source)
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution") and gid in bodies:
            cell.source = honest.fill("".join(cell.source), bodies[gid])
    return {p: text for p, text in solution_sources(nb).items() if p in bodies}


@pytest.fixture(scope="module")
def source():
    return nbformat.read(SOURCE, as_version=4)


@pytest.fixture(scope="module")
def hidden_class(source):
    """{student: cells}: the honest corpus, three honest encoders, and four adapted copies of course_lib."""
    subs = {s: solution_sources(honest.notebook(source, s)) for s in honest.BODIES}
    subs.update({name: _cells(source, {"encoder": bodies}) for name, bodies in adapted.ENCODERS.items()})
    plain, shuffled = _cells(source, adapted.ADAPTED), _cells(source, adapted.SHUFFLED)
    subs["adapted"], subs["shuffled"] = plain, shuffled
    subs.update({name: _cells(source, bodies) for name, bodies in {**adapted.DISGUISED, **adapted.HONEST_MORE}.items()})
    subs["adapted_renamed"] = {p: RUNNABLE["renamed"](text) for p, text in plain.items()}
    subs["shuffled_reformatted"] = {p: RUNNABLE["reformatted"](text) for p, text in shuffled.items()}
    return subs


@pytest.fixture(scope="module")
def matches(source, hidden_class):
    return similarity.compare(hidden_class, similarity.skeletons(source), similarity.solutions(source))


def test_the_copies_run_and_are_really_adapted(hidden_class):
    for student in COPIES:
        for part, text in hidden_class[student].items():
            ast.parse(text)
            assert "check_" not in text and "split_heads" not in text and "_check" not in text, (student, part)
    assert hidden_class["shuffled"]["positional_encoding"] != hidden_class["adapted"]["positional_encoding"]
    assert "my_" in hidden_class["adapted_renamed"]["multi_head_attention"]


@pytest.mark.parametrize("student", COPIES)
def test_an_adapted_copy_of_course_lib_is_flagged_on_every_part(matches, student):
    """Issue 52: such a copy was flagged on 2 of its cells (attention 0.98, positional 0.80; multi-head 0.72,
    layer 0.79, feed-forward 0.84, encoder 0.58). Against course_lib as it reads once inlined, and on its
    syntax subtrees, the positional table, the attention and a long part (the multi-head attention or the
    encoder) stand on their own; the other parts are corroborated by the long one. The two copies
    disguised by hand (their own names, comments, order and inlining) were flagged on no part by the
    tokens alone (multi-head attention 0.34 and 0.71, encoder 0.56 and 0.79)."""
    flagged = {m.part: m for m in matches if m.student == student and m.flagged and m.other == similarity.LIBRARY}
    assert set(flagged) == set(styles.GRADED), sorted(flagged)
    alone = {p for p, m in flagged.items() if not m.corroborated}
    assert alone >= {"positional_encoding", "attention"} and alone & {"multi_head_attention", "encoder"}, sorted(alone)
    assert any(flagged[p].size >= similarity.SMALL for p in alone & {"multi_head_attention", "encoder"})


def test_reordering_independent_statements_changes_nothing(hidden_class):
    """Three independent lines of the positional table swapped took a copy from 1.00 to 0.45: the
    statements are sorted by their dependencies first, so both spellings are one token stream (the
    multi-head attention's three projections, each after its own ``b, t, _ = x.shape``, keep the order
    in which they were written: 0.826 and 0.829)."""
    for part in ("positional_encoding", "encoder"):
        assert similarity.normalize(hidden_class["shuffled"][part]) == similarity.normalize(
            hidden_class["adapted"][part]), part


def test_no_honest_student_is_flagged(matches, hidden_class):
    """Not against course_lib, the model solution, each other or a copy of the reference: the honest
    encoders scored 0.885-0.925 against the model solution, and an honest layer 0.856 against a copy.
    Against course_lib the highest honest score is 0.80, on a feed-forward network of 44 tokens (a cell
    that small is flagged from 0.95), and 0.733 on a cell of 120 tokens or more (flagged from 0.8)."""
    honest_students = set(hidden_class) - set(COPIES)
    assert not [(m.student, m.part, m.other, round(m.score, 3)) for m in matches
                if m.student in honest_students and m.flagged]
    assert not [(m.student, m.part, m.other) for m in matches
                if m.other in honest_students and m.student in COPIES and m.flagged]


def test_statement_sort_keeps_what_the_code_computes():
    """Two orders of the same independent statements sort into one, which computes what they do: a
    statement stays after the one that wrote what it reads (the table is filled in place after it is made,
    then read)."""
    import torch
    lines = ["    pos = torch.arange(max_len, dtype=torch.float64)[:, None]",
             "    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)",
             "    pe = torch.zeros(max_len, d_model, dtype=torch.float64)",
             "    angle = pos / 10000.0 ** (two_i / d_model)", "    pe[:, 0::2] = torch.sin(angle)",
             "    pe[:, 1::2] = torch.cos(angle)", "    total = pe.sum()", "    pe[0, 0] = total", "    return pe"]
    orders = [lines, [lines[2], lines[1], lines[0], *lines[3:]], [lines[1], lines[0], lines[3], lines[2], *lines[4:]]]
    codes = ["def table(max_len, d_model):\n" + "\n".join(order) + "\n" for order in orders]
    assert len(set(codes)) == 3
    assert len({ast.unparse(rewrite.sort_statements(ast.parse(code))) for code in codes}) == 1
    tables = []
    for code in codes + [ast.unparse(rewrite.sort_statements(ast.parse(codes[0])))]:
        space = {"torch": torch}
        exec(code, space)
        tables.append(space["table"](7, 6))
    assert all(torch.equal(tables[0], t) for t in tables[1:])


def test_the_reference_is_also_read_inlined():
    """course_lib's MultiHeadAttention once inlined: split_heads, merge_heads and the attention written in
    forward, the checks gone, the options (allow_mask, need_weights) at their defaults, branches folded."""
    files = similarity.reference_files()
    helpers = rewrite.functions_of([p.read_text(encoding="utf-8") for p in files])
    text = rewrite.inlined(next(p for p in files if p.name == "attention.py").read_text(encoding="utf-8"),
                           helpers, {"MultiHeadAttention"})
    forward = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    body = "\n".join(ast.unparse(s) for s in forward.body)
    assert "split_heads" not in body and "merge_heads" not in body and "scaled_dot_product_attention" not in body
    assert "_check_forward_args" not in body and "need_weights" not in body and "allow_mask" not in body
    assert ".view(b, t, self.num_heads, self.d_k).transpose(1, 2)" in body and "torch.softmax" in body


def test_what_the_contract_fixes_is_no_evidence(source):
    """An honest encoder's __init__ is the contract's attributes, and its forward the contract's formula:
    those statements are left out of the fingerprints, the model solution's own lines (its embedding's
    initialisation) are not."""
    model = similarity.solutions(source)["encoder"]
    kept = " ".join(similarity.normalize(model))
    assert "normal_" in kept and "zero_" in kept
    assert "ModuleList" not in kept and "Identity" not in kept and "register_buffer" not in kept


def test_the_class_report_shows_each_flag_and_the_part_it_is_flagged_as(source, hidden_class, matches, tmp_path):
    """The class report's page and copies.csv list every part flagged against course_lib, and for a part
    flagged through another part of the same student (``Match.corroborated``) they say "as <part>", as
    the similarity command does; a part flagged on its own share says so."""
    import re
    import shutil

    from course_grader import report
    from course_grader.report import Student
    for folder in ("release", "notebooks"):                 # the release's skeleton is the source's, solutions cut
        (tmp_path / folder / "07_exercise").mkdir(parents=True)
        shutil.copy(SOURCE, tmp_path / folder / "07_exercise" / SOURCE.name)
    students = [Student(s, cells=cells) for s, cells in hidden_class.items()]
    data = {"assignment": "07_exercise", "students": students, "parts": report.part_table(students),
            "mistakes": report.mistake_table(students), "disagreements": report.disagreement_table(students),
            "hints": report.hint_table(students), "written": report.written_table(students), "answers": [],
            "any_mistake_named": False, "any_hints": False, "any_kind": False}
    data["pairs"], data["library"], data["groups"], data["copy_note"] = report.copy_tables(tmp_path, "07_exercise",
                                                                                          students)
    want = {(m.student, m.part): m.corroborated for m in matches if m.flagged and m.other == similarity.LIBRARY}
    assert {s for s, _ in want} == set(COPIES) and any(want.values()) and not all(want.values()), want
    assert {(r["student"], r["part"]): r["as_part"] for r in data["library"] if r["other"] == "course_lib"} == want

    page = report.clean_page(report.render(data))
    table = page[page.index('<table id="library-table">'):]
    table = table[:table.index("</table>")]
    shown = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]:
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        if cells[2] == "course_lib":
            shown[cells[0], cells[1]] = cells[-1]
    assert shown == {key: f"as {p}" if p else "on its own" for key, p in want.items()}
    report.write_csvs(tmp_path, data)
    lines = (tmp_path / "copies.csv").read_text().splitlines()
    assert lines[0].endswith(",flagged_as") and len(lines) == 1 + len(data["pairs"]) + len(data["library"])
