"""Which submissions the sandboxed autograder grades, and on which hidden tests (the grader's own
process; standard library and nbgrader only).

* The notebooks of an assignment are the gradebook's (else the source folder's), never the first
  name a student happened to submit: an extra ``.ipynb`` beside the assignment is ignored, not taken
  for it (:func:`assignment_notebooks`).
* A student id must be a plain name (:func:`plain_id`): nbgrader strips spaces from an id and reads
  it as a glob pattern, so ``carol `` would be recorded as ``carol``, and ``w[v]*?`` never; such a
  folder is refused, and named in the log only through :func:`quoted` (no terminal escape reaches it).
* Every graded part must have its hidden tests (:func:`missing_hidden`): without them the class
  would be graded on the cases its students already ran.
"""

from __future__ import annotations

import glob
import os
import re

from course_lib.grading.parts import PARTS
from course_lib.grading.seeds import hidden_seeds

#: what a student id may be: nbgrader's ids are user names (a letter or digit first, then these)
PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}")


def plain_id(student: str) -> bool:
    """True for an id nbgrader records as it is (no space, glob character, control byte, slash...)."""
    return PLAIN_ID.fullmatch(student) is not None


def quoted(text: str) -> str:
    """``text`` safe for a log line or a terminal: Python's ``ascii()`` (escapes, no raw control byte)."""
    return ascii(text)


def find_submissions(coursedir, assignment_id: str, student_id: str, notebook_id: str) -> list:
    """[(student, notebook_id, path)] as nbgrader's autograde would find them."""
    pattern = coursedir.format_path(coursedir.submitted_directory, student_id, assignment_id)
    regexp = re.escape(os.path.sep).join([
        coursedir.format_path(coursedir.submitted_directory, "(?P<student_id>[^/]*)", re.escape(assignment_id),
                              escape=True),
        "(?P<notebook_id>.*).ipynb"])
    found = []
    for folder in sorted(glob.glob(pattern)):
        for path in sorted(glob.glob(os.path.join(glob.escape(folder), notebook_id + ".ipynb"))):
            m = re.match(regexp, path)
            if m:
                found.append((m.group("student_id"), m.group("notebook_id"), path))
    return found


def needs_grading(coursedir, force: bool, assignment_id: str, student: str) -> bool:
    dest = coursedir.format_path(coursedir.autograded_directory, student, assignment_id)
    if force or not os.path.exists(dest):
        return True
    src = coursedir.format_path(coursedir.submitted_directory, student, assignment_id)
    new, old = coursedir.get_existing_timestamp(src), coursedir.get_existing_timestamp(dest)
    return new is not None and old is not None and new > old


def _source_folder(coursedir, assignment_id: str) -> str:
    return coursedir.format_path(coursedir.source_directory, ".", assignment_id)


def gradebook_exists(coursedir) -> bool:
    """False when the gradebook is a SQLite file not made yet (opening it would make one)."""
    url = coursedir.db_url
    return not url.startswith("sqlite:///") or os.path.isfile(url[len("sqlite:///"):])


def assignment_notebooks(coursedir, assignment_id: str) -> list[str]:
    """The assignment's notebook names: the gradebook's (``generate_assignment`` put them there), else
    those of its source folder; [] when neither knows the assignment."""
    try:
        if not gradebook_exists(coursedir):
            raise LookupError("no gradebook")
        from nbgrader.api import Gradebook
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            names = sorted(nb.name for nb in gb.find_assignment(assignment_id).notebooks)
        if names:
            return names
    except Exception:                                        # noqa: BLE001 (no gradebook, or no entry yet)
        pass
    folder = _source_folder(coursedir, assignment_id)
    if not os.path.isdir(folder):
        return []
    return sorted(name[:-len(".ipynb")] for name in os.listdir(folder)
                  if name.endswith(".ipynb") and os.path.isfile(os.path.join(folder, name))
                  and not os.path.islink(os.path.join(folder, name)))


def hidden_source(coursedir, assignment_id: str, notebook_id: str):
    """The test cells' sources as the gradebook stores them (the hidden-test blocks included), as a
    notebook-like dict; else the source notebook; else None."""
    try:
        from nbgrader.api import Gradebook
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            nb = gb.find_notebook(notebook_id, assignment_id)
            cells = [{"metadata": {"nbgrader": {"grade_id": c.name}}, "source": c.source or ""}
                     for c in nb.source_cells]
        if any("BEGIN HIDDEN TESTS" in c["source"] for c in cells):
            return {"cells": cells}
    except Exception:                                        # noqa: BLE001 (no gradebook entry yet)
        pass
    path = os.path.join(_source_folder(coursedir, assignment_id), notebook_id + ".ipynb")
    if os.path.isfile(path) and not os.path.islink(path):
        import nbformat
        return nbformat.read(path, as_version=4)
    return None


def seeds_of(coursedir, assignment_id: str, notebooks: list[str]) -> dict:
    """{part: hidden seed}, from whichever of the assignment's notebooks holds the part's hidden block."""
    seeds: dict = {}
    for name in notebooks:
        source = hidden_source(coursedir, assignment_id, name)
        if source is not None:
            seeds.update(hidden_seeds(source))
    return seeds


#: the hidden-test seeds the repository publishes (notebooks/07_exercise/encoder_from_scratch.ipynb, every
#: version of it so far): anyone can make those cases and look their answers up, so a class graded on
#: them is graded on public answers. tests/grading/test_public_seeds.py checks the notebook against it.
PUBLISHED_SEEDS = frozenset({
    15327998395728449190, 6580774836689427202, 10664739351390454551, 9407615814579920672, 15577730747290858348,
    17083318264853273271, 4039480225776049645, 4905007286721818451})


def public_seeds(seeds: dict) -> list[str]:
    """The parts whose hidden seed is one the repository publishes (:data:`PUBLISHED_SEEDS`)."""
    return [p for p, s in seeds.items() if int(s) in PUBLISHED_SEEDS]


def missing_hidden(seeds: dict) -> list[str]:
    """The graded parts without a hidden-test block."""
    return [p for p in PARTS if p not in seeds]
