"""The class report's shortcuts give what the long way gives (issue 31: "a report for 400 students takes
seconds"; benchmarks/class_report.py measures them): the copied tokens counted in plain Python are
copydetect's, and nbgrader's metadata check, made once per distinct cell metadata, refuses what it
refused when made for every cell."""

from __future__ import annotations

import json
import random
from pathlib import Path

import nbformat
import numpy as np
import pytest
from copydetect.utils import find_fingerprint_overlap, get_copied_slices

from course_grader import recording, runner, similarity

REPO = Path(__file__).resolve().parents[2]
EXERCISE = REPO / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"


def _copydetect(where: dict, shared: set) -> int:
    """The copied tokens as :mod:`.similarity` counted them before: copydetect's own functions."""
    idx, _ = find_fingerprint_overlap(shared, shared, where, {h: [0] for h in shared})
    starts, ends = get_copied_slices(idx, similarity.K)
    return int(np.sum(ends - starts))


def test_copied_tokens_are_copydetects():
    rng = random.Random(0)
    for _ in range(2000):
        n = rng.randrange(1, 60)
        where = {h: sorted(rng.sample(range(400), rng.randrange(1, 3))) for h in range(n)}
        shared = {h for h in where if rng.random() < 0.6} or {0}
        mine = sorted(i for h in shared for i in where[h])
        assert similarity.copied_tokens(mine) == _copydetect(where, shared)


def test_containment_on_real_cells_is_copydetects():
    nb = nbformat.read(EXERCISE, as_version=4)
    cells = list(runner.solution_sources(nb).values())
    library = similarity.reference_hashes()
    for source in cells:
        mine = similarity.fingerprint(source)
        for hashes in (library, *(similarity.fingerprint(other).hashes for other in cells)):
            shared = mine.hashes & hashes
            expected = _copydetect(mine.where, shared) / mine.coverage if shared and mine.coverage else 0.0
            assert similarity.containment(mine, hashes) == expected


VARIANTS = {
    "as released": lambda m: None,
    "grade false": lambda m: m.update(grade=False),
    "points lots": lambda m: m.update(points="lots"),
    "points true": lambda m: m.update(points=True),
    "points 1.0": lambda m: m.update(points=1.0),
    "no points": lambda m: m.pop("points", None),
    "empty": lambda m: m.clear(),
    "no grade_id": lambda m: m.pop("grade_id", None),
    "an extra key": lambda m: m.update(extra=[1, {"a": None}]),
    "schema 2": lambda m: m.update(schema_version=2),
    "schema 4": lambda m: m.update(schema_version=4),
    "locked null": lambda m: m.update(locked=None),
    "task on code": lambda m: m.update(task=True),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_remembered_metadata_check_refuses_what_the_check_refuses(variant):
    nb = nbformat.read(EXERCISE, as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            continue
        VARIANTS[variant](meta)
        direct = recording._check_cell(cell.cell_type, meta, cell.source)
        for _ in range(2):                                  # computed, then remembered
            assert recording._refusal(cell.cell_type, meta, cell.source) == direct, (variant, dict(meta))
    fresh = nbformat.read(EXERCISE, as_version=4)
    assert recording.invalid_metadata(fresh) is None
    assert recording.invalid_metadata(nb) == recording.invalid_metadata(nbformat.from_dict(json.loads(
        json.dumps(nb))))


def test_winnowing_is_copydetects():
    from copydetect.utils import get_token_coverage, winnow
    rng = np.random.default_rng(0)
    for trial in range(3000):
        n = int(rng.integers(1, 200))
        if trial % 3 == 0:          # few distinct values: ties everywhere
            hashes = rng.integers(0, 4, n).astype(np.int64)
        elif trial % 3 == 1:        # 64-bit hashes one apart: equal once made floats, as copydetect compares them
            hashes = (np.int64(2**62) + rng.integers(0, 600, n)).astype(np.int64)
        else:
            hashes = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)
        mine, where = similarity.winnow(hashes)
        theirs, their_where = winnow(hashes, similarity.WINDOW, remove_duplicates=False)
        assert where.tolist() == their_where.tolist() and mine.tolist() == theirs.tolist()
        index: dict = {}
        for h, i in zip(mine.tolist(), where.tolist()):
            index.setdefault(h, []).append(i)
        assert similarity.copied_tokens(sorted(where.tolist())) == int(
            get_token_coverage(index, similarity.K, n + similarity.K - 1))


def test_the_report_does_not_import_copydetect():
    import subprocess
    import sys
    code = ("import sys; from course_grader import report, similarity; "
            "similarity.compare({'a': {'attention': 'x = 1'}}); print('copydetect' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
