"""A Sphinx math renderer that writes MathML at build time (latex2mathml), so pages need no MathJax.

Browsers draw MathML themselves (Chromium since 109, Firefox, Safari); the feedback pages of the
autograder use the same converter (grader/course_grader/feedback.py).
"""

from docutils import nodes
from latex2mathml.converter import convert


def _mathml(latex: str, display: bool) -> str:
    return convert(latex.strip(), display="block" if display else "inline")


def visit_math(self, node):
    self.body.append(f'<span class="math notranslate">{_mathml(node.astext(), False)}</span>')
    raise nodes.SkipNode


def visit_displaymath(self, node):
    latex = node["latex"] if "latex" in node else node.astext()
    self.body.append(f'<div class="math notranslate">{_mathml(latex, True)}</div>')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_displaymath, None))
    app.config.html_math_renderer = "mathml"
    return {"parallel_read_safe": True, "parallel_write_safe": True}
