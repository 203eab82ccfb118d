"""``python -m course_grader lms-collect ASSIGNMENT [ZIP ...] [--lms moodle|canvas] [--force]``: an LMS
download (Moodle's or Canvas's zip of the class's uploads) unpacked by the course itself, into
``submitted/<student id>/<assignment>/<notebook>.ipynb``, instead of by nbgrader's ``zip_collect``.

``zip_collect`` unpacks every archive inside the download (a zip a student uploaded included) and
matches its pattern against the whole path, so an uploaded zip holding a file named as the LMS names
another participant handed that notebook to the other student, or stopped the class ("Duplicate
submission file", issue 48 item 3); a 15 KB upload unpacked to 34 MB in 1,098 files (item 4); two
files of one student, or a copy named ``encoder_from_scratch (1).ipynb``, stopped the class or were
skipped without a word (issue 49 item 4). Here:

* **the student is named by the download's top level alone**: each member's first path component,
  read with an anchored pattern of the LMS's own naming (the *first* id in it, the one the LMS wrote),
  and the id must be on the roster (the gradebook's students, when it has any). Nothing a student
  uploaded (a file's own name, a folder inside an upload) can name another student;
* **top-level members only**: a member is a file of the top level, or (Moodle's "in folders" layout)
  one level inside a student's folder; anything deeper, and every archive (a ``.zip`` a student
  uploaded), is never unpacked: it is refused for that student, with a line in the log;
* **limits**: on the download's size and member count, on each file's size and compression ratio, on
  each student's files; what is read is bounded as it is read (a member's declared size may lie);
* **one notebook per student and notebook**: the file whose name is the notebook's, whatever its
  capitals, a ``(1)`` a browser added or a ``-1`` Canvas added (else a student's only ``.ipynb``); of
  several, the newest (Canvas: the highest attachment id; Moodle: the latest time in the zip), each
  choice said in the log; other files are left out, said too;
* **the notebook gate** (:mod:`.notebook_in`): what is written is the canonical notebook, mode 0600 in
  folders 0700, whatever the zip says; a notebook that is not valid JSON is refused for that student.

A refusal concerns one upload of one student; the class goes on and the command exits 0. It exits 1
only when the download itself cannot be read (not a zip, over the limits of a whole download).
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import logging
import os
import re
import shutil
import sys
import tempfile
import zipfile

from . import notebook_in, uploads
from .submissions import assignment_notebooks, gradebook_exists, plain_id

log = logging.getLogger("course_grader.lms_in")


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one LMS download may hold."""
    zip_bytes: int = 1 << 30             # the download itself
    members: int = 20_000                # files and folders in it
    file_bytes: int = 20 << 20           # one notebook (as the grader reads it)
    ratio: int = 200                     # uncompressed / compressed, one member
    student_files: int = 50              # files of one student
    student_bytes: int = 60 << 20        # what the grader reads of one student


#: the top-level name each LMS writes: (student id, a number that orders one student's files, the rest)
MOODLE = re.compile(r"(?P<name>[^/]*?)_(?P<id>\d+)_assignsubmission_file_(?P<rest>[^/]*)")
CANVAS = re.compile(r"(?:anon_(?P<anon>[A-Za-z0-9]+)|(?P<slug>[^_/]*?)(?:_LATE)?_(?P<id>\d+))(?:_LATE)?"
                    r"_(?P<attachment>\d+)_(?P<rest>[^/]*)", re.I)
#: Canvas's ids after a name that may end in ``_digits`` (Canvas writes ``late`` in small letters, and keeps
#: ``_`` and digits of a name a student may edit, removing only ``_digits_``): each place they may start
_CANVAS_IDS = re.compile(r"(?=_(?:late_)?(\d+)(?:_late)?_(\d+)_([^/]*)$)", re.I)
_CANVAS_SLUG = re.compile(r"\w*")
_INNER_ID = re.compile(r"_\d+_")
ARCHIVES = re.compile(r"(?i)\.(zip|tar|tgz|tbz2?|txz|gz|bz2|xz|7z|rar|jar|whl|zst)$")
_COPY = re.compile(r"(?i)(?:\s*\(\d+\)|-\d+)+$")          # "name (1)", "name-1": a browser's or Canvas's copy


