"""The hub's exchange graded end to end, and a re-upload through it (issue 48): the promises of the route
fuzzers, kept by the real commands in the order an instructor runs them, with grading included.

tests/grading/test_fuzz_files.py stops at the gate ("admitted whole by the notebook gate"); here one
course's ``inbound/`` is written as the hub writes it (a folder ``<student>+<assignment>+<time>+<random>``
owned by the student's account: real uids, made with ``os.lchown`` as root) and holds an honest student's
correct notebook (the model solution, :func:`attack_kit.released_course`) beside the hostile folders of the
fuzzers' kinds: a folder named as the honest student but owned by another account, a symbolic link to the
honest student's notebook, a named pipe in place of the notebook, a notebook with escaped lone surrogates
(in the written answers, an output and the metadata), a written answer that restyles the page
(``fuzz_kit.RESTYLING``), an appended plain cell carrying a written answer's ``grade_id`` with the old text
(issue 48 item 2), a 2 MB ``.hints.json``.

Round one: ``python -m course_grader collect``, the sandboxed ``autograde --jobs 1``, a teaching assistant's
hand grades (nbgrader's Gradebook API, as the formgrader gives them), ``nbgrader generate_feedback`` and the
class report. Round two, a re-upload: the honest student submits again with one written answer rewritten
(and without the scratch file of round one), the restyler's new folder holds a link; then plain ``nbgrader
collect --update`` (the course's ``nbgrader_config.py`` makes it the same gate), autograde and feedback again.

* every command exits 0;
* the honest student's notebook is collected byte for byte as submitted and gets every autograded part's
  full marks, in both rounds;
* each hostile folder is refused ("Not collected: '<its name>': ...") or graded for its owner alone with a
  line naming that student ("Repaired: lp/..."); no student's notebook or page holds another's text;
* the re-upload replaces the student's folder whole ("Updating submission: daemon", the only such line:
  every unchanged folder is "No newer submission to collect"; nothing of round one's files stays), the
  rewritten answer is the one graded, and its hand grade is flagged for review rather than kept; the
  restyler's refused link leaves their round-one submission as it was;
* nothing is written outside the course: the test's temporary root (the exchange, an empty ``HOME`` and
  ``TMPDIR`` the commands get) is as it was, the exchange included;
* every feedback page loads nothing from elsewhere and restyles nothing (``fuzz_kit``'s counters).
* traced reads (every command runs under strace, ``tests/grading/trace_kit.py``): no confined process opened
  a file of any student (their folders in ``inbound/``, by owner, and in ``submitted/``, ``autograded/``,
  ``feedback/``) or anything outside the view; each ``collect`` wrote only into its private staging
  folders and the ``submitted/`` folders of the students it collected.

It fails with a gate removed (each planted by hand in the source, seen to fail, then removed):

* the folder's name trusted (``collect.refused`` returning None and ``copy_tree`` given no owner): the
  impostor's folder, newer, is collected as the honest student's ("the honest notebook, byte for byte");
* links followed (no link check in ``collect.refused``, ``files_in`` opening without ``O_NOFOLLOW`` and
  not comparing owners): ``sys`` is collected and graded with the honest student's notebook;
* lone surrogates not repaired (``json_in.read`` without ``_writable``): autograde ends "Could not grade:
  games" with ``UnicodeEncodeError`` and exits 1;
* the re-upload merged into the old folder (``shutil.copytree(..., dirs_exist_ok=True)`` for ``rmtree`` and
  ``rename``): round one's ``scratch.txt`` stays in ``submitted/daemon``;
* the hand grade kept for a changed answer (``recording.hand_graded`` returning every hand grade, neither
  the time nor the answer's hash compared): the rewritten answer's 2 points stay, not flagged. On this
  route the server's new time alone flags it; the hash's own failure is ``tests/grading/test_recording.py``'s.

* a folder's time counting the ``timestamp.txt`` the copy leaves out (the defect this test found, fixed in
  ``collect.server_time``): the hub's *Submit* writes it last, so every unchanged folder was newer than its
  copy and round two's ``collect --update`` said "Updating submission" for every student.

Cost, measured on the 2-core sandbox: 36 CPU-s for the module (both rounds, the course's release
included; pytest's own start, about 6 CPU-s, not counted), 28 CPU-s of it the commands.
"""

from __future__ import annotations

import csv
import json
import os
import pwd
import sys
from pathlib import Path

import nbformat
import pytest

