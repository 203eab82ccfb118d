"""What a screen reader finds on the website: lecture 02, lecture 05 and the exercise, read from
Chromium's accessibility tree (CDP; tests/browser/a11y_tree.py), not from the HTML.

axe-core finds nothing on these pages, yet a blind student heard "4. Why divide by ?" for a heading
and "letter one D four five one" for 𝑑. So, on each page: every formula the page shows is a node of
the tree with a name, with no mathematical-italic code point in it, and every formula it does not
show (a closed solution, the print-only table of contents) has its label for when it is shown; a
heading or a link that holds a formula says it, and loses no other word; every image and every
control has a name, and no link is named "here" or "how"; every code block is inside a group named
"code" or "output"; every verdict line of a check says its verdict in words. The formulas are
matched one by one, by DOM node: a count of the page's <math> elements against the tree's once
differed by one on 02 and 05, the copy of a heading's formula in the theme's print-only table of
contents (display: none on screen).

One browser and the site built once for the session (tests/site/conftest.py); a last test plants
one defect of each kind in a loaded page and checks that each is found.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

import a11y_tree
from sitekit import ROOT

_spec = importlib.util.spec_from_file_location("name_links", ROOT / "tools" / "name_links.py")
name_links = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(name_links)

PAGES = ["notebooks/02_attention.html", "notebooks/05_positional_encodings.html",
         "notebooks/07_exercise/encoder_from_scratch.html"]

# Each <math> in document order: its label and whether the page shows it (checkVisibility() is
# false inside display: none and inside a closed <details>, whose content is skipped).
MATHS_JS = """() => [...document.querySelectorAll('math')].map(m => ({
  label: (m.getAttribute('aria-label') || '').trim(), shown: m.checkVisibility()}))"""
# What a heading or link should say: its text, each formula read as its label; a permalink's "#" is no word.
SPOKEN = "h1, h2, h3, h4, h5, h6, a"
SPOKEN_JS = """(sel) => [...document.querySelectorAll(sel)].map(e => {
  const said = n => n.nodeType === 3 ? n.textContent
    : n.nodeType !== 1 ? ''
    : n.localName === 'math' ? ' ' + (n.getAttribute('aria-label') || n.textContent) + ' '
    : [...n.childNodes].map(said).join('');
  return {text: said(e), maths: e.querySelectorAll('math').length, shown: e.checkVisibility()};
})"""
CODE_JS = """() => ({
  ungrouped: [...document.querySelectorAll('main pre')].filter(p => !p.closest('[role=group][aria-label]'))
               .map(p => p.innerText.slice(0, 60)),
  verdicts: [...document.querySelectorAll('main .cell_output')].map(o => o.innerText.trim())
               .filter(t => /^(✓|✗|○)/.test(t)),
})"""


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def formula_problems(page, tree: a11y_tree.Tree) -> tuple[list[str], int]:
    """Each <math> of the page against its own node of the tree: (problems, formulas in the tree)."""
    problems, exposed = [], 0
    for dom_id, math in zip(tree.nodes("math"), page.evaluate(MATHS_JS), strict=True):
        node = tree.node(dom_id)
        if not math["label"]:
            problems.append("a formula has no aria-label" + ("" if math["shown"] else " (not shown now)"))
        if node.get("ignored"):
            if math["shown"]:
                why = [r.get("name") for r in node.get("ignoredReasons", [])]
                problems.append(f"a formula shown on the page is not in the tree ({', '.join(why)}): "
                                f"{math['label']!r}")
            continue
        exposed += 1
        said = a11y_tree.name(node)
        if a11y_tree.role(node) not in a11y_tree.MATH_ROLES:
            problems.append(f"a formula is a {a11y_tree.role(node)!r} in the tree")
        if not said:
            problems.append("a formula has no name")
        elif a11y_tree.MATH_ALPHANUMERIC.search(said):
            problems.append(f"a formula's name has mathematical-italic letters: {said!r}")
    return problems, exposed


def spoken_text_problems(page, tree: a11y_tree.Tree) -> tuple[list[str], int]:
    """Each heading and link, as the page shows it, against its name in the tree: every word of its
    text and of its formulas' labels, in order (a heading that loses its maths, or a word).
    (problems, headings and links with a formula that were checked)."""
    problems, with_maths = [], 0
    for dom_id, shown in zip(tree.nodes(SPOKEN), page.evaluate(SPOKEN_JS, SPOKEN), strict=True):
        if not shown["shown"]:
            continue
        node = tree.node(dom_id)
        heard, wanted = words(a11y_tree.name(node)), words(shown["text"])
        with_maths += bool(shown["maths"])
        if wanted and heard != wanted and (shown["maths"] or a11y_tree.role(node) == "heading"):
            problems.append(f"a {a11y_tree.role(node) or 'hidden element'} says {' '.join(heard)!r}, "
                            f"the page shows {' '.join(wanted)!r}")
    return problems, with_maths


def page_problems(page) -> tuple[list[str], dict]:
    """What a screen reader would miss on the open page, and counts of what was checked."""
    tree = a11y_tree.Tree(page)
    try:
        everything = tree.everything()

        def of_role(*roles):
            return [n for n in everything if a11y_tree.role(n) in roles]

        problems, seen = formula_problems(page, tree)
        seen = {"formulas": seen}
        if seen["formulas"] != len(of_role(*a11y_tree.MATH_ROLES)):
            problems.append(f"{len(of_role(*a11y_tree.MATH_ROLES))} formulas in the tree, "
                            f"{seen['formulas']} of them from the page's <math>")
        spoken, seen["headings and links with maths"] = spoken_text_problems(page, tree)
        problems += spoken
        images = of_role("image", "img")
        seen["images"] = len(images)
        problems += [f"an image has no name ({n.get('backendDOMNodeId')})" for n in images
                     if not a11y_tree.name(n)]
        problems += [f"a {a11y_tree.role(n)} has no name" for n in of_role(*a11y_tree.CONTROL_ROLES)
                     if not a11y_tree.name(n)]
        # a link named "how" or "here", or by its URL (the notebooks name their links, tools/name_links.py;
        # tests/test_notebook_accessibility.py checks them where they are written)
        problems += [f"a link is named by {why}" for n in of_role("link")
                     if (why := name_links.bad_name(a11y_tree.name(n)))]
        code = page.evaluate(CODE_JS)
        problems += [f"a code block in no named group: {text!r}" for text in code["ungrouped"]]
        seen["code groups"] = sum(1 for n in of_role("group") if a11y_tree.name(n) in ("code", "output"))
        problems += [f"a verdict without its word: {line[:80]!r}" for line in code["verdicts"]
                     if not any(w in line for w in ("correct", "wrong", "not done"))]
        seen["verdicts"] = len(code["verdicts"])
        return problems, seen
    finally:
        tree.close()


def open_page(browser, path: str):
    origin, context = browser
    page = context.new_page()
    page.goto(f"{origin}/{path}", wait_until="load", timeout=120_000)
    return page


@pytest.mark.parametrize("path", PAGES)
def test_a_screen_reader_gets_every_formula_heading_figure_control_and_code_block(browser, path):
    page = open_page(browser, path)
    try:
        problems, seen = page_problems(page)
    finally:
        page.close()
    print(f"{path}: {seen}")
    assert seen["formulas"] and seen["code groups"] and seen["images"], seen
    assert not problems, f"{path}:\n" + "\n".join(problems[:40])


# One defect of each kind, planted in lecture 02 as loaded: a formula of the prose without its
# label, an image without alt, the formula of a heading hidden from the tree, a word of a heading
# hidden, a slider without a name, a link named "here".
PLANT_JS = """() => {
  const prose = [...document.querySelectorAll('main p math')].find(m => m.checkVisibility());
  prose.removeAttribute('aria-label');
  document.querySelector('main img[alt]').removeAttribute('alt');
  document.querySelector('main h2 math').setAttribute('aria-hidden', 'true');
  const h = [...document.querySelectorAll('main h2')].find(h => h.checkVisibility() && !h.querySelector('math'));
  h.insertAdjacentHTML('beforeend', ' <span aria-hidden="true">planted</span>');
  document.querySelector('main').insertAdjacentHTML('beforeend', '<input type="range"> <a href="#">here</a>');
}"""


def test_each_kind_of_defect_is_found_when_planted(browser):
    page = open_page(browser, PAGES[0])
    try:
        assert page_problems(page)[0] == [], "lecture 02 must be clean before the plant"
        page.evaluate(PLANT_JS)
        problems = "\n".join(page_problems(page)[0])
    finally:
        page.close()
    for found in ("a formula has no aria-label", "a formula has no name", "an image has no name",
                  "a formula shown on the page is not in the tree", "says '4 why divide by'",
                  "planted'", "a slider has no name", "a link is named by the word 'here'"):
        assert found in problems, f"{found!r} not found in:\n{problems}"
