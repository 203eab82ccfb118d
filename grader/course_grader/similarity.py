"""Which solutions look alike: a report for the instructor after autograding, never a penalty.

It measures *containment*: how much of a student's solution cell is found elsewhere,

* in the reference: **all of course_lib** (every module, the helpers the graded classes call
  included), which is on every student's disk;
* in each other student's cell of the same part.

The fingerprints are copydetect's (Stanford MOSS's winnowing, Schleimer, Wilkerson and Aiken,
SIGMOD 2003): k-grams of a normalised token stream, winnowed to one hash per window, the released
notebook's skeleton of the cell removed as boilerplate, and the share of the cell's tokens covered by
shared fingerprints (copydetect 0.5.0's ``copydetect.utils``: ``winnow``, ``find_fingerprint_overlap``,
``get_copied_slices``, ``get_token_coverage``, written here in plain Python as :func:`winnow` and
:func:`copied_tokens`, which give the same numbers faster and spare the report copydetect's import;
tests/grading/test_report_shortcuts.py compares them with copydetect's; the k-grams are hashed without
Python's per-process salt, so a report is the same every run). Its own front end (pygments, every name and
attribute turned into ``V``) is replaced by Python's tokenizer (:func:`normalize`): the names a
student chose become one symbol, so renaming, reformatting, comments and reordering change nothing
but the seams, while the library's API names (``softmax``, ``masked_fill``) stay and tell honest
solutions apart. On the test corpus (14 honest styles, copies in four disguises) copydetect's own
front end (k = 25 characters) left one honest pair at 0.79 and one disguised copy at 0.79, around
any threshold, and took 20 s where this one takes about 1 s; this one keeps honest cells at most
0.52 against course_lib and 0.68 against another student, and copies at 0.86 or more.

A part is *flagged* when its containment reaches :data:`THRESHOLD` and the cell has at least
:data:`MIN_TOKENS` tokens of its own covered by fingerprints (a one-line feed-forward network looks
the same in every notebook). Between students, a fingerprint that more than :func:`common_limit`
students share is common code (MOSS's ``-m``): it is no evidence between two of them, and a cell made
mostly of it is flagged once, against "common code (N students)" (a leaked solution, or a group that
shares one), rather than in N * (N - 1) / 2 pairs. A flag asks an instructor to look at two cells side by
side; it decides nothing.

Command line, in the course directory after autograding::

    python -m course_grader.similarity 07_exercise [--csv similarity.csv]
"""

from __future__ import annotations

import argparse
import builtins
import csv
import functools
import glob
import hashlib
import importlib.util
import io
import itertools
import keyword
import math
import os
import stat
import sys
import tokenize
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .runner import MAX_NOTEBOOK_BYTES, read_notebook, solution_sources
from .submissions import plain_id

K = 16                 # tokens per fingerprinted k-gram (copydetect's noise threshold, in tokens)
GUARANTEE = 20         # any run of this many shared tokens is found (copydetect's guarantee threshold)
WINDOW = GUARANTEE - K + 1
THRESHOLD = 0.8        # a flag from this share of the cell's tokens found elsewhere on
MIN_TOKENS = 60        # cells with fewer tokens of their own covered (a one-line FFN, the Reverser) are never flagged
MAX_CHARS = 200_000    # of a cell compared (a solution is a few KB; a 20 MiB cell is cut, not compared whole)
MAX_TOKENS = 20_000    # of a cell compared
_KEEP = set(keyword.kwlist) | set(dir(builtins)) | {"self", "torch", "nn", "F", "np", "math"}
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
         tokenize.ENDMARKER}


def normalize(source: str, max_chars: int = MAX_CHARS, max_tokens: int = MAX_TOKENS) -> list[str]:
    """The cell's tokens without comments, docstrings or layout, the names the student chose as ``ID``
    (keyword arguments, keywords, builtins and the library's names stay). Linear in the cell, which
    is cut at :data:`MAX_CHARS` characters and :data:`MAX_TOKENS` tokens (a solution has a few hundred)."""
    source = source[:max_chars]
    try:
        toks = [t for t in itertools.islice(tokenize.generate_tokens(io.StringIO(source).readline), max_tokens)
                if t.type != tokenize.ERRORTOKEN]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source.split()[:max_tokens]
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
        if (tok.type == tokenize.STRING and starts_statement
                and (following is None or following.type == tokenize.NEWLINE)):
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


