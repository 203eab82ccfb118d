"""Structured input (issue 41 items 5, 7): every JSON a student can write is parsed with limits
(course_grader.json_in), and a notebook's nbgrader metadata is checked before nbgrader sees it.

The fuzzers generate hint records (deep nesting, wrong types, huge numbers, links and pipes in place of
the file) and notebooks (random nbgrader metadata on random cells: points, grade ids, flags, cell
types) and check the promises: a hint record never stops the report (it counts or is ignored), and a
notebook is either read or refused with a reason, never an exception out of the grader's reader.
"""

from __future__ import annotations

import json
import os
import re
import sys

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_grader import json_in, runner
from course_grader.report import MAX_RUNG, hints_of
from fuzz_kit import fuzz

PARTS = ["attention", "multi_head_attention", "encoder_layer", "nope", "__proto__", ""]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True),
                    st.text(max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.sampled_from(PARTS + ["rung", "parts"]),
                                                                       inner, max_size=4)), max_leaves=12)


def test_a_record_nested_200000_lists_deep_is_refused_not_a_crash(tmp_path):
    """The red-team case: json.loads raised RecursionError, which stopped the class report."""
    path = tmp_path / "hints.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(json_in.TooLarge):
        json_in.loads(path.read_bytes(), 1 << 20)
    assert hints_of(path) == {}
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(200)                       # json's own recursion is never reached
        assert hints_of(path) == {}
    finally:
        sys.setrecursionlimit(limit)


@fuzz(200)
@given(record=VALUES, deep=st.integers(0, 3000), kind=st.sampled_from(["json", "deep", "link", "fifo", "dir"]))
def test_fuzz_hint_records_count_or_are_ignored(tmp_path_factory, record, deep, kind):
    folder = tmp_path_factory.mktemp("hints")
    path = folder / "hints.json"
    secret = folder.parent / f"secret-{folder.name}.json"
    secret.write_text(json.dumps({"attention": 2}))
    if kind == "json":
        path.write_text(json.dumps({"parts": record} if deep % 2 else record))
    elif kind == "deep":
        path.write_text("[" * deep + json.dumps(record) + "]" * deep)
    elif kind == "link":
        path.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    got = hints_of(path)
    assert isinstance(got, dict) and all(isinstance(v, int) and 0 <= v <= MAX_RUNG for v in got.values())
    if kind in ("link", "fifo", "dir"):
        assert got == {}                                 # not followed, not waited on


META = st.fixed_dictionaries({}, optional={
    "grade": st.one_of(st.booleans(), SCALARS), "solution": st.one_of(st.booleans(), SCALARS),
    "locked": st.one_of(st.booleans(), SCALARS), "task": st.booleans(),
    "points": st.one_of(st.integers(-5, 10**6), st.floats(allow_nan=True), st.text(max_size=4)),
    "grade_id": st.one_of(st.sampled_from(["test_attention", "attention", "test_bonus", "answer_reverser"]),
                          st.text(max_size=12), SCALARS),
    "schema_version": st.sampled_from([3, 3, 3, 1, 99]), "cell_type": st.sampled_from(["code", "markdown"])})
CELLS = st.lists(st.tuples(st.sampled_from(["code", "markdown", "raw"]), st.one_of(st.none(), META, SCALARS),
                           st.text(max_size=20)), max_size=6)


@fuzz(200)
@given(cells=CELLS, nest=st.integers(0, 200))
def test_fuzz_a_notebook_is_read_or_refused_never_a_crash(tmp_path_factory, cells, nest):
    root = tmp_path_factory.mktemp("nb")
    folder = root / "student" / "ps1"
    folder.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    for cell_type, meta, source in cells:
        cell = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell,
                "raw": nbformat.v4.new_raw_cell}[cell_type](source)
        if meta is not None:
            cell["metadata"]["nbgrader"] = meta
        nb.cells.append(cell)
    text = json.dumps(nb)
    if nest:
        text = text[:-1] + ', "x": ' + "[" * nest + "]" * nest + "}"
    (folder / "ps1.ipynb").write_text(text)
    got, why = runner.read_notebook(str(folder / "ps1.ipynb"), str(root))
    assert (got is None) != (why is None)
    if why is not None:
        assert isinstance(why, str) and "\x1b" not in why


def test_without_the_limits_the_fuzzers_cases_stop_the_report(tmp_path, monkeypatch):
    """The fuzzer can fail: with the record parsed by plain ``json.loads`` and read by a plain ``open``,
    the red-team record raises out of ``hints_of`` (it stopped the class report) and a link brings a
    classmate's record."""
    deep = tmp_path / "deep" / "hints.json"
    deep.parent.mkdir()
    deep.write_text("[" * 200_000 + "]" * 200_000)
    link = tmp_path / "link" / "hints.json"
    link.parent.mkdir()
    (tmp_path / "theirs.json").write_text(json.dumps({"attention": 2}))
    link.symlink_to(tmp_path / "theirs.json")
    monkeypatch.setattr(json_in, "loads", lambda data, limit: json.loads(data))
    with pytest.raises(RecursionError):
        hints_of(deep)
    monkeypatch.setattr("course_grader.files_in.read_file", lambda path, root, limit: open(path, "rb").read())
    assert hints_of(link) == {"attention": 2}


