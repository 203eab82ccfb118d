"""The hub's exchange and the LMS's files: what a student's own file or folder name can claim.

* ``python -m course_grader collect`` (issue 30 item 10): a folder in ``inbound/`` that does not belong
  to the account it names is refused (plain ``nbgrader collect`` only warns, and the impostor's folder
  replaced the victim's submission); a submission's time is the server's, never its folder name's or its
  ``timestamp.txt``'s (a forged one dated a late submission on time). Owners are real uids (as root, a
  second account's folders are made with chown).
* an LMS download's names (item 11), read by ``lms-collect``'s gate (``course_grader.lms_in.whose``, the
  one route in since issue 48): the student is the first id of the top-level name, so a file name
  cannot claim another student's id.
"""

from __future__ import annotations

import datetime
import os
import pwd
import subprocess
import sys
from pathlib import Path

import nbformat

ME = pwd.getpwuid(os.geteuid()).pw_name
OTHER = "daemon"                                   # an account on any Debian or Ubuntu machine
OTHER_UID = pwd.getpwnam(OTHER).pw_uid
FORGED = "2020-01-01 00:00:00.000000 UTC"


def _folder(inbound: Path, name: str, student_text: str, owner: int, stamp: str = FORGED) -> Path:
    folder = inbound / name
    folder.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(student_text)])
    nbformat.write(nb, folder / "ps1.ipynb")
    (folder / "timestamp.txt").write_text(stamp)
    for path in (folder, folder / "ps1.ipynb", folder / "timestamp.txt"):
        os.lchown(path, owner, -1)
    return folder


def test_collect_refuses_impostors_and_takes_the_servers_time(tmp_path):
    exchange, course = tmp_path / "exchange", tmp_path / "course"
    inbound = exchange / "course101" / "inbound"
    inbound.mkdir(parents=True)
    course.mkdir()
    root = os.geteuid() == 0
    _folder(inbound, f"{ME}+ps1+2020-01-01 00:00:00.000000 UTC", f"{ME}'s own work", os.geteuid())
    # an impostor: a folder named after another account, newer by its name, owned by someone else
    _folder(inbound, f"{OTHER}+ps1+2030-01-01 00:00:00.000000 UTC", "the impostor's work", os.geteuid())
    if root:                                           # the other account's own folder, and one claiming ME
        _folder(inbound, f"{OTHER}+ps1+2020-01-01 00:00:00.000000 UTC", f"{OTHER}'s own work", OTHER_UID)
        _folder(inbound, f"{ME}+ps1+2031-01-01 00:00:00.000000 UTC", "the impostor's work", OTHER_UID)
    before = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - datetime.timedelta(seconds=5)
    proc = subprocess.run([sys.executable, "-m", "course_grader", "collect", "ps1", f"--Exchange.root={exchange}",
                           "--CourseDirectory.course_id=course101", f"--CourseDirectory.root={course}"],
                          cwd=course, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = {p.parts[-3]: p for p in (course / "submitted").glob("*/ps1/ps1.ipynb")}
    assert set(got) == ({ME, OTHER} if root else {ME}), proc.stderr
    for student, path in got.items():
        assert f"{student}'s own work" in path.read_text() and "impostor" not in path.read_text()
        stamp = (path.parent / "timestamp.txt").read_text()
        from nbgrader.utils import parse_utc
        when = parse_utc(stamp).replace(tzinfo=None)
        assert stamp != FORGED and when >= before, stamp             # the server's time, not 2020
    assert "Not collected" in proc.stderr and f"not to {OTHER!r}" in proc.stderr
    if root:
        assert f"belongs to uid {OTHER_UID}, not to {ME!r}" in proc.stderr


def test_plain_nbgrader_collect_would_take_the_impostors_folder(tmp_path):
    """The hole the wrapper closes, shown on the same exchange: plain nbgrader collect takes the newest
    folder by its name, whoever owns it (it only warns)."""
    exchange, course = tmp_path / "exchange", tmp_path / "course"
    inbound = exchange / "course101" / "inbound"
    inbound.mkdir(parents=True)
    course.mkdir()
    _folder(inbound, f"{ME}+ps1+2020-01-01 00:00:00.000000 UTC", f"{ME}'s own work", os.geteuid())
    _folder(inbound, f"{ME}+ps1+2031-01-01 00:00:00.000000 UTC", "the impostor's work",
            OTHER_UID if os.geteuid() == 0 else os.geteuid())
    subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "collect", "ps1", f"--Exchange.root={exchange}",
                    "--CourseDirectory.course_id=course101", f"--CourseDirectory.root={course}"],
                   cwd=course, capture_output=True, text=True, timeout=300, check=True)
    assert "impostor" in (course / "submitted" / ME / "ps1" / "ps1.ipynb").read_text()
    assert (course / "submitted" / ME / "ps1" / "timestamp.txt").read_text() == FORGED


