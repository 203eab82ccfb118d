"""Accessibility of the course website: a Sphinx extension (site/conf.py loads it).

* **Alt text of plotted figures.** A notebook code cell whose output is a figure carries cell metadata
  ``alt``: a string, or a list of strings when the cell shows several images (in their order). The
  rendered images get it as their ``alt`` attribute; without it, docutils would write the image's file
  path, which a screen reader reads out. (MyST-NB's own ``mystnb: image: alt`` metadata gives every
  image of a cell the same text; the course's ``alt`` also names each image of a cell.)
* **Bare URLs become links.** A reference URL written as plain text in a notebook's markdown (no
  linkify-it-py is installed, so MyST's ``linkify`` extension is not used) becomes a link.
* **Code and output are told apart.** A ``<pre>`` has no role a screen reader names: a notebook cell's
  source becomes a group named "code", what it printed a group named "output", and a code block of
  the prose a group named "code" too (:func:`label_code`, on each page's HTML).

tests/site/test_accessibility.py checks both on the built site.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`]+[^\s<>()\[\]{}\"'`.,;:!?]")
NOT_IN = (nodes.reference, nodes.literal, nodes.literal_block, nodes.raw, nodes.comment, nodes.target,
          nodes.math, nodes.math_block, nodes.image, nodes.FixedTextElement)


def cell_alts(metadata: dict, count: int) -> list[str] | None:
    """The alt texts of a cell's ``count`` images from its metadata ``alt`` (None without one)."""
    alt = metadata.get("alt")
    if alt is None:
        return None
    alts = [alt] * count if isinstance(alt, str) else [str(a) for a in alt]
    return alts


class FigureAltText(SphinxPostTransform):
    """Each image of a notebook cell's outputs gets the cell's ``alt`` metadata as its alt text.

    Runs after MyST-NB has chosen one representation of each output (its SelectMimeType, priority 4)."""

    default_priority = 50

    def run(self, **kwargs) -> None:
        for cell in self.document.findall(nodes.container):
            if cell.get("nb_element") != "cell_code":
                continue
            images = list(cell.findall(nodes.image))
            alts = cell_alts(cell.get("cell_metadata") or {}, len(images))
            if alts is None or not images:
                continue
            if len(alts) != len(images):
                logger.warning(f"cell {cell.get('cell_index', '?') + 1}: {len(alts)} alt texts for "
                               f"{len(images)} images", location=cell, type="course", subtype="alt")
            for image, alt in zip(images, alts):
                image["alt"] = alt


class LinkifyURLs(SphinxTransform):
    """Plain-text http(s) URLs in prose become links (never in code, maths or raw HTML)."""

    default_priority = 500

    def apply(self, **kwargs) -> None:
        for text in list(self.document.findall(nodes.Text)):
            parent = text.parent
            if parent is None or any(isinstance(a, NOT_IN) for a in _ancestors(text)):
                continue
            source = str(text)
            if "://" not in source or not URL.search(source):
                continue
            pieces, last = [], 0
            for m in URL.finditer(source):
                if m.start() > last:
                    pieces.append(nodes.Text(source[last:m.start()]))
                url = m.group(0)
                pieces.append(nodes.reference(url, url, refuri=url, classes=["course-bare-url"]))
                last = m.end()
            if last < len(source):
                pieces.append(nodes.Text(source[last:]))
            parent.replace(text, pieces)


CODE_GROUPS = [
    (re.compile(r'<div class="cell_input docutils container">'), "code"),
    (re.compile(r'<div class="cell_output docutils container">'), "output"),
    # a code block of the prose (the cells' own blocks are inside the groups above)
    (re.compile(r'<div class="highlight-(?!ipython3|myst-ansi|none)[\w-]+ notranslate">'), "code"),
]


def label_code(body: str) -> str:
    """``body`` with every code cell, cell output and prose code block made a named group."""
    for pattern, label in CODE_GROUPS:
        body = pattern.sub(lambda m, label=label: f'{m.group(0)[:-1]} role="group" aria-label="{label}">', body)
    return body


def _label_code_on_page(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = label_code(context["body"])


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def setup(app):
    app.add_post_transform(FigureAltText)
    app.add_transform(LinkifyURLs)
    app.connect("html-page-context", _label_code_on_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
