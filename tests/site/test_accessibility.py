"""Accessibility of what students read: the website and the feedback page (WCAG 2.1 A and AA).

* axe-core (npm, pinned in the Makefile: `make a11y-deps` installs it under .a11y/) runs in Chromium
  over every page of the built site in four views (light and dark as the reader's system prefers, at
  1280 px and at 390 px, a phone) and over a feedback page, and must find nothing at the tags
  wcag2a, wcag2aa, wcag21a and wcag21aa (plus its `region` rule: all content in landmarks).
  :func:`axe_html_file` runs it over any HTML file (the class report's test can use it).
* Every image has alt text that says something: not empty, not a file path, not "Image".
* Reference URLs are links; code wraps on paper and solutions stay folded; the course map fits a
  phone; every control can be reached with Tab and shows where the focus is.

docs/accessibility.md says what is conformant, how it is checked and what is known not to be.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sitekit import ROOT, chromium, pages

AXE_JS = ROOT / ".a11y" / "node_modules" / "axe-core" / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
VIEWS = [("light", 1280), ("dark", 1280), ("light", 390), ("dark", 390)]
AXE_RUN = """async (tags) => {
  const result = await axe.run(document, {
    runOnly: {type: 'tag', values: tags},
    rules: {region: {enabled: true}},
    resultTypes: ['violations'],
  });
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary})),
  }));
}"""


def axe_version() -> str:
    """The axe-core version the Makefile pins (AXE_VERSION)."""
    return re.search(r"^AXE_VERSION\s*:=\s*(\S+)", (ROOT / "Makefile").read_text(), re.M).group(1)


def axe_source() -> str:
    """axe.min.js from the npm install (`make a11y-deps`), of the Makefile's version; a test fails,
    with the fix, without it or with another version."""
    if not AXE_JS.is_file():
        pytest.fail(f"axe-core is missing at {AXE_JS.relative_to(ROOT)}: run `make a11y-deps` "
                    "(npm install --prefix .a11y axe-core@<the Makefile's version>)")
    installed = json.loads((AXE_JS.parent / "package.json").read_text())["version"]
    if installed != axe_version():
        pytest.fail(f"axe-core {installed} is under .a11y/, the Makefile pins {axe_version()}: "
                    "run `make a11y-deps`")
    return AXE_JS.read_text()


def axe_page(page) -> list[dict]:
    """axe-core's WCAG 2.1 A/AA violations on the page open in ``page`` (Playwright), as it is now."""
    page.add_script_tag(content=axe_source())
    return page.evaluate(AXE_RUN, WCAG_TAGS)


def describe(where: str, violations: list[dict], per_rule: int = 3) -> list[str]:
    """One line per flagged element (at most ``per_rule`` per rule), for an assertion message."""
    lines = []
    for v in violations:
        for node in v["nodes"][:per_rule]:
            summary = " ".join(node["summary"].split())[:240]
            lines.append(f"{where}: {v['id']} ({len(v['nodes'])}x) at {node['target']}: {summary}")
    return lines


def count(violations: list[dict]) -> dict[str, int]:
    return {v["id"]: len(v["nodes"]) for v in violations}


def axe_html_file(html: Path, context=None, views=((None, 1280), (None, 390))) -> list[str]:
    """The hook for any HTML page a student gets (a feedback page, the class report): open ``html``
    in Chromium at each (colour scheme, width) of ``views`` and run axe-core; returns one line per
    flagged element, empty when the page passes. Without a ``context`` it starts its own Chromium.

        assert not axe_html_file(Path("report.html"))
    """
    if context is None:
        if chromium.missing():
            pytest.fail(chromium.missing())
        import tempfile
        with tempfile.TemporaryDirectory() as tmp, chromium.persistent_context(Path(tmp)) as own:
            return axe_html_file(html, own, views)
    problems = []
    for scheme, width in views:
        page = context.new_page()
        try:
            page.set_viewport_size({"width": width, "height": 900})
            if scheme:
                page.emulate_media(color_scheme=scheme)
            page.goto(Path(html).resolve().as_uri(), wait_until="load")
            problems += describe(f"{Path(html).name} [{scheme or 'default'}, {width} px]", axe_page(page))
        finally:
            page.close()
    return problems