# ------------------------------------------------------------------ an LMS download's names

def test_a_moodle_file_name_cannot_claim_another_id():
    """Issue 30 item 11: Moodle names a file ``<full name>_<id>_assignsubmission_file_<the student's own
    file name>``; the student picks the last part. ``lms-collect`` takes the first id of the top-level
    name, so no file name claims another student (its own name is the uploader's file, nothing more)."""
    from course_grader.lms_in import whose

    def collect(name):
        got = whose(name, "moodle")
        return None if got is None else (got[0], got[2])
    assert collect("Ada Lovelace_1001_assignsubmission_file_encoder_from_scratch.ipynb") == \
        ("1001", "encoder_from_scratch.ipynb")
    assert collect("Ada_King Lovelace_1001_assignsubmission_file_encoder_from_scratch.ipynb") == \
        ("1001", "encoder_from_scratch.ipynb")
    for claim in ("Eve_1002_assignsubmission_file_x_1001_assignsubmission_file_encoder_from_scratch.ipynb",
                  "Eve_1002_assignsubmission_file__1001_assignsubmission_file_encoder_from_scratch.ipynb",
                  "Eve_1002_assignsubmission_file_encoder_from_scratch.ipynb_1001_assignsubmission_file_"
                  "encoder_from_scratch.ipynb",
                  "Eve_1002_assignsubmission_file_gradebook.ipynb",
                  "Eve_1002_assignsubmission_file_../1001/encoder_from_scratch.ipynb"):
        assert collect(claim)[0] == "1002", claim


def test_times_deleted_by_zip_collect_force_are_written_again(tmp_path):
    """Issue 41 item 10: ``nbgrader zip_collect --force`` deletes every ``timestamp.txt`` that ``lms-times``
    wrote; the autograder writes them again from lms-times' record before it grades (restore_times), so
    no late penalty silently disappears. A time a student's folder already has is left alone."""
    from course_grader.lms import restore_times, write_times
    for student in ("1001", "1002"):
        (tmp_path / "submitted" / student / "ps1").mkdir(parents=True)
        (tmp_path / "submitted" / student / "ps1" / "ps1.ipynb").write_text(f'{{"student": "{student}"}}')
    late = datetime.datetime(2026, 12, 5, 1, 30, tzinfo=datetime.UTC)
    write_times(str(tmp_path), "ps1", {"1001": late, "1002": late})
    stamps = {s: tmp_path / "submitted" / s / "ps1" / "timestamp.txt" for s in ("1001", "1002")}
    written = stamps["1001"].read_text()
    for path in stamps.values():                        # what zip_collect --force leaves
        path.unlink()
    stamps["1002"].write_text("2026-12-01 00:00:00.000000 UTC\n")
    assert restore_times(str(tmp_path), "ps1") == ["1001"]
    assert stamps["1001"].read_text() == written and "2026-12-05 01:30:00" in written
    assert stamps["1002"].read_text().startswith("2026-12-01")
