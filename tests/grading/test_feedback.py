"""The feedback page: TeX becomes MathML, figures become data, code and prices stay; the page names
each part in its list of scores, wraps a long message and spaces the cells of its tables."""

import base64
import os
import re
from pathlib import Path

import pytest

from course_grader.feedback import embed_figures, graded_cell_names, tex_to_mathml


def test_tex_becomes_mathml_where_it_is_maths():
    out = tex_to_mathml("inline $QK^\\top/\\sqrt{d_k}$ and\n\n$$\\frac{a}{b}$$\n")
    assert out.count('display="inline"') == 1 and out.count('display="block"') == 1
    assert "<msqrt>" in out and "<mfrac>" in out and "$" not in out
    for kept in ("code `$HOME` and ```\n$x$\n```", "costs $5 or $ 3 $", "escaped \\$x\\$",
                 "not $a\n\nb$ across paragraphs"):
        assert tex_to_mathml(kept) == kept


def test_figures_of_the_folder_become_data(tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "a.svg").write_text("<svg/>")
    (tmp_path.parent / "secret.svg").write_text("<svg>secret</svg>")
    out = embed_figures("![one](figures/a.svg) ![web](https://x.org/b.svg) ![up](../secret.svg) ![none](c.svg)",
                        str(tmp_path))
    assert f"![one](data:image/svg+xml;base64,{base64.b64encode(b'<svg/>').decode()})" in out
    assert "(https://x.org/b.svg)" in out and "(../secret.svg)" in out and "(c.svg)" in out
    sibling = tmp_path.with_name(tmp_path.name + "2")          # a folder whose name begins as this one's
    sibling.mkdir()
    (sibling / "b.svg").write_text("<svg>sibling</svg>")
    side = f"../{sibling.name}/b.svg"
    assert embed_figures(f"![side]({side})", str(tmp_path)) == f"![side]({side})"


# The feedback page itself, rendered as nbgrader's generate_feedback renders it (nbgrader_config.py's
# preprocessors and template) from the exercise's source notebook, scored by hand here: a gradebook
# and a sandbox are the round trip's business (tests/grading/test_exercise_roundtrip.py).

REPO = Path(__file__).resolve().parents[2]
EXERCISE = REPO / "notebooks" / "07_exercise"
MESSAGE = ("Part 2: the scores are not divided by sqrt(d_k): with d_k = 16 the weights of every row are "
           "too peaked; look at the line that computes the scores, before the softmax (hidden cases: other sizes)")
NAMES = [f"Part {i}: {title}" for i, title in enumerate(
    ["the positional encoding", "scaled dot-product attention", "multi-head attention",
     "the position-wise feed-forward network", "the encoder layer", "the encoder",
     "how big is your encoder?", "put your encoder to work"], start=1)] + [f"Question 9.{i}" for i in range(1, 6)]


def render_feedback_page() -> str:
    import nbformat
    import nbgrader
    from nbconvert import HTMLExporter
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    # what GenerateFeedback adds to the configuration: bootstrap's style sheet, for the page
    config.HTMLExporter.extra_template_paths = [os.path.join(
        os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "static", "node_modules", "bootstrap",
        "dist", "css")]
    nb = nbformat.read(EXERCISE / "encoder_from_scratch.ipynb", as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):                                # GetGrades' work: each cell's score
            meta["score"] = 0 if meta["grade_id"] == "test_attention" else meta["points"]
        if meta.get("grade_id") == "test_attention":       # the failing part's message, as autograde leaves it
            cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue=MESSAGE,
                                                   traceback=[f"\x1b[31mAssertionError\x1b[0m: {MESSAGE}"])]
    exporter = HTMLExporter(config=config, template_name="feedback")
    for preprocessor in config.GenerateFeedback.preprocessors:
        if preprocessor.__name__ not in ("GetGrades", "SettleLatePenalty"):      # both read the gradebook
            exporter.register_preprocessor(preprocessor, enabled=True)
    resources = {"nbgrader": {"notebook": "encoder_from_scratch", "score": 26.0, "max_score": 29.0, "late_penalty": 0},
                 "metadata": {"path": str(EXERCISE)}}
    return exporter.from_notebook_node(nb, resources=resources)[0]


