"""site/mathml.py: every formula gets a spoken name; multi-letter identifiers are one token; and
site/accessibility.py's code groups. No browser, no build: the converters themselves."""

from __future__ import annotations

import re

import pytest

import accessibility
import mathml

SPOKEN = {
    r"\operatorname{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V":
        "softmax ( fraction, Q K transpose, over square root of d sub k, end root, end fraction ) V",
    r"d_{model}": "d sub model",
    r"1/\sqrt{d_{model}}": "1 divided by square root of d sub model, end root",
    r"5\cdot 10^{-14}": "5 times 10 to the power minus 14",
    r"\sum_{i=1}^{n} x_i^2": "sum from i equals 1 to n x sub i squared",
    r"PE_{(pos, 2i)} = \sin(pos / 10000^{2i/d_{model}})":
        "P E sub ( pos, 2 i ) end sub equals sine ( pos divided by 10000 to the power 2 i divided by d sub model "
        "end power )",
    r"W^Q": "W superscript Q",
    r"e^{s_j}": "e to the power s sub j end power",
    r"\tfrac{x}{2}\big(1 + \operatorname{erf}(x/\sqrt 2)\big)": "x over 2 ( 1 plus erf ( x divided by square root "
                                                                 "of 2 ) )",
}


@pytest.mark.parametrize("latex", list(SPOKEN))
def test_a_formula_is_said_in_words(latex):
    assert mathml.spoken(latex) == SPOKEN[latex]


def test_every_formula_has_an_aria_label_and_a_multi_letter_identifier_is_one():
    markup = mathml._mathml(r"\frac{1}{\sqrt{d_{model}}} \cdot pos", display=False)
    said = "fraction, 1, over square root of d sub model, end root, end fraction times pos"
    assert markup.startswith(f'<math aria-label="{said}" '), markup
    assert "<mi>model</mi>" in markup and "<mi>pos</mi>" in markup and "<mi>m</mi>" not in markup
    assert "<mi>Q</mi><mi>K</mi>" in mathml._mathml("QK", display=True)          # a product stays two letters


def test_code_and_output_are_named_groups():
    html = ('<div class="cell_input docutils container"><div class="highlight-ipython3 notranslate"></div></div>'
            '<div class="cell_output docutils container"><div class="output stream highlight-myst-ansi notranslate">'
            '</div></div><div class="highlight-python notranslate"></div>')
    labelled = accessibility.label_code(html)
    assert re.findall(r'aria-label="(\w+)"', labelled) == ["code", "output", "code"]