from attack_kit import released_course
from fuzz_kit import RESTYLING, active_html, loads_or_restyles
from test_lms_end_to_end import (
    ASSIGNMENT,
    BIN,
    FILE,
    NOTEBOOK,
    SURROGATE,
    _scores,
    answered,
    command,
    full_marks,
    gate_writes,
    snapshot,
)
from trace_kit import Trace, confined_reads

COURSE = "transformer-encoder-hands-on"                 # nbgrader_config.py's course_id
HONEST = "daemon"                                       # accounts on any Debian or Ubuntu machine
IMPOSTOR, LINKER, PIPER, ESCAPER, RESTYLER, CARRIER, HINTER = "bin", "sys", "sync", "games", "man", "lp", "mail"
REWRITTEN = "answer_transpose"                          # the written answer the honest student rewrites
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the exchange's folders belong to the students' "
                                "accounts: made with chown, as root (CI runs as root)")


def mark(student: str) -> str:
    return f"mallory-{student}"


def _text(nb) -> bytes:
    return nbformat.writes(nb).encode()


def submit(inbound: Path, student: str, when: str, files: dict[str, bytes | None], owner: str | None = None) -> str:
    """A folder as the hub's *Submit* writes it, owned by ``owner`` (the student): the files, then
    ``timestamp.txt`` last (so it is the newest entry, as nbgrader's ``ExchangeSubmit.copy_files`` leaves
    it); a value None makes a named pipe. Returns the folder's name."""
    name = f"{student}+{ASSIGNMENT}+{when} UTC+{student[:2]}x{len(os.listdir(inbound))}"
    folder = inbound / name
    folder.mkdir()
    for file, data in {**files, "timestamp.txt": b""}.items():
        if data is None:
            os.mkfifo(folder / file)
        else:
            (folder / file).write_bytes(data)
    uid = pwd.getpwnam(owner or student).pw_uid
    for path in (folder, *folder.iterdir()):
        os.lchown(path, uid, -1)
    written_last(folder, f"{when} UTC")
    return name


def written_last(folder: Path, stamp: str) -> None:
    """``folder``'s ``timestamp.txt`` written again until its ``st_ctime`` is the newest of the folder's
    (the kernel's clock is coarse: two writes a millisecond apart may share a time)."""
    others = max(p.lstat().st_ctime_ns for p in (folder, *folder.iterdir()) if p.name != "timestamp.txt")
    while True:
        (folder / "timestamp.txt").write_text(stamp)
        if (folder / "timestamp.txt").stat().st_ctime_ns > others:
            return


def round_one(inbound: Path, good, release) -> dict:
    """The class's first submissions: {student: what the test expects of them}."""
    honest = _text(answered(good, f"the reasons of {HONEST}"))
    escaped = answered(good, f"{mark(ESCAPER)} {SURROGATE}")
    escaped.metadata["note"] = SURROGATE
    next(c for c in escaped.cells if c.cell_type == "code").outputs = [nbformat.v4.new_output("stream", text=SURROGATE)]
    carried = answered(good, f"{mark(CARRIER)} rewritten")
    carried.cells.append(nbformat.v4.new_markdown_cell(f"{mark(CARRIER)} the old answer",
                                                       metadata={"nbgrader": {"grade_id": REWRITTEN}}))
    hints = json.dumps({"parts": {"attention": 10**9}, "pad": "x" * 2_000_000}).encode()
    said = {}
    said[HONEST] = submit(inbound, HONEST, "2026-12-04 12:00:00.000000", {FILE: honest, "scratch.txt": b"draft"})
    said[IMPOSTOR] = submit(inbound, HONEST, "2026-12-04 18:00:00.000000",
                            {FILE: _text(answered(release, mark(IMPOSTOR)))}, owner=IMPOSTOR)
    said[LINKER] = submit(inbound, LINKER, "2026-12-04 18:00:00.000000", {})
    (inbound / said[LINKER] / FILE).symlink_to(inbound / said[HONEST] / FILE)
    os.lchown(inbound / said[LINKER] / FILE, pwd.getpwnam(LINKER).pw_uid, -1)
    said[PIPER] = submit(inbound, PIPER, "2026-12-04 18:00:00.000000", {FILE: None})
    said[ESCAPER] = submit(inbound, ESCAPER, "2026-12-04 18:00:00.000000",
                           {FILE: _text(escaped).replace(SURROGATE.encode(), b"\\ud800")})
    said[RESTYLER] = submit(inbound, RESTYLER, "2026-12-04 18:00:00.000000",
                            {FILE: _text(answered(good, f"{mark(RESTYLER)} {RESTYLING[0]}"))})
    said[CARRIER] = submit(inbound, CARRIER, "2026-12-04 18:00:00.000000", {FILE: _text(carried)})
    said[HINTER] = submit(inbound, HINTER, "2026-12-04 18:00:00.000000",
                          {FILE: _text(answered(good, mark(HINTER))), f"{NOTEBOOK}.hints.json": hints})
    return {
        HONEST: {"honest": honest, "log": f"Collecting submission: {HONEST} {ASSIGNMENT}"},
        IMPOSTOR: {"refused": f"Not collected: {ascii(said[IMPOSTOR])}: the folder belongs to uid "
                              f"{pwd.getpwnam(IMPOSTOR).pw_uid}, not to {HONEST!r}"},
        LINKER: {"refused": f"Not collected: {ascii(said[LINKER])}: it holds a symbolic link ({FILE!r})"},
        PIPER: {"refused": f"Not collected: {ascii(said[PIPER])}: {FILE!r} is a named pipe, not a regular file"},
        ESCAPER: {"mark": mark(ESCAPER), "log": f"Repaired: {ESCAPER + '/' + FILE!r}: 7 lone surrogates replaced "
                                                f"by U+FFFD"},
        RESTYLER: {"mark": mark(RESTYLER), "log": f"Collecting submission: {RESTYLER} {ASSIGNMENT}"},
        CARRIER: {"mark": mark(CARRIER), "log": f"Repaired: {CARRIER + '/' + FILE!r}: cell 46 carried the grade_id "
                                                f"{REWRITTEN!r} without being an nbgrader cell"},
        HINTER: {"mark": mark(HINTER), "log": f"Collecting submission: {HINTER} {ASSIGNMENT}"},
    }


