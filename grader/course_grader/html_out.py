"""HTML the grader writes, made inert in one place: after it is rendered, on the final HTML, by one
allow-list (nh3, the maintained successor of bleach, built on the Rust crate ammonia).

A markdown renderer decodes character references and resolves reference-style links *after* a
sanitizer of the markdown source has looked at it: ``[a](jav&#x61;script:...)``, ``&#106;avascript:``,
``javascript&colon;`` and ``[a][r]`` with ``[r]: javascript:...`` all passed bleach on the source and
became live ``href="javascript:..."`` links in the feedback page (issue 41 item 4). So nothing here
looks at markdown: :func:`clean_fragment` cleans HTML a renderer has already produced, and
:func:`clean_page` cleans a whole page (the feedback page, the class report) as written to disk, and
puts a Content-Security-Policy into its head that lets the page load no script and nothing remote.

A fragment can neither restyle the page nor load anything (issue 48 items 5, 6): a ``<style>`` element
in a written answer hid the grader's "not attempted" line and showed a fake "all 8 parts passed" to the
TA who grades by eye, and an image or a style sheet from any host loaded in the formgrader's page. So
``<style>`` is kept only in a page's head (the grader's own style sheets, :func:`clean_page`); a
``style`` attribute keeps only the declarations of :data:`CSS_PROPERTIES` (colours, fonts, strokes:
what a figure or a table needs; never position, display, size, margins, transforms, content or a
``url()``; what paints over the lines around an element, :data:`OVERLAYS`, only in an SVG shape, whose
figure's box clips it: a white padded span with ``opacity`` covered the formgrader's verdict line); an
image's source is a ``data:`` URL of an image type only; any other attribute's
``url(...)`` must point within the page (``url(#id)``). The formgrader's page of a submission gets the
same allow-list (:class:`course_grader.formgrade.FormgradeSanitize`) and :data:`FORMGRADE_CSP`.

:func:`inert_markdown` renders a student's markdown with nbconvert's own renderer (the one the
formgrader and the feedback use), cleans that, and returns it as one HTML block that markdown passes
through unchanged: what the formgrader shows of a student's cell is then HTML cleaned after rendering.
"""

from __future__ import annotations

import re

import nh3

#: the Content-Security-Policy every page gets: no script, nothing loaded from anywhere but the page
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
#: the formgrader's page of a submission (templates/formgrade/mathjax.html.j2): its own scripts and style
#: sheets from the formgrader (same origin), its score boxes talk to it; nothing from any other host
FORMGRADE_CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' "
                 "'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
                 "object-src 'none'; frame-src 'none'; base-uri 'self'; form-action 'self'")

#: what a ``style`` attribute may set: how text, a table cell or a figure's shape is drawn, in place
CSS_PROPERTIES = frozenset({
    "color", "background-color", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity",
    "stroke-linecap", "stroke-linejoin", "stroke-dasharray", "stroke-dashoffset", "stroke-miterlimit",
    "font-family", "font-size", "font-style", "font-weight", "font-variant", "text-anchor", "text-align",
    "text-decoration", "vertical-align", "white-space", "letter-spacing", "line-height", "opacity",
    "dominant-baseline", "alignment-baseline", "border", "border-color", "border-style", "border-width",
    "border-collapse", "padding", "padding-left", "padding-right", "padding-top", "padding-bottom"})
#: what paints outside an element's own box, or over what the page draws after it (an ``opacity`` below 1
#: makes a stacking context painted above the verdict; padding, a border, a line height below the text's
#: and a negative letter spacing reach over the lines around): in an SVG figure, whose box clips them,
#: only (a red-team answer covered the formgrader's verdict line with a white padded span)
OVERLAYS = frozenset({"opacity", "padding", "padding-left", "padding-right", "padding-top", "padding-bottom",
                      "border", "border-width", "line-height", "letter-spacing"})
#: properties whose value is a keyword (``vertical-align: -900px`` moves, a text decoration 900px thick covers)
KEYWORDS_ONLY = frozenset({"vertical-align", "text-decoration"})
#: SVG's own shapes, inside an ``<svg>`` whose box clips what they paint
_IN_FIGURE = frozenset({"g", "rect", "line", "polyline", "polygon", "circle", "ellipse", "path", "text", "tspan"})
_KEYWORDS = re.compile(r"^[a-zA-Z -]*$")
_DECLARATION = re.compile(r"^\s*([a-zA-Z-]+)\s*:\s*([^;]*?)\s*$")
_UNSAFE_VALUE = re.compile(r"(?i)url\s*\(|expression|@import|behaviou?r|\\|/\*|image-set|image\s*\(|var\s*\(|"
                           r"attr\s*\(|!important")

#: MathML; not ``mpadded``, whose width, height and depth let its content paint over the lines around
_MATHML = {"math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt", "mroot", "mstyle",
           "merror", "mphantom", "mfenced", "menclose", "msub", "msup", "msubsup", "munder", "mover",
           "munderover", "mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd", "mlabeledtr",
           "semantics", "annotation"}
