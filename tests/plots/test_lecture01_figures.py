"""Lecture 01's diagrams (course_lib.plots.diagrams.lecture01): the committed SVGs are what the code
draws, and every frame of the decoding slider reads well (test_figures.py covers the original list)."""

from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from course_lib.plots import figures
from course_lib.plots.diagrams import lecture01
from course_lib.plots.style import course_style

ROOT = Path(__file__).resolve().parents[2]
RES = ROOT / "res"


@pytest.mark.parametrize("name", list(lecture01.FIGURES))
def test_figure_is_registered_committed_and_reads_well(name, tmp_path):
    assert figures.FIGURES[name] is lecture01.FIGURES[name]
    fig = figures.draw(name)
    try:
        assert figures.layout_problems(fig) == []
        assert figures.svg_bytes(fig) == (RES / f"{name}.svg").read_bytes(), "run `make figures`"
    finally:
        plt.close(fig)


@pytest.mark.parametrize("step", range(1, len(lecture01.TARGET) + 1))
def test_every_decoding_frame_reads_well(step):
    with course_style():
        fig = lecture01.draw_decoding_step(step)
    try:
        assert figures.layout_problems(fig) == []
    finally:
        plt.close(fig)


def test_frames_follow_the_decoding_loop():
    assert lecture01.decoding_prefix(1) == (["<bos>"], "down")
    assert lecture01.decoding_prefix(5) == (["<bos>", "down", "sat", "cat", "the"], "<eos>")
    with pytest.raises(ValueError, match=r"step: expected an int in \[1, 5\], got 6"):
        lecture01.decoding_prefix(6)


def test_the_encoder_output_hops_over_the_residual_it_crosses():
    """transformer.svg: where the encoder's output crosses a decoder residual line, the route hops
    over it (the lines do not join there); every other vertical line it passes is not crossed."""
    import numpy as np

    from course_lib.plots.diagrams.overview import draw_transformer

    with course_style():
        fig = draw_transformer()
    try:
        ax = fig.axes[0]
        (route,) = [line for line in ax.lines if line.get_gid() == "crossing"]
        xs, ys = (np.asarray(v, dtype=float) for v in route.get_data())
        route_y = ys[-1]
        flat = xs[(ys == route_y)]
        lo, hi = flat.min(), flat.max()
        crossed = []
        for line in ax.lines:
            lx, ly = (np.asarray(v, dtype=float) for v in line.get_data())
            for (x0, y0), (x1, y1) in zip(zip(lx, ly), zip(lx[1:], ly[1:])):
                if x0 == x1 and lo < x0 < hi and min(y0, y1) < route_y < max(y0, y1):
                    crossed.append(x0)
        assert crossed, "the route crosses no vertical line any more: is the hop still needed?"
        for x in crossed:
            near = np.abs(xs - x) < 1e-9
            assert near.any() and ys[near].max() > route_y, f"the route crosses x = {x:.2f} without a hop"
    finally:
        plt.close(fig)


def test_the_residuals_leave_every_position():
    """encoder_layer.svg: each residual taps the path of every position (a dot on each), not one."""
    from course_lib.plots.diagrams.layer import draw_encoder_layer
    from course_lib.plots.style import COLORS

    with course_style():
        fig = draw_encoder_layer()
    try:
        dots = [line.get_xydata()[0] for line in fig.axes[0].lines
                if line.get_marker() == "o" and line.get_color() == COLORS["residual"]]
        rows = {}
        for x, y in dots:
            rows.setdefault(round(float(y), 3), set()).add(round(float(x), 3))
        assert len(rows) == 2 and all(len(xs) == 4 for xs in rows.values()), rows
    finally:
        plt.close(fig)