def round_two(inbound: Path, good) -> dict:
    """The re-upload: the honest student's answer to REWRITTEN rewritten (and no scratch file); the
    restyler's new folder a link to the honest student's new notebook."""
    nb = answered(good, f"the reasons of {HONEST}")
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == REWRITTEN)
    cell.source = f"the second thoughts of {HONEST}"
    honest = _text(nb)
    said = {HONEST: submit(inbound, HONEST, "2026-12-05 09:00:00.000000", {FILE: honest})}
    said[RESTYLER] = submit(inbound, RESTYLER, "2026-12-05 09:00:00.000000", {})
    (inbound / said[RESTYLER] / FILE).symlink_to(inbound / said[HONEST] / FILE)
    os.lchown(inbound / said[RESTYLER] / FILE, pwd.getpwnam(RESTYLER).pw_uid, -1)
    return {"honest": honest, "log": f"Updating submission: {HONEST} {ASSIGNMENT}",
            "refused": f"Not collected: {ascii(said[RESTYLER])}: it holds a symbolic link ({FILE!r})",
            "kept": f"No newer submission to collect: {RESTYLER} {ASSIGNMENT}"}


def observe(root: Path) -> dict:
    """{student: {submitted: [files], notebook: the autograded notebook's text, page: the feedback page}}."""
    out = {}
    for folder in sorted((root / "submitted").iterdir()):
        student = folder.name
        got = {"submitted": sorted(p.name for p in (folder / ASSIGNMENT).iterdir()),
               "notebook": (folder / ASSIGNMENT / FILE).read_bytes()}
        for key, path in (("autograded", root / "autograded" / student / ASSIGNMENT / FILE),
                          ("page", root / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html")):
            got[key] = path.read_text(encoding="utf-8") if path.exists() else None
        out[student] = got
    return out


def hand_grade(root: Path, student: str) -> dict:
    """A TA's hand grade on each of ``student``'s written answers (full points, as the formgrader saves
    them); returns {answer: (manual score, needs_manual_grade)} as the gradebook then holds them."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        for grade in gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student).grades:
            if grade.cell.cell_type == "markdown":
                grade.manual_score, grade.needs_manual_grade = grade.max_score, False
        gb.db.commit()
    return written_grades(root, student)


def written_grades(root: Path, student: str) -> dict:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        return {g.name: (g.manual_score, g.needs_manual_grade)
                for g in gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student).grades
                if g.cell.cell_type == "markdown"}


@pytest.fixture(scope="module")
def rounds(tmp_path_factory):
    """The course after both rounds; what each round left, the commands' logs, the snapshots."""
    top = tmp_path_factory.mktemp("exchange_end_to_end")
    root, exchange = top / "course", top / "exchange"
    good = released_course(root)
    release = nbformat.read(root / "release" / ASSIGNMENT / FILE, as_version=4)
    inbound = exchange / COURSE / "inbound"
    inbound.mkdir(parents=True)
    inbound.chmod(0o733)                                # as the hub makes it: anyone writes, nobody lists
    (top / "home").mkdir()
    (top / "tmp").mkdir()
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", HOME=str(top / "home"),
               TMPDIR=str(top / "tmp"))
    env.pop("JUPYTER_CONFIG_DIR", None)
    where = [f"--Exchange.root={exchange}"]
    grade = [sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--jobs", "1", "--allow-public-seeds"]
    feedback = [str(BIN / "nbgrader"), "generate_feedback", ASSIGNMENT]
    one = {"expect": round_one(inbound, good, release), "before": snapshot(top, root), "logs": {}}
    traces: dict[str, Trace] = {}
    one["logs"]["collect"] = command([sys.executable, "-m", "course_grader", "collect", ASSIGNMENT, *where], root, env,
                                     traces, "collect")
    one["logs"]["autograde"] = command(grade, root, env, traces, "autograde")
    one["hand"] = hand_grade(root, HONEST)
    one["logs"]["feedback"] = command(feedback, root, env, traces, "feedback")
    one["logs"]["report"] = command([sys.executable, "-m", "course_grader", "report", ASSIGNMENT], root, env, traces,
                                    "report")
    one.update(after=snapshot(top, root), seen=observe(root), scores=_scores(root), inbound=sorted(os.listdir(inbound)))
    two = {"expect": round_two(inbound, good), "before": snapshot(top, root), "logs": {}}
    two["logs"]["collect"] = command([str(BIN / "nbgrader"), "collect", ASSIGNMENT, "--update", *where], root, env,
                                     traces, "collect-again")
    two["logs"]["autograde"] = command(grade, root, env, traces, "autograde-again")
    two["logs"]["feedback"] = command(feedback, root, env, traces, "feedback-again")
    two.update(after=snapshot(top, root), seen=observe(root), scores=_scores(root),
               written=written_grades(root, HONEST))
    return {"root": root, "top": top, "inbound": inbound, "one": one, "two": two, "traces": traces}


def pages_keep_their_promises(seen: dict, marks: dict) -> None:
    """Each graded student's autograded notebook and feedback page hold their own mark and no other's;
    no page loads or restyles."""
    for student, got in seen.items():
        for key in ("autograded", "page"):
            assert marks[student] in got[key], (student, key)
            assert not [o for o, m in marks.items() if o != student and m in got[key]], (student, key)
        assert active_html(got["page"]) == [] and loads_or_restyles(got["page"]) == [], student


def test_the_exchange_graded_end_to_end_keeps_every_promise(rounds):
    one, root = rounds["one"], rounds["root"]
    logs = "\n".join(one["logs"].values())
    expect = one["expect"]
    marks = {s: e.get("mark") or f"the reasons of {s}" for s, e in expect.items() if "refused" not in e}
    assert sorted(one["seen"]) == sorted(marks) == sorted(one["scores"]), "collected and graded: the others refused"
    assert one["seen"][HONEST]["notebook"] == expect[HONEST]["honest"], "the honest notebook, byte for byte"
    for student, e in expect.items():
        line = e.get("refused") or e["log"]
        assert line in logs, (student, line, logs[-6000:])
    assert one["seen"][HONEST]["submitted"] == [FILE, "scratch.txt", "timestamp.txt"]
    assert full_marks(one["scores"][HONEST]), one["scores"][HONEST]
    assert f"the reasons of {HONEST}" not in one["seen"][RESTYLER]["autograded"]
    pages_keep_their_promises(one["seen"], marks)
    assert "Could not grade" not in one["logs"]["autograde"]
    assert one["hand"] and set(one["hand"].values()) == {(2, False)}, one["hand"]
    with open(root / "reports" / ASSIGNMENT / "hints.csv", newline="") as f:      # the huge record: read as none
        hints = list(csv.DictReader(f))
    assert hints and all(row["records"] == row["rung_0"] == "1" for row in hints), hints
    assert one["after"] == one["before"], "a file outside the course (or in the exchange) was written"


def test_a_re_upload_replaces_the_folder_and_flags_the_hand_grade_of_a_changed_answer(rounds):
    one, two = rounds["one"], rounds["two"]
    expect, logs = two["expect"], "\n".join(two["logs"].values())
    for line in (expect["log"], expect["refused"], expect["kept"]):
        assert line in logs, (line, logs[-6000:])
    updated = [line for line in two["logs"]["collect"].splitlines() if "Updating submission" in line]
    assert len(updated) == 1, f"only the student who submitted again is collected again: {updated}"
    honest = two["seen"][HONEST]
    assert honest["notebook"] == expect["honest"], "the re-upload, byte for byte"
    assert honest["submitted"] == [FILE, "timestamp.txt"], "round one's scratch.txt stayed: merged, not replaced"
    assert all(f"the second thoughts of {HONEST}" in honest[key] for key in ("autograded", "page"))
    assert full_marks(two["scores"][HONEST]), two["scores"][HONEST]
    score, flagged = two["written"][REWRITTEN]
    assert score == 2 and flagged, f"the hand grade of the rewritten answer kept unflagged: {two['written']}"
    for student in set(one["seen"]) - {HONEST}:                 # the others (the restyler's link refused) as they were
        assert two["seen"][student] == one["seen"][student], student
        assert two["scores"][student] == one["scores"][student], student
    marks = {s: e.get("mark") or f"the reasons of {s}" for s, e in one["expect"].items() if "refused" not in e}
    pages_keep_their_promises(two["seen"], marks)
    assert "Could not grade" not in two["logs"]["autograde"]
    assert two["after"] == two["before"], "a file outside the course (or in the exchange) was written"


def test_no_part_opened_a_file_of_a_student_and_collect_wrote_only_what_it_collected(rounds):
    """Traced reads (tests/grading/trace_kit.py) over every command of both rounds: no confined process (a
    part, its zygote, the judge) opened a file of any student (their folders in ``inbound/``,
    ``submitted/``, ``autograded/``, ``feedback/``) or anything outside the view; each ``collect`` wrote
    into the ``submitted/`` folders of the students it collected and nowhere else in the course."""
    root, traces = rounds["root"], rounds["traces"]
    one = rounds["one"]
    files = {s: [root / where / s for where in ("submitted", "autograded", "feedback")] for s in one["expect"]}
    for folder in rounds["inbound"].iterdir():                  # every folder of both rounds, by its owner
        files[pwd.getpwuid(folder.lstat().st_uid).pw_name].append(folder)
    got, _ = confined_reads(traces, files, rounds["top"])
    assert got == [], "\n".join(got)
    assert traces["autograde"].confined() and traces["autograde-again"].confined(), "no sandboxed process traced"
    collected = {s for s, e in one["expect"].items() if "refused" not in e}
    for name, students in (("collect", collected), ("collect-again", {HONEST})):
        wrote = gate_writes(traces[name], root)
        staging = {w for w in wrote if w.startswith(".collect-")}      # its private copies, moved into place
        assert wrote - staging == students, (name, wrote)
        assert not [w for w in staging if (root / "submitted" / w).exists()], "a staging folder left behind"


def test_an_unchanged_folder_is_not_newer_than_its_copy(tmp_path):
    """The time ``collect`` gives a folder in ``inbound/`` (to pick a student's latest, and to tell
    ``--update`` whether it is newer than the copy in ``submitted/``) is the time of the copy it makes: the
    hub's *Submit* writes ``timestamp.txt`` last, and with it counted (it is not copied) every unchanged
    submission was newer than its copy, so each ``collect --update`` collected the whole class again, an
    "Updating submission" line for every student (found by the second round above)."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from course_grader.collect import ServerCollect, _utc, server_time
    from course_grader.files_in import copy_tree, open_dir
    folder = tmp_path / "student+ps1+2026-12-04 12:00:00.000000 UTC+x"
    (folder / "data").mkdir(parents=True)
    for name in ("ps1.ipynb", "data/a.csv", ".ipynb_checkpoints"):
        (folder / name).write_text(name)
    written_last(folder, "2026-12-04 12:00:00.000000 UTC")
    collect = ServerCollect(coursedir=CourseDirectory(root=str(tmp_path)), authenticator=Authenticator())
    fd = open_dir(str(folder))
    try:
        copied = copy_tree(fd, str(tmp_path / "copy"), None, skip=collect.skip)
    finally:
        os.close(fd)
    assert sorted(os.listdir(tmp_path / "copy")) == ["data", "ps1.ipynb"]
    assert server_time(str(folder), collect.skip) == _utc(copied)
