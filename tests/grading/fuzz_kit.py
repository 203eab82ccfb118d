"""What the fuzzers (tests/grading/test_fuzz_*.py) check: their promises, written once, and the pieces of
a hostile answer every route's fuzzer hands in."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import HealthCheck, settings


def fuzz(examples: int) -> settings:
    """Every fuzzer's budget: a fixed number of examples, reproducible in CI (derandomize), no deadline
    per example on a loaded machine, no example database."""
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))

_ELEMENTS = {"script", "iframe", "frame", "frameset", "object", "embed", "form", "base", "link", "applet",
             "foreignobject", "use", "animate", "set"}
_URLS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "background", "content"}


class _Active(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in _ELEMENTS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = re.sub(r"[\x00-\x20]", "", value or "")          # as a browser reads a URL
            if name.startswith("on"):
                self.found.append(f"{tag} {name}")
            elif name in _URLS and re.search(r"(?i)(^|url=)(javascript|vbscript|data:text/html)", value):
                self.found.append(f"{tag} {name}={value[:40]}")
            elif name == "http-equiv" and "refresh" in value.lower():
                self.found.append("meta refresh")


def active_html(page: str) -> list[str]:
    """What in ``page`` a browser could run: script, frame, object, embed, form, base or link elements,
    event handlers, a meta refresh, and ``javascript:``, ``vbscript:`` or ``data:text/html`` URLs in
    attributes, read as a browser's parser reads them (character references decoded, control bytes
    dropped); text that merely spells them is not active."""
    parser = _Active()
    parser.feed(page)
    parser.close()
    return parser.found


#: CSS that moves, hides, covers or replaces what the page shows (a verdict hidden, a fake one on top)
RESTYLES = re.compile(r"(?i)^\s*(position|display|visibility|z-index|top|left|right|bottom|inset|margin[\w-]*|"
                      r"transform[\w-]*|content|float|clip[\w-]*|overflow[\w-]*|width|height|(max|min)-\w+|"
                      r"background(-image)?|mask[\w-]*|filter)\s*:")
#: CSS that paints over the lines around an element (a white padded span, a border, a line height below
#: the text's, above the verdict once ``opacity`` makes it a layer of its own): allowed in an SVG shape only
OVERLAYS = re.compile(r"(?i)^\s*(opacity|padding[\w-]*|border(-width)?|line-height|letter-spacing)\s*:|"
                      r"^\s*(vertical-align|text-decoration)\s*:.*\d")
_SHAPES = {"g", "rect", "line", "polyline", "polygon", "circle", "ellipse", "path", "text", "tspan"}
_LOADS = {"src", "srcset", "poster", "background", "data", "action", "formaction", "lowsrc", "dynsrc"}


class _Loads(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.in_head = False
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "head":
            self.in_head = True
        elif tag == "body":
            self.in_head = False
        if tag == "style" and not self.in_head:
            self.found.append("<style> outside the head")
        if tag in ("link", "import"):
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = value or ""
            if name in _LOADS and not value.strip().lower().startswith("data:image/"):
                self.found.append(f"{tag} {name}={value[:40]}")
            if name in ("href", "xlink:href") and tag in ("image", "use", "feimage", "script"):
                self.found.append(f"{tag} {name}")
            if re.search(r"(?i)url\s*\(\s*['\"]?(?!#)", value) or "@import" in value.lower():
                self.found.append(f"{tag} {name}: url()")
            if name == "style" and any(RESTYLES.match(d) or tag not in _SHAPES and OVERLAYS.match(d)
                                       for d in value.split(";")):
                self.found.append(f"{tag} style={value[:40]}")
            if tag == "svg" and name in ("transform", "opacity"):
                self.found.append(f"svg {name}")
        if tag == "mpadded":
            self.found.append("<mpadded>")

    def handle_endtag(self, tag):
        if tag == "head":
            self.in_head = False


def loads_or_restyles(page: str) -> list[str]:
    """What in ``page`` a browser would load from elsewhere (an image, a style sheet, a font, a ``url()``
    but within the page) or what could restyle the page (a ``<style>`` outside its head, a ``style``
    attribute that moves, hides or covers)."""
    parser = _Loads()
    parser.feed(page)
    parser.close()
    return parser.found


#: issue 48 items 5, 6: what restyles the page or loads from elsewhere (not active, but as harmful to a TA)
RESTYLING = ["<style>.not-attempted{display:none}</style><p>all 8 parts passed, 20 of 20</p>",
             "<STYLE>@import url(https://x.org/a.css);</STYLE>", "<style>body{background:url(//x.org/t.png)}</style>",
             '<div style="position:fixed;top:0;left:0;width:100%;background:white;z-index:9">20 of 20</div>',
             '<span style="color:green; display : none">x</span>', '<p style="margin-top:-500px">up</p>',
             "![logo](https://x.org/a.png)", "![t](//x.org/t.gif)", '<img src="http://x.org/a.png" alt=a>',
             '<img srcset="https://x.org/a.png 2x">', '<video poster="https://x.org/p.png"></video>',
             '<table background="https://x.org/b.png"><tr><td>x</td></tr></table>',
             '<link rel="stylesheet" href="https://x.org/a.css">', '<svg><rect fill="url(https://x.org/p#a)"/></svg>',
             '<svg><image href="https://x.org/a.png"/></svg>',
             '<input type="image" src="https://x.org/a.png">', '<p style="font-family:x;src:url(https://x.org/f)">f</p>',
             # issue 48, fifth round: what covers the lines around it (the formgrader's verdict, in Chromium)
             '<span style="opacity:0.99;background-color:white;padding:400px 3000px">20 of 20</span>',
             '<span style="opacity:0.99;border:600px solid white">x</span>',
             '<span style="opacity:0.99;font-size:900px;line-height:0;background-color:white">X</span>',
             '<math><mpadded width="0" height="0" depth="0"><mspace width="3000px" depth="900px" '
             'style="background-color:white"/></mpadded></math>']


def answer_notebook(marker: str, answer: str = "") -> dict:
    """A submission as JSON: a written answer (an nbgrader solution cell, ``answer`` after ``marker``) and
    a code cell whose HTML output is ``answer`` too (what the student printed)."""
    return {"cells": [
        {"cell_type": "markdown", "id": "a1", "source": f"{marker} {answer}".strip(),
         "metadata": {"nbgrader": {"grade_id": "answer", "solution": True, "grade": True, "points": 1,
                                   "locked": False, "schema_version": 3}}},
        {"cell_type": "code", "id": "c1", "execution_count": 1, "metadata": {}, "source": "show()",
         "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"text/html": answer or marker}}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def upload_name(lms: str, student: str, name: str, filename: str, attachment: int = 555000) -> str:
    """The top-level name the LMS gives a student's uploaded file (Canvas's attachment id: ``attachment``
    plus the student's id)."""
    if lms == "moodle":
        return f"{name}_{student}_assignsubmission_file_{filename}"
    return f"{name.replace(' ', '').lower()}_{student}_{attachment + int(student)}_{filename}"


