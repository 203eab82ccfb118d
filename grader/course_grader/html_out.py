"""HTML the grader writes, made inert in one place: after it is rendered, on the final HTML, by one
allow-list (nh3, the maintained successor of bleach, built on the Rust crate ammonia).

A markdown renderer decodes character references and resolves reference-style links *after* a
sanitizer of the markdown source has looked at it: ``[a](jav&#x61;script:...)``, ``&#106;avascript:``,
``javascript&colon;`` and ``[a][r]`` with ``[r]: javascript:...`` all passed bleach on the source and
became live ``href="javascript:..."`` links in the feedback page (issue 41 item 4). So nothing here
looks at markdown: :func:`clean_fragment` cleans HTML a renderer has already produced, and
:func:`clean_page` cleans a whole page (the feedback page, the class report) as written to disk, and
puts a Content-Security-Policy into its head that lets the page load no script and nothing remote.

:func:`inert_markdown` renders a student's markdown with nbconvert's own renderer (the one the
formgrader and the feedback use), cleans that, and returns it as one HTML block that markdown passes
through unchanged: what the formgrader shows of a student's cell is then HTML cleaned after rendering.
"""

from __future__ import annotations

import re

import nh3

#: the Content-Security-Policy every page gets: no script, nothing loaded from anywhere but the page
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_MATHML = {"math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt", "mroot", "mstyle",
           "merror", "mpadded", "mphantom", "mfenced", "menclose", "msub", "msup", "msubsup", "munder", "mover",
           "munderover", "mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd", "mlabeledtr",
           "semantics", "annotation"}
_SVG = {"svg", "g", "rect", "line", "polyline", "polygon", "circle", "ellipse", "path", "text", "tspan",
        "title", "desc", "defs"}

#: the one allow-list: text, tables, lists, headings, images, links, MathML, SVG shapes, style sheets;
#: never script, iframe, object, embed, form, input, base, link, foreignObject, use, animate, set
TAGS = (set(nh3.ALLOWED_TAGS) | _MATHML | _SVG | {
    "style", "meta", "main", "section", "header", "footer", "nav", "article", "aside", "figure",
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
_IMAGE = re.compile(r"(?i)(?:https?:|data:image/(?:png|jpeg|gif|webp|svg\+xml)[;,])")


def _attribute(element: str, attribute: str, value: str) -> str | None:
    """nh3's attribute filter: links over http(s), mailto or within the page; images over http(s) or
    as data: of an image type; a ``<meta http-equiv>`` only for a Content-Security-Policy (which can
    only forbid more), never a refresh."""
    if attribute == "href":
        return value if _LINK.match(value.strip()) else None
    if attribute == "src":
        return value if _IMAGE.match(value.strip()) else None
    if attribute == "http-equiv":
        return value if value.strip().lower() == "content-security-policy" else None
    if attribute == "content" and element == "meta" and ":" in value and "charset" not in value.lower():
        return value if value.startswith("default-src") else None
    if attribute == "style" and re.search(r"(?i)url\s*\(|expression|@import|behaviou?r", value):
        return None
    return value


def clean_fragment(html: str) -> str:
    """``html`` (already rendered) with everything outside :data:`TAGS` and :data:`ATTRIBUTES` gone or
    escaped, comments removed, and URLs by :func:`_attribute`."""
    return nh3.clean(html, tags=TAGS, clean_content_tags={"script", "iframe", "object", "embed", "noscript",
                                                          "template", "xmp", "noembed", "noframes"},
                     attributes=ATTRIBUTES, attribute_filter=_attribute, strip_comments=True,
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
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n{clean_fragment(head)}\n</head>\n'
            f"<body>\n{clean_fragment(body)}\n</body>\n</html>\n")


def inert_markdown(text: str) -> str:
    """A student's markdown, rendered (nbconvert's renderer, as the formgrader's and the feedback's),
    cleaned (:func:`clean_fragment`), as one HTML block with no blank line, which a markdown renderer
    passes through unchanged; the markdown itself when its rendering holds nothing to clean."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    rendered = markdown2html_mistune(text)
    html = clean_fragment(rendered)
    if html == rendered:                 # it renders to nothing the allow-list removes: kept as written, so
        return text                      # an answer left as released keeps nbgrader's checksum (score 0)
    html = html.strip()
    return f'<div class="student-markdown">{html.replace(chr(13), "").replace(chr(10), "&#10;")}</div>'

