"""An LMS download graded end to end (issue 48): the promises of the route fuzzers, kept by the real
commands in the order an instructor runs them, with grading included, every command traced.

The fuzzers (tests/grading/test_fuzz_downloads.py and its siblings) stop at the gates: "graded in full"
is there "admitted whole by the notebook gate". Here one course receives a Moodle download and a Canvas
download, each holding one honest student's correct notebook (the model solution, :func:`attack_kit.
released_course`) beside the hostile uploads of the fuzzers' kinds: a zip bomb, a zip inside the upload,
a file named as the honest student's, a notebook with escaped lone surrogates, a written answer that
restyles the page (``fuzz_kit.RESTYLING``), two copies of one notebook; the Moodle download also holds a
reader (:data:`READER`), whose graded cell tries to open the honest student's files. Then
``lms-collect`` (each download), the sandboxed ``autograde --jobs 1`` and ``nbgrader generate_feedback``
run as commands, each under strace (:mod:`trace_kit`), and:

* every command exits 0;
* each honest student's notebook is collected byte for byte as uploaded and gets every autograded part's
  full marks;
* each hostile upload is refused or graded for its uploader alone, with a line of ``lms-collect``'s log
  naming the uploader; no student's notebook holds another's text;
* **no process that ran a student's code opened a file of any student** (the trace of every command:
  :meth:`trace_kit.Trace.reads_of_other_students` is empty of successful opens), nor anything outside the
  sandbox's view (:meth:`trace_kit.Trace.opened_outside`); the reader's tries are in the trace, each
  failed (the part's ``torch.from_file`` reaches the kernel, past the guard; so does its glob where the
  guard lets it, :func:`globbed`);
* ``lms-collect`` opened for writing only ``submitted/<student>/`` of the students its download names, and
  the course's own records, and read nothing of the test's root but its own download;
* nothing is written outside the course: the test's temporary root (the downloads, an empty ``HOME`` and
  ``TMPDIR`` the commands get) is as it was;
* every feedback page loads nothing from elsewhere and restyles nothing (``fuzz_kit``'s counters).

Then a re-upload (:func:`test_a_re_upload_replaces_the_folder_and_flags_the_changed_hand_grade`): a TA
gives the honest Moodle student's written answer a hand grade (nbgrader's Gradebook API); a second
download holds that student's notebook with the answer changed and the reader's new attack;
``lms-collect --force``, then ``autograde --force`` and ``generate_feedback --force`` of those two
students (``--student``: without times from the LMS, nothing says the re-upload is newer), traced: the
student's folder is replaced whole (a new folder; a file the old one held is gone), the log says
"Updating submission", the new notebook is graded, the hand grade is kept but flagged for review, the
honest students keep full marks, nothing outside the course is written, no part opened a student's file,
and the gate read nothing of the old folder's notebook (the trace shows it removed).

It fails with a gate removed (tried by hand, each planted in the source, then removed): Moodle's names
matched on their last id (the claim takes the honest student's place), lone surrogates not repaired
(``lms-collect`` exits 1), ``<style>`` allowed by ``html_out`` (the restyler's feedback page); the
course's folder bound read-only into the sandbox's view (``sandbox.bwrap_argv``) with the part's own
``/tmp``, its uid (``nobody``) and Landlock taken away (``zygote``): each of the reader's tries succeeds,
``../`` and ``/proc/self/cwd`` included, and the traced-reads assertion names every open by the path the
kernel resolved (with the part's own ``/tmp`` kept, the bind, uid and Landlock gone, every try was still
refused: the course lies under ``/tmp``, which the part's own tmpfs covers); a re-upload merged into the
old folder (``lms_in.collect`` moving the new notebook into it instead of replacing the folder): the old
folder's file stays and the folder is the old one. The checker itself fails on a synthetic trace with a
successful read (tests/grading/test_trace_kit.py).
"""

from __future__ import annotations

