"""HTML out (issue 41 item 4): every page the grader writes is cleaned after rendering by one allow-list
(course_grader.html_out, nh3), never on the markdown source.

The fuzzer writes markdown answers and outputs from hostile pieces (``javascript:`` spelled with
character references, ``&colon;``, control bytes, reference-style links, event handlers, SVG, MathML,
``data:`` URLs) and renders them as the formgrader does (the autograded notebook's cell, rendered again
by nbconvert's markdown renderer) and as the feedback page is written (:func:`clean_page`): no active
HTML is left in either. The four red-team links are a fixed case.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from course_grader.html_out import clean_page, inert_markdown
from fuzz_kit import RESTYLING, active_html, fuzz, loads_or_restyles

RED_TEAM = ("[one](jav&#x61;script:alert(1)) [two](&#106;avascript:alert(2)) "
            "[three](javascript&colon;alert(3)) [four][r]\n\n[r]: javascript:alert(4)\n")

SCHEMES = ["javascript:", "jav&#x61;script:", "&#106;avascript:", "javascript&colon;", "JaVaScRiPt:",
           "java\tscript:", "&#x6A;&#x61;vascript&#58;", "vbscript:", "data:text/html,", "data:text/html;base64,",
           " javascript:", "java&#0000115;cript:", "jav&NewLine;ascript:", "https:", "#", "mailto:"]
PIECES = st.one_of(
    st.builds(lambda s: f"[x]({s}alert(1))", st.sampled_from(SCHEMES)),
    st.builds(lambda s: f"[x][ref]\n\n[ref]: {s}alert(1)\n", st.sampled_from(SCHEMES)),
    st.builds(lambda s: f"![i]({s}alert(1))", st.sampled_from(SCHEMES)),
    st.builds(lambda s: f"<{s}alert(1)>", st.sampled_from(SCHEMES)),
    st.builds(lambda s, e: f'<a href="{s}alert(1)" {e}=alert(2)>x</a>', st.sampled_from(SCHEMES),
              st.sampled_from(["onclick", "onmouseover", "ONLOAD", "onerror"])),
    st.sampled_from(["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<svg onload=alert(1)>",
                     "<svg><a xlink:href='javascript:alert(1)'><text>x</text></a></svg>",
                     "<math><maction actiontype='statusline' xlink:href='javascript:alert(1)'>x</maction></math>",
                     "<iframe src=javascript:alert(1)>", "<object data=javascript:alert(1)>",
                     "<form action=javascript:alert(1)><button>x</button></form>",
                     "<meta http-equiv=refresh content='0;url=javascript:alert(1)'>", "<base href=javascript:/>",
                     "<style>@import 'https://x.org/a.css'</style>", "<!-- <script>alert(1)</script> -->",
                     "<details open ontoggle=alert(1)>", "<div style='background:url(javascript:alert(1))'>",
                     "```\n<script>alert(1)</script>\n```", "`<img src=x onerror=alert(1)>`",
                     "$x^2$", "$$\\frac{a}{b}$$", "\\[x\\](javascript:alert(1))", "&lt;script&gt;alert(1)"]),
    st.sampled_from(RESTYLING),
    st.text(max_size=20))
ANSWERS = st.lists(PIECES, max_size=8).map(" ".join)


def _formgrader_view(source: str) -> str:
    """What the formgrader shows of a student's cell: the autograded notebook's source, rendered."""
    return markdown2html_mistune(inert_markdown(source))


def test_the_red_team_links_are_not_live():
    for page in (_formgrader_view(RED_TEAM), clean_page(markdown2html_mistune(RED_TEAM))):
        assert active_html(page) == [] and "one" in page and "four" in page, page
    assert len(active_html(markdown2html_mistune(RED_TEAM))) == 4          # live without the defence


@fuzz(150)
@given(answer=ANSWERS)
def test_fuzz_markdown_answers_leave_no_active_html(answer):
    assert active_html(_formgrader_view(answer)) == []
    assert loads_or_restyles(_formgrader_view(answer)) == []
    page = clean_page(f"<!DOCTYPE html><html><head><title>t</title></head><body>"
                      f"{markdown2html_mistune(answer)}{answer}</body></html>")
    assert active_html(page) == [] and loads_or_restyles(page) == []
    assert page.count("<head>") == 1 and "Content-Security-Policy" in page.split("</head>")[0]


@fuzz(8)
@given(answer=ANSWERS)
def test_fuzz_a_whole_feedback_page_of_hostile_outputs_is_inert(answer):
    """A page as nbconvert writes it, with the student's text in the places a template puts it (a
    markdown cell rendered, an HTML output, a stream output's text escaped or not)."""
    import nbformat

    from course_grader.feedback import CleanHTMLExporter
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(answer),
        nbformat.v4.new_code_cell("x", outputs=[
            nbformat.v4.new_output("display_data", data={"text/html": answer, "text/markdown": answer}),
            nbformat.v4.new_output("stream", name="stdout", text=answer)])])
    page, _ = CleanHTMLExporter(template_name="classic").from_notebook_node(nb)
    assert active_html(page) == [] and loads_or_restyles(page) == []


