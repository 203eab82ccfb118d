"""The feedback page's markdown: TeX becomes MathML, figures become data, code and prices stay."""

import base64

from course_lib.grading.feedback import embed_figures, tex_to_mathml


def test_tex_becomes_mathml_where_it_is_maths():
    out = tex_to_mathml("inline $QK^\\top/\\sqrt{d_k}$ and\n\n$$\\frac{a}{b}$$\n")
    assert out.count('display="inline"') == 1 and out.count('display="block"') == 1
    assert "<msqrt>" in out and "<mfrac>" in out and "$" not in out
    for kept in ("code `$HOME` and ```\n$x$\n```", "costs $5 or $ 3 $", "escaped \\$x\\$", "not $a\n\nb$ across paragraphs"):
        assert tex_to_mathml(kept) == kept


def test_figures_of_the_folder_become_data(tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "a.svg").write_text("<svg/>")
    (tmp_path.parent / "secret.svg").write_text("<svg>secret</svg>")
    out = embed_figures("![one](figures/a.svg) ![web](https://x.org/b.svg) ![up](../secret.svg) ![none](c.svg)",
                        str(tmp_path))
    assert f"![one](data:image/svg+xml;base64,{base64.b64encode(b'<svg/>').decode()})" in out
    assert "(https://x.org/b.svg)" in out and "(../secret.svg)" in out and "(c.svg)" in out
