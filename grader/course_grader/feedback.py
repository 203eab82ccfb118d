"""What ``nbgrader generate_feedback`` gives a student: no hidden tests, and maths that needs no CDN.

nbgrader_config.py puts these into nbgrader's feedback converter:

* :class:`ClearHiddenTestsInTestCells` removes the hidden blocks of the test cells (their seeds would
  let a student reproduce the hidden cases) and leaves the student's own cells as written;
* :class:`MathToMathML` turns the TeX of the markdown cells (``$...$``, ``$$...$$``) into MathML,
  which browsers draw themselves, offline, and puts the exercise's figures into the page;
* :class:`NameGradedCells` names each graded cell after its part ("Part 3: multi-head attention",
  "Question 9.2") for the page's list of scores, where nbgrader writes "Test cell" thirteen times;
* :class:`DescribeFigures` gives each figure the student's code drew (matplotlib writes no alt text)
  alt text from what the page knows: the part it is under, what kind of plot, what the cell printed;
* :class:`CleanHTMLExporter` is the page's exporter: the page as rendered, cleaned whole by
  :func:`.html_out.clean_page` (one allow-list, after rendering; no script can run in it);
* ``TEMPLATES`` holds the page's template, ``feedback/index.html.j2`` (nbgrader's, with those names,
  long messages wrapped to the page's width and the tables' cells spaced), and a
  ``feedback/mathjax.html.j2`` that takes the place of nbconvert's: nbgrader's feedback page would
  otherwise load MathJax from a CDN (a student offline would see TeX source).
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re

from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbgrader.preprocessors import ClearHiddenTests
from traitlets import Bool, List

from .html_out import clean_page


#: nbgrader's generate_feedback sets ``display_data_priority`` on every preprocessor it runs; a class
#: that does not declare it as configurable gets traitlets' "Config option ... not recognized" warning
#: on every run. Declared here (and used by nothing): no warning.
def display_data_priority() -> List:
    return List(["text/html", "application/pdf", "text/latex", "image/svg+xml", "image/png", "image/jpeg",
                 "text/plain"]).tag(config=True)

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")

# code (fenced or inline) is kept as it is; then display maths, then inline maths ($ not escaped,
# no space just inside the dollars, on one paragraph)
_PIECES = re.compile(r"(?P<code>```.*?```|`[^`\n]*`)"
                     r"|(?<!\\)\$\$(?P<display>.+?)\$\$"
                     r"|(?<![\\$])\$(?P<inline>[^\s$](?:[^$\n]|\n(?!\n))*?(?<![\s\\]))\$(?!\$)", re.S)


# "## Part 3: multi-head attention (4 points)" and "**9.2** The cell below ..." in the exercise's markdown
_PART = re.compile(r"^#{1,3}\s*(?P<name>Part\s+\d+\s*:.*?)\s*(?:\([^()]*\))?\s*$", re.M)
_QUESTION = re.compile(r"^\*\*(?P<number>\d+\.\d+)\*\*", re.M)

_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)")


class ClearHiddenTestsInTestCells(ClearHiddenTests):
    """nbgrader's ClearHiddenTests on test cells only (on a student's cell, a stray "BEGIN HIDDEN
    TESTS" would make it stop with no feedback at all)."""

    display_data_priority = display_data_priority()

    def preprocess_cell(self, cell, resources, index):
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution") and cell.cell_type == "code":
            return super().preprocess_cell(cell, resources, index)
        return cell, resources


def graded_cell_names(cells) -> dict[str, str]:
    """grade_id -> a name for each graded cell: the heading of the part it is under ("Part 3:
    multi-head attention"), or for a written answer the question above it ("Question 9.2");
    a cell under neither keeps its grade_id."""
    names, part, question = {}, None, None
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "markdown" and not meta.get("solution"):
            source = cell.get("source", "")
            if (found := list(_PART.finditer(source))):
                part, question = found[-1].group("name"), None
            if (found := list(_QUESTION.finditer(source))):
                question = f"Question {found[-1].group('number')}"
        if meta.get("grade") or meta.get("task"):
            written = cell.get("cell_type") == "markdown" or meta.get("task")
            names[meta["grade_id"]] = (question if written else part) or part or meta["grade_id"]
    return names


