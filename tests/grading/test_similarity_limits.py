"""The similarity report cannot stall the grader (issue 21): normalising a cell is linear and capped,
and the report's fork has a deadline.

Work is counted, not timed: the lines :mod:`course_grader.similarity` executes (a trace of that module's
frames only). A scan of "the rest of the cell" for each token, or of every other student for each
student, shows as lines run, whatever else the machine is doing; the library code it calls (ast,
tokenize, set operations) is linear. The seconds are benchmarks/similarity_limits.py's."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from course_grader import autograde, runner, similarity
from course_grader.similarity import normalize

MODULE = similarity.__file__


def _lines(call) -> int:
    """The lines of similarity.py that ``call()`` runs (other modules' frames are not traced)."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        count += event == "line"
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename == MODULE else None
    old = sys.gettrace()
    sys.settrace(calls)
    try:
        call()
    finally:
        sys.settrace(old)
    return count


def test_normalising_is_linear():
    """A 104 KB cell took 12 s when each token looked for the next one through a copy of the rest."""
    line = "y = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1)  # a comment\n"
    small, large = line * 150, line * 600                               # 4x the cell, below the token cap
    assert len(normalize(large)) == 4 * len(normalize(small)) < similarity.MAX_TOKENS
    ratio = _lines(lambda: normalize(large)) / _lines(lambda: normalize(small))
    print(f"lines run: {ratio:.3f}x for 4x the cell")
    assert 3.5 < ratio < 4.5, ratio                                     # 4x the lines: linear


def test_a_huge_cell_is_cut(monkeypatch):
    """A 20 MiB cell is cut before it is parsed: the parser and the tokenizer see MAX_CHARS characters,
    and at most MAX_TOKENS tokens come out."""
    cell = "x = 1\n" * ((20 << 20) // 6)                                # ~20 MiB
    seen = []
    canonical = similarity.canonical
    monkeypatch.setattr(similarity, "canonical", lambda source: seen.append(len(source)) or canonical(source))
    tokens = normalize(cell)
    assert seen == [similarity.MAX_CHARS]
    assert len(tokens) <= similarity.MAX_TOKENS
    assert tokens == normalize(cell[:similarity.MAX_CHARS])
    assert len(similarity.comments("# a\n" * (1 << 20))) == 1          # comments are read of the cut cell too


def test_the_report_has_a_deadline(monkeypatch):
    monkeypatch.setattr(similarity, "summary", lambda *a, **k: time.sleep(60) or "never")
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())
    log = logging.getLogger("test-similarity-deadline")
    log.addHandler(Collect())
    app = SimpleNamespace(coursedir=SimpleNamespace(assignment_id="07_exercise"), log=log)
    start = time.monotonic()
    autograde._similarity_summary(app, deadline=1.0)()
    assert time.monotonic() - start < 30.0                              # not the 60 s the report would take
    assert any("not done 1 s after the grading" in m for m in records), records


def test_comparing_a_class_is_about_linear():
    """Four times the students take about four times the work, not sixteen: other students are found
    through an index of fingerprints, and at most CANDIDATES of them are compared exactly."""
    import nbformat

    from exercise_corpus import honest, styles
    honest.BODIES.update(styles.BODIES)
    source = nbformat.read(Path(__file__).resolve().parents[2] / "notebooks" / "07_exercise" /
                           "encoder_from_scratch.ipynb", as_version=4)
    cells = [runner.solution_sources(honest.notebook(source, s)) for s in honest.BODIES]
    skeleton = similarity.skeletons(source)
    similarity.reference_hashes()                                       # course_lib's, made once and kept
    similarity.reference_subtrees()

    def lines(n):
        subs = {f"student{i}": {p: f"# student {i}\n" + text for p, text in cells[i % len(cells)].items()}
                for i in range(n)}
        return _lines(lambda: similarity.compare(subs, skeleton))
    small, large = lines(20), lines(80)
    print(f"lines run: {small} for 20 students, {large} for 80")
    assert large < 6 * small, (small, large)                            # quadratic would be 16x