# ------------------------------------------------------------------ the notebook gate (issue 48 items 1, 2)

ESCAPES = st.sampled_from(["\\ud800", "\\udfff", "\\ud83d", "\\ude00x", "\\ud83d\\ude00", "NaN", "-Infinity", "x",
                           "1e400", "-1e999"])                # valid JSON, out of a float's range: inf
PLACES = st.sampled_from(["markdown", "metadata", "output", "key", "grade_id"])


def _escaped_notebook(pieces) -> str:
    """A notebook whose JSON holds each (place, escape) as written on disk: an escaped half of a UTF-16
    pair is plain ASCII and valid JSON; NaN is what Python's json reads and writes."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", outputs=[nbformat.v4.new_output("stream", text="ok\n")]))
    nb.cells.append(nbformat.v4.new_markdown_cell("an extra cell"))
    texts = {"markdown": nb.cells[1], "output": nb.cells[0].outputs[0]}
    for i, (place, _) in enumerate(pieces):
        if place in texts:
            key = "source" if place == "markdown" else "text"
            texts[place][key] += f"@{i}@"
        else:
            where = {"metadata": nb.metadata, "key": nb.cells[1].metadata,
                     "grade_id": nb.cells[0].metadata.setdefault("nbgrader", {})}[place]
            where[f"@{i}@" if place == "key" else ("grade_id" if place == "grade_id" else f"s{i}")] = f"@{i}@"
    text = json.dumps(nb)
    for i, (_, escape) in enumerate(pieces):
        number = escape in ("NaN", "-Infinity", "1e400", "-1e999")
        text = text.replace(f'"@{i}@":', f'"{escape}":').replace(f'"@{i}@"', escape if number else f'"{escape}"')
        text = text.replace(f"@{i}@", "" if number else escape)
    return text


@fuzz(150)
@given(pieces=st.lists(st.tuples(PLACES, ESCAPES), min_size=1, max_size=5))
def test_fuzz_every_notebook_leaves_the_gate_writable(tmp_path_factory, pieces):
    """The promise of the gate in (course_grader.notebook_in): whatever a student escapes into a
    notebook's JSON, what leaves the gate nbgrader's writer can write (UTF-8, no NaN), the grader's
    reader reads it, and a second pass finds nothing left to repair."""
    from course_grader import notebook_in
    root = tmp_path_factory.mktemp("gate")
    path = root / "nb.ipynb"
    text = _escaped_notebook(pieces)
    path.write_text(text)
    notes = notebook_in.admit_file(str(path), str(root))
    written = path.read_bytes()
    written.decode("utf-8")                                   # strict: no surrogate reached the file
    json.loads(written, parse_constant=lambda name: pytest.fail(f"{name} written"))
    nbformat.writes(nbformat.reads(written.decode(), as_version=4)).encode("utf-8")      # the recorder's write
    assert notebook_in.admit_file(str(path), str(root)) == []
    assert (path.stat().st_mode & 0o777) == 0o600 or not notes
    lone = re.search("[\ud800-\udfff]", json.dumps(json.loads(text), ensure_ascii=False))
    assert (lone is not None) == any("surrogate" in n for n in notes)


def test_without_the_gate_a_lone_surrogate_stops_the_recorder(tmp_path):
    """The fuzzer's case can fail: read as plain nbformat reads it, the escaped ``\\ud800`` of an extra
    markdown cell makes nbgrader's write (the recorder's) raise UnicodeEncodeError; through the gate the
    cell reads U+FFFD and the log line says so."""
    from course_grader import notebook_in
    text = _escaped_notebook([("markdown", "\\ud800")])
    with pytest.raises(UnicodeEncodeError):
        nbformat.writes(nbformat.reads(text, as_version=4)).encode("utf-8")
    path = tmp_path / "nb.ipynb"
    path.write_text(text)
    assert notebook_in.admit_file(str(path), str(tmp_path)) == ["1 lone surrogate replaced by U+FFFD"]
    assert "an extra cell\ufffd" in nbformat.read(path, as_version=4).cells[1].source


def test_a_stray_grade_id_cannot_keep_a_hand_grade_for_a_changed_answer(tmp_path):
    """Issue 48 item 2: the student rewrites a hand-graded answer and appends a plain cell carrying the
    same grade_id and the old text. The gate removes the stray cell's nbgrader metadata (said so), and the
    answer's hash is the graded cell's (nbgrader's cells only, the first), so the hand grade is flagged."""
    from course_grader import notebook_in, recording
    graded_meta = {"grade": True, "solution": True, "locked": False, "points": 2, "grade_id": "answer_reverser",
                   "schema_version": 3}
    before = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("old answer",
                                                                          metadata={"nbgrader": graded_meta})])
    after = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("a new answer", metadata={"nbgrader": graded_meta}),
        nbformat.v4.new_markdown_cell("old answer", metadata={"nbgrader": {"grade_id": "answer_reverser"}})])
    nbformat.write(before, tmp_path / "before.ipynb")
    nbformat.write(after, tmp_path / "after.ipynb")
    old = recording._answer_hashes(str(tmp_path / "before.ipynb"), str(tmp_path), as_recorded=False)
    new = recording._answer_hashes(str(tmp_path / "after.ipynb"), str(tmp_path), as_recorded=False)
    assert old["answer_reverser"] != new["answer_reverser"]
    notes = notebook_in.admit_file(str(tmp_path / "after.ipynb"), str(tmp_path))
    assert len(notes) == 1 and "'answer_reverser' without being an nbgrader cell" in notes[0]
    cells = nbformat.read(tmp_path / "after.ipynb", as_version=4).cells
    assert "nbgrader" not in cells[1].metadata and cells[0].metadata.nbgrader.grade_id == "answer_reverser"