def test_a_style_sheet_or_a_remote_image_is_caught_without_the_gate(monkeypatch):
    """Issue 48 items 5, 6: the fuzzer can fail. With ``<style>`` on the allow-list and images from any
    host (the gate before this round), the red-team answer hides the verdict and loads from elsewhere."""
    from course_grader import html_out
    answer = "\n\n".join(RESTYLING[:1] + RESTYLING[6:7])
    assert loads_or_restyles(_formgrader_view(answer)) == []
    monkeypatch.setattr(html_out, "TAGS", html_out.TAGS | {"style"})
    monkeypatch.setattr(html_out, "_IMAGE", __import__("re").compile(r"(?i)(?:https?:|data:image/)"))
    found = loads_or_restyles(_formgrader_view(answer))
    assert "<style> outside the head" in found and any("x.org/a.png" in f for f in found), found


def _formgrade_page(answer: str, verdict: str = "", gate: bool = True) -> str:
    """The formgrader's page of a submission as nbgrader_config.py has it rendered (its template, its
    preprocessors): ``answer`` as a written answer and as an HTML output, ``verdict`` as a test cell's
    failing output. ``gate=False``: nbgrader's own page, without FormgradeSanitize and the CSP."""
    import os

    import nbformat
    import nbgrader
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    from course_grader.feedback import TEMPLATES
    from course_grader.formgrade import FormgradeSanitize
    cells = [nbformat.v4.new_markdown_cell(answer), nbformat.v4.new_code_cell(
        "x", outputs=[nbformat.v4.new_output("display_data", data={"text/html": answer})])]
    if verdict:
        cells.append(nbformat.v4.new_code_cell("check()", outputs=[nbformat.v4.new_output(
            "error", ename="AssertionError", evalue=verdict, traceback=[f"AssertionError: {verdict}"])]))
    config = Config()
    templates = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")
    config.HTMLExporter.extra_template_basedirs = [TEMPLATES, templates] if gate else [templates]
    config.HTMLExporter.preprocessors = [FormgradeSanitize] if gate else []
    exporter = HTMLExporter(config=config, template_name="formgrade")
    return exporter.from_notebook_node(nbformat.v4.new_notebook(cells=cells), resources={
        "base_url": "", "notebook_id": "nb", "index": 0, "total": 1, "submission_id": "s", "mathjax_url": ""})[0]


def test_the_formgrader_page_has_the_csp_and_the_allow_list():
    """Issue 48 item 6: the formgrader's page of a submission, rendered as nbgrader_config.py renders it
    (its template, its preprocessors), carries FORMGRADE_CSP before anything of the student's, and the
    student's markdown and outputs pass the allow-list (a notebook autograded before it said so)."""
    from course_grader import html_out
    head, body = _formgrade_page("\n\n".join(RESTYLING + [RED_TEAM])).split("</head>", 1)
    assert f'content="{html_out.FORMGRADE_CSP}"' in head
    assert loads_or_restyles(body) == [] and "20 of 20" in body
    assert active_html(body) == active_html(_formgrade_page("plain").split("</head>", 1)[1])   # the formgrader's own


#: what a student's answer would do to the TA's page: hide the verdict, cover it, load from elsewhere (the
#: last four of RESTYLING cover it without moving or hiding anything: a padded span, a border, a line
#: height below the text's, an mpadded of no size, painted above the verdict as ``opacity`` makes a layer)
HOSTILE = "\n\n".join([
    "<style>div.output_subarea pre, .output_error { display: none !important } body { color: white }</style>",
    "<style>@import url(https://x.org/import.css);</style>", '<link rel="stylesheet" href="https://x.org/a.css">',
    '<div style="position:fixed;top:0;left:0;width:100%;height:100%;background:white;z-index:99">all 8 parts '
    'passed, 20 of 20</div>', '<p style="margin-top:-900px;font-size:40px;transform:scale(3)">moved</p>',
    "![logo](https://x.org/a.png)", '<img src="http://x.org/b.png" alt="b">'] + RESTYLING[-4:] + [
    # the page's own style sheet: Bootstrap's fixed and backdrop classes on a white answer
    '<div class="navbar-fixed-top navbar-fixed-bottom" style="background-color:white;font-size:300px">20 of 20</div>',
    '<div class="modal-backdrop in" style="background-color:white">x</div>', '<div class="affix">x</div>'])