import io
import json
import os
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from attack_kit import released_course
from fuzz_kit import RESTYLING, active_html, loads_or_restyles, upload_name, zip_of
from trace_kit import Trace, confined_reads, traced_command

ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"
BIN = Path(sys.executable).parent
FILE = f"{NOTEBOOK}.ipynb"
HONEST_TIME, LATER = (2026, 12, 4, 12, 0, 0), (2026, 12, 4, 18, 0, 0)   # the attackers' files are the newer
AGAIN = (2026, 12, 5, 9, 0, 0)                                           # the second download's
SURROGATE = "SURROGATE-HERE"
READER = 9                              # the id ``base + READER`` of the Moodle download: the reader


def reading(paths: list[str], listing: str) -> str:
    """A graded cell's opening lines that try to open each of ``paths`` with ``torch.from_file`` (native
    code: it reaches the kernel, past the guard's audit hook, so the trace shows each try), then glob
    ``listing`` (:func:`globbed`: under ``/tmp``, as pytest's folders usually are, the guard lets it
    through and its ``scandir`` reaches the kernel too; elsewhere the guard ends the part there). Only
    what the static rules allow a solution cell. The view holds none of it: the part finds nothing, and
    its solution below still passes unless the guard ended it."""
    tries = ", ".join(repr(p) for p in paths)
    return (f"for _path in [{tries}]:\n"
            "    try:\n"
            "        torch.from_file(_path, size=1, dtype=torch.uint8)\n"
            "    except Exception:\n"
            "        pass\n"
            f"getattr(torch, 'gl' + 'ob').glob({listing!r})\n")


def attacked(nb, part: str, code: str):
    """``nb`` with ``code`` run first in the solution cell of ``part``."""
    nb = nbformat.from_dict(json.loads(nbformat.writes(nb)))
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == part)
    cell.source = code + ("".join(cell.source) if isinstance(cell.source, list) else cell.source)
    return nb


def answered(nb, text: str):
    """``nb`` with every written answer (an nbgrader solution cell in markdown) reading ``text``."""
    nb = nbformat.from_dict(json.loads(nbformat.writes(nb)))
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown" and meta.get("solution"):
            cell.source = text
    return nb


def download(lms: str, base: int, good, release, root: Path | None = None) -> tuple[bytes, dict]:
    """(the zip of one class's uploads, {student: what the test expects of them}). Ids: ``base + 1`` the
    honest student; + 3 a claim on the honest one's name (the release, unanswered: it scores nothing);
    + 4 a zip bomb; + 5 a zip holding a notebook named as the honest one's; + 6 lone surrogates; + 7 a
    restyling answer; + 8 two copies; with the course's ``root``, + 9 the reader (:func:`reader`). Each
    hostile notebook carries its uploader's mark."""
    ids = {k: str(base + k) for k in range(1, 10 if root else 9)}
    honest = ids[1]

    def mark(k: int) -> str:
        return f"mallory-{ids[k]}"

    def text(nb) -> bytes:
        return nbformat.writes(nb).encode()
    surrogate = answered(good, f"{mark(6)} {SURROGATE}")
    surrogate.metadata["note"] = SURROGATE
    files = [  # (student, the uploaded file's own name, bytes, time in the zip, Canvas's attachment)
        (honest, FILE, text(answered(good, f"the reasons of {honest}")), HONEST_TIME, 555001),
        (ids[3], upload_name(lms, honest, "Ada Lovelace", FILE), text(answered(release, mark(3))), LATER, 555030),
        (ids[4], FILE, b"\0" * 400_000, LATER, 555040),
        (ids[5], "work.zip", zip_of({upload_name(lms, honest, "Ada Lovelace", FILE):
                                     text(answered(release, mark(5)))}), LATER, 555050),
        (ids[6], FILE, text(surrogate).replace(SURROGATE.encode(), b"\\ud800"), LATER, 555060),
        (ids[7], FILE, text(answered(good, f"{mark(7)} {RESTYLING[0]}")), LATER, 555070),
        (ids[8], FILE, text(answered(release, mark(8))), HONEST_TIME, 555080),
        (ids[8], f"{NOTEBOOK} (1).ipynb", text(answered(good, f"{mark(8)} {RESTYLING[3]}")), LATER, 555081),
    ] + ([(ids[READER], FILE, text(reader(good, root, honest, mark(READER))), LATER, 555090)] if root else [])
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for student, own, data, when, attachment in files:
            name = "Ada Lovelace" if student == honest else "Mallory"
            info = zipfile.ZipInfo(upload_name(lms, student, name, own, attachment), date_time=when)
            info.external_attr = 0o100644 << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    expect = {honest: {"honest": f"the reasons of {honest}", "log": f"Collecting submission: {honest} {ASSIGNMENT}"},
              ids[3]: {"mark": mark(3), "log": f"{ids[3]}: {ascii(upload_name(lms, honest, 'Ada Lovelace', FILE))}"
                                               f" taken as {FILE} (the only notebook)"},
              ids[4]: {"refused": f"{ids[4]}: {ascii(FILE)} refused: compressed more than"},
              ids[5]: {"refused": f"{ids[5]}: 'work.zip' is an archive inside the upload: not unpacked"},
              ids[6]: {"mark": mark(6), "log": f"{ids[6]}: {ascii(FILE)} repaired: 6 lone surrogates replaced"},
              ids[7]: {"mark": mark(7), "log": f"Collecting submission: {ids[7]} {ASSIGNMENT}"},
              ids[8]: {"mark": mark(8), "log": f"{ids[8]}: 2 files for {FILE}; took '{NOTEBOOK} (1).ipynb'"}}
    if root:
        expect[ids[READER]] = {"mark": mark(READER), "log": f"Collecting submission: {ids[READER]} {ASSIGNMENT}",
                               "tries": reader_paths(root, honest) + globbed(LISTING.format(root=root)),
                               "attacked": "positional_encoding"}
    return out.getvalue(), expect


