"""HTML out (issue 41 item 4): every page the grader writes is cleaned after rendering by one allow-list
(course_grader.html_out, nh3), never on the markdown source.

The fuzzer writes markdown answers and outputs from hostile pieces (``javascript:`` spelled with
character references, ``&colon;``, control bytes, reference-style links, event handlers, SVG, MathML,
``data:`` URLs) and renders them as the formgrader does (the autograded notebook's cell, rendered again
by nbconvert's markdown renderer) and as the feedback page is written (:func:`clean_page`): no active
HTML is left in either. The four red-team links are a fixed case.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from course_grader.html_out import clean_page, inert_markdown
from fuzz_kit import active_html, fuzz

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
    page = clean_page(f"<!DOCTYPE html><html><head><title>t</title></head><body>"
                      f"{markdown2html_mistune(answer)}{answer}</body></html>")
    assert active_html(page) == []
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
    assert active_html(page) == []