def skeletons(source_nb) -> dict[str, str]:
    """The released text of each solution cell: the source's cell without its solution blocks."""
    out = {}
    for part, text in solution_sources(source_nb).items():
        keep, inside = [], False
        for line in text.split("\n"):
            inside = (inside or line.strip() == "### BEGIN SOLUTION") and line.strip() != "### END SOLUTION"
            if not inside and line.strip() != "### END SOLUTION":
                keep.append(line)
        out[part] = "\n".join(keep)
    return out


@functools.cache
def _code(token: str) -> int:
    """A token's 64-bit code, the same in every process (Python's ``hash`` of a str is salted per process)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


_BASE = np.uint64(1_000_003)


def kgram_hashes(tokens: list[str]) -> np.ndarray:
    """The hash of every k-gram of ``tokens`` (a polynomial of the tokens' codes, modulo 2**64), stable
    across processes and runs: copydetect's ``hashed_kgrams`` on one symbol per token, minus the salt."""
    codes = np.array([_code(t) for t in tokens], dtype=np.uint64)
    n = len(codes) - K + 1
    out = np.zeros(max(n, 0), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(K):
            out = out * _BASE + codes[j:j + n]
    return out.view(np.int64)


def winnow(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the hashes selected, their positions): copydetect 0.5.0's robust winnowing over windows of
    :data:`WINDOW` (``copydetect.utils.winnow(hashes, WINDOW, remove_duplicates=False)`` with its Python
    ``_winnow``), step for step, on Python floats where copydetect keeps a numpy float buffer (the same
    float64 values, so the same ties). Written here because importing copydetect imports matplotlib's
    pyplot (0.6 to 0.9 s a process) and its numpy buffer took 0.25 ms a cell;
    tests/grading/test_report_shortcuts.py checks it against copydetect's."""
    selected: list[int] = []
    buffer = [math.inf] * WINDOW
    r = low = 0                                # the newest value's slot, the slot of the window's minimum
    for i, value in enumerate(hashes.astype(np.float64).tolist()):
        r = (r + 1) % WINDOW
        buffer[r] = value
        if low == r:                           # the minimum left the window: the rightmost minimum of it
            j = (r - 1) % WINDOW
            while j != r:
                if buffer[j] < buffer[low]:
                    low = j
                j = (j - 1) % WINDOW
            selected.append(i - ((r - low) % WINDOW))
        elif value < buffer[low]:
            low = r
            selected.append(i)
    where = np.array(selected, dtype=np.int64)
    return hashes[where], where


@dataclass
class Print:
    """A cell's winnowed fingerprints (copydetect's ``CodeFingerprint``, on :func:`normalize`'s tokens)."""
    hashes: set
    where: dict            # hash -> [token index, ...]
    coverage: int          # tokens covered by the fingerprints (copydetect's token coverage)


def fingerprint(source: str, boilerplate=(), limit: bool = True) -> Print:
    """The fingerprints of ``source`` without those of ``boilerplate`` (hashes), copydetect's winnowing."""
    tokens = normalize(source) if limit else normalize(source, MAX_CHARS * 100, MAX_TOKENS * 100)
    if len(tokens) < K:
        return Print(set(), {}, 0)
    hashes, where = winnow(kgram_hashes(tokens))                                        # copydetect's winnowing
    if len(boilerplate):
        keep = ~np.isin(hashes, np.fromiter(boilerplate, dtype=np.int64, count=len(boilerplate)))
        hashes, where = hashes[keep], where[keep]
    index: dict = {}
    for h, i in zip(hashes.tolist(), where.tolist()):
        index.setdefault(h, []).append(i)
    # copydetect's get_token_coverage: the tokens that the k-grams starting at the positions kept cover
    return Print(set(index), index, copied_tokens(sorted(where.tolist())) if len(where) else 0)


def containment(mine: Print, hashes: set) -> float:
    """The share of ``mine``'s covered tokens that fingerprints in ``hashes`` cover too, 0 .. 1."""
    if not mine.coverage:
        return 0.0
    shared = mine.hashes & hashes
    if not shared:
        return 0.0
    return copied_tokens(sorted(i for h in shared for i in mine.where[h])) / mine.coverage


def copied_tokens(starts: list[int]) -> int:
    """The tokens covered by the k-grams starting at ``starts`` (sorted): copydetect's
    ``find_fingerprint_overlap`` and ``get_copied_slices``, summed, in plain Python (a cell has a few
    dozen fingerprints, where numpy's per-call cost is most of the time). A k-gram starting within
    ``K - 1`` tokens of the previous one continues its slice; a slice ends ``K`` tokens after its last."""
    total, first, last = 0, starts[0], starts[0]
    for i in starts[1:]:
        if i - last > K - 1:
            total += last + K - first
            first = i
        last = i
    return total + last + K - first


def reference_files() -> list[Path]:
    """Every Python file of course_lib (the package on every student's disk)."""
    root = Path(importlib.util.find_spec("course_lib").origin).resolve().parent
    return sorted(root.rglob("*.py"))


@functools.lru_cache(maxsize=4)
def _reference_hashes(files: tuple) -> frozenset:
    out: set = set()
    for path in files:
        out |= fingerprint(Path(path).read_text(encoding="utf-8"), limit=False).hashes
    return frozenset(out)


def reference_hashes() -> frozenset:
    """The fingerprints of all of course_lib (made once a process while its files stay the same)."""
    return _reference_hashes(tuple(str(p) for p in reference_files()))


def common_limit(students: int) -> int:
    """A fingerprint in more than this many students' cells of a part is common code, not a copy."""
    return max(8, students // 10)


@dataclass
class Match:
    student: str
    part: str
    other: str            # "course_lib" or another student's id
    score: float          # containment, 0 .. 1
    size: int             # the student's own tokens covered by fingerprints in this part

    @property
    def flagged(self) -> bool:
        return self.score >= THRESHOLD and self.size >= MIN_TOKENS


COMMON = "common code"    # the "other" of a match against the code that more than common_limit students share
CANDIDATES = 3            # other students compared exactly, per student and part: those sharing most fingerprints


def compare(submissions: dict[str, dict[str, str]], skeleton: dict[str, str] | None = None) -> list[Match]:
    """For each student and part: containment in course_lib, and the closest other student (the larger
    of the two containments, so that both sides of a copy are flagged). ``submissions``:
    {student: {part: source}}.

    Linear in the class: other students are found through an index of fingerprints (each of which
    names at most :func:`common_limit` students), and only the :data:`CANDIDATES` that share most are
    compared."""
    skeleton = skeleton or {}
    boiler = {p: fingerprint(text).hashes for p, text in skeleton.items()}
    made: dict = {}                       # (part, source) -> Print: a cell the class shares is fingerprinted once

    def print_of(part, source):
        key = (part, source)
        if key not in made:
            made[key] = fingerprint(source, boiler.get(part, ()))
        return made[key]
    prints = {s: {p: print_of(p, src) for p, src in parts.items()} for s, parts in submissions.items()}
    library = reference_hashes()
    limit = common_limit(len(submissions))
    matches = []
    for part in sorted({p for parts in prints.values() for p in parts}):
        mine = {s: parts[part] for s, parts in prints.items() if part in parts and parts[part].coverage}
        holders = defaultdict(list)
        for s, pr in mine.items():
            for h in pr.hashes:
                holders[h].append(s)
        rare = {h for h, who in holders.items() if len(who) <= limit}
        common = set(holders) - rare
        for s, pr in mine.items():
            matches.append(Match(s, part, "course_lib", containment(pr, library), pr.coverage))
            shared_widely = pr.hashes & common
            score = containment(pr, shared_widely) if shared_widely else 0.0
            if score * pr.coverage >= 2 * MIN_TOKENS:   # a long cell many students share (obvious short code is not)
                many = int(np.median([len(holders[h]) for h in shared_widely]))    # typical, not the skeleton's seams
                matches.append(Match(s, part, f"{COMMON} ({many} students)", score, pr.coverage))
            shared = Counter(o for h in pr.hashes & rare for o in holders[h] if o != s)
            best = None
            for other, _ in shared.most_common(CANDIDATES):
                theirs = mine[other]
                score = max(containment(pr, theirs.hashes & rare), containment(theirs, pr.hashes & rare))
                size = min(pr.coverage, theirs.coverage)
                if best is None or score > best.score:
                    best = Match(s, part, other, score, size)
            if best is not None:
                matches.append(best)
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
        out.writerow(["student", "part", "compared_with", "score", "tokens", "flagged"])
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
            subs[student] = solution_sources(_read(nb) if isinstance(nb, (str, Path)) else nb)
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
            f"(>= {THRESHOLD:.0%} of a cell's tokens found elsewhere, fingerprinted after renaming; a flag is a "
            "reason to look, not a verdict)."
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
