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


def new_seeds(nb, randbits=None) -> dict[str, int]:
    """Give every hidden-test block of ``nb``'s test cells new seeds (64 random bits each, from
    ``secrets`` unless ``randbits`` is given), in place; ``{part: new seed}``. For an instructor whose
    source notebook is public (this repository's is): run it before ``generate_assignment``."""
    import secrets
    randbits = randbits or secrets.randbits

    def seed(m: re.Match) -> str:
        return _SEED_RE.sub(lambda _: f"hidden_seed={randbits(64):#018x}", m.group(0))
    for cell in nb["cells"]:
        part = part_of_test(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "") or "")
        lines = cell.get("source", "")
        source = "".join(lines) if isinstance(lines, list) else str(lines)
        if part and _HIDDEN_RE.search(source):
            source = _HIDDEN_RE.sub(seed, source)
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