def reader_paths(root: Path, honest: str) -> list[str]:
    """Where the first round's reader looks for the honest student's notebook: by its path in
    ``submitted/`` and ``autograded/``, by ``../`` from the part's working directory, through
    ``/proc/self/cwd``, the course folder itself and the Moodle download; then a glob of every student's
    submitted notebook (:data:`LISTING`)."""
    rel = f"submitted/{honest}/{ASSIGNMENT}/{FILE}"
    return [str(root / rel), str(root / "autograded" / honest / ASSIGNMENT / FILE),
            "../" * 30 + str(root / rel).lstrip("/"), "/proc/self/cwd/" + "../" * 30 + str(root / rel).lstrip("/"),
            str(root), str(root.parent / "moodle.zip")]


def globbed(pattern: str) -> list[str]:
    """[the folder a glob of ``pattern`` lists first (its last folder without a wildcard)] where the glob
    reaches the kernel: the guard lets a pattern under ``/tmp`` through (the part's own /tmp); elsewhere
    (a test root outside ``/tmp``) it ends the part first, and the part scores nothing: []."""
    parts = Path(pattern).parts
    return [str(Path(*parts[:next(i for i, p in enumerate(parts) if "*" in p)]))] if pattern.startswith("/tmp/") \
        else []


def full_marks(scores: dict) -> bool:
    """Whether ``scores`` ({grade: (score, max)}) are full on every part, and there are some."""
    return bool(scores) and all(a == m > 0 for a, m in scores.values())


def full_marks_but(scores: dict, attacked: str, pattern: str) -> bool:
    """Whether ``scores`` are full on every part, the ``attacked`` one included when the glob of ``pattern``
    passed the guard (:func:`globbed`), else 0 there."""
    ended = not globbed(pattern)
    return bool(scores) and all((a == 0) if ended and g == f"test_{attacked}" else (a == m > 0)
                                for g, (a, m) in scores.items())


def reader(good, root: Path, honest: str, mark: str):
    """The reader's notebook: the model solution, its answers marked, and the tries of :func:`reader_paths`
    first in the positional encoding's cell."""
    return attacked(answered(good, mark), "positional_encoding",
                    reading(reader_paths(root, honest), LISTING.format(root=root)))


LISTING = "{root}/submitted/*/" + f"{ASSIGNMENT}/{FILE}"


def snapshot(top: Path, skip: Path) -> dict:
    """{path: (mode, size, mtime)} of every file under ``top`` but in ``skip`` (the course), {path: mode}
    of every folder (a temporary file made and removed again changes only its folder's time)."""
    found = {}
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if Path(folder, d) != skip]
        for name in dirs + files:
            st = os.lstat(os.path.join(folder, name))
            found[os.path.relpath(os.path.join(folder, name), top)] = \
                st.st_mode if name in dirs else (st.st_mode, st.st_size, st.st_mtime_ns)
    return found