VERDICT = "Part 3: not attempted (the solution cell still raises NotImplementedError)"
#: the verdict line's computed style and whether it can be seen where it is
VERDICT_STYLE = """(text) => {
    const pre = [...document.querySelectorAll('pre')].find(p => p.textContent.includes(text));
    if (!pre) return null;
    pre.scrollIntoView({block: 'center'});
    const s = getComputedStyle(pre), box = pre.getBoundingClientRect();
    const top = document.elementFromPoint(box.left + Math.min(box.width / 2, 40), box.top + box.height / 2);
    const style = {};
    for (const k of ['display', 'visibility', 'position', 'opacity', 'transform', 'color', 'fontSize', 'zIndex',
                     'clipPath', 'marginTop', 'backgroundColor']) style[k] = s[k];
    return {style, seen: box.width > 0 && box.height > 0 && pre.checkVisibility({opacityProperty: true,
            visibilityProperty: true}) && Boolean(top && pre.contains(top))};
}"""


def _in_chromium(context, pages: dict) -> dict:
    """{name: (the verdict line's style and visibility, the requests made to any other origin)}: each page
    served at its own address of a formgrader (``pages``: {name: HTML}); what the page asks of the
    formgrader itself gets a 404, a request anywhere else is recorded and refused."""
    origin, found = "http://formgrader.test", {}

    def server(name: str, html: str, outside: list):
        def serve(route):
            url = route.request.url
            if url == f"{origin}/{name}":
                route.fulfill(status=200, content_type="text/html; charset=utf-8", body=html)
            elif url.startswith(origin + "/"):
                route.fulfill(status=404, body="")
            else:
                outside.append(url)
                route.abort()
        return serve
    for name, html in pages.items():
        outside = []
        tab = context.new_page()
        try:
            tab.route("**/*", server(name, html, outside))
            tab.goto(f"{origin}/{name}", wait_until="load")
            found[name] = (tab.evaluate(VERDICT_STYLE, VERDICT), outside)
        finally:
            tab.close()
    return found


@pytest.mark.browser
def test_the_formgrader_and_feedback_pages_in_chromium_load_and_restyle_nothing(tmp_path):
    """Issue 48: a written answer with a style element, a remote style sheet, ``@import``, remote images and
    inline styles that hide, cover and move, on the formgrader's page and the feedback page, opened in
    Chromium: no request leaves the page's own server, and the verdict line is seen with the computed
    style it has on the same page without the answer. The same answer on nbgrader's page without the
    gate does load from x.org and hides the verdict (the test can fail)."""
    import nbformat

    import chromium
    from course_grader.feedback import CleanHTMLExporter
    from course_grader.recording import SanitizeStudentCells

    def feedback(answer):                  # as generate_feedback writes it (nbgrader_config.py's preprocessor)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(answer), nbformat.v4.new_code_cell(
            "check()", outputs=[nbformat.v4.new_output("error", ename="AssertionError", evalue=VERDICT,
                                                       traceback=[f"AssertionError: {VERDICT}"])])])
        SanitizeStudentCells().preprocess(nb, {})
        return CleanHTMLExporter(template_name="classic").from_notebook_node(nb)[0]
    if (why := chromium.missing()):
        pytest.fail(why, pytrace=False)
    pages = {"formgrade": _formgrade_page(HOSTILE, VERDICT), "formgrade-plain": _formgrade_page("plain", VERDICT),
             "feedback": feedback(HOSTILE), "feedback-plain": feedback("plain"),
             "ungated": _formgrade_page(HOSTILE, VERDICT, gate=False)}
    with chromium.persistent_context(tmp_path / "chromium") as context:
        found = _in_chromium(context, pages)
    for name in ("formgrade", "feedback"):
        (verdict, outside), (plain, _) = found[name], found[f"{name}-plain"]
        assert outside == [], (name, outside)
        assert verdict["seen"] and verdict == plain, (name, verdict, plain)
    verdict, outside = found["ungated"]
    assert any("x.org" in url for url in outside) and not verdict["seen"], found["ungated"]