# ----------------------------------------------------------------------------------------------
# axe-core over the site and a feedback page
# ----------------------------------------------------------------------------------------------

@pytest.mark.browser
@pytest.mark.slow
def test_axe_itself_finds_violations(tmp_path):
    """The harness can fail: a page with an image without alt text, grey-on-grey text and no lang."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><head><title>t</title></head><body><main>'
                   '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
                   '<p style="color:#aaa;background:#bbb">faint</p></main></body></html>')
    found = " ".join(axe_html_file(bad, views=((None, 1280),)))
    for rule in ("image-alt", "color-contrast", "html-has-lang"):
        assert rule in found, f"axe did not flag {rule}: {found[:500]}"


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("scheme,width", VIEWS, ids=[f"{s}-{w}px" for s, w in VIEWS])
def test_axe_finds_nothing_on_the_site(site, browser, scheme, width):
    """Every page at 1280 px, in the colours the reader's system asks for (the site follows
    prefers-color-scheme); at 390 px the pages of :func:`narrow_sample`."""
    origin, context = browser
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.emulate_media(color_scheme=scheme)
    problems, totals = [], {}
    try:
        for html in (pages(site) if width >= 1280 else narrow_sample(site)):
            rel = html.relative_to(site).as_posix()
            page.goto(f"{origin}/{rel}", wait_until="load")
            theme = page.evaluate("document.documentElement.dataset.theme")
            assert theme == scheme, f"{rel}: the reader's system asks for {scheme}, the page shows {theme}"
            violations = axe_page(page)
            for rule, n in count(violations).items():
                totals[rule] = totals.get(rule, 0) + n
            problems += describe(rel, violations)
    finally:
        page.close()
    checked = len(pages(site) if width >= 1280 else narrow_sample(site))
    print(f"axe [{scheme}, {width} px] over {checked} pages: {sum(totals.values())} flagged {totals}")
    assert not problems, f"{sum(totals.values())} flagged {totals}:\n" + "\n".join(problems[:60])


def narrow_sample(site: Path) -> list[Path]:
    """The pages checked on a narrow screen: in each folder of the site, its first page and its largest.
    What changes at 390 px is the theme's layout (the sidebar folded behind a button, the header's
    controls), the same on every page of a folder; the largest page holds most kinds of content (wide
    tables, outputs, widgets' fallbacks). Every page's colours are checked at 1280 px, in both schemes
    (axe over every page in four views took 7 minutes of a CI run on a busy machine)."""
    chosen = []
    for folder in sorted({p.parent for p in pages(site)}):
        here = [p for p in pages(site) if p.parent == folder]
        chosen += sorted({here[0], max(here, key=lambda p: p.stat().st_size)})
    return chosen


def test_the_narrow_sample_takes_each_folders_first_and_largest_page(tmp_path):
    for name, size in (("a/x.html", 10), ("a/y.html", 500), ("a/z.html", 20), ("b/only.html", 5), ("top.html", 1),
                       ("_static/skip.html", 900)):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x" * size)
    got = [p.relative_to(tmp_path).as_posix() for p in narrow_sample(tmp_path)]
    assert got == ["top.html", "a/x.html", "a/y.html", "b/only.html"]


def feedback_page(folder: Path) -> Path:
    """A feedback page as nbgrader's generate_feedback writes it (tests/grading/test_feedback.py)."""
    from test_feedback import render_feedback_page
    path = folder / "feedback" / "encoder_from_scratch.html"
    path.parent.mkdir(parents=True)
    path.write_text(render_feedback_page())
    return path


@pytest.mark.browser
@pytest.mark.slow
def test_axe_finds_nothing_on_a_feedback_page(tmp_path):
    path = feedback_page(tmp_path)
    html = path.read_text()
    assert re.search(r'<html[^>]* lang="en"', html), "the feedback page does not say its language"
    problems = axe_html_file(path, views=(("light", 1280), ("light", 390), ("dark", 1280)))
    assert not problems, "\n".join(problems[:60])


# ----------------------------------------------------------------------------------------------
# alt text
# ----------------------------------------------------------------------------------------------

def poor_alt(alt: str | None, src: str) -> str | None:
    """Why ``alt`` says nothing about the image at ``src`` (None when it is real alt text)."""
    if alt is None:
        return "no alt attribute"
    text = alt.strip()
    if not text:
        return "empty alt text"
    if text.lower() in {"image", "img", "figure", "plot", "output", "png", "svg"}:
        return f"alt text {text!r}"
    name = src.rsplit("/", 1)[-1]
    if text == src or text.endswith(name) or re.fullmatch(r"[\w./\\-]+\.(png|svg|jpe?g|gif|pdf)", text, re.I) \
            or re.search(r"(^|/)(_images|jupyter_execute|res)/", text) or re.fullmatch(r"[0-9a-f]{32,}(\.\w+)?", text):
        return f"alt text is a file path ({text[:60]})"
    return None


IMAGES = re.compile(r"<img\b([^>]*)>", re.S)
ATTR = lambda name: re.compile(rf'\b{name}="([^"]*)"')  # noqa: E731


def images_without_alt(site: Path) -> list[str]:
    import html as html_lib
    problems = []
    for page in pages(site):
        rel = page.relative_to(site).as_posix()
        for m in IMAGES.finditer(page.read_text()):
            attrs = m.group(1)
            src = ATTR("src").search(attrs)
            alt = ATTR("alt").search(attrs)
            src = src.group(1) if src else "?"
            why = poor_alt(html_lib.unescape(alt.group(1)) if alt else None, src)
            if why:
                problems.append(f"{rel}: {src.rsplit('/', 1)[-1][:24]}: {why}")
    return problems


def test_poor_alt_text_is_recognised():
    assert poor_alt(None, "a.png") and poor_alt("", "a.png") and poor_alt("Image", "x.png")
    assert poor_alt("../_images/3f2a.png", "../_images/3f2a.png")
    assert poor_alt("jupyter_execute/abc123.png", "../_images/abc123.png")
    assert poor_alt("figures/attention.svg", "figures/attention.svg")
    assert not poor_alt("Attention weights of 6 tokens: 'cat' attends most to 'sat' (0.41).", "../_images/ab.png")


IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")


def cells_without_alt() -> list[str]:
    """The notebooks' code cells that show images (widgets' static figures included) without an
    `alt` that names each of them: where to add the metadata."""
    from sitekit import site_build
    problems = []
    for path in [*site_build.lectures(), *sorted((ROOT / "notebooks").glob("*/*.ipynb"))]:
        nb = site_build.static_widgets(json.loads(path.read_text()))
        for index, cell in enumerate(nb["cells"]):
            if cell["cell_type"] != "code":
                continue
            n = sum(any(t in o.get("data", {}) for t in IMAGE_TYPES) for o in cell.get("outputs", []))
            if not n:
                continue
            alt = cell["metadata"].get("alt")
            alts = [alt] * n if isinstance(alt, str) else list(alt or [])
            bad = [why for a in alts if (why := poor_alt(a, "figure.png"))]
            if len(alts) != n or bad:
                where = f"{path.relative_to(ROOT)}: cell {index} (id {cell.get('id', '?')})"
                problems.append(f"{where}: {n} image(s), alt {alt!r:.60}" + (f": {bad[0]}" if bad else ""))
    return problems


def test_every_image_on_the_site_has_real_alt_text(site):
    """Fails while a notebook's plotted figure has no `alt` cell metadata: lists each image of the
    site without real alt text, and each notebook cell that lacks the metadata."""
    problems = images_without_alt(site)
    cells = cells_without_alt()
    assert not problems and not cells, (f"{len(problems)} images of the site without real alt text:\n"
                                        + "\n".join(problems) + f"\n{len(cells)} notebook cells to give "
                                        "`alt` metadata (docs/accessibility.md):\n" + "\n".join(cells))


def _figure_cell(n_images: int, alt) -> dict:
    import base64
    import io

    import matplotlib.pyplot as plt
    outputs = []
    for i in range(n_images):
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.plot([0, 1], [i, 1 - i])
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        outputs.append({"output_type": "display_data", "metadata": {},
                        "data": {"image/png": base64.b64encode(buf.getvalue()).decode(), "text/plain": "<Figure>"}})
    meta = {} if alt is None else {"alt": alt}
    return {"cell_type": "code", "execution_count": 1, "metadata": meta, "outputs": outputs, "source": "plot()"}


@pytest.mark.slow
def test_alt_metadata_becomes_the_images_alt_text(tmp_path):
    """A cell's `alt` (a string, or a list for several images) reaches the rendered <img> tags."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.md").write_text("# Alt\n\n```{toctree}\nnb\n```\n")
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                          "language": "python"}},
          "cells": [{"cell_type": "markdown", "metadata": {}, "source": "# A notebook\n\nSee https://arxiv.org/abs/1706.03762."},
                    _figure_cell(1, "A line from 0 to 1."),
                    _figure_cell(2, ["First: rising.", "Second: falling."]),
                    _figure_cell(1, None)]}
    (src / "nb.ipynb").write_text(json.dumps(nb))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(ROOT / "site"),
                          str(src), str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    page = (out / "nb.html").read_text()
    alts = [ATTR("alt").search(m.group(1)).group(1) for m in IMAGES.finditer(page)]
    assert alts[:3] == ["A line from 0 to 1.", "First: rising.", "Second: falling."], alts
    assert len(alts) == 4 and poor_alt(alts[3], "x.png"), f"the cell without `alt` should be caught: {alts}"
    assert '<a class="course-bare-url reference external" href="https://arxiv.org/abs/1706.03762">' in page or \
        re.search(r'<a [^>]*href="https://arxiv.org/abs/1706.03762"', page), "the bare URL is not a link"


# ----------------------------------------------------------------------------------------------
# links, print, phone, keyboard
# ----------------------------------------------------------------------------------------------

BARE_URLS = """() => {
  const found = [];
  const walker = document.createTreeWalker(document.querySelector('article') || document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!/https?:\\/\\//.test(node.textContent)) continue;
    if (node.parentElement.closest('a, code, pre, kbd, samp, .highlight, math, script, style, .cell_output')) continue;
    found.push(node.textContent.trim().slice(0, 80));
  }
  return found;
}"""


@pytest.mark.browser
def test_reference_urls_are_links(site, browser):
    origin, context = browser
    page = context.new_page()
    problems = []
    for html in pages(site):
        rel = html.relative_to(site).as_posix()
        page.goto(f"{origin}/{rel}", wait_until="load")
        problems += [f"{rel}: {text}" for text in page.evaluate(BARE_URLS)]
    page.close()
    assert not problems, f"{len(problems)} URLs shown as plain text:\n" + "\n".join(problems[:40])


PRINTED = """() => {
  const cut = [...document.querySelectorAll('article pre')]
    .filter(p => p.checkVisibility() && p.scrollWidth > p.clientWidth + 1)
    .map(p => p.textContent.split('\\n').reduce((a, b) => a.length > b.length ? a : b).slice(0, 60));
  const shown = [...document.querySelectorAll('article details:not([open])')]
    .flatMap(d => [...d.children].filter(c => c.tagName !== 'SUMMARY' && c.checkVisibility()))
    .map(c => c.textContent.trim().slice(0, 60));
  const codes = document.querySelectorAll('article pre').length;
  const folded = document.querySelectorAll('article details:not([open])').length;
  return {cut, shown, codes, folded};
}"""


@pytest.mark.browser
def test_on_paper_code_wraps_and_solutions_stay_folded(browser):
    """Printed (the print style sheet, an A4 page's width: 700 px), no code line runs past the
    margin, and a folded solution or answer stays folded."""
    origin, context = browser
    page = context.new_page()
    page.set_viewport_size({"width": 700, "height": 1000})
    page.emulate_media(media="print")
    try:
        page.goto(f"{origin}/notebooks/02_attention.html", wait_until="load")
        info = page.evaluate(PRINTED)
    finally:
        page.close()
    assert info["codes"] >= 20 and info["folded"] >= 3, info
    assert not info["cut"], f"{len(info['cut'])} of {info['codes']} code blocks cut on paper: {info['cut'][:5]}"
    assert not info["shown"], f"solutions unfolded on paper: {info['shown'][:5]}"


COURSE_MAP = """() => {
  const table = document.querySelector('#the-course-map table');
  const rows = [...table.querySelectorAll('tr')];
  const width = document.documentElement.clientWidth;
  const off = rows.map(r => r.lastElementChild).filter(c => {
    const box = c.getBoundingClientRect();
    return box.right > width + 1 || box.width < 20;
  }).map(c => c.textContent.trim());
  let scroller = table.parentElement;
  const hidden = scroller.scrollWidth > scroller.clientWidth + 1;
  return {rows: rows.length, off, hidden, header: rows[0].lastElementChild.textContent.trim()};
}"""


@pytest.mark.browser
def test_the_course_map_fits_a_phone(browser):
    origin, context = browser
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.goto(f"{origin}/index.html", wait_until="load")
        info = page.evaluate(COURSE_MAP)
    finally:
        page.close()
    assert info["header"] == "time" and info["rows"] >= 9, info
    assert not info["off"] and not info["hidden"], f"the time column is off-screen at 390 px: {info}"


FOCUSABLE = """() => [...document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])')]
  .filter(e => !e.disabled && e.checkVisibility({visibilityProperty: true}) && e.getClientRects().length
               && !e.closest('[inert], dialog:not([open])'))
  .map(e => {
    if (!e.dataset.a11yId) e.dataset.a11yId = Math.random().toString(36).slice(2);
    return e.dataset.a11yId;
  })"""

FOCUS_STATE = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const s = getComputedStyle(e);
  const visible = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2
                  && !/rgba\\([^)]*, 0\\)|transparent/.test(s.outlineColor);
  const name = (e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 40);
  return {id: e.dataset.a11yId || null, visible, what: `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''} ${name}`};
}"""


@pytest.mark.browser
@pytest.mark.parametrize("rel", ["index.html", "notebooks/02_attention.html"])
def test_every_control_is_reached_by_tab_and_shows_its_focus(browser, rel):
    origin, context = browser
    page = context.new_page()
    try:
        page.goto(f"{origin}/{rel}", wait_until="load")
        controls = page.evaluate(FOCUSABLE)
        reached, unmarked = set(), []
        for _ in range(len(controls) + 40):
            page.keyboard.press("Tab")
            state = page.evaluate(FOCUS_STATE)
            if state is None:
                continue
            key = state["id"] or state["what"]
            if key in reached:
                break                        # round the page once
            reached.add(key)
            if not state["visible"]:
                unmarked.append(state["what"])
    finally:
        page.close()
    missed = [c for c in controls if c not in reached]
    assert len(controls) >= 10, controls
    assert not missed, f"{rel}: {len(missed)} of {len(controls)} controls never reached by Tab"
    assert not unmarked, f"{rel}: no visible focus on {len(unmarked)}: {unmarked[:10]}"