def command(args: list[str], root: Path, env: dict, traces: dict | None = None, name: str | None = None) -> str:
    """Run ``args`` in the course ``root`` under strace, exit 0 asserted; its output. Its Trace goes into
    ``traces[name]`` (when given), its log beside the test's root (``<top>-traces/``: outside what the
    test compares). tests/grading/test_exchange_end_to_end.py calls it with the first three."""
    folder = root.parent.with_name(root.parent.name + "-traces")
    folder.mkdir(exist_ok=True)
    name = name or f"command-{len(list(folder.iterdir()))}"
    out, trace = traced_command(args, root, env, folder / f"{name}.log")
    if traces is not None:
        traces[name] = trace
    return out


def grader(*args: str) -> list[str]:
    return [sys.executable, "-m", "course_grader", *args]


def students_files(root: Path, top: Path, students) -> dict:
    """{student: their folders}, and the downloads (every student's uploads) as one more owner."""
    found = {s: [root / where / s for where in ("submitted", "autograded", "feedback")] for s in students}
    found["the downloads"] = sorted(top.glob("*.zip"))
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The course after both downloads, collected, autograded and given feedback; the commands' logs and
    traces."""
    top = tmp_path_factory.mktemp("lms_end_to_end")
    root = top / "course"
    good = released_course(root)
    release = nbformat.read(root / "release" / ASSIGNMENT / FILE, as_version=4)
    (top / "home").mkdir()
    (top / "tmp").mkdir()
    expect = {}
    for lms, base in (("moodle", 1000), ("canvas", 2000)):
        data, expect[lms] = download(lms, base, good, release, root if lms == "moodle" else None)
        (top / f"{lms}.zip").write_bytes(data)
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", HOME=str(top / "home"),
               TMPDIR=str(top / "tmp"))
    env.pop("JUPYTER_CONFIG_DIR", None)
    before = snapshot(top, root)
    traces: dict[str, Trace] = {}
    logs = {lms: command(grader("lms-collect", ASSIGNMENT, str(top / f"{lms}.zip"), "--lms", lms), root, env,
                         traces, lms) for lms in ("moodle", "canvas")}
    logs["autograde"] = command(grader("autograde", ASSIGNMENT, "--jobs", "1", "--allow-public-seeds"), root, env,
                                traces, "autograde")
    logs["feedback"] = command([str(BIN / "nbgrader"), "generate_feedback", ASSIGNMENT], root, env, traces,
                               "feedback")
    return {"root": root, "top": top, "before": before, "after": snapshot(top, root), "logs": logs,
            "expect": expect, "good": good, "env": env, "traces": traces}


CHANGED = "answer_transpose"             # the written answer the honest student rewrites after its hand grade


@pytest.fixture(scope="module")
def reuploaded(graded):
    """The second round, after :func:`graded`: a TA's hand grade, a second Moodle download (the honest
    student's changed answer, the reader's new attack), ``lms-collect --force``, ``autograde``,
    ``generate_feedback``, each traced."""
    from nbgrader.api import Gradebook
    root, top, env = graded["root"], graded["top"], graded["env"]
    honest, attacker = "1001", str(1000 + READER)
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:                 # as the formgrader saves a TA's
        grade = gb.find_grade(CHANGED, NOTEBOOK, ASSIGNMENT, honest)
        grade.manual_score = 2.0
        grade.needs_manual_grade = False
        gb.db.commit()
    folder = root / "submitted" / honest / ASSIGNMENT
    old = {"inode": folder.stat().st_ino}
    (folder / "left-by-round-one.txt").write_text("the old download's\n")   # what a merge would keep
    changed = answered(graded["good"], f"the reasons of {honest}")
    for cell in changed.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == CHANGED:
            cell.source = f"second thoughts of {honest}"
    rel = f"{ASSIGNMENT}/{FILE}"
    tries = [str(root / "feedback" / honest / ASSIGNMENT / f"{NOTEBOOK}.html"), str(root / "gradebook.db"),
             "../" * 30 + str(root / "autograded" / honest / rel).lstrip("/"), str(top / "canvas.zip")]
    listing = str(root / "feedback" / "*" / ASSIGNMENT / "*.html")
    attack = attacked(answered(graded["good"], f"mallory-{attacker} again"), "attention", reading(tries, listing))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for student, nb in ((honest, changed), (attacker, attack)):
            info = zipfile.ZipInfo(upload_name("moodle", student, "Ada Lovelace", FILE), date_time=AGAIN)
            z.writestr(info, nbformat.writes(nb).encode(), zipfile.ZIP_DEFLATED)
    (top / "moodle-again.zip").write_bytes(out.getvalue())
    before = snapshot(top, root)
    traces: dict[str, Trace] = {}
    logs = {"collect": command(grader("lms-collect", ASSIGNMENT, str(top / "moodle-again.zip"), "--lms", "moodle",
                                      "--force"), root, env, traces, "collect-again")}
    both = f"--student=100[{honest[-1]}{attacker[-1]}]"                  # the two re-uploads, graded again
    logs["autograde"] = command(grader("autograde", ASSIGNMENT, "--jobs", "1", "--allow-public-seeds", "--force",
                                       both), root, env, traces, "autograde-again")
    logs["feedback"] = command([str(BIN / "nbgrader"), "generate_feedback", ASSIGNMENT, "--force", both], root, env,
                               traces, "feedback-again")
    return {"logs": logs, "traces": traces, "before": before, "after": snapshot(top, root), "old": old,
            "changed": changed, "tries": tries + globbed(listing), "listing": listing, "honest": honest,
            "attacker": attacker}


def _scores(root: Path) -> dict:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        return {sub.student.id: {g.name: (g.auto_score, g.max_score) for g in sub.notebooks[0].grades
                                 if g.name.startswith("test_")}
                for sub in gb.find_assignment(ASSIGNMENT).submissions}


def test_an_lms_download_graded_end_to_end_keeps_every_promise(graded):
    root, logs = graded["root"], graded["logs"]
    scores = _scores(root)
    students = {s: e for lms in ("moodle", "canvas") for s, e in graded["expect"][lms].items()}
    marks = {s: e.get("mark") or e.get("honest") for s, e in students.items() if "refused" not in e}
    assert sorted(scores) == sorted(marks), "graded: exactly the honest students and the uploads not refused"
    for lms in ("moodle", "canvas"):
        for student, e in graded["expect"][lms].items():
            line = e.get("refused") or e["log"]
            assert line in logs[lms], (lms, student, line, logs[lms])
            if "refused" in e:
                assert not (root / "submitted" / student).exists() and not (root / "feedback" / student).exists()
                continue
            autograded = (root / "autograded" / student / ASSIGNMENT / FILE).read_text(encoding="utf-8")
            assert marks[student] in autograded, student
            assert not [o for o, m in marks.items() if o != student and m in autograded], student
            if "honest" in e:
                uploaded = nbformat.writes(answered(graded["good"], e["honest"]))
                assert (root / "submitted" / student / ASSIGNMENT / FILE).read_text(encoding="utf-8") == uploaded
            if "honest" in e:
                assert full_marks(scores[student]), scores[student]
            if "tries" in e:                           # the reader found nothing and solved every part
                assert full_marks_but(scores[student], e["attacked"], LISTING.format(root=root)), scores[student]
            page = (root / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")
            assert marks[student] in page and active_html(page) == [] and loads_or_restyles(page) == [], student
    assert "Could not grade" not in logs["autograde"]
    assert graded["after"] == graded["before"], "a file outside the course was written"


def test_no_part_opened_a_file_of_a_student_and_the_reader_s_tries_failed(graded):
    """Traced reads: no confined process (a part, its zygote, the judge) opened a file of any student,
    or anything outside the view; every one of the reader's tries reached the kernel and failed; the
    gate wrote only into the folders of the students its download names."""
    root, top, traces = graded["root"], graded["top"], graded["traces"]
    students = {s for lms in ("moodle", "canvas") for s in graded["expect"][lms]}
    got, tries = confined_reads(traces, students_files(root, top, students), top)
    assert got == [], "\n".join(got)
    reader = graded["expect"]["moodle"][str(1000 + READER)]
    assert refused(tries, reader["tries"])
    assert traces["autograde"].confined(), "the trace found no sandboxed process: nothing was checked"
    for lms in ("moodle", "canvas"):
        named = {s for s, e in graded["expect"][lms].items() if "refused" not in e}
        assert gate_writes(traces[lms], root) == named, lms
        read = {e.path for e in traces[lms].opened_for_reading(top) if not e.path.startswith(f"{root}/")}
        assert read == {str(top / f"{lms}.zip")}, read              # its own download, nothing else of the test's


def refused(tries: list, paths: list[str]) -> dict:
    """{path: the kernel's refusal} of each of ``paths`` the confined processes tried (``tries``: failed
    opens); asserts each was tried and refused, as absent from the view or by Landlock."""
    failed = {e.asked: e.error for e in tries}
    found = {p: failed.get(p, "not tried") for p in paths}
    assert all(error in ("ENOENT", "EACCES") for error in found.values()), found
    return found


def gate_writes(trace: Trace, root: Path) -> set:
    """The students under whose ``submitted/`` folder ``trace``'s command wrote; it wrote nothing else in
    the course but its own records (the gradebook, the uploads' record)."""
    found, other = set(), []
    for e in trace.created(root):
        rel = [Path(p).relative_to(root).parts for p in (e.path, e.target) if p]
        for parts in rel:
            if parts[:1] == ("submitted",) and len(parts) > 1:
                found.add(parts[1])
            elif parts != ("submitted",) and not parts[0].startswith(("gradebook.db", f"uploads_{ASSIGNMENT}")):
                other.append(e)
    assert other == [], other
    return found


def test_a_re_upload_replaces_the_folder_and_flags_the_changed_hand_grade(graded, reuploaded):
    from nbgrader.api import Gradebook
    root, top, again = graded["root"], graded["top"], reuploaded
    honest, attacker = again["honest"], again["attacker"]
    folder = root / "submitted" / honest / ASSIGNMENT
    for student in (honest, attacker):
        assert f"Updating submission: {student} {ASSIGNMENT}" in again["logs"]["collect"], again["logs"]["collect"]
    assert sorted(p.name for p in folder.iterdir()) == [FILE], "something of the old download stayed"
    assert folder.stat().st_ino != again["old"]["inode"], "the folder was written into, not replaced"
    assert (folder / FILE).read_text(encoding="utf-8") == nbformat.writes(again["changed"])
    assert f"second thoughts of {honest}" in (root / "autograded" / honest / ASSIGNMENT / FILE).read_text("utf-8")
    assert f"second thoughts of {honest}" in (root / "feedback" / honest / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(
        "utf-8")
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        grade = gb.find_grade(CHANGED, NOTEBOOK, ASSIGNMENT, honest)
        assert (grade.manual_score, grade.needs_manual_grade) == (2.0, True), "a changed answer's hand grade unflagged"
    scores = _scores(root)
    for student in (honest, "2001"):
        assert full_marks(scores[student]), (student, scores[student])
    assert full_marks_but(scores[attacker], "attention", again["listing"]), scores[attacker]   # it found nothing
    assert f"mallory-{attacker} again" in (root / "autograded" / attacker / ASSIGNMENT / FILE).read_text("utf-8")
    assert "Could not grade" not in again["logs"]["autograde"]
    assert again["after"] == again["before"], "a file outside the course was written"
    students = {s for lms in ("moodle", "canvas") for s in graded["expect"][lms]}
    got, tries = confined_reads(again["traces"], students_files(root, top, students), top)
    assert got == [], "\n".join(got)
    assert refused(tries, again["tries"])
    gate = again["traces"]["collect-again"]
    assert gate_writes(gate, root) == {honest, attacker}
    old_read = [e.path for e in gate.opened_for_reading(root / "submitted") if e.path.endswith(".ipynb")]
    assert old_read == [], "the gate read the old submission's notebook"
    assert any(e.syscall.startswith("unlink") and e.path == str(folder / "left-by-round-one.txt")
               for e in gate.created(root)), "the trace shows no removal of the old folder"
