"""The fifth red-team round (issue 48), tried again by kind against the gates of this version: what a
student (or a TA) hands in through an LMS download (the archive gate, ``course_grader.lms_in``), the
notebook's JSON (the notebook gate, ``notebook_in`` and ``json_in``), what a page made of it shows (the
page gate, ``html_out``), what a part can reach beside and after another part (the sandbox), and what
reaches the instructor's terminal.

Each case names the promise it checks. Most held; those that broke are mended at their gate and named
``BROKE`` here (each also fails without its mend, shown in the fuzzers' counter-checks): a Canvas name
a student edits to end in another student's id, Canvas's ``late`` in small letters, valid JSON of
another shape, ``1e400``, and a written answer that paints over the verdict line. Everything but the
one sandbox run is in-process and cheap (no course, no nbgrader run).
"""

from __future__ import annotations

import io
import json
import re
import struct
import warnings
import zipfile

import pytest

from attack_kit import LEVEL, probe, zygote  # noqa: F401
from course_grader import html_out, lms_in, notebook_in
from fuzz_kit import active_html, answer_notebook, loads_or_restyles, upload_name

NOTEBOOK = "encoder_from_scratch"
ROSTER = {"100", "1001", "1002", "1004", "1005"}
ATTACKER = "1004"


def _nb(marker: str) -> bytes:
    return json.dumps(answer_notebook(marker)).encode()


def _own(lms: str, student: str, filename: str = f"{NOTEBOOK}.ipynb") -> str:
    return upload_name(lms, student, "Ada Lovelace" if student == "1001" else "Mallory", filename)


