"""Which solutions look alike: a report for the instructor after autograding, never a penalty.

Every solution cell is *normalised* before it is compared: comments, docstrings and layout are
dropped, the names a student chose (variables, functions, ``self.<attribute>``) all become ``ID``,
while Python's keywords, builtins and the library's API (``torch.softmax``,
``.transpose``) stay. Two cells are then compared by the sets of their token 6-grams, after removing
the 6-grams of the released skeleton (signatures and docstrings every student starts from):

* against course_lib's reference of the part (its source, as ``inspect.getsource`` gives it): the share of the student's
  6-grams that also occur in the reference (the reference is longer: it has a fast path, checks);
* against another student: the shared 6-grams over the smaller of the two sets.

A part is *flagged* when its score reaches :data:`THRESHOLD` and it has at least :data:`MIN_NGRAMS`
6-grams of its own (a one-line feed-forward network looks the same in every notebook). A flag asks
an instructor to look at two cells side by side; it decides nothing.

Command line, in the course directory after autograding::

    python -m course_grader.similarity 07_exercise [--csv similarity.csv]
"""

from __future__ import annotations

import argparse
import builtins
import csv
import glob
import io
import itertools
import importlib.util
import keyword
import os
import stat
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

from course_lib.grading.parts import NAMES, PARTS
from .runner import MAX_NOTEBOOK_BYTES, read_notebook
from .submissions import plain_id

N = 6                  # tokens per n-gram
THRESHOLD = 0.8        # a flag from this share of shared n-grams on
MIN_NGRAMS = 60        # parts with fewer n-grams of their own (a one-line FFN, the Reverser) are never flagged
MAX_CHARS = 200_000    # of a cell compared (a solution is a few KB; a 20 MiB cell is cut, not compared whole)
MAX_TOKENS = 20_000    # of a cell compared
_KEEP = set(keyword.kwlist) | set(dir(builtins)) | {"self", "torch", "nn", "F", "np", "math"}
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
         tokenize.ENDMARKER}


def normalize(source: str) -> list[str]:
    """The cell's tokens without comments, docstrings or layout, the names the student chose as ``ID``
    (keyword arguments, keywords, builtins and the library's names stay). Linear in the cell, which
    is cut at :data:`MAX_CHARS` characters and :data:`MAX_TOKENS` tokens (a solution has a few hundred)."""
    source = source[:MAX_CHARS]
    try:
        toks = [t for t in itertools.islice(tokenize.generate_tokens(io.StringIO(source).readline), MAX_TOKENS)
                if t.type != tokenize.ERRORTOKEN]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source.split()[:MAX_TOKENS]
    nexts: list = [None] * len(toks)               # the next token that is not a line break or a comment
    after = None
    for i in range(len(toks) - 1, -1, -1):
        nexts[i] = after
        if toks[i].type not in (tokenize.NL, tokenize.COMMENT):
            after = toks[i]
    out: list[str] = []
    starts_statement, depth = True, 0
    for i, tok in enumerate(toks):
        if tok.type in _SKIP:
            starts_statement = starts_statement or tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
            continue
        following = nexts[i]
        if tok.type == tokenize.STRING and starts_statement and (following is None or following.type == tokenize.NEWLINE):
            continue                                                    # a docstring or a bare string
        previous = out[-2:] if len(out) >= 2 else []
        depth += tok.string in "([{" if tok.type == tokenize.OP else 0
        depth -= tok.string in ")]}" if tok.type == tokenize.OP else 0
        keyword_argument = depth > 0 and following is not None and following.string == "="
        if tok.type == tokenize.STRING:
            out.append("STR")
        elif (tok.type == tokenize.NAME and tok.string not in _KEEP and not keyword_argument
              and (previous[-1:] != ["."] or previous[0] == "self")):
            out.append("ID")                                            # a name the student chose
        else:
            out.append(tok.string)
        starts_statement = False
    return out


def ngrams(tokens: list[str], n: int = N) -> set[tuple]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def solution_cells(nb) -> dict[str, str]:
    """{part: source} of a notebook's solution cells (the last copy of a grade_id wins)."""
    found = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("solution") and meta.get("grade_id") in PARTS:
            source = cell.get("source", "")
            found[meta["grade_id"]] = "".join(source) if isinstance(source, list) else str(source)
    return found