_SVG = {"svg", "g", "rect", "line", "polyline", "polygon", "circle", "ellipse", "path", "text", "tspan",
        "title", "desc", "defs"}

#: the one allow-list: text, tables, lists, headings, images, links, MathML, SVG shapes; never script,
#: iframe, object, embed, form, input, base, link, foreignObject, use, animate, set, or style (a page's
#: own style sheets are kept in its head alone: :data:`HEAD_TAGS`)
TAGS = (set(nh3.ALLOWED_TAGS) | _MATHML | _SVG | {
    "meta", "main", "section", "header", "footer", "nav", "article", "aside", "figure",
    "figcaption", "caption", "colgroup", "col", "details", "summary", "kbd", "samp", "var", "mark",
    "pre", "code", "span", "div", "table", "thead", "tbody", "tfoot", "tr", "td", "th", "label"})
_GENERIC = {"class", "id", "title", "lang", "dir", "role", "align", "width", "height", "hidden", "tabindex",
            "style"}
_SVG_ATTRIBUTES = {"viewbox", "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "rx", "ry", "d", "points",
                   "fill", "stroke", "stroke-width", "stroke-dasharray", "font-size", "font-family",
                   "font-weight", "text-anchor", "dominant-baseline", "transform", "opacity", "fill-opacity",
                   "preserveaspectratio", "xmlns"}
_MATH_ATTRIBUTES = {"display", "xmlns", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace",
                    "columnalign", "columnspacing", "rowspacing", "displaystyle", "scriptlevel", "linethickness",
                    "accent", "accentunder", "movablelimits", "encoding", "notation", "largeop", "symmetric",
                    "minsize", "maxsize", "form", "columnlines", "rowlines", "frame", "width", "depth"}
ATTRIBUTES = {"*": _GENERIC, "a": {"href", "name"}, "img": {"src", "alt", "loading"},
              "td": {"colspan", "rowspan", "scope", "headers"}, "th": {"colspan", "rowspan", "scope", "headers"},
              "col": {"span"}, "colgroup": {"span"}, "ol": {"start", "type", "reversed"}, "li": {"value"},
              "meta": {"charset", "name", "content", "http-equiv"}, "style": {"type"},
              "details": {"open"}, "code": {"class"}, "pre": {"class"},
              **{t: _SVG_ATTRIBUTES for t in _SVG}, **{t: _MATH_ATTRIBUTES for t in _MATHML}}

_LINK = re.compile(r"(?i)(?:https?:|mailto:|#|[^:]*(?:[/?#]|$))")       # a scheme of these, or none
_IMAGE = re.compile(r"(?i)data:image/(?:png|jpeg|gif|webp|svg\+xml)[;,]")             # nothing from elsewhere
_URL_VALUE = re.compile(r"(?i)url\s*\(")
_IN_PAGE = re.compile(r"(?i)^\s*url\s*\(\s*['\"]?#[\w.:-]*['\"]?\s*\)\s*$")


def _declaration(piece: str, element: str) -> bool:
    m = _DECLARATION.match(piece)
    if m is None or _UNSAFE_VALUE.search(m.group(2)):
        return False
    name = m.group(1).lower()
    return name in CSS_PROPERTIES and (name not in OVERLAYS or element in _IN_FIGURE) and (
        name not in KEYWORDS_ONLY or _KEYWORDS.match(m.group(2)) is not None)


def inline_style(value: str, element: str = "span") -> str:
    """A ``style`` attribute's declarations whose property is in :data:`CSS_PROPERTIES` and whose value
    loads nothing (no ``url()``, ``image()``, escapes, comments, ``!important``), those of :data:`OVERLAYS`
    on an SVG shape only (``element``), those of :data:`KEYWORDS_ONLY` with a keyword; the others dropped."""
    pieces = [p for p in value.split(";") if p.strip()]
    kept = [p for p in pieces if _declaration(p, element)]
    return value if len(kept) == len(pieces) else ";".join(kept)       # as written when nothing is dropped


def _attribute(element: str, attribute: str, value: str) -> str | None:
    """nh3's attribute filter: links over http(s), mailto or within the page; images as data: of an
    image type only; a ``<meta http-equiv>`` only for a Content-Security-Policy (which can only forbid
    more), never a refresh; ``style`` by :func:`inline_style`; no ``url()`` but within the page."""
    if attribute == "href":
        return value if _LINK.match(value.strip()) else None
    if attribute == "src":
        return value if _IMAGE.match(value.strip()) else None
    if attribute == "http-equiv":
        return value if value.strip().lower() == "content-security-policy" else None
    if attribute == "content" and element == "meta" and ":" in value and "charset" not in value.lower():
        return value if value.startswith("default-src") else None
    if attribute == "style":
        return inline_style(value, element) or None
    if element == "svg" and attribute in ("transform", "opacity"):     # the figure's own box: never moved
        return None
    if _URL_VALUE.search(value) and not _IN_PAGE.match(value):         # fill="url(https://...)" loads
        return None
    return value


