"""What a screen reader finds on the website: lecture 02, lecture 05 and the exercise, read from
Chromium's accessibility tree (CDP; tests/browser/a11y_tree.py), not from the HTML.

axe-core finds nothing on these pages, yet a blind student heard "4. Why divide by ?" for a heading
and "letter one D four five one" for 𝑑. So, on each page: every formula has a name, with no
mathematical-italic code point in it; a heading that holds a formula has the formula's name in its own;
every image and every control has a name; every code block is inside a group named "code" or
"output"; every verdict line of a check says its verdict in words. One browser, three pages, the
site built once for the session (tests/site/conftest.py).
"""

from __future__ import annotations

import pytest

import a11y_tree

PAGES = ["notebooks/02_attention.html", "notebooks/05_positional_encodings.html",
         "notebooks/07_exercise/encoder_from_scratch.html"]

HEADINGS_JS = """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(h =>
  [...h.querySelectorAll('math')].map(m => m.getAttribute('aria-label') || ''))"""
# a formula inside a closed <details> (a solution) is not rendered, so not in the tree either
SHOWN_MATHS_JS = "() => [...document.querySelectorAll('math')].filter(m => !m.closest('details:not([open])')).length"
CODE_JS = """() => ({
  ungrouped: [...document.querySelectorAll('main pre')].filter(p => !p.closest('[role=group][aria-label]'))
               .map(p => p.innerText.slice(0, 60)),
  verdicts: [...document.querySelectorAll('main .cell_output')].map(o => o.innerText.trim())
               .filter(t => /^(✓|✗|○)/.test(t)),
})"""


def page_problems(page) -> tuple[list[str], dict]:
    """What a screen reader would miss on the open page, and counts of what was checked."""
    tree = a11y_tree.Tree(page)
    try:
        everything = tree.everything()

        def of_role(*roles):
            return [n for n in everything if a11y_tree.role(n) in roles]

        problems, seen = [], {}
        maths = of_role(*a11y_tree.MATH_ROLES)
        seen["formulas"] = len(maths)
        shown = page.evaluate(SHOWN_MATHS_JS)
        if len(maths) != shown:
            problems.append(f"{shown} formulas shown on the page, {len(maths)} in the tree")
        for node in maths:
            said = a11y_tree.name(node)
            if not said:
                problems.append("a formula has no name")
            elif a11y_tree.MATH_ALPHANUMERIC.search(said):
                problems.append(f"a formula's name has mathematical-italic letters: {said!r}")
        labels = page.evaluate(HEADINGS_JS)
        for dom_id, wanted in zip(tree.nodes("h1, h2, h3, h4, h5, h6"), labels):
            heard = a11y_tree.name(tree.node(dom_id))
            seen["headings"] = seen.get("headings", 0) + 1
            for label in wanted:
                if not label or label not in heard:
                    problems.append(f"the heading {heard!r} lost its formula {label!r}")
        images = of_role("image", "img")
        seen["images"] = len(images)
        problems += [f"an image has no name ({n.get('backendDOMNodeId')})" for n in images
                     if not a11y_tree.name(n)]
        problems += [f"a {a11y_tree.role(n)} has no name" for n in of_role(*a11y_tree.CONTROL_ROLES)
                     if not a11y_tree.name(n)]
        code = page.evaluate(CODE_JS)
        problems += [f"a code block in no named group: {text!r}" for text in code["ungrouped"]]
        seen["code groups"] = sum(1 for n in of_role("group") if a11y_tree.name(n) in ("code", "output"))
        problems += [f"a verdict without its word: {line[:80]!r}" for line in code["verdicts"]
                     if not any(w in line for w in ("correct", "wrong", "not done"))]
        seen["verdicts"] = len(code["verdicts"])
        return problems, seen
    finally:
        tree.close()


@pytest.mark.parametrize("path", PAGES)
def test_a_screen_reader_gets_every_formula_heading_figure_control_and_code_block(browser, path):
    origin, context = browser
    page = context.new_page()
    try:
        page.goto(f"{origin}/{path}", wait_until="load", timeout=120_000)
        problems, seen = page_problems(page)
    finally:
        page.close()
    print(f"{path}: {seen}")
    assert seen["formulas"] and seen["code groups"], seen
    assert not problems, f"{path}:\n" + "\n".join(problems[:40])