def skeletons(source_nb) -> dict[str, str]:
    """The released text of each solution cell: the source's cell without its solution blocks."""
    out = {}
    for part, text in solution_cells(source_nb).items():
        keep, inside = [], False
        for line in text.split("\n"):
            inside = (inside or line.strip() == "### BEGIN SOLUTION") and line.strip() != "### END SOLUTION"
            if not inside and line.strip() != "### END SOLUTION":
                keep.append(line)
        out[part] = "\n".join(keep)
    return out


def references() -> dict[str, str]:
    """course_lib's source of each part it has a reference of (read from its module's file, decorators
    included, as ``inspect.getsource`` gives it, without importing the module: no torch here)."""
    import ast

    from course_lib import _MODULE_OF
    from course_lib.grading.parts import CONTRACT_PARTS
    root = Path(importlib.util.find_spec("course_lib").origin).resolve().parent
    out = {}
    for part in CONTRACT_PARTS:
        module = _MODULE_OF[NAMES[part]]
        text = (root / f"{module}.py").read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == NAMES[part]:
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out[part] = "".join(lines[first - 1:node.end_lineno])
    return out


@dataclass
class Match:
    student: str
    part: str
    other: str            # "course_lib" or another student's id
    score: float          # shared share of n-grams, 0 .. 1
    size: int             # the student's own n-grams in this part

    @property
    def flagged(self) -> bool:
        return self.score >= THRESHOLD and self.size >= MIN_NGRAMS


def compare(submissions: dict[str, dict[str, str]], skeleton: dict[str, str] | None = None,
            reference: dict[str, str] | None = None) -> list[Match]:
    """For each student and part: the closest other student, and course_lib. ``submissions``:
    {student: {part: source}}."""
    skeleton = skeleton or {}
    reference = references() if reference is None else reference
    grams = {s: {p: ngrams(normalize(src)) - ngrams(normalize(skeleton.get(p, ""))) for p, src in parts.items()}
             for s, parts in submissions.items()}
    ref_grams = {p: ngrams(normalize(src)) for p, src in reference.items()}
    matches = []
    for student, parts in grams.items():
        for part, mine in parts.items():
            if not mine:
                continue
            if part in ref_grams:
                matches.append(Match(student, part, "course_lib", len(mine & ref_grams[part]) / len(mine), len(mine)))
            best = max(((len(mine & theirs[part]) / min(len(mine), len(theirs[part])), other)
                        for other, theirs in grams.items() if other != student and theirs.get(part)),
                       default=None)
            if best is not None:
                matches.append(Match(student, part, best[1], best[0], len(mine)))
    return matches


def table(matches: list[Match]) -> str:
    """One line per student: the highest scores against course_lib and another student, the flags."""
    lines = [f"{'student':<24} {'vs course_lib':>13} {'vs a student':>13}  flagged (look at these cells)"]
    for student in sorted({m.student for m in matches}):
        mine = [m for m in matches if m.student == student]
        lib = max((m.score for m in mine if m.other == "course_lib"), default=0.0)
        peer = max((m.score for m in mine if m.other != "course_lib"), default=0.0)
        flags = ", ".join(f"{m.part} ~ {m.other} ({m.score:.0%})" for m in mine if m.flagged) or "-"
        lines.append(f"{student:<24} {lib:>13.0%} {peer:>13.0%}  {flags}")
    return "\n".join(lines)


def write_csv(matches: list[Match], path) -> None:
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["student", "part", "compared_with", "score", "ngrams", "flagged"])
        for m in matches:
            out.writerow([m.student, m.part, m.other, f"{m.score:.3f}", m.size, int(m.flagged)])


def _read(path):
    """The notebook at ``path``, never through a symbolic link (ValueError: a link, not a regular file)."""
    import nbformat
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise ValueError(f"it could not be opened ({e.strerror}; a symbolic link is not followed)") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_NOTEBOOK_BYTES:
            raise ValueError("it is not a regular file of at most 20 MiB")
        return nbformat.reads(f.read().decode("utf-8"), as_version=4)