def clean_fragment(html: str) -> str:
    """``html`` (already rendered) with everything outside :data:`TAGS` and :data:`ATTRIBUTES` gone or
    escaped, comments removed, and URLs by :func:`_attribute`."""
    return _clean(html, TAGS)


def student_fragment(html: str, ids: bool = True) -> str:
    """What a student wrote or printed, as :func:`clean_fragment` cleans it, with no class but
    :data:`STUDENT_CLASSES` (a page's own style sheet and script act on its classes); with ``ids=False``
    no ``id`` or ``name`` either (a page whose script finds its elements by id: the formgrader's)."""
    return _clean(html, TAGS, _student_attribute, ATTRIBUTES if ids else _WITHOUT_IDS)


#: the classes a student's fragment keeps: code highlighting's (Pygments' tokens of 1 to 3 letters,
#: ``highlight``), markdown's own (``anchor-link``, task lists), pandas' ``dataframe``, course_lib's
#: ``course-...`` and the gate's ``student-markdown``. Never the page's: Bootstrap's ``navbar-fixed-top``
#: or ``modal-backdrop`` made a white answer cover the feedback page's verdict, and the formgrader's
#: script gave full marks on a click on any element of class ``full-credit`` in the answer's cell
STUDENT_CLASSES = re.compile(r"[a-z]{1,3}[0-9]?|highlight|anchor-link|task-list-item(?:-checkbox)?|dataframe|"
                             r"student-markdown|course-[a-z-]+")
#: :data:`ATTRIBUTES` without what names an element for a page's script: the formgrader finds a grade's
#: score box as ``$("#" + grade_id)``, the first element of that id, so a student's ``<span
#: id="answer_b">`` (or a heading "## answer_b", which the renderer gives that id) in an earlier answer
#: took answer_b's box: what the TA typed for the earlier answer was saved as answer_b's score too
_WITHOUT_IDS = {tag: names - {"id", "name"} for tag, names in ATTRIBUTES.items()}


def _student_attribute(element: str, attribute: str, value: str) -> str | None:
    if attribute == "class":
        return " ".join(c for c in value.split() if STUDENT_CLASSES.fullmatch(c)) or None
    return _attribute(element, attribute, value)


#: a page's head: its title, its meta lines and its own style sheets (nothing of a student's is there)
HEAD_TAGS = frozenset({"meta", "title", "style"})


def _clean(html: str, tags, attribute_filter=_attribute, attributes=None) -> str:
    return nh3.clean(html, tags=set(tags), clean_content_tags={"script", "iframe", "object", "embed", "noscript",
                                                               "template", "xmp", "noembed", "noframes", "style"}
                     - set(tags),
                     attributes={k: v for k, v in (attributes or ATTRIBUTES).items() if k == "*" or k in tags},
                     attribute_filter=attribute_filter, strip_comments=True,
                     url_schemes={"http", "https", "mailto", "data"}, link_rel=None,
                     generic_attribute_prefixes={"aria-", "data-"})


_HEAD = re.compile(r"(?is)^.*?<head[^>]*>(?P<head>.*?)</head\s*>(?P<body>.*)$")
_BODY = re.compile(r"(?is)^\s*<body[^>]*>(?P<inner>.*?)(?:</body\s*>\s*(?:</html\s*>)?\s*)?$")


def clean_page(html: str, lang: str = "en") -> str:
    """A whole page as written: its head and its body through :func:`clean_fragment` (the same
    allow-list), in a fresh ``<html>`` whose head starts with :data:`CSP`."""
    m = _HEAD.match(html)
    head, body = (m.group("head"), m.group("body")) if m else ("", html)
    inner = _BODY.match(body)
    body = inner.group("inner") if inner else body
    return (f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n{_clean(head, HEAD_TAGS)}\n</head>\n'
            f"<body>\n{clean_fragment(body)}\n</body>\n</html>\n")


def inert_markdown(text: str, ids: bool = True) -> str:
    """A student's markdown, rendered (nbconvert's renderer, as the formgrader's and the feedback's),
    cleaned (:func:`student_fragment`), as one HTML block with no blank line, which a markdown renderer
    passes through unchanged; the markdown itself when its rendering holds nothing to clean. With
    ``ids=False`` always the block, without ids (a heading rendered later would get one)."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    rendered = markdown2html_mistune(text)
    html = student_fragment(rendered, ids)
    if html == rendered and ids:         # it renders to nothing the allow-list removes: kept as written, so
        return text                      # an answer left as released keeps nbgrader's checksum (score 0)
    html = html.strip()
    return f'<div class="student-markdown">{html.replace(chr(13), "").replace(chr(10), "&#10;")}</div>'

