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
