"""res/: the course's figures exist, are what the code draws (byte for byte), look right, and every
image a notebook shows is there and local."""

import json
import re
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, PathPatch
from matplotlib.spines import Spine
from matplotlib.transforms import Bbox

from course_lib.plots import figures

ROOT = Path(__file__).resolve().parents[2]
RES = ROOT / "res"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks" / "07_exercise").glob("*.ipynb"))

# the names fixed in the team plan: lectures reference them as ![...](../res/NAME.svg)
CORE = ["seq2seq", "transformer", "encoder_layer", "recurrence_vs_attention", "qkv", "attention_matrix",
            "multi_head", "feed_forward", "add_norm", "embedding_output", "embedding_plus_position",
            "positional_waves", "padded_batch", "encoder_classifier"]
EXPECTED = list(figures.FIGURES)          # the core figures first, then those the diagram modules register

IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_IMAGE = re.compile(r"<img[^>]*\bsrc\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)


def _markdown_images():
    """(notebook, cell index, target) of every image a markdown cell shows."""
    found = []
    for nb in NOTEBOOKS:
        for i, cell in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "markdown":
                source = "".join(cell["source"])
                found += [(nb, i, target) for target in IMAGE.findall(source) + HTML_IMAGE.findall(source)]
    return found


def test_every_figure_of_the_plan_is_drawn_and_committed():
    assert EXPECTED[:len(CORE)] == CORE
    missing = [name for name in EXPECTED if not (RES / f"{name}.svg").is_file()]
    assert not missing, f"run `make figures`: missing {missing}"
    stale = sorted(p.stem for p in RES.glob("*.svg") if p.stem not in figures.FIGURES)
    assert not stale, f"res/ holds figures no code draws: {stale}"


@pytest.mark.slow
def test_regenerating_gives_the_committed_bytes(tmp_path):
    assert figures.main([str(tmp_path)]) == 0
    changed = [name for name in EXPECTED
               if (tmp_path / f"{name}.svg").read_bytes() != (RES / f"{name}.svg").read_bytes()]
    assert not changed, f"res/ is stale (run `make figures`): {changed}"


def test_writing_twice_gives_the_same_bytes():
    fig = figures.draw("qkv")
    try:
        assert figures.svg_bytes(fig) == figures.svg_bytes(fig)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name", EXPECTED)
def test_svg_has_no_paths_dates_or_fonts_of_this_machine(name):
    text = (RES / f"{name}.svg").read_text(encoding="utf-8")
    assert not re.search(r"/home/|/tmp/|/work/|/Users/|[A-Za-z]:\\\\", text)
    assert not re.search(r"<dc:date>|\b20\d\d-\d\d-\d\d", text)
    assert "<text" not in text and "font-family" not in text     # text is stored as paths


BLANK_EDGE = 0.08           # a figure's canvas ends within this fraction of its height of what it draws (issue 51)


def blank_edges(fig) -> dict[str, float]:
    """The fraction of the figure's height left blank above and below what it draws (at 50 dpi)."""
    fig.set_dpi(50)
    fig.canvas.draw()
    ink = (np.asarray(fig.canvas.buffer_rgba())[..., :3] < 245).any(axis=2).any(axis=1)   # rows with ink
    rows = np.flatnonzero(ink)
    return {"top": rows[0] / len(ink), "bottom": 1 - (rows[-1] + 1) / len(ink)} if len(rows) else {"top": 1.0}


@pytest.mark.parametrize("name", EXPECTED)
def test_figure_reads_well(name):
    fig = figures.draw(name)
    try:
        assert figures.layout_problems(fig) == []
        assert fig.get_figwidth() <= figures.MAX_WIDTH_IN
        blank = {edge: f"{b:.0%}" for edge, b in blank_edges(fig).items() if b > BLANK_EDGE}
        assert not blank, f"{name}: blank band at the edge (crop the canvas to what is drawn): {blank}"
    finally:
        plt.close(fig)


def test_a_blank_band_at_the_edge_is_found():
    """Planted: a canvas drawn in its upper half only (res/multi_head.svg ended in 11 % blank)."""
    from course_lib.plots.diagrams.canvas import Canvas

    c = Canvas(4, 2)
    c.box(1, 1.2, 2, 0.7, "top half only")
    try:
        assert blank_edges(c.fig)["bottom"] > 0.5 and blank_edges(c.fig)["top"] < BLANK_EDGE
    finally:
        plt.close(c.fig)


def test_layout_problems_sees_overlaps_and_overflow():
    fig = plt.figure(figsize=(10, 2))
    fig.text(0.5, 0.5, "one label", fontsize=12)
    fig.text(0.51, 0.5, "another label", fontsize=12)
    fig.text(0.99, 0.1, "falls off the edge", fontsize=12)
    problems = figures.layout_problems(fig)
    plt.close(fig)
    assert any(p.startswith("overlapping") for p in problems)
    assert any(p.startswith("outside the figure") for p in problems)
    assert any("wide" in p for p in problems)


def test_every_image_a_notebook_shows_exists():
    missing = [f"{nb.name} cell {i}: {target}" for nb, i, target in _markdown_images()
               if not re.match(r"[a-z]+:", target) and not (nb.parent / target).resolve().is_file()]
    assert not missing


def test_the_exercise_shows_copies_of_res_from_its_own_folder():
    """nbgrader releases only notebooks/07_exercise/: its figures live there, as copies of res/."""
    exercise = ROOT / "notebooks" / "07_exercise"
    targets = [t for nb, _, t in _markdown_images() if nb.parent == exercise]
    assert targets and all(t.startswith("figures/") for t in targets), targets
    stale = [t for t in targets if (exercise / t).read_bytes() != (RES / Path(t).name).read_bytes()]
    assert not stale, f"run `make figures`: {stale}"


def test_no_notebook_points_at_a_remote_image():
    remote = [f"{nb.name} cell {i}: {target}" for nb, i, target in _markdown_images()
              if re.match(r"(https?:)?//", target)]
    assert not remote


def test_layout_problems_sees_text_leaving_its_box():
    from course_lib.plots.diagrams.canvas import Canvas

    c = Canvas(6, 1)
    c.box(2.0, 0.3, 0.6, 0.4, "a label far too long for its box")
    c.box(4.6, 0.3, 1.0, 0.4, "fits")
    problems = figures.layout_problems(c.fig)
    plt.close(c.fig)
    assert problems == ["text leaves its box: 'a label far too long for its box'"]


# ---------------------------------------------------------------- no line runs through a text
def _polylines(artist) -> list:
    """The display-coordinate polylines a line or an arrow draws (curves sampled, arrow heads included)."""
    if isinstance(artist, Line2D) and (artist.get_linestyle() in ("None", "", " ") or len(artist.get_xydata()) < 2):
        return []                                                    # markers only (ticks, dots)
    path = artist.get_transform().transform_path(artist.get_path())
    lines, current = [], []
    for curve, code in path.iter_bezier():
        points = curve(np.linspace(0, 1, 2 if curve.degree == 1 else 24))
        if code == 1:                                               # MOVETO: a new polyline
            if len(current) > 1:
                lines.append(np.array(current))
            current = [tuple(points[0])]
            continue
        current = current or [tuple(points[0])]
        current += [tuple(p) for p in points[1:]]
    if len(current) > 1:
        lines.append(np.array(current))
    return lines


def _segment_meets(p, q, box) -> bool:
    """Liang-Barsky: does the segment p-q meet the box (x0, y0, x1, y1)?"""
    x0, y0, x1, y1 = box
    t0, t1 = 0.0, 1.0
    dx, dy = q[0] - p[0], q[1] - p[1]
    for pk, qk in ((-dx, p[0] - x0), (dx, x1 - p[0]), (-dy, p[1] - y0), (dy, y1 - p[1])):
        if pk == 0:
            if qk < 0:
                return False
            continue
        t = qk / pk
        t0, t1 = (max(t0, t), t1) if pk < 0 else (t0, min(t1, t))
        if t0 > t1:
            return False
    return True


def text_crossings(fig, tolerance: float = 1.0) -> list[str]:
    """Every text that a line, an arrow or a path runs through (its bounding box, shrunk by
    ``tolerance`` pixels, meets a segment), less those the figure declares in its attribute
    ``course_crossings`` ({text: why the crossing is wanted})."""
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    allowed = getattr(fig, "course_crossings", {})
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()
             and t.figure is fig and t.get_text() not in allowed]
    strokes = [a for a in fig.findobj(lambda a: isinstance(a, (Line2D, FancyArrowPatch))
                                      or (isinstance(a, PathPatch) and not isinstance(a, Spine)))
               if a.get_visible()]
    polylines = [(a, _polylines(a)) for a in strokes]
    found = []
    for t in texts:
        box = t.get_window_extent(renderer).padded(-tolerance)
        for artist, lines in polylines:
            clip = artist.get_clip_box() if artist.get_clip_on() else None
            seen = Bbox.intersection(box, clip) if clip is not None else box
            if seen is None:
                continue
            edges = (seen.x0, seen.y0, seen.x1, seen.y1)
            if any(_segment_meets(line[i], line[i + 1], edges) for line in lines for i in range(len(line) - 1)):
                found.append(f"{t.get_text()!r} is crossed by a {type(artist).__name__}")
                break
    return found


