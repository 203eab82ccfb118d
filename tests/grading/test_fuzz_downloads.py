"""The gate an LMS download passes (course_grader.lms_in; issue 48 items 3 and 4, issue 49 item 4).

The fuzzer builds a Moodle or a Canvas download of an honest class, then lets one student add what a
student controls: the uploaded file's name (another participant's name and id, a path, ``..``, a
folder), its bytes (a zip bomb, a zip holding a file named as another's, JSON with lone surrogates, not
JSON), the mode and the kind the zip records (a link, 0777), several copies with capitals and numbers.
A second round is a re-upload (a new download, collected with ``--force``). The promises, with the
command as an instructor runs it (``lms-collect``'s ``main``): exit 0; every honest student's notebook is
collected, whole and their own; nothing is written but ``submitted/<id>/<assignment>/<notebook>.ipynb``
(files 0600, folders 0700), nothing outside the course; nothing of the attacker's lands in another
student's folder, nor another's in the attacker's; a refusal is said in the log; and then the gates
downstream (:func:`fuzz_kit.after_the_gates`): every honest notebook admitted whole by the notebook gate
the grader runs first, and no page made of any admitted notebook (the attacker's answer holds style
sheets, overlays and remote images) loads or restyles.
"""

from __future__ import annotations

import json
import os
import stat
import zipfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_grader import lms_in
from fuzz_kit import RESTYLING, after_the_gates, answer_notebook, fuzz, upload_name, zip_of

ASSIGNMENT, NOTEBOOK = "ps1", "encoder_from_scratch"
HONEST = {"1001": "Ada Lovelace", "1002": "Bob Babbage", "1003": "Eve Hopper"}
ATTACKER = "1004"
ABSENT = "1005"                                  # a student who handed in nothing: a claim on them must not land


def notebook(marker: str, answer: str = "") -> bytes:
    return json.dumps(answer_notebook(marker, answer)).encode()


def attacks(lms: str) -> st.SearchStrategy:
    """(the name the attacker's file gets in the download, its bytes, the mode the zip records)."""
    victim = st.sampled_from(sorted(HONEST) + [ABSENT])
    own = st.sampled_from([f"{NOTEBOOK}.ipynb", f"{NOTEBOOK.upper()}.IPYNB", f"{NOTEBOOK} (1).ipynb",
                           f"{NOTEBOOK}-2.ipynb", "other.ipynb", "notes.pdf"])

    def claim(v, filename):                     # the uploaded file named as the LMS names the victim's
        return upload_name(lms, v, HONEST.get(v, "Absent Student"), filename)
    names = st.one_of(
        st.builds(lambda f: upload_name(lms, ATTACKER, "Mallory", f), own),
        st.builds(lambda v, f: upload_name(lms, ATTACKER, "Mallory", claim(v, f)), victim, own),
        st.builds(lambda v, f: upload_name(lms, ATTACKER, "Mallory", "") + "/" + claim(v, f), victim, own),
        st.builds(lambda v: f"../{claim(v, NOTEBOOK + '.ipynb')}", victim),
        st.builds(lambda v: f"/{claim(v, NOTEBOOK + '.ipynb')}", victim),
        st.builds(lambda v: f"x/{claim(v, NOTEBOOK + '.ipynb')}", victim),
        st.builds(lambda f: upload_name(lms, ATTACKER, "Mallory", "") + "/a/b/" + f, own),
        # Canvas keeps a name's "_" and digits (a student may edit the name): "mallory_1001_1004_..."
        st.builds(lambda v, f: upload_name(lms, ATTACKER, f"Mallory_{v}" if lms == "canvas" else "Mallory", f),
                  victim, own))
    payloads = st.one_of(
        st.just(notebook("mallory")),
        st.builds(lambda answer: notebook("mallory", answer), st.sampled_from(RESTYLING)),
        st.just(b"\0" * 400_000),                                           # a bomb: 1,000 to 1
        st.just(notebook("\\ud800 mallory").replace(b"\\\\ud800", b"\\ud800")),
        st.just(b"not json {"),
        st.builds(lambda v: zip_of({claim(v, f"{NOTEBOOK}.ipynb"): notebook("mallory")}), victim))
    return st.tuples(names, payloads, st.sampled_from([0o100644, 0o100777, 0o120777, 0o040755, 0o104755]))


def course(tmp, lms_name: str):
    from nbgrader.coursedir import CourseDirectory
    (tmp / "source" / ASSIGNMENT).mkdir(parents=True)
    (tmp / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_bytes(notebook("released"))
    coursedir = CourseDirectory(root=str(tmp))
    coursedir.source_directory = "source"
    return coursedir


def download(path, lms: str, attack, round_: int) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for student, name in sorted(HONEST.items()):
            z.writestr(upload_name(lms, student, name, f"{NOTEBOOK}.ipynb"), notebook(f"{student} round {round_}"))
        for member, data, mode in dict((a[0], a) for a in attack).values():
            info = zipfile.ZipInfo(member, date_time=(2030, 1, 1, 0, 0, 0))
            info.external_attr = mode << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)