def _zip(members: list, lms: str = "moodle") -> bytearray:
    """A download: ``members`` [(name, bytes) or (ZipInfo, bytes)] after 1001's own notebook."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)                  # "Duplicate name": one case's point
        z.writestr(_own(lms, "1001"), _nb("1001 own"))
        for name, data in members:
            z.writestr(name, data)
    return bytearray(out.getvalue())


def _patch(data: bytearray, name: str, local: dict, central: dict) -> bytearray:
    """``data`` with the headers of member ``name`` changed: {offset in the header: (struct format, value)}."""
    for signature, fields in ((b"PK\x03\x04", local), (b"PK\x01\x02", central)):
        at = -1
        while (at := data.find(signature, at + 1)) >= 0:
            skip = 30 if signature == b"PK\x03\x04" else 46
            length = struct.unpack_from("<H", data, at + (26 if skip == 30 else 28))[0]
            if bytes(data[at + skip:at + skip + length]) == name.encode():
                for offset, (fmt, value) in fields.items():
                    struct.pack_into(fmt, data, at + offset, value)
    return data


MALLORY = _own("moodle", ATTACKER)


def _info(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2030, 1, 1, 0, 0, 0))
    info.external_attr = mode << 16
    return info


def _bzip2_honest() -> bytearray:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_BZIP2) as z:
        z.writestr(_own("moodle", "1001"), _nb("1001 own"))
        z.writestr(_own("moodle", "1002"), _nb("1002 own"))
    return bytearray(out.getvalue())


def _lzma_honest() -> bytearray:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_LZMA) as z:
        z.writestr(_own("moodle", "1001"), _nb("1001 own"))
    return bytearray(out.getvalue())


def _commented() -> bytearray:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(_own("moodle", "1001"), _nb("1001 own"))
        z.comment = b"\x1b[2J" * 16_000
    return bytearray(out.getvalue())


# (case, LMS, the download's bytes, the promise): 1001's notebook is their own, the uploader's text is
# nobody else's, the command's lines hold no raw control byte, and plan() returns (the class goes on)
ARCHIVES = [
    ("dot-dot member", "moodle", _zip([("../" + _own("moodle", "1002"), _nb("mallory"))]), "not 1002's"),
    ("absolute member", "moodle", _zip([("/" + _own("moodle", "1002"), _nb("mallory"))]), "not 1002's"),
    ("backslashes", "moodle", _zip([(upload_name("moodle", ATTACKER, "Mallory", "..\\..\\" + _own("moodle", "1002")),
                                     _nb("mallory"))]), "the uploader's or nobody's"),
    ("a NUL in the name", "moodle", _zip([(MALLORY + "\x00/" + _own("moodle", "1002"), _nb("mallory"))]),
     "the uploader's (zipfile ends the name at NUL)"),
    ("the same name twice", "moodle", _zip([(MALLORY, _nb("mallory")), (MALLORY, _nb("mallory 2"))]),
     "one of the uploader's"),
    ("a symbolic link member", "moodle", _zip([(_info(MALLORY, 0o120777), b"../../1001/ps1/x.ipynb")]),
     "refused (not JSON), no link written"),
    ("a local header naming another file", "moodle",
     _patch(_zip([(MALLORY, _nb("mallory"))]), MALLORY, {30: ("<4s", b"Ada_")}, {}), "refused for the uploader"),
    ("a size that lies", "moodle",
     _patch(_zip([(MALLORY, b" " * 3_000_000 + _nb("mallory"))]), MALLORY, {22: ("<I", 50)}, {24: ("<I", 50)}),
     "refused, at most the declared 50 bytes read"),
    ("an unknown compression method", "moodle",
     _patch(_zip([(MALLORY, _nb("mallory"))]), MALLORY, {8: ("<H", 99)}, {10: ("<H", 99)}), "refused"),
    ("an encrypted member", "moodle",
     _patch(_zip([(MALLORY, _nb("mallory"))]), MALLORY, {6: ("<H", 1)}, {8: ("<H", 1)}), "refused"),
    ("data before the zip (a polyglot)", "moodle", bytearray(b"GIF89a" + b"\0" * 5000) + _zip([]), "read as a zip"),
    ("a 64 KB comment of escape codes", "moodle", _commented(), "read, nothing of it shown"),
    ("bzip2 members", "moodle", _bzip2_honest(), "honest students taken"),
    ("lzma members", "moodle", _lzma_honest(), "honest student taken"),
    ("an id in other digits", "moodle", _zip([(upload_name("moodle", "\u0661\u0660\u0660\u0661", "Mallory",
                                                            f"{NOTEBOOK}.ipynb"), _nb("mallory"))]), "not 1001's"),
    ("an id that is a prefix of another", "moodle", _zip([(upload_name("moodle", "100", "Mallory", f"{NOTEBOOK}.ipynb"),
                                                           _nb("mallory"))]), "100's, not 1001's"),
    ("a tar, a 7z and a gz uploaded", "moodle", _zip([(upload_name("moodle", ATTACKER, "Mallory", f"x.{ext}"),
                                                       _nb("mallory")) for ext in ("tar", "7z", "ipynb.gz")]),
     "never unpacked"),
    ("a 5,000-character name with escape codes", "moodle",
     _zip([(upload_name("moodle", ATTACKER, "Mallory", "\x1b[31m" * 800 + ".ipynb"), _nb("mallory"))]),
     "log lines bounded and escaped"),
    ("Canvas's anonymous name spelling an id", "canvas", _zip([("anon_1001_556004_encoder_from_scratch.ipynb",
                                                                _nb("mallory"))], "canvas"), "not 1001's"),
    ("BROKE: a Canvas name edited to end in another's id", "canvas",
     _zip([(upload_name("canvas", ATTACKER, "Mallory_1005", f"{NOTEBOOK}.ipynb"), _nb("mallory")),
           (upload_name("canvas", ATTACKER, "Mallory_1001", f"{NOTEBOOK}.ipynb"), _nb("mallory"))], "canvas"),
     "neither 1005's (who handed in nothing) nor 1001's: left out, both ids named"),
]


@pytest.mark.parametrize("case, lms, data, promise", ARCHIVES, ids=[a[0] for a in ARCHIVES])
def test_the_archive_gate_gives_no_upload_to_another_student(tmp_path, case, lms, data, promise):
    path = tmp_path / "download.zip"
    path.write_bytes(bytes(data))
    read, inner = [], lms_in._read

    def counted(z, info, limits):
        got = inner(z, info, limits)
        read.append(len(got))
        return got
    lms_in._read, saved = counted, lms_in._read
    try:
        taken, notes = lms_in.plan(str(path), lms, [NOTEBOOK], ROSTER)
    finally:
        lms_in._read = saved
    for (student, _), nb in taken.items():
        assert (b"mallory" in nb) == (student in (ATTACKER, "100")), (case, student)
    assert b"1001 own" in taken[("1001", NOTEBOOK)], (case, notes)
    assert all(not re.search(r"[\x00-\x1f\x7f-\x9f]", line) and len(line) < 600 for line in notes), (case, notes)
    assert max(read, default=0) <= lms_in.Limits.file_bytes
    if "size that lies" in case:
        assert ATTACKER not in {s for s, _ in taken} and max(read, default=0) < 3_000_000
    if case.startswith("BROKE"):
        assert {s for s, _ in taken} == {"1001"}
        assert sum("Names 1001 and 1004" in n or "Names 1004 and 1005" in n for n in notes) == 2, notes


def test_broke_a_late_canvas_upload_is_collected(tmp_path):
    """BROKE: Canvas writes ``late`` in small letters (``doejohn_late_1002_...``); the gate read only
    ``LATE`` and left the late student out as "Not an upload's name". Promise: every honest student's
    own notebook is taken."""
    path = tmp_path / "download.zip"
    path.write_bytes(bytes(_zip([("babbagebob_late_1002_556002_encoder_from_scratch.ipynb", _nb("1002 own"))])))
    taken, notes = lms_in.plan(str(path), "canvas", [NOTEBOOK], ROSTER)
    assert b"1002 own" in taken[("1002", NOTEBOOK)], notes


# ------------------------------------------------------------------ the notebook gate

_BASE = json.dumps({"cells": [{"cell_type": "markdown", "id": "a1", "metadata": {}, "source": "hi"}],
                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
# (case, the bytes on disk, what the gate does: "refused" or the repair it says, "" for none)
NOTEBOOKS = [
    ("a key written twice", _BASE.replace('"source": "hi"', '"source": "hi", "source": "bye"'), ""),
    ("a byte-order mark", b"\xef\xbb\xbf" + _BASE.encode(), "refused"),
    ("UTF-16", _BASE.encode("utf-16"), "refused"),
    ("overlong UTF-8", _BASE.encode().replace(b"hi", b"h\xc0\xa9"), "refused"),
    ("a 5,000-digit number", _BASE.replace('"metadata": {}, "nbformat"', '"metadata": {"x": ' + "9" * 5000 +
                                           '}, "nbformat"'), "refused"),
    ("nbformat 3", json.dumps({"worksheets": [{"cells": [{"cell_type": "markdown", "source": "x", "metadata": {}}]}],
                               "metadata": {}, "nbformat": 3, "nbformat_minor": 0}), ""),
    ("NaN", _BASE.replace('"metadata": {}, "nbformat"', '"metadata": {"x": NaN}, "nbformat"'), "NaN"),
    ("BROKE: 1e400", _BASE.replace('"metadata": {}, "nbformat"', '"metadata": {"x": 1e400, "y": -1e999},'
                                   ' "nbformat"'), "2 NaN/Infinity"),
    ("BROKE: a source list holding null", _BASE.replace('"source": "hi"', '"source": ["hi", null]'), "refused"),
    ("BROKE: nbformat 4.0", _BASE.replace('"nbformat": 4', '"nbformat": 4.0'), "refused"),
    ("BROKE: a cell that is a number", _BASE.replace('"cells": [', '"cells": [3, '), "refused"),
]


@pytest.mark.parametrize("case, data, does", NOTEBOOKS, ids=[n[0] for n in NOTEBOOKS])
def test_the_notebook_gate_writes_json_or_refuses_with_a_value_error(tmp_path, case, data, does):
    """Promise: a notebook leaves the gate as strict JSON nbgrader can write, saying what it repaired, or
    is refused with a ValueError (refused for that student alone), never another exception."""
    path = tmp_path / "nb.ipynb"
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    if does == "refused":
        with pytest.raises(ValueError):
            notebook_in.admit_file(str(path), str(tmp_path))
        return
    notes = notebook_in.admit_file(str(path), str(tmp_path))
    assert (does in "; ".join(notes)) if does else notes == [], notes
    json.loads(path.read_bytes(), parse_constant=lambda name: pytest.fail(f"{name} written"))
    assert notebook_in.parse(path.read_bytes())[0].nbformat == 4        # what the grader's reader reads


def test_two_nbgrader_cells_with_one_grade_id_are_refused_for_that_student():
    """Promise: duplicate grade ids in two nbgrader cells (both marked) never reach nbgrader (which would
    grade one and keep the other's hand grade): the student's notebook is refused, with the reason."""
    from course_grader.recording import invalid_metadata
    meta = {"grade": True, "solution": True, "locked": False, "points": 2, "grade_id": "answer_reverser",
            "schema_version": 3}
    nb = json.loads(_BASE)
    nb["cells"] = [{"cell_type": "markdown", "id": f"c{i}", "source": "x", "metadata": {"nbgrader": dict(meta)}}
                   for i in range(2)]
    assert invalid_metadata(nb) == "the grade_id answer_reverser is used by two cells"


# ------------------------------------------------------------------ the page gate

# (case, a written answer): nothing on the formgrader's view or the feedback page loads, restyles or runs
PAGES = [
    ("<base>", '<base href="https://x.org/">[a](b)'),
    ("meta refresh", '<meta http-equiv="refresh" content="0;url=https://x.org">'),
    ("<link>", '<link rel="stylesheet" href="//x.org/a.css">'),
    ("srcset", '<img srcset="//x.org/a.png 1x" src="data:image/png;base64,AA==">'),
    ("svg image", '<svg><image href="//x.org/a.png" width="9" height="9"/></svg>'),
    ("svg use", '<svg><use href="//x.org/s.svg#a"/></svg>'),
    ("svg foreignObject", '<svg><foreignObject><div style="position:fixed;top:0">20 of 20</div></foreignObject></svg>'),
    ("a CSS escape", '<span style="posit\\69on:fixed;col\\6f r:red">x</span>'),
    ("a CSS comment", '<span style="pos/**/ition:fixed;color:red/**/">x</span>'),
    ("expression()", '<span style="color:expression(alert(1))">x</span>'),
    ("url( escaped", '<span style="color:u\\rl(//x.org/a)">x</span>'),
    ("math href", '<math href="//x.org"><mi>x</mi></math>'),
    ("mathbackground", '<math><mstyle mathbackground="url(//x.org/a.png)" mathsize="900px"><mi>x</mi></mstyle></math>'),
    ("LaTeX \\href", "$\\href{javascript:alert(1)}{x}$ and $\\style{position:fixed}{y}$ and $\\class{a}{z}$"),
    ("LaTeX \\unicode and colour", "$\\unicode{x202E}x$ $\\color{white}{x}$ $\\mathcolor{red}{y}$"),
    ("vertical-align by a length", '<span style="vertical-align:-400px;line-height:0">x</span>'),
    ("a negative mspace", '<math><mspace width="-3000px"/><mspace depth="-900px" height="900px"/></math>'),
    ("a text decoration 800px thick", '<span style="text-decoration:underline 800px white">x</span>'),
    ("a moved svg", '<svg transform="translate(0,-300)" opacity="0.5"><rect width="9" height="9"/></svg>'),
    ("BROKE: a padded white span", '<span style="opacity:0.99;background-color:white;padding:400px 3000px">20</span>'),
    ("BROKE: a 600px border", '<span style="opacity:0.99;border:600px solid white">x</span>'),
    ("BROKE: a line height of 0", '<span style="opacity:0.99;font-size:900px;line-height:0">X</span>'),
    ("BROKE: an mpadded of no size", '<math><mpadded width="0" height="0" depth="0"><mspace width="3000px" '
                                     'depth="900px" style="background-color:white"/></mpadded></math>'),
]


@pytest.mark.parametrize("case, answer", PAGES, ids=[p[0] for p in PAGES])
def test_the_page_gate_lets_no_answer_load_restyle_or_cover(case, answer):
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    from course_grader.feedback import tex_to_mathml
    views = [markdown2html_mistune(html_out.inert_markdown(answer)),
             html_out.clean_page(f"<html><head></head><body>{markdown2html_mistune(tex_to_mathml(answer))}"
                                 f"{answer}</body></html>")]
    for page in views:
        assert active_html(page) == [] and loads_or_restyles(page) == [], (case, page[:400])
        assert "x.org" not in re.sub(r"&[^;]*;|>[^<]*<", "", page), (case, page[:400])    # in no attribute


def test_an_svg_figure_keeps_its_shapes_opacity():
    """An honest figure is drawn as written: an SVG shape keeps ``opacity`` (matplotlib's legend frame),
    clipped by its figure's box; the same declarations on an element of the page are dropped."""
    figure = '<svg width="9" height="9"><rect style="opacity:0.8;fill:#fff" width="9" height="9"/></svg>'
    assert 'style="opacity:0.8;fill:#fff"' in html_out.clean_fragment(figure)
    assert html_out.clean_fragment('<span style="opacity:0.8;color:red">x</span>') == \
        '<span style="color:red">x</span>'


def _graded_formgrade_page(answer: str, output: str) -> str:
    """The formgrader's page of a submission (nbgrader's template, nbgrader_config.py's preprocessors) with
    two hand-graded answers, answer_a (``answer``) and answer_b, and between them a code cell whose
    output is ``output`` (what the student's code printed when graded)."""
    import os

    import nbformat
    import nbgrader
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    from course_grader.feedback import TEMPLATES
    from course_grader.formgrade import FormgradeSanitize

    def graded(gid):
        return {"nbgrader": {"grade": True, "solution": True, "locked": False, "points": 2, "grade_id": gid,
                             "schema_version": 3}}
    cells = [nbformat.v4.new_markdown_cell(answer, metadata=graded("answer_a")),
             nbformat.v4.new_code_cell("show()", outputs=[nbformat.v4.new_output("display_data",
                                                                                 data={"text/html": output})]),
             nbformat.v4.new_markdown_cell("B's own answer", metadata=graded("answer_b"))]
    config = Config()
    config.HTMLExporter.extra_template_basedirs = [TEMPLATES, os.path.join(
        os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")]
    config.HTMLExporter.preprocessors = [FormgradeSanitize]
    return HTMLExporter(config=config, template_name="formgrade").from_notebook_node(
        nbformat.v4.new_notebook(cells=cells), resources={"base_url": "", "notebook_id": "nb", "index": 0,
                                                          "total": 1, "submission_id": "s", "mathjax_url": ""})[0]


def test_broke_an_answer_cannot_take_another_answer_s_score_box(monkeypatch):
    """BROKE: the formgrader's script binds each grade's score box as ``$("#" + grade_id)``, the first
    element of that id. A ``<span id="answer_b">``, a heading "## answer_b" (its renderer gives it that
    id) in answer_a, or an output's ``<b id="answer_b-comment">``, came first: what the TA typed for
    answer_a was saved as answer_b's score too, and answer_b's own box and comment did nothing. And the
    script gives full marks on a click on any element of class ``full-credit`` in the answer's cell: a
    ``<div class="full-credit">`` around the answer got them when the TA clicked on it. Promise: the first
    element of each grade's ids on the TA's page is the formgrader's own (its input, its comment box); a
    student's ``id``, ``name`` and classes but code highlighting's are gone from the page."""
    from course_grader.formgrade import FormgradeSanitize
    answer = ('<span id="answer_b">x</span>\n\n## answer_b\n\n<a name="answer_b" id="answer_b_extra_credit">n</a>'
              '\n\n<div class="full-credit tabbable k">all of my answer</div>\n\n```python\nx = 1\n```')
    output = '<b id="answer_b-comment" class="score">o</b><p id="answer_a">p</p>'

    def first_elements(page):
        found = {}
        for m in re.finditer(r'<(\w+)[^>]*\s(?:id|name)="(answer_[ab][^"]*)"', page):
            found.setdefault(m.group(2), m.group(1))
        return found
    page = _graded_formgrade_page(answer, output)
    assert first_elements(page) == {
        "answer_a": "input", "answer_a_extra_credit": "input", "answer_a-comment": "textarea",
        "answer_b": "input", "answer_b_extra_credit": "input", "answer_b-comment": "textarea"}
    classes = re.findall(r'class="([^"]*)"[^>]*>(?:all of my answer|o<)', page)
    assert classes == ["k"], classes                  # the formgrader's classes gone, code highlighting's kept
    assert '<span class="n">x</span>' in page
    monkeypatch.setattr(FormgradeSanitize, "ids", True)                  # the gate before this round
    monkeypatch.setattr(html_out, "STUDENT_CLASSES", re.compile(r"\S+"))
    page = _graded_formgrade_page(answer, output)
    assert first_elements(page)["answer_b"] != "input" and 'class="full-credit' in page


# ------------------------------------------------------------------ a part beside and after another

PLACES = ("/dev/shm", "/var/tmp", "/run", "/run/lock", "/", "/dev", "/dev/pts", "/dev/mqueue", "/tmp")
PART = """
import os, fcntl, errno, json
def tried(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def made(folder):
    def make():
        os.close(os.open(os.path.join(folder, "course-attack-fifth"), os.O_WRONLY | os.O_CREAT, 0o644))
    return make
def held(how):
    def take():
        fd = os.open(os.path.dirname(os.__file__) if how == "dnotify" else json.__file__, os.O_RDONLY)
        if how == "flock":
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        elif how == "lease":
            fcntl.fcntl(fd, 1024, fcntl.F_RDLCK)              # F_SETLEASE: a writer would wait 45 s
        else:
            fcntl.fcntl(fd, 1026, 0x8000003f)                 # F_NOTIFY (dnotify), every event, kept
    return take
def probe():
    import signal
    signal.signal(signal.SIGIO, signal.SIG_IGN)
    out = {"write " + p: tried(made(p)) for p in PLACES}
    out.update({h: tried(held(h)) for h in ("flock", "lease", "dnotify")})
    out["fds"] = [fd for fd in range(1024) if tried(lambda: os.fstat(fd)) == "ok"]
    out["ptmx"] = tried(lambda: os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
    out["setsid"] = tried(os.setsid)
    out["setpgid"] = tried(lambda: os.setpgid(0, 0))
    out["proc fd"] = tried(lambda: os.listdir("/proc/self/fd"))
    return out
""".replace("PLACES", repr(PLACES))


@pytest.mark.skipif(LEVEL not in ("root", "userns"), reason="no namespaces at this level: no place to write")
def test_a_part_writes_nowhere_but_its_own_tmp_and_holds_nothing_shared(zygote):  # noqa: F811
    """One part, seccomp and Landlock on (the guard off: it is a course rule): it can create a file in
    its own /tmp alone (not /dev/shm, /var/tmp, /run, /, /dev, /dev/pts, /dev/mqueue); it can take no
    flock, lease or dnotify watch on a file of the shared read-only view (a lease would make the next
    writer wait, a watch would see others); it opens no pseudo-terminal, starts no session or group of
    its own, cannot list its fds in /proc, and holds no fd but /dev/null, its two pipes and the set-up
    pipe (nothing of the zygote's protocol to forge another part's result with)."""
    got = probe(zygote, PART, layers={"guard": False})
    assert {k: v for k, v in got.items() if k.startswith("write ") and v == "ok"} == {"write /tmp": "ok"}, got
    assert all(got[h] != "ok" for h in ("flock", "lease", "dnotify", "ptmx", "setsid", "setpgid", "proc fd")), got
    assert set(got["fds"]) <= {0, 1, 2, 3, 4, 5}, got
