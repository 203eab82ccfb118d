"""The feedback page's figures drawn by the student's code have alt text (issue 43 item 10): nbconvert
wrote "No description has been provided for this image" and warned once per student."""

from __future__ import annotations

import base64
import logging

import nbformat
from nbconvert import HTMLExporter

from course_grader.feedback import TEMPLATES, DescribeFigures, describe_figure

PNG = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                                     "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"))


def notebook(printed: str):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Part 8: the reverse task (3 points)"),
                nbformat.v4.new_code_cell("fig, axes = plot_attention(weights, tokens, example=0)", outputs=[
                    nbformat.v4.new_output("stream", name="stdout", text=printed),
                    nbformat.v4.new_output("display_data", data={"image/png": PNG.decode(),
                                                                 "text/plain": "<Figure size 640x480>"})])]
    return nb


def page(nb, caplog) -> str:
    exporter = HTMLExporter(template_name="classic", extra_template_basedirs=[TEMPLATES])
    with caplog.at_level(logging.WARNING):
        html, _ = exporter.from_notebook_node(nb)
    return html


def test_the_attention_map_gets_alt_text_with_the_printed_numbers(caplog):
    nb, _ = DescribeFigures().preprocess(notebook("final loss 0.012; accuracy 99.6%, position-blind ceiling 16.9%\n"),
                                         {})
    html = page(nb, caplog)
    assert "No description has been provided" not in html
    assert ("alt=\"Heatmaps of your model's attention weights, drawn by plot_attention: one panel per head, rows "
            "are the queries and columns the keys, brighter means more weight, in Part 8: the reverse task. The cell "
            "printed: final loss 0.012; accuracy 99.6%, position-blind ceiling 16.9%\"") in html
    assert "Alternative text is missing" not in caplog.text


def test_without_the_preprocessor_nbconvert_says_no_description(caplog):
    assert "No description has been provided for this image" in page(notebook("x\n"), caplog)


def test_what_a_student_printed_stays_text_and_short(caplog):
    nb, _ = DescribeFigures().preprocess(notebook('"><script>alert(1)</script>\x1b[31m' + "z" * 1000), {})
    html = page(nb, caplog)
    assert "<script>alert" not in html and "\x1b" not in html
    alt = nb.cells[1].outputs[1].metadata["image/png"]["alt"]
    assert len(alt) == 400 and alt.endswith("…")
    assert describe_figure("plt.plot(x)", None, "") == "A figure your code drew."