@pytest.mark.parametrize("name", EXPECTED)
def test_no_line_runs_through_a_text(name):
    """For every registered figure: no line or arrow crosses a label, unless the figure says why."""
    fig = figures.draw(name)
    try:
        allowed = getattr(fig, "course_crossings", {})
        assert all(isinstance(why, str) and why.strip() for why in allowed.values()), allowed
        assert text_crossings(fig) == []
    finally:
        plt.close(fig)


def test_text_crossings_sees_a_line_an_arrow_and_a_curve_through_a_label():
    from course_lib.plots.diagrams.canvas import Canvas

    c = Canvas(6, 2)
    c.text(1.0, 1.0, "crossed by a line")
    c.line((1.0, 0.2), (1.0, 1.8))
    c.text(3.0, 1.0, "by an arrow")
    c.arrow((2.4, 1.0), (3.6, 1.0))
    c.text(5.0, 1.0, "by a curve")
    c.arrow((4.2, 0.3), (5.8, 0.3), connection="arc3,rad=-0.9")     # bulges up through the label
    c.text(3.0, 0.3, "clear of everything")
    c.arrow((2.0, 1.6), (4.0, 1.6))
    problems = text_crossings(c.fig)
    assert [p.split("'")[1] for p in problems] == ["crossed by a line", "by an arrow", "by a curve"], problems
    c.fig.course_crossings = {"by an arrow": "a test: declared on purpose"}
    assert len(text_crossings(c.fig)) == 2
    plt.close(c.fig)