class Refused(ValueError):
    """A whole download the course does not unpack."""


def notebook_name(filename: str, notebooks: list[str]) -> str | None:
    """The assignment's notebook ``filename`` is (capitals, ``(1)`` and ``-1`` aside), or None."""
    stem, dot, ext = filename.rpartition(".")
    if not dot or ext.lower() != "ipynb":
        return None
    stem = _COPY.sub("", stem.strip()).lower()
    return next((nb for nb in notebooks if nb.lower() == stem), None)


def readings(member: str, lms: str) -> list[tuple[str, int, str]]:
    """Every (student id, order among the student's files, the file's own name) the LMS's naming reads in
    a member's top-level component: Moodle's first id (Moodle writes a ``_`` of a full name as a space);
    for Canvas, each place its ids may start, as a student may edit the name Canvas writes before them
    (``Eve_1001`` is kept as ``eve_1001``, so ``eve_1001_1004_556004_x.ipynb`` reads as 1001's and as
    1004's); [] when the component is not an LMS's upload name."""
    top, _, inner = member.partition("/")
    m = (MOODLE if lms == "moodle" else CANVAS).fullmatch(top)
    if m is None:
        return []
    tail = "/" + inner if inner else ""
    if lms == "moodle":
        return [(m.group("id"), 0, inner if m.group("rest") == "" else m.group("rest") + tail)]
    if m.group("anon"):                          # anonymous grading's name: never read as a name "anon"
        return [(f"anon_{m.group('anon')}", int(m.group("attachment")), m.group("rest") + tail)]
    found = []
    for at in _CANVAS_IDS.finditer(top):
        slug = top[:at.start()]
        if _CANVAS_SLUG.fullmatch(slug) and not _INNER_ID.search(slug):
            found.append((at.group(1), int(at.group(2)), at.group(3) + tail))
    return found


def whose(member: str, lms: str, roster: set | None = None) -> tuple[str, int, str] | None:
    """(student id, order among the student's files, the file's own name) of a member of the download,
    named by its top-level component only; None when that component is not an LMS's upload name, or when
    it reads as two students' (on the ``roster``, else two plain ids): a name made to look like another's."""
    found = readings(member, lms)
    if len({r[0] for r in found}) > 1:
        found = _students(found, roster)
    return found[0] if len({r[0] for r in found}) == 1 else None


def _students(found: list, roster: set | None) -> list:
    """The readings of ``found`` whose id is a student's: on the ``roster``, else a plain id."""
    return [r for r in found if (r[0] in roster if roster is not None else plain_id(r[0]))]


def _read(z: zipfile.ZipFile, info: zipfile.ZipInfo, limits: Limits) -> bytes:
    if info.file_size > limits.file_bytes:
        raise ValueError(f"larger than {limits.file_bytes} bytes")
    if info.file_size > limits.ratio * max(info.compress_size, 1) + 4096:
        raise ValueError(f"compressed more than {limits.ratio} times (a zip bomb)")
    with z.open(info) as f:
        data = f.read(limits.file_bytes + 1)                  # bounded whatever the zip declares
    if len(data) > limits.file_bytes:
        raise ValueError(f"larger than {limits.file_bytes} bytes")
    return data


