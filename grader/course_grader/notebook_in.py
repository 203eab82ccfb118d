"""The one gate a student's notebook passes, whatever brought it (the hub's exchange, an LMS download,
a re-upload, a file the instructor copied in): it leaves as canonical JSON that nbgrader and the
recorder can always write, and the grader reads nothing else.

* :func:`parse`: the bytes read with :mod:`.json_in`'s limits and repairs (a lone surrogate becomes
  U+FFFD, ``NaN`` and ``1e400`` become ``null``: nbgrader's recorder raised ``UnicodeEncodeError`` on one
  and the class's run ended "Could not grade", issue 48 item 1), then as nbformat reads a notebook; valid
  JSON of another shape (``"source": [1, null]``, ``"nbformat": 4.0``), on which nbformat raised
  ``TypeError`` or ``AssertionError`` out of autograde's gate and stopped the class, is refused with
  :class:`NotANotebook`, a ``ValueError``;
* :func:`canonical`: a cell that carries nbgrader's ``grade_id`` without being an nbgrader cell (no
  grade, solution, locked or task flag) loses its nbgrader metadata. Such a cell is nothing to nbgrader,
  but the check that keeps a hand grade for an unchanged answer looked answers up by grade_id: an
  appended copy of the old answer under the same grade_id kept 2 points for a rewritten one (item 2).
  Two nbgrader cells with one grade_id, and a grade_id the release does not have, are refused or
  repaired later with a line in the log (:func:`course_grader.recording.invalid_metadata`,
  :class:`course_grader.recording.MatchReleasedCells`);
* :func:`admit_file`: a submission's notebook, read by descriptor (:mod:`.files_in`), replaced by its
  canonical form when it was not canonical (written 0600, atomically); returns what was repaired, for
  the log. The grader's workers, the recorder and the class report then read only what the gate wrote.
"""

from __future__ import annotations

import os

from . import files_in, json_in

MAX_BYTES = 20 << 20                 # a notebook (runner.MAX_NOTEBOOK_BYTES)
FLAGS = ("grade", "solution", "locked", "task")


class NotANotebook(ValueError):
    """Valid JSON that nbformat cannot read or write as a notebook (a ``TypeError``, ``AssertionError``,
    ``KeyError``... inside nbformat): a ``ValueError``, which every caller refuses for that student alone."""


def parse(data: bytes | str, max_bytes: int = MAX_BYTES):
    """(the notebook as nbformat reads it, version 4, from JSON made writable; what was repaired)."""
    import nbformat
    from nbformat import reader, versions
    value, notes = json_in.read(data, max_bytes)
    try:
        major, minor = reader.get_version(value)
        if major not in versions:
            raise nbformat.NBFormatError(f"Unsupported nbformat version {major}")
        nb = nbformat.convert(versions[major].to_notebook_json(value, minor=minor), 4)
        nbformat.writes(nb)                    # what the recorder, the gate and nbgrader will write: it can be
    except ValueError:                         # (NBFormatError and ValidationError are ValueErrors)
        raise
    except Exception as e:                     # noqa: BLE001 valid JSON of another shape ("source": [1, null],
        raise NotANotebook(f"not a notebook nbformat reads ({type(e).__name__})") from None   # "nbformat": 4.0)
    return nb, [json_in.said(notes)] if notes else []


def canonical(nb) -> list[str]:
    """Repairs ``nb`` in place (see the module's docstring); returns what was repaired."""
    notes = []
    for i, cell in enumerate(nb.get("cells", [])):
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        grader = meta.get("nbgrader") if isinstance(meta, dict) else None
        if isinstance(grader, dict) and "grade_id" in grader and not any(grader.get(f) for f in FLAGS):
            del meta["nbgrader"]
            notes.append(f"cell {i} carried the grade_id {ascii(str(grader['grade_id']))[:60]} without being "
                         "an nbgrader cell: its nbgrader metadata removed")
    return notes


def admit_file(path: str, root: str) -> list[str]:
    """What was repaired in the notebook at ``path`` (under the course's ``root``), which now holds the
    canonical notebook; [] when it was canonical already. Raises :class:`~.files_in.Refused` (or
    ``ValueError``) when it cannot be read: the grader's reader then refuses it for that student alone."""
    import nbformat
    data = files_in.read_file(path, root, MAX_BYTES)
    nb, notes = parse(data)
    notes += canonical(nb)
    if not notes:
        return []
    text = nbformat.writes(nb).encode("utf-8")
    tmp = f"{path}.gate-{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    return notes