def zip_of(members: dict[str, bytes]) -> bytes:
    """A zip (deflated) holding ``members``: {name: bytes}."""
    import io
    import zipfile
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def pages_of(nb) -> list[str]:
    """What a notebook the notebook gate admitted becomes on the instructor's screens, cheaply (no exporter):
    the formgrader's view of each cell the student wrote (the autograded notebook's cells after
    :class:`course_grader.recording.SanitizeStudentCells`, rendered by nbconvert's markdown renderer), and
    the feedback page of those, cleaned whole (:func:`course_grader.html_out.clean_page`)."""
    import copy

    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    from course_grader.html_out import clean_page
    from course_grader.recording import SanitizeStudentCells
    nb = copy.deepcopy(nb)
    SanitizeStudentCells().preprocess(nb, {})
    views = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            views.append(markdown2html_mistune(cell.source))
        views += [str(o.get("data", {}).get("text/html", "")) for o in cell.get("outputs", [])]
    return views + [clean_page(f"<!DOCTYPE html><html><head><title>f</title></head><body>{''.join(views)}"
                               "</body></html>")]


def after_the_gates(submitted, assignment: str, notebook: str, honest: dict[str, str], foreign: str) -> None:
    """The promises of every route once its gate has run (``submitted``: the course's ``submitted/``):
    every notebook there passes the notebook gate the grader runs first (:func:`course_grader.notebook_in.
    admit_file`) or is refused for its student alone; every honest student's (``honest``: {id: the text
    of their answer}) is admitted whole, their answer cell still nbgrader's, with nothing of ``foreign``
    (the attacker's text) in it; no student's notebook holds another honest student's text; and no page
    made of an admitted notebook loads anything or restyles the page."""
    import os

    import nbformat

    from course_grader import files_in, notebook_in
    for student in sorted(os.listdir(submitted)):
        path = os.path.join(submitted, student, assignment, f"{notebook}.ipynb")
        try:
            notebook_in.admit_file(path, str(submitted))
        except (files_in.Refused, ValueError, OSError):
            assert student not in honest, f"{student}'s notebook refused"
            continue
        nb = nbformat.read(path, as_version=4)
        text = nbformat.writes(nb)
        if student in honest:
            cell = nb.cells[0]
            assert cell.source == honest[student] and cell.metadata["nbgrader"]["grade_id"] == "answer", student
            assert foreign not in text, student
        assert not any(mark in text for who, mark in honest.items() if who != student), student
        for page in pages_of(nb):
            assert active_html(page) == [] and loads_or_restyles(page) == [], (student, page[:300])