def _write_private(folder: str, name: str, data: bytes) -> None:
    os.makedirs(folder, mode=0o700, exist_ok=True)
    fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def plan(path: str, lms: str, notebooks: list[str], roster: set | None, limits: Limits = Limits()):
    """({(student, notebook): canonical bytes}, [log lines]) of the download at ``path``; raises
    :class:`Refused` when the download itself is not read (not a zip, over a whole download's limits)."""
    notes: list[str] = []
    try:
        if os.path.getsize(path) > limits.zip_bytes:
            raise Refused(f"{ascii(path)} is larger than {limits.zip_bytes} bytes")
        z = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise Refused(f"{ascii(path)} is not a zip that can be read ({e})") from None
    with z:
        members = z.infolist()
        if len(members) > limits.members:
            raise Refused(f"{ascii(path)} holds more than {limits.members} files")
        candidates: dict = {}
        files: dict = {}
        for info in members:
            if info.is_dir():
                continue
            named = whose(info.filename, lms, roster)
            if named is None:
                ids = sorted({r[0] for r in _students(readings(info.filename, lms), roster)})
                notes.append(f"Names {' and '.join(ids)} (a name made to look like another student's; left out): "
                             f"{ascii(info.filename)[:120]}" if len(ids) > 1 else
                             f"Not an upload's name in the download (left out): {ascii(info.filename)[:120]}")
                continue
            student, order, own = named
            if not plain_id(student) or (roster is not None and student not in roster):
                notes.append(f"Not on the roster (left out): {ascii(student)} ({ascii(info.filename)[:120]})")
                continue
            files[student] = files.get(student, 0) + 1
            if files[student] > limits.student_files:
                notes.append(f"{student}: more than {limits.student_files} files; {ascii(own)[:80]} left out")
                continue
            if "/" in own or ARCHIVES.search(own):
                what = "an archive" if ARCHIVES.search(own) else "in a folder"
                notes.append(f"{student}: {ascii(own)[:80]} is {what} inside the upload: not unpacked (ask the "
                             "student for the notebook itself)")
                continue
            notebook = notebook_name(own, notebooks)
            lone = own.lower().endswith(".ipynb") and len(notebooks) == 1
            if notebook is None and not lone:
                notes.append(f"{student}: handed in a .py, not the notebook: {ascii(own)[:80]} left out (ask for "
                             f"{notebooks[0]}.ipynb)" if own.lower().endswith(".py") else
                             f"{student}: {ascii(own)[:80]} is not a notebook of the assignment (left out)")
                continue
            key = (student, notebook or notebooks[0])
            exact = own == f"{notebook}.ipynb"
            rank = (notebook is not None, order, info.date_time, exact, own)     # its name, the newest, no copy
            candidates.setdefault(key, []).append((rank, info, own))
        taken: dict = {}
        used: dict = {}
        for (student, notebook), found in sorted(candidates.items()):
            found.sort(key=lambda c: c[0], reverse=True)
            for rank, info, own in found:
                try:
                    used[student] = used.get(student, 0) + info.file_size
                    if used[student] > limits.student_bytes:
                        raise ValueError(f"the student's files exceed {limits.student_bytes} bytes")
                    nb, repaired = notebook_in.parse(_read(z, info, limits), limits.file_bytes)
                    repaired += notebook_in.canonical(nb)
                except Exception as e:                       # noqa: BLE001 (one upload refused, the class goes on)
                    notes.append(f"{student}: {ascii(own)[:80]} refused: {str(e)[:200]}")
                    continue
                import nbformat
                taken[(student, notebook)] = nbformat.writes(nb).encode("utf-8")
                if not rank[0]:
                    notes.append(f"{student}: {ascii(own)[:80]} taken as {notebook}.ipynb (the only notebook)")
                if repaired:
                    notes.append(f"{student}: {ascii(own)[:80]} repaired: {'; '.join(repaired)}")
                others = [ascii(o)[:80] for _, _, o in found if o != own]
                if others:
                    notes.append(f"{student}: {len(found)} files for {notebook}.ipynb; took {ascii(own)[:80]} "
                                 f"(newest, else named as released), left {', '.join(others)}")
                break
    return taken, notes


def roster_of(coursedir) -> set | None:
    """The gradebook's student ids, or None when it has none (every id is then taken, and said)."""
    if not gradebook_exists(coursedir):
        return None                                          # no gradebook yet (none made here)
    try:
        from nbgrader.api import Gradebook
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            ids = {s.id for s in gb.students}
    except Exception:                                        # noqa: BLE001 (no gradebook yet)
        return None
    return ids or None