class NameGradedCells(Preprocessor):
    """Puts :func:`graded_cell_names` into ``resources["graded_cell_names"]`` for the page's template."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        resources["graded_cell_names"] = graded_cell_names(nb.cells)
        return nb, resources


_ALT_MAX = 400
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]+")


def describe_figure(source: str, part: str | None, printed: str) -> str:
    """Alt text for a figure a code cell drew: what it is (an attention map when the cell called
    ``plot_attention``), where (the part), and the cell's printed numbers (a student's output: plain
    text, cut to a few hundred characters; the template escapes it)."""
    if "plot_attention" in source:
        what = ("Heatmaps of your model's attention weights, drawn by plot_attention: one panel per head, "
                "rows are the queries and columns the keys, brighter means more weight")
    else:
        what = "A figure your code drew"
    where = f", in {part}" if part else ""
    said = _UNPRINTABLE.sub(" ", printed).strip()
    text = f"{what}{where}." + (f" The cell printed: {said}" if said else "")
    return text if len(text) <= _ALT_MAX else text[:_ALT_MAX - 1] + "…"


class DescribeFigures(Preprocessor):
    """Alt text (:func:`describe_figure`) on every image output of a code cell that has none, where
    nbconvert would write "No description has been provided for this image" and warn once a page."""

    enabled = Bool(True)
    display_data_priority = display_data_priority()

    def preprocess(self, nb, resources):
        part = None
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                if (found := list(_PART.finditer(cell.source))):
                    part = found[-1].group("name")
                continue
            if cell.cell_type != "code":
                continue
            outputs = cell.get("outputs", [])
            printed = " ".join(str(o.get("text", "")) for o in outputs
                               if o.get("output_type") == "stream" and o.get("name") == "stdout")
            for output in outputs:
                for kind in ("image/png", "image/jpeg"):
                    meta = output.setdefault("metadata", {})
                    if kind in output.get("data", {}) and not (meta.get(kind) or {}).get("alt") \
                            and not meta.get("alt"):
                        meta.setdefault(kind, {})["alt"] = describe_figure(cell.source, part, printed)
        return nb, resources


def tex_to_mathml(text: str) -> str:
    """``text`` (markdown) with its maths as MathML; TeX that latex2mathml cannot read stays TeX."""
    from latex2mathml.converter import convert

    def one(m: re.Match) -> str:
        if m.group("code") is not None:
            return m.group(0)
        display = m.group("display") is not None
        tex = m.group("display") if display else m.group("inline")
        try:
            return convert(tex.strip(), display="block" if display else "inline").replace("\n", " ")
        except Exception:                                    # noqa: BLE001 (keep what was written)
            return m.group(0)
    return _PIECES.sub(one, text)


def embed_figures(text: str, folder: str) -> str:
    """``text`` (markdown) with its images of files in ``folder`` as data: URLs (the student gets the
    feedback page alone, without the exercise's figures/ folder)."""
    def one(m: re.Match) -> str:
        path = os.path.normpath(os.path.join(folder, m.group("src")))
        kind = mimetypes.guess_type(path)[0]
        inside = path.startswith(os.path.join(folder, ""))
        if ":" in m.group("src") or not inside or not kind or not os.path.isfile(path):
            return m.group(0)
        with open(path, "rb") as f:
            data = base64.b64encode(f.read()).decode("ascii")
        return f"![{m.group('alt')}](data:{kind};base64,{data})"
    return _IMAGE.sub(one, text)


class MathToMathML(Preprocessor):
    """Each markdown cell with its maths as MathML (:func:`tex_to_mathml`) and its figures inside
    (:func:`embed_figures`; nbconvert's own ``embed_images`` re-parses every inline HTML tag alone,
    which takes the MathML apart)."""

    enabled = Bool(True)                                     # nbconvert's preprocessors are off by default

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            folder = os.path.abspath(resources.get("metadata", {}).get("path") or ".")
            source = embed_figures(cell.source, folder)
            cell.source = tex_to_mathml(source) if "$" in source else source
        return cell, resources


class CleanHTMLExporter(HTMLExporter):
    """nbconvert's HTMLExporter whose output, the final page, goes through :func:`.html_out.clean_page`
    (``c.GenerateFeedback.exporter_class``: every feedback page nbgrader writes)."""

    def from_notebook_node(self, nb, resources=None, **kw):
        output, resources = super().from_notebook_node(nb, resources, **kw)
        return clean_page(output), resources