@pytest.fixture(scope="module")
def page() -> str:
    return render_feedback_page()


def test_graded_cells_are_named_after_their_parts():
    import nbformat

    nb = nbformat.read(EXERCISE / "encoder_from_scratch.ipynb", as_version=4)
    names = graded_cell_names(nb.cells)
    assert list(names.values()) == NAMES
    assert names["test_multi_head_attention"] == "Part 3: multi-head attention"
    assert names["answer_finite_min"] == "Question 9.2"
    lone = [{"cell_type": "code", "metadata": {"nbgrader": {"grade": True, "grade_id": "test_x"}}}]
    assert graded_cell_names(lone) == {"test_x": "test_x"}


def test_the_list_of_scores_names_each_part(page):
    links = re.findall(r'<li><a href="#([^"]+)">([^<]*)</a> \(Score: ([\d.]+) / ([\d.]+)\)</li>', page)
    assert [name for _, name, _, _ in links] == NAMES
    assert ("test_attention", NAMES[1], "0.0", "3.0") in links
    assert "Test cell" not in page and "Written response" not in page


def test_a_long_message_wraps_and_tables_are_spaced(page):
    styles = "\n".join(re.findall(r"<style[^>]*>(.*?)</style>", page, re.S))
    wrap = re.search(r"div\.output_area pre, div\.output_subarea pre \{([^}]*)\}", styles)
    assert wrap and all(rule in wrap.group(1) for rule in ("white-space: pre-wrap", "overflow-wrap: break-word",
                                                      "word-break: normal"))
    cells = re.search(r"\.rendered_html th, \.rendered_html td \{([^}]*)\}", styles)
    assert cells and "padding: 0.25em 0.75em" in cells.group(1)
    assert MESSAGE.replace("'", "&#39;") in page or MESSAGE in page
    assert "<th>part</th>" in page and "<th>what you write</th>" in page


def test_the_page_still_loads_nothing_from_the_network(page):
    assert re.findall(r'<(?:script|link)[^>]*(?:src|href)="(?:https?:)?//[^"]*"', page) == []
    assert "\\sqrt" not in page and page.count("<math ") >= 10


@pytest.mark.browser
def test_the_page_fits_1200_pixels_in_chromium(page, tmp_path):
    """In a real browser at 1200 px: nothing sticks out to the right, the failing message wraps onto
    several lines inside the page, and the table's header cells stand apart."""
    import chromium

    if (why := chromium.missing()):
        pytest.skip(why)
    (tmp_path / "feedback.html").write_text(page)
    with chromium.persistent_context(tmp_path / "chromium", viewport={"width": 1200, "height": 900}) as context:
        tab = context.new_page()
        tab.goto((tmp_path / "feedback.html").as_uri())
        found = tab.evaluate("""() => {
            const pre = [...document.querySelectorAll('div.output_subarea pre')]
                .find(p => p.textContent.includes('not divided by sqrt(d_k)'));
            const box = pre.getBoundingClientRect(), style = getComputedStyle(pre);
            const text = pre.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
            const ths = [...document.querySelectorAll('th')].slice(0, 2).map(th => th.getBoundingClientRect());
            const firstTh = document.querySelector('th');
            return {pageWidth: document.documentElement.scrollWidth, right: box.right,
                    hidden: pre.scrollWidth - pre.clientWidth,
                    lines: text / (parseFloat(style.lineHeight) || 20),
                    gap: ths[1].left - ths[0].right, padding: parseFloat(getComputedStyle(firstTh).paddingLeft),
                    links: [...document.querySelectorAll('#toc a')].map(a => a.textContent)};
        }""")
    assert found["pageWidth"] <= 1200 and found["right"] <= 1200 and found["hidden"] <= 1, found
    assert found["lines"] >= 1.9, found                      # the one-line message takes two lines or more
    assert found["padding"] > 0, found
    assert found["links"] == NAMES, found
