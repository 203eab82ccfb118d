"""The similarity report cannot stall the grader (issue 21): normalising a cell is linear and capped,
and the report's fork has a deadline."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from types import SimpleNamespace

from course_grader import autograde, runner, similarity
from course_grader.similarity import normalize


def _seconds(source: str) -> float:
    """The best of three CPU times (one measurement on a loaded machine can be several times off)."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        normalize(source)
        best = min(best, time.process_time() - start)
    return best


def test_normalising_is_linear():
    """A 104 KB cell took 12 s when each token looked for the next one through a copy of the rest."""
    line = "y = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1)  # a comment\n"
    assert _seconds(line * 1300) < 2.0                                  # ~104 KB
    small, large = line * 150, line * 600                               # 4x the cell, below the token cap
    assert _seconds(large) < 8 * max(_seconds(small), 0.005)            # about 4x the time


def test_a_huge_cell_is_cut():
    cell = "x = 1\n" * ((20 << 20) // 6)                                # ~20 MiB
    start = time.process_time()
    tokens = normalize(cell)
    assert time.process_time() - start < 3.0
    assert len(tokens) <= similarity.MAX_TOKENS


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
    assert time.monotonic() - start < 5.0
    assert any("not done 1 s after the grading" in m for m in records), records


def test_comparing_a_class_is_about_linear():
    """Four times the students take about four times as long, not sixteen: other students are found
    through an index of fingerprints, and at most CANDIDATES of them are compared exactly."""
    import nbformat

    from exercise_corpus import honest, styles
    honest.BODIES.update(styles.BODIES)
    source = nbformat.read(Path(__file__).resolve().parents[2] / "notebooks" / "07_exercise" /
                           "encoder_from_scratch.ipynb", as_version=4)
    cells = [runner.solution_sources(honest.notebook(source, s)) for s in honest.BODIES]
    skeleton = similarity.skeletons(source)
    similarity.reference_hashes()                                       # course_lib's, made once and kept

    def seconds(n):
        subs = {f"student{i}": {p: f"# student {i}\n" + text for p, text in cells[i % len(cells)].items()}
                for i in range(n)}
        best = float("inf")
        for _ in range(2):
            start = time.process_time()
            similarity.compare(subs, skeleton)
            best = min(best, time.process_time() - start)
        return best
    small, large = seconds(20), seconds(80)
    assert large < 8 * max(small, 0.01), (small, large)