def _load(notebooks: dict) -> tuple[dict, dict]:
    """({student: solution cells}, {student: why it was skipped}) from paths (read without following
    links), ``(None, why)`` pairs the grader already refused, or nbformat nodes."""
    subs, skipped = {}, {}
    for student, nb in notebooks.items():
        try:
            if isinstance(nb, tuple):
                raise ValueError(nb[1])
            subs[student] = solution_cells(_read(nb) if isinstance(nb, (str, Path)) else nb)
        except ValueError as e:
            skipped[student] = str(e)
        except Exception as e:                             # noqa: BLE001 (not a notebook: skipped, reported)
            skipped[student] = f"it could not be read ({type(e).__name__})"
    return subs, skipped


def summary(notebooks, source=None, csv_path=None) -> str:
    """The report as text; writes ``csv_path`` if given.

    ``summary({student: notebook path or nbformat node}, source=<the source notebook>)``, or, from the
    autograder, ``summary(coursedir, assignment_id)`` with nbgrader's CourseDirectory: then the
    submissions under its ``submitted`` folder, the source under its source folder, and the CSV
    ``similarity_<assignment>.csv`` in the course root.
    """
    if hasattr(notebooks, "root") and isinstance(source, str):
        d = notebooks
        return report(Path(d.root), source, Path(d.root) / d.source_directory / source, d.submitted_directory,
                      csv_path)[0]
    subs, skipped = _load(notebooks)
    skeleton = skeletons(_read(source) if isinstance(source, (str, Path)) else source) if source is not None else {}
    matches = compare(subs, skeleton)
    if csv_path is not None:
        write_csv(matches, csv_path)
    flagged = sorted({m.student for m in matches if m.flagged})
    return (table(matches) + f"\n\n{len(flagged)} of {len(subs)} submissions have flagged parts "
            f"(>= {THRESHOLD:.0%} shared {N}-grams after renaming; a flag is a reason to look, not a verdict)."
            + "".join(f"\nnot compared: {s}: {why}" for s, why in sorted(skipped.items())))


def report(root: Path, assignment: str, source_dir=None, submitted="submitted", csv_path=None) -> tuple[str, Path]:
    """The report of a course directory: (text, the CSV's path)."""
    folders = [Path(source_dir)] if source_dir else [root / "notebooks" / assignment, root / "source" / assignment]
    sources = [p for f in folders for p in sorted(f.glob("*.ipynb"))]
    names = {p.stem for p in sources}                 # the assignment's notebooks, of plain ids only (as graded)
    found = sorted(p for p in (root / submitted).glob(f"*/{glob.escape(assignment)}/*.ipynb")
                   if plain_id(p.parts[-3]) and (not names or p.stem in names))
    if not found:
        return f"similarity: no submissions under {root / submitted}/*/{assignment}/", None
    many = len({p.stem for p in found}) > 1
    notebooks = {}
    for p in found:                        # as the grader reads them: no symbolic link anywhere on the way
        nb, why = read_notebook(str(p), str(root / submitted))
        notebooks[f"{p.parts[-3]}/{p.stem}" if many else p.parts[-3]] = (None, why) if why else nb
    csv_path = Path(csv_path) if csv_path else root / f"similarity_{assignment}.csv"
    text = summary(notebooks, sources[0] if sources else None, csv_path)
    return text + f"\nwritten: {csv_path}", csv_path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_grader.similarity",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("assignment")
    parser.add_argument("--root", default=".", help="the course directory (default: here)")
    parser.add_argument("--source", default=None, help="the source folder (default: notebooks/ or source/)")
    parser.add_argument("--csv", default=None, help="where to write the CSV (default: similarity_<assignment>.csv)")
    args = parser.parse_args(argv)
    text, csv_path = report(Path(args.root), args.assignment, args.source, csv_path=args.csv)
    print(text, file=sys.stdout if csv_path else sys.stderr)
    return 0 if csv_path else 1


if __name__ == "__main__":
    sys.exit(main())
