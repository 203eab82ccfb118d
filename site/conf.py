"""Sphinx configuration of the course website (`make site`; the sources are staged by site/build.py).

Offline by construction: the notebooks are rendered from their stored outputs (no execution), the
theme's assets are in its package, the maths is written as MathML at build time (browsers draw it:
no MathJax, no CDN), widgets show their stored static figure, and search is Sphinx's own index.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

project = "The Transformer encoder, hands-on"
author = "The course's authors"
copyright = "the course's authors; text and figures CC BY 4.0, code MIT"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "mathml",                    # site/mathml.py: $...$ and $$...$$ as MathML, no JavaScript
    "accessibility",             # site/accessibility.py: figures' alt text from cell metadata, bare URLs as links
]

# The notebooks as strict nbval checked them: stored outputs, never re-run.
nb_execution_mode = "off"
nb_ipywidgets_js = {}                         # no widget manager from a CDN: the stored PNG is the figure
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "html_image", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type", "misc.highlighting_failure"]
# Every cross-reference must resolve (site/build.py turns warnings into errors), except the types
# of other projects: without intersphinx (its inventories would be downloaded) Sphinx cannot link
# torch's, NumPy's, matplotlib's or the standard library's classes, which the signatures name.
nitpicky = True
nitpick_ignore_regex = [
    ("py:class", r"(torch|nn|numpy|matplotlib)\..+"),
    ("py:class", r"(collections\.abc|pathlib)\..+|Path"),
]

html_theme = "sphinx_book_theme"
html_title = project
html_static_path = [str(HERE / "static")]
# Two of the theme's components, fixed for accessibility (docs/accessibility.md): the search button's
# name holds its visible text, the brand sits in a landmark.
templates_path = [str(HERE / "templates")]
html_css_files = ["course.css"]
html_js_files = []
html_show_sourcelink = False
html_favicon = str(HERE / "static" / "favicon.svg")
html_copy_source = True                     # the download button gives the .ipynb (the exercise: its release version)
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "navigation_with_keys": False,
    "home_page_in_toc": True,
}
# Light or dark as the reader's system prefers (both pass WCAG 2.1 AA contrast: tests/site/test_accessibility.py).
html_context = {"default_mode": "auto"}

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_inherit_docstrings = False            # a forward() without a docstring would show torch's nn.Module text
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

exclude_patterns = ["_build", "**.ipynb_checkpoints", "res/README.md"]
