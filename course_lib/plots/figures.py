"""The course's conceptual figures, written to ``res/`` as deterministic SVG files.

    python -m course_lib.plots.figures res            # or: make figures
    python -m course_lib.plots.figures res qkv add_norm --png   # some of them, plus PNG previews

Every figure is drawn by course code (the diagram modules of :mod:`course_lib.plots.diagrams`)
and saved so that the same code gives the same bytes on any machine: text is stored as paths
(``svg.fonttype = "path"``: no dependence on the fonts installed where the SVG is viewed), the
ids are salted with a fixed string (``svg.hashsalt``) and no date or creator is written.

:func:`layout_problems` lists what a reader would stumble on: text outside the canvas, two texts
overlapping, text leaving its box. The tests run it on every figure.
"""

from __future__ import annotations

import importlib
import io
import pkgutil
import sys
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt

from .diagrams.attention import draw_attention_matrix, draw_multi_head, draw_qkv
from .diagrams.batches import draw_encoder_classifier, draw_padded_batch
from .diagrams.inputs import draw_embedding_output, draw_embedding_plus_position, draw_positional_waves
from .diagrams.layer import draw_add_norm, draw_encoder_layer, draw_feed_forward
from .diagrams.overview import draw_recurrence_vs_attention, draw_seq2seq, draw_transformer
from .style import course_style

# file name (without .svg) -> the function drawing it (no arguments, returns a Figure)
FIGURES = {
    "seq2seq": draw_seq2seq,
    "transformer": draw_transformer,
    "encoder_layer": draw_encoder_layer,
    "recurrence_vs_attention": draw_recurrence_vs_attention,
    "qkv": draw_qkv,
    "attention_matrix": draw_attention_matrix,
    "multi_head": draw_multi_head,
    "feed_forward": draw_feed_forward,
    "add_norm": draw_add_norm,
    "embedding_output": draw_embedding_output,
    "embedding_plus_position": draw_embedding_plus_position,
    "positional_waves": draw_positional_waves,
    "padded_batch": draw_padded_batch,
    "encoder_classifier": draw_encoder_classifier,
}

# A diagram module may also register its figures itself, with a FIGURES dict of its own: a new
# figure then needs no edit here (modules in name order, so the listing is the same everywhere).
from . import diagrams as _diagrams  # noqa: E402

for _info in sorted(pkgutil.iter_modules(_diagrams.__path__), key=lambda m: m.name):
    FIGURES.update(getattr(importlib.import_module(f"{_diagrams.__name__}.{_info.name}"), "FIGURES", {}))

MAX_WIDTH_IN = 9.0        # JupyterLab's notebook column is ~850 px: 9 in at 96 px per inch at most
SVG_RC = {"svg.hashsalt": "course_lib", "svg.fonttype": "path", "path.simplify": True}


def draw(name: str):
    """The figure ``name`` (a key of :data:`FIGURES`), drawn in the course style."""
    with course_style():
        return FIGURES[name]()


def svg_bytes(fig) -> bytes:
    """The SVG of ``fig``, the same bytes on every machine."""
    buf = io.BytesIO()
    with matplotlib.rc_context(SVG_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, transparent=False,
                    facecolor="white")
    return buf.getvalue()


def write(name: str, folder, png: bool = False) -> Path:
    """Draw ``name`` and write ``folder/name.svg`` (and a 100 dpi PNG preview when ``png``)."""
    fig = draw(name)
    try:
        path = Path(folder) / f"{name}.svg"
        path.write_bytes(svg_bytes(fig))
        if png:
            fig.savefig(path.with_suffix(".png"), dpi=100, facecolor="white", metadata={"Software": None})
        return path
    finally:
        plt.close(fig)


def layout_problems(fig, tolerance: float = 1.0, max_width: float | None = MAX_WIDTH_IN) -> list[str]:
    """What looks wrong in ``fig``: text outside the figure, overlapping texts, text outside the box
    that holds it (boxes drawn by a diagram canvas record their text), a figure wider than
    ``max_width`` inches. Empty when all is well."""
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    canvas_box = fig.bbox.padded(tolerance)
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()
             and t.figure is fig]
    boxes = [(t, t.get_window_extent(renderer)) for t in texts]
    problems = [f"outside the figure: {t.get_text()!r}" for t, b in boxes
                if not (canvas_box.contains(b.x0, b.y0) and canvas_box.contains(b.x1, b.y1))]
    frames = {fig.patch} | {ax.patch for ax in fig.axes}
    for patch in fig.findobj(matplotlib.patches.Patch):
        if isinstance(patch, matplotlib.spines.Spine) or patch in frames or not patch.get_visible():
            continue
        b = patch.get_window_extent(renderer)
        if not (
                canvas_box.contains(b.x0, b.y0) and canvas_box.contains(b.x1, b.y1)):
            problems.append(f"shape outside the figure at ({b.x0:.0f}, {b.y0:.0f}) px")
    for i, (t, b) in enumerate(boxes):
        for u, c in boxes[i + 1:]:
            if b.shrunk(1, 1).padded(-tolerance).overlaps(c.padded(-tolerance)):
                problems.append(f"overlapping: {t.get_text()!r} and {u.get_text()!r}")
    for patch, text in getattr(fig, "course_boxed", []):
        inner = patch.get_window_extent(renderer).padded(tolerance)
        b = text.get_window_extent(renderer)
        if not (inner.contains(b.x0, b.y0) and inner.contains(b.x1, b.y1)):
            problems.append(f"text leaves its box: {text.get_text()!r}")
    width = fig.get_figwidth()
    if max_width is not None and width > max_width + 1e-9:
        problems.append(f"figure {width:.2f} in wide, more than {max_width} in")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    png = "--png" in args
    args = [a for a in args if a != "--png"]
    if not args:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    folder, names = Path(args[0]), args[1:] or list(FIGURES)
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        print(f"unknown figure(s) {unknown}; known: {', '.join(FIGURES)}", file=sys.stderr)
        return 2
    folder.mkdir(parents=True, exist_ok=True)
    matplotlib.use("Agg")
    for name in names:
        print(write(name, folder, png=png))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
