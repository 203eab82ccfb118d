"""Files in (issue 41 items 1, 2): what a student puts in the exchange is copied by descriptor, checked on
what was copied, and anything else is refused for that student alone.

* a class with a named pipe, a folder named ``timestamp.txt``, a symbolic link and a hard link among its
  submissions is collected (exit 0): the honest student's notebook arrives, the others are named in the log;
* a notebook swapped, while collect copies it, between a file and a link to a classmate's handed-in
  notebook never brings the classmate's notebook (the red-team case that took it);
* a fuzzer builds hostile folder layouts (links in and out of the folder, pipes, folders where files
  belong, depth) around a notebook whose answer restyles or loads from elsewhere, and checks that the copy
  holds only the student's own regular files, or nothing; that nothing is written outside the course; and,
  the copy moved into ``submitted/`` as collect does, the gates after it (:func:`fuzz_kit.after_the_gates`:
  the notebook admitted whole by the notebook gate, no page of it that loads or restyles).
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_grader import files_in
from course_grader.collect import ServerCollect
from fuzz_kit import RESTYLING, after_the_gates, answer_notebook, fuzz

ME = pwd.getpwuid(os.geteuid()).pw_name
STUDENTS = ["daemon", "bin", "sys"] if os.geteuid() == 0 else []      # accounts on any Debian or Ubuntu
SECRET = "the classmate's handed-in notebook"


def _honest(folder: Path, text: str, uid: int) -> None:
    folder.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)]), folder / "ps1.ipynb")
    for path in (folder, folder / "ps1.ipynb"):
        os.lchown(path, uid, -1)


def _exchange(tmp_path: Path) -> tuple[Path, Path, Path]:
    exchange, course = tmp_path / "exchange", tmp_path / "course"
    inbound = exchange / "course101" / "inbound"
    inbound.mkdir(parents=True)
    course.mkdir()
    return exchange, course, inbound


@pytest.mark.skipif(not STUDENTS, reason="needs root to make folders owned by other accounts")
def test_hostile_folders_are_refused_one_by_one_and_the_class_is_collected(tmp_path):
    exchange, course, inbound = _exchange(tmp_path)
    stamp = "+ps1+2020-01-01 00:00:00.000000 UTC"
    _honest(inbound / (ME + stamp), f"{ME}'s own work", os.geteuid())
    victim = inbound / ("nobody" + stamp)
    _honest(victim, SECRET, pwd.getpwnam("nobody").pw_uid)
    uids = {s: pwd.getpwnam(s).pw_uid for s in STUDENTS}
    pipe, folder_stamp, link = (inbound / (s + stamp) for s in STUDENTS)
    for student, folder in zip(STUDENTS, (pipe, folder_stamp, link)):
        _honest(folder, f"{student}'s work", uids[student])
    os.mkfifo(pipe / "data.csv")
    (folder_stamp / "timestamp.txt").mkdir()
    (link / "ps1.ipynb").unlink()
    (link / "ps1.ipynb").symlink_to(victim / "ps1.ipynb")
    for student, folder in zip(STUDENTS, (pipe, folder_stamp, link)):
        for path in folder.iterdir():
            os.lchown(path, uids[student], -1)
    proc = subprocess.run([sys.executable, "-m", "course_grader", "collect", "ps1", f"--Exchange.root={exchange}",
                           "--CourseDirectory.course_id=course101", f"--CourseDirectory.root={course}"],
                          cwd=course, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = {p.parts[-3] for p in (course / "submitted").glob("*/ps1/ps1.ipynb")}
    assert got == {ME, "nobody"}, proc.stderr[-3000:]
    for student in STUDENTS:
        assert f"Not collected: '{student}+ps1+" in proc.stderr, proc.stderr[-3000:]
    assert "a named pipe" in proc.stderr and "timestamp.txt is not a regular file" in proc.stderr
    assert "a symbolic link" in proc.stderr
    assert list((course / "submitted").glob(".collect-*")) == []          # no staging folder left
    mode = os.stat(course / "submitted" / ME / "ps1" / "ps1.ipynb").st_mode & 0o777
    assert mode == 0o600, oct(mode)


def _collector(course: Path, exchange: Path) -> ServerCollect:
    from nbgrader.coursedir import CourseDirectory
    coursedir = CourseDirectory(root=str(course), course_id="course101", assignment_id="ps1")
    collector = ServerCollect(coursedir=coursedir)
    collector.inbound_path = str(exchange / "course101" / "inbound")
    return collector


def test_a_notebook_swapped_for_a_link_while_copied_never_brings_the_classmates(tmp_path):
    """Item 1's race: the student's own process swaps its notebook between a file and a link to a
    classmate's while the copy runs, as fast as it can. Every copy is refused or holds the student's own."""
    exchange, course, inbound = _exchange(tmp_path)
    victim = inbound / "victim"
    victim.mkdir()
    (victim / "ps1.ipynb").write_text(SECRET)
    mine = inbound / f"{ME}+ps1+2020-01-01 00:00:00.000000 UTC"
    mine.mkdir()
    (mine / "ps1.ipynb").write_text("mine")
    collector, stop = _collector(course, exchange), threading.Event()

    def swap():
        target = mine / "ps1.ipynb"
        while not stop.is_set():
            tmp = mine / "new"
            tmp.symlink_to(victim / "ps1.ipynb")
            os.replace(tmp, target)
            tmp.write_text("mine")
            os.replace(tmp, target)
    swapper = threading.Thread(target=swap)
    swapper.start()
    copies = refusals = 0
    try:
        for _ in range(300):
            try:
                place, _ = collector.stage(str(mine), ME)
            except files_in.Refused:
                refusals += 1
                continue
            for path in Path(place).rglob("*"):
                assert not path.is_file() or SECRET not in path.read_text()
            copies += 1
            subprocess.run(["rm", "-rf", place], check=True)
    finally:
        stop.set()
        swapper.join()
    assert copies + refusals == 300 and copies > 0


# ------------------------------------------------------------------ the fuzzer

NAMES = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1,
                max_size=12).filter(lambda n: n not in (".", ".."))
KINDS = st.sampled_from(["file", "dir", "link_out", "link_in", "link_dir", "fifo", "hardlink", "socket"])
LAYOUT = st.lists(st.tuples(st.integers(0, 3), NAMES, KINDS), max_size=12)


def _build(root: Path, layout, outside: Path) -> None:
    folders = [root]
    for at, name, kind in layout:
        where = folders[at % len(folders)]
        path = where / name
        if os.path.lexists(path):
            continue
        if kind == "file":
            path.write_text("own " + ascii(name))
        elif kind == "dir":
            path.mkdir()
            folders.append(path)
        elif kind == "link_out":
            path.symlink_to(outside)
        elif kind == "link_dir":
            path.symlink_to(outside.parent)
        elif kind == "link_in":
            path.symlink_to(root)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "hardlink":
            os.link(outside, path)
        elif kind == "socket":
            import socket
            s = socket.socket(socket.AF_UNIX)
            try:
                s.bind(str(path)) if len(str(path)) < 100 else path.write_text("own long")
            finally:
                s.close()


@fuzz(60)
@given(layout=LAYOUT, answer=st.sampled_from(RESTYLING))
def test_fuzz_exchange_layouts_copy_only_the_students_own_regular_files(tmp_path_factory, layout, answer):
    tmp = tmp_path_factory.mktemp("x")
    exchange, course, inbound = _exchange(tmp)
    secret_dir = tmp / "elsewhere"
    secret_dir.mkdir()
    outside = secret_dir / "secret.ipynb"
    outside.write_text(SECRET)
    before = outside.stat()
    mine = inbound / f"{ME}+ps1+2020-01-01 00:00:00.000000 UTC"
    mine.mkdir()
    (mine / "ps1.ipynb").write_text(json.dumps(answer_notebook("own notebook", answer)))
    _build(mine, layout, outside)
    collector = _collector(course, exchange)
    try:
        place, _ = collector.stage(str(mine), ME)
    except files_in.Refused:
        return
    for path in Path(place).rglob("*"):
        assert not path.is_symlink()
        if path.is_file():
            assert path.stat().st_mode & 0o777 == 0o600
            assert path.read_text().startswith("own") or path == Path(place) / "copy" / "ps1.ipynb", path
    after = outside.stat()
    assert (after.st_mtime, after.st_size) == (before.st_mtime, before.st_size) and outside.read_text() == SECRET
    assert sorted(os.listdir(tmp)) == ["course", "elsewhere", "exchange"]          # nothing outside the course
    (course / "submitted" / ME).mkdir(parents=True)
    os.rename(Path(place) / "copy", course / "submitted" / ME / "ps1")            # as collect moves it in
    os.rmdir(place)
    after_the_gates(course / "submitted", "ps1", "ps1", {ME: f"own notebook {answer}"}, SECRET)


def test_without_no_follow_the_fuzzer_finds_a_classmates_notebook_copied(tmp_path_factory, monkeypatch):
    """The fuzzer can fail: with files opened without ``O_NOFOLLOW``, a link in the student's folder brings
    the file it points at into the staging folder, and the fuzzer's check says so."""
    check = test_fuzz_exchange_layouts_copy_only_the_students_own_regular_files.hypothesis.inner_test
    check(tmp_path_factory, layout=[(0, "x.ipynb", "link_out")], answer="")          # defended: passes
    monkeypatch.setattr(files_in, "_FILE", files_in._FILE & ~os.O_NOFOLLOW)
    with pytest.raises(AssertionError, match="x.ipynb"):
        check(tmp_path_factory, layout=[(0, "x.ipynb", "link_out")], answer="")