def check_promises(root, lines: list[str], round_: int) -> None:
    written = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
    for rel in written:
        parts = rel.split(os.sep)
        if parts[0] in ("source",) or rel.endswith(".zip"):
            continue
        if rel == f"uploads_{ASSIGNMENT}.json":                  # lms-collect's notes on each student (uploads.py)
            assert stat.S_IMODE(os.lstat(root / rel).st_mode) == 0o600 and stat.S_ISREG(os.lstat(root / rel).st_mode)
            continue
        assert parts[0] == "submitted" and len(parts) == 4 and parts[2:] == [ASSIGNMENT, f"{NOTEBOOK}.ipynb"], rel
        assert stat.S_IMODE(os.lstat(root / rel).st_mode) == 0o600 and stat.S_ISREG(os.lstat(root / rel).st_mode)
        assert stat.S_IMODE(os.lstat(root / parts[0] / parts[1]).st_mode) == 0o700
    for student in HONEST:
        text = (root / "submitted" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text()
        assert f"{student} round {round_}" in text and "mallory" not in text, student
    assert not (root / "submitted" / ABSENT).exists()            # nobody's upload became theirs
    assert all("\x1b" not in line for line in lines)


def command_checked(root, path, lms: str, round_: int, capsys) -> None:
    """``python -m course_grader lms-collect`` as the instructor runs it, in the course (``root``): exit 0,
    what it reads of the download at most the limits' ratio times the download's size (a bomb is refused
    before it is read), the promises of :func:`check_promises`, then those of the gates after it
    (:func:`fuzz_kit.after_the_gates`)."""
    import unittest.mock
    read, inner = [0], lms_in._read

    def counted(z, info, limits):
        data = inner(z, info, limits)
        read[0] += len(data)
        return data
    here = os.getcwd()
    os.chdir(root)
    try:
        with unittest.mock.patch.object(lms_in, "_read", counted):
            code = lms_in.main([ASSIGNMENT, str(path), "--lms", lms] + (["--force"] if round_ > 1 else []))
    finally:
        os.chdir(here)
    lines = capsys.readouterr().out.splitlines()
    assert code == 0, lines
    assert read[0] <= lms_in.Limits.ratio * os.path.getsize(path)
    check_promises(root, lines, round_)
    after_the_gates(root / "submitted", ASSIGNMENT, NOTEBOOK,
                    {s: f"{s} round {round_}" for s in HONEST}, "mallory")


@fuzz(12)
@given(lms=st.sampled_from(["moodle", "canvas"]), data=st.data())
def test_fuzz_a_download_gives_every_honest_student_their_own_notebook(tmp_path_factory, capsys, lms, data):
    attack = data.draw(st.lists(attacks(lms), min_size=1, max_size=4), label="attack")
    base = tmp_path_factory.mktemp("lms")
    root = base / "course"
    root.mkdir()
    course(root, lms)
    for round_ in (1, 2):                                      # a download, then a re-upload (--force)
        path = base / f"download{round_}.zip"
        download(path, lms, attack if round_ == 1 else data.draw(st.lists(attacks(lms), max_size=2)), round_)
        command_checked(root, path, lms, round_, capsys)
        assert sorted(os.listdir(base)) == ["course"] + [f"download{r}.zip" for r in range(1, round_ + 1)]


#: what a Canvas name may end in once Canvas has written it (issue 48, fifth round): a student may edit the
#: name Canvas writes first, which keeps its "_" and digits (only "_digits_" inside it is removed); late
#: uploads get "_late" in small letters
SLUG_TAILS = st.sampled_from(["", "_1001", "_1003", f"_{ABSENT}", "_556001", "_late", "_7"])
CLAIMS = st.sampled_from(["", "1001_556001_", f"{ABSENT}_556005_", "1001_", "2024_", "late_1001_556001_"])


@fuzz(80)
@given(name=st.sampled_from(["mallory", "anon"]), tail=SLUG_TAILS, late=st.booleans(), claim=CLAIMS,
       own=st.sampled_from([f"{NOTEBOOK}.ipynb", "mine.ipynb"]), roster=st.booleans())
def test_fuzz_a_canvas_name_that_spells_other_ids_is_its_uploaders_or_nobodys(name, tail, late, claim, own, roster):
    """Whatever the attacker's edited name and file name spell, the attacker's file is taken as theirs or
    left out (with a line naming the ids it spells), never given to 1001, who handed in, or to 1005, who
    did not (a name "Anon" reads as Canvas's anonymous id ``anon_...``, nobody's on the roster); 1001's and
    a late student's own files are taken. The gate's plan only (no course, no disk but the zip)."""
    import tempfile
    top = f"{name}{tail}{'_late' if late else ''}_{ATTACKER}_556004_{claim}{own}"
    members = {top: notebook("mallory"), upload_name("canvas", "1001", "Ada Lovelace", own): notebook("1001 own"),
               "babbagebob_late_1002_556002_encoder_from_scratch.ipynb": notebook("1002 own")}
    with tempfile.NamedTemporaryFile(suffix=".zip") as f:
        f.write(zip_of(members))
        f.flush()
        taken, notes = lms_in.plan(f.name, "canvas", [NOTEBOOK], {"1001", "1002", "1003", ATTACKER, ABSENT}
                                   if roster else None)
    for (student, _), data in taken.items():
        assert (b"mallory" in data) == (student == ATTACKER or student.startswith("anon_")), (top, student)
    assert b"1001 own" in taken[("1001", NOTEBOOK)] and b"1002 own" in taken[("1002", NOTEBOOK)], (top, notes)
    mallory = [s for (s, _), data in taken.items() if b"mallory" in data]
    assert mallory or any(ascii(top)[:120] in n for n in notes), (top, notes)          # taken, or said


def test_one_student_several_files_copies_capitals_anonymous(tmp_path):
    """Issue 49 item 4: a student's two notebooks, a browser's ``(1)`` copy, other capitals, Canvas's
    ``-1`` and anonymous ``anon_`` names: each student collected once, each choice said in the log."""
    coursedir = course(tmp_path, "canvas")
    members = {"lovelaceada_1001_10_encoder_from_scratch.ipynb": notebook("old"),
               "lovelaceada_1001_11_encoder_from_scratch (1).ipynb": notebook("ada new"),
               "babbagebob_LATE_1002_12_Encoder_From_Scratch-1.ipynb": notebook("bob"),
               "babbagebob_LATE_1002_13_notes.pdf": b"%PDF",
               "anon_Xk3pQ_14_encoder_from_scratch.ipynb": notebook("anonymous"),
               "hoppereve_1003_15_my_work.ipynb": notebook("eve")}
    (tmp_path / "d.zip").write_bytes(zip_of(members))
    lines = lms_in.collect(coursedir, ASSIGNMENT, [str(tmp_path / "d.zip")], "canvas")
    got = {s: (tmp_path / "submitted" / s / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text()
           for s in os.listdir(tmp_path / "submitted")}
    assert sorted(got) == ["1001", "1002", "1003", "anon_Xk3pQ"]
    assert "ada new" in got["1001"] and "bob" in got["1002"] and "eve" in got["1003"]
    log = "\n".join(lines)
    assert "1001: 2 files for encoder_from_scratch.ipynb; took 'encoder_from_scratch (1).ipynb'" in log
    assert "1002: 'notes.pdf' is not a notebook of the assignment (left out)" in log
    assert "1003: 'my_work.ipynb' taken as encoder_from_scratch.ipynb (the only notebook)" in log


def test_the_roster_names_who_may_be_collected(tmp_path, monkeypatch):
    coursedir = course(tmp_path, "moodle")
    monkeypatch.setattr(lms_in, "roster_of", lambda cd: {"1001"})
    (tmp_path / "d.zip").write_bytes(zip_of({upload_name("moodle", s, n, f"{NOTEBOOK}.ipynb"): notebook(s)
                                              for s, n in HONEST.items()}))
    lines = lms_in.collect(coursedir, ASSIGNMENT, [str(tmp_path / "d.zip")], "moodle")
    assert os.listdir(tmp_path / "submitted") == ["1001"]
    assert sum("Not on the roster" in line for line in lines) == 2


def _last_id(member: str, lms: str, roster=None):
    """zip_collect's way: the pattern's ``.*`` runs over the whole path, so the *last* name in it counts."""
    import re
    m = re.fullmatch(r".*_(\d+)_assignsubmission_file_([^/]*)", member)
    return (m.group(1), 0, m.group(2)) if m else None


@pytest.mark.parametrize("plant", ["unanchored", "no limits", "no page gate"])
def test_without_the_gate_the_fuzzers_cases_break_a_promise(tmp_path, monkeypatch, capsys, plant):
    """The fuzzer can fail: matched on the whole path (as zip_collect's ``.*/`` pattern), the attacker's
    file named as 1001's is 1001's; read without the limits, a member of about 2 KB is read as 2 MB; with
    ``<style>`` allowed again in what the grader writes, the attacker's own answer restyles the pages."""
    from course_grader import html_out
    course(tmp_path, "moodle")
    claim = upload_name("moodle", ATTACKER, "Mallory", upload_name("moodle", "1001", "Ada Lovelace",
                                                                  f"{NOTEBOOK}.ipynb"))
    if plant == "unanchored":
        monkeypatch.setattr(lms_in, "whose", _last_id)
        payload = notebook("mallory")
    elif plant == "no limits":
        monkeypatch.setattr(lms_in, "_read", lambda z, info, limits: z.read(info))
        payload = b" " * 2_000_000 + notebook("mallory")
    else:
        monkeypatch.setattr(html_out, "TAGS", html_out.TAGS | {"style"})
        claim, payload = upload_name("moodle", ATTACKER, "Mallory", f"{NOTEBOOK}.ipynb"), notebook("mallory",
                                                                                                 RESTYLING[0])
    download(tmp_path / "d.zip", "moodle", [(claim, payload, 0o100644)], 1)
    with pytest.raises(AssertionError):
        command_checked(tmp_path, tmp_path / "d.zip", "moodle", 1, capsys)
    capsys.readouterr()
