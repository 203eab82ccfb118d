"""The hidden seeds of the source notebook: found (:func:`hidden_seeds`) and renewed (:func:`new_seeds`).

A seed sits in the ``### BEGIN HIDDEN TESTS`` block of a part's test cell, which nbgrader strips from
the release and keeps in the gradebook; :mod:`.cases` draws the hidden cases from it. Standard library
only: the grader's own process reads the seeds without importing torch.
"""

from __future__ import annotations

import re

from .parts import part_of_test

_SEED_RE = re.compile(r"hidden_seed\s*=\s*(0[xX][0-9a-fA-F_]+|\d[\d_]*)")
_HIDDEN_RE = re.compile(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", re.S)


#: how many seeds :func:`new_seeds` draws for one part before it gives up (a checked part's seeds fail
#: correct code rarely, if ever: benchmarks/reverse_seeds.py)
MAX_DRAWS = 20


def new_seeds(nb, randbits=None, checks=None) -> dict[str, int]:
    """Give every hidden-test block of ``nb``'s test cells new seeds (64 random bits each, from
    ``secrets`` unless ``randbits`` is given), in place; ``{part: new seed}``. For an instructor whose
    source notebook is public (this repository's is): run it before ``generate_assignment``.

    ``checks`` maps a part to ``check(seed) -> bool``: a seed it refuses is drawn again (``MAX_DRAWS``
    at most, then ValueError). ``python -m course_grader new-seeds`` checks the reverse task's seeds
    against correct code (:mod:`.reverse_seeds`)."""
    import secrets
    randbits = randbits or secrets.randbits
    checks = checks or {}

    def draw(part: str) -> int:
        for _ in range(MAX_DRAWS):
            value = randbits(64)
            if part not in checks or checks[part](value):
                return value
        raise ValueError(f"{part}: {MAX_DRAWS} seeds drawn, none passed its check")

    for cell in nb["cells"]:
        part = part_of_test(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "") or "")
        lines = cell.get("source", "")
        source = "".join(lines) if isinstance(lines, list) else str(lines)
        if part and _HIDDEN_RE.search(source):
            source = _HIDDEN_RE.sub(lambda m, part=part: _SEED_RE.sub(
                lambda _: f"hidden_seed={draw(part):#018x}", m.group(0)), source)
            cell["source"] = source.splitlines(keepends=True) if isinstance(lines, list) else source
    return hidden_seeds(nb)


def hidden_seeds(nb) -> dict[str, int]:
    """``{part: seed}`` from the ``### BEGIN HIDDEN TESTS`` blocks of a notebook's test cells.

    ``nb`` is the instructor's source notebook (or the notebook autograde rebuilt from the
    gradebook's stored cells), as an nbformat node or a dict; a released notebook has no such block.
    """
    seeds = {}
    for cell in nb["cells"]:
        part = part_of_test(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "") or "")
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        for block in _HIDDEN_RE.findall(source) if part else ():
            for text in _SEED_RE.findall(block):
                seeds[part] = int(text.replace("_", ""), 0)
    return seeds
