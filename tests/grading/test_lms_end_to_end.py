"""An LMS download graded end to end (issue 48): the promises of the route fuzzers, kept by the real
commands in the order an instructor runs them, with grading included.

The fuzzers (tests/grading/test_fuzz_downloads.py and its siblings) stop at the gates: "graded in full"
is there "admitted whole by the notebook gate". Here one course receives a Moodle download and a Canvas
download, each holding one honest student's correct notebook (the model solution, :func:`attack_kit.
released_course`) beside the hostile uploads of the fuzzers' kinds: a zip bomb, a zip inside the upload,
a file named as the honest student's, a notebook with escaped lone surrogates, a written answer that
restyles the page (``fuzz_kit.RESTYLING``), two copies of one notebook. Then ``lms-collect`` (each
download), the sandboxed ``autograde --jobs 1`` and ``nbgrader generate_feedback`` run as commands, and:

* every command exits 0;
* each honest student's notebook is collected byte for byte as uploaded and gets every autograded part's
  full marks;
* each hostile upload is refused or graded for its uploader alone, with a line of ``lms-collect``'s log
  naming the uploader; no student's notebook holds another's text;
* nothing is written outside the course: the test's temporary root (the downloads, an empty ``HOME`` and
  ``TMPDIR`` the commands get) is as it was;
* every feedback page loads nothing from elsewhere and restyles nothing (``fuzz_kit``'s counters).

It fails with a gate removed (tried by hand, each planted in the source, then removed): Moodle's names
matched on their last id (the claim takes the honest student's place), lone surrogates not repaired
(``lms-collect`` exits 1), ``<style>`` allowed by ``html_out`` (the restyler's feedback page).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from attack_kit import released_course
from fuzz_kit import RESTYLING, active_html, loads_or_restyles, upload_name, zip_of

ASSIGNMENT, NOTEBOOK = "07_exercise", "encoder_from_scratch"
BIN = Path(sys.executable).parent
FILE = f"{NOTEBOOK}.ipynb"
HONEST_TIME, LATER = (2026, 12, 4, 12, 0, 0), (2026, 12, 4, 18, 0, 0)   # the attackers' files are the newer
SURROGATE = "SURROGATE-HERE"


def answered(nb, text: str):
    """``nb`` with every written answer (an nbgrader solution cell in markdown) reading ``text``."""
    nb = nbformat.from_dict(json.loads(nbformat.writes(nb)))
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown" and meta.get("solution"):
            cell.source = text
    return nb


def download(lms: str, base: int, good, release) -> tuple[bytes, dict]:
    """(the zip of one class's uploads, {student: what the test expects of them}). Ids: ``base + 1`` the
    honest student; + 3 a claim on the honest one's name (the release, unanswered: it scores nothing);
    + 4 a zip bomb; + 5 a zip holding a notebook named as the honest one's; + 6 lone surrogates; + 7 a
    restyling answer; + 8 two copies. Each hostile notebook carries its uploader's mark."""
    ids = {k: str(base + k) for k in range(1, 9)}
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
    ]
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
    return out.getvalue(), expect


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


def command(args: list[str], root: Path, env: dict) -> str:
    proc = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{args[:4]} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The course after both downloads, collected, autograded and given feedback; the commands' logs."""
    top = tmp_path_factory.mktemp("lms_end_to_end")
    root = top / "course"
    good = released_course(root)
    release = nbformat.read(root / "release" / ASSIGNMENT / FILE, as_version=4)
    (top / "home").mkdir()
    (top / "tmp").mkdir()
    expect = {}
    for lms, base in (("moodle", 1000), ("canvas", 2000)):
        data, expect[lms] = download(lms, base, good, release)
        (top / f"{lms}.zip").write_bytes(data)
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", HOME=str(top / "home"),
               TMPDIR=str(top / "tmp"))
    env.pop("JUPYTER_CONFIG_DIR", None)
    before = snapshot(top, root)
    logs = {lms: command([sys.executable, "-m", "course_grader", "lms-collect", ASSIGNMENT, str(top / f"{lms}.zip"),
                          "--lms", lms], root, env) for lms in ("moodle", "canvas")}
    logs["autograde"] = command([sys.executable, "-m", "course_grader", "autograde", ASSIGNMENT, "--jobs", "1",
                                 "--allow-public-seeds"], root, env)
    logs["feedback"] = command([str(BIN / "nbgrader"), "generate_feedback", ASSIGNMENT], root, env)
    return {"root": root, "top": top, "before": before, "after": snapshot(top, root), "logs": logs,
            "expect": expect, "good": good}


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
                assert scores[student] and all(a == m > 0 for a, m in scores[student].values()), scores[student]
            page = (root / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")
            assert marks[student] in page and active_html(page) == [] and loads_or_restyles(page) == [], student
    assert "Could not grade" not in logs["autograde"]
    assert graded["after"] == graded["before"], "a file outside the course was written"