def collect(coursedir, assignment: str, zips: list[str], lms: str, force: bool = False) -> list[str]:
    """Unpack ``zips`` (:func:`plan`) into ``submitted/``; returns the log's lines. A student whose
    folder exists is left as it is unless ``force`` (then the folder is replaced: a new download)."""
    notebooks = assignment_notebooks(coursedir, assignment)
    if not notebooks:
        raise Refused(f"the assignment {ascii(assignment)} is in neither the gradebook nor the source folder")
    roster = roster_of(coursedir)
    lines = [] if roster is not None else ["No students in the gradebook: every id the download names is taken"]
    taken: dict = {}
    for path in zips:
        got, notes = plan(path, lms, notebooks, roster)
        lines += notes
        taken.update(got)                        # a later download wins
    for student in sorted({s for s, _ in taken}):
        dest = coursedir.format_path(coursedir.submitted_directory, student, assignment)
        if os.path.lexists(dest) and not force:
            lines.append(f"{student}: already in submitted/ (not replaced; --force to collect again)")
            continue
        parent = os.path.dirname(dest)
        os.makedirs(parent, mode=0o700, exist_ok=True)
        place = tempfile.mkdtemp(prefix=".lms-", dir=parent)
        for (who, notebook), data in sorted(taken.items()):
            if who == student:
                _write_private(os.path.join(place, "copy"), f"{notebook}.ipynb", data)
        if os.path.lexists(dest):
            shutil.rmtree(dest)
            lines.append(f"Updating submission: {student} {assignment}")
        else:
            lines.append(f"Collecting submission: {student} {assignment}")
        os.rename(os.path.join(place, "copy"), dest)
        os.rmdir(place)
    return lines


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_grader lms-collect")
    parser.add_argument("assignment")
    parser.add_argument("zips", nargs="*", help="default: downloaded/ASSIGNMENT/archive/*.zip")
    parser.add_argument("--lms", choices=("moodle", "canvas"), default="moodle")
    parser.add_argument("--force", action="store_true", help="replace the submissions already collected")
    args = parser.parse_args(argv)
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader
    coursedir = CourseDirectory()
    if os.path.isfile("nbgrader_config.py"):
        coursedir = CourseDirectory(config=PyFileConfigLoader("nbgrader_config.py", path=os.getcwd()).load_config())
    zips = args.zips or sorted(glob.glob(os.path.join(glob.escape(coursedir.root), "downloaded",
                                                      glob.escape(args.assignment), "archive", "*.zip")))
    if not zips:
        print(f"no download: give the zip, or put it in downloaded/{args.assignment}/archive/", file=sys.stderr)
        return 1
    try:
        lines = collect(coursedir, args.assignment, zips, args.lms, args.force)
    except Refused as e:
        print(f"Not collected: {e}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    uploads.keep(coursedir.root, args.assignment, lines)      # for lms-times, the grades and the class report
    return 0


#: what ``nbgrader zip_collect`` answers in this course: the route in is :func:`main` alone
ZIP_COLLECT_OFF = ("nbgrader zip_collect is switched off for this course: it unpacks archives a student uploaded "
                   "and matches names on the whole path. Run `python -m course_grader lms-collect ASSIGNMENT "
                   "--lms moodle|canvas` (docs/instructors.md).")


def switch_off_zip_collect() -> None:
    """``nbgrader zip_collect`` (nbgrader_config.py calls this) logs :data:`ZIP_COLLECT_OFF` and exits 1,
    writing nothing: an LMS download enters by ``lms-collect`` only."""
    from nbgrader.apps.zipcollectapp import ZipCollectApp

    def refuse(self):
        self.log.error(ZIP_COLLECT_OFF)
        self.exit(1)
    refuse.switched_off = True
    if not getattr(ZipCollectApp.start, "switched_off", False):
        ZipCollectApp.start = refuse