# ------------------------------------------------------------------ valid JSON of another shape (issue 48, fifth round)

#: where a notebook's JSON may hold a value of the wrong type: nbformat raised TypeError, AssertionError,
#: AttributeError or UnboundLocalError on them, out of autograde's gate, which stopped the whole class
SHAPES = st.sampled_from(["nbformat", "nbformat_minor", "cells", "metadata", "cell", "cell_type", "source",
                          "source_item", "outputs", "output", "output_type", "text", "data", "execution_count", "id",
                          "cell_metadata", "attachments"])
ODD = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.floats(allow_nan=False, allow_infinity=False),
                st.text(max_size=4), st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3)), max_size=3),
                st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _shaped_notebook(place: str, value) -> dict:
    nb = json.loads(nbformat.writes(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1", outputs=[nbformat.v4.new_output("stream", text="ok\n")]),
        nbformat.v4.new_markdown_cell("an answer")])))
    cell, output = nb["cells"][0], nb["cells"][0]["outputs"][0]
    where = {"nbformat": nb, "nbformat_minor": nb, "cells": nb, "metadata": nb, "cell_type": cell, "source": cell,
             "outputs": cell, "output_type": output, "text": output, "execution_count": cell, "id": cell}
    if place in where:
        where[place][place] = value
    elif place == "cell":
        nb["cells"].insert(1, value)
    elif place == "source_item":
        cell["source"] = ["x = 1\n", value]
    elif place == "output":
        cell["outputs"].append(value)
    elif place == "data":
        cell["outputs"].append({"output_type": "display_data", "metadata": {}, "data": value})
    elif place == "cell_metadata":
        cell["metadata"] = value
    else:
        nb["cells"][1]["attachments"] = value
    return nb


@fuzz(150)
@given(place=SHAPES, value=ODD)
def test_fuzz_valid_json_of_another_shape_is_refused_as_a_value_error(tmp_path_factory, place, value):
    """The gate in reads any valid JSON as a notebook it can write, or refuses it with a ``ValueError``
    (which autograde's gate and the grader's reader refuse for that student alone), never another
    exception, which stopped autograde for the whole class."""
    from course_grader import notebook_in
    root = tmp_path_factory.mktemp("shape")
    path = root / "nb.ipynb"
    path.write_text(json.dumps(_shaped_notebook(place, value)))
    try:
        notebook_in.admit_file(str(path), str(root))
    except ValueError:
        return
    nbformat.writes(nbformat.reads(path.read_text(), as_version=4)).encode("utf-8")


def test_without_the_gate_valid_json_of_another_shape_raises_out_of_nbformat():
    """The fuzzer's cases can fail: read as nbformat reads them, ``"source": ["x", null]``, ``"nbformat":
    4.0`` and a cell that is a number raise TypeError and AssertionError, which autograde's gate did not
    catch; through the gate each is a ValueError."""
    from course_grader import notebook_in
    for place, value in (("source_item", None), ("nbformat", 4.0), ("cell", 3), ("source_item", 1)):
        text = json.dumps(_shaped_notebook(place, value))
        with pytest.raises(Exception) as raised:
            nbformat.reads(text, as_version=4)
        assert not isinstance(raised.value, ValueError), (place, value, raised.value)
        with pytest.raises(ValueError):
            notebook_in.parse(text)
