"""course_lib.plots.heatmaps: plot_heatmap."""

import matplotlib.pyplot as plt
import pytest
import torch

from course_lib import plots
from course_lib.errors import CourseValueError
from plot_helpers import weights


def test_plot_heatmap_signed_uses_diverging_symmetric_scale():
    m = torch.tensor([[-0.5, 1.0], [0.25, 0.0]])
    fig, ax = plots.plot_heatmap(m, ["a", "b"], ["c", "d"], title="cos", annotate=True)
    im = ax.images[0]
    assert im.get_cmap().name.startswith("RdBu_r")
    assert im.get_clim() == (-1.0, 1.0)
    assert len(ax.texts) == 4
    fig, ax = plots.plot_heatmap(m.abs())
    assert ax.images[0].get_cmap().name.startswith("viridis")
    with pytest.raises(CourseValueError, match="matrix"):
        plots.plot_heatmap(torch.zeros(2, 2, 2))
    with pytest.raises(CourseValueError, match="row_labels"):
        plots.plot_heatmap(m, row_labels=["a"])


def test_draws_into_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    assert plots.plot_attention(weights(5, 5), ax=a) == (fig, a)
    assert plots.plot_heatmap(torch.eye(3), ax=b) == (fig, b)


def test_every_colorbar_says_what_it_measures():
    fig, ax = plots.plot_heatmap(torch.eye(3))
    assert fig.axes[-1].get_ylabel() == "value"
    fig, ax = plots.plot_heatmap(torch.eye(3), colorbar_label="cosine similarity")
    assert fig.axes[-1].get_ylabel() == "cosine similarity"
    fig, ax = plots.plot_positional_encoding(torch.zeros(4, 6))
    assert fig.axes[-1].get_ylabel() == "PE value"


def _extent(fig, maps, cax):
    """(bottom, top) of the maps as drawn and of the colorbar, in figure fractions."""
    fig.canvas.draw()
    boxes = [a.get_position() for a in maps]
    bar = cax.get_position()
    return (min(b.y0 for b in boxes), max(b.y1 for b in boxes)), (bar.y0, bar.y1)


@pytest.mark.parametrize("case", ["heatmap", "heatmap in a row", "attention", "heads", "layers x heads"])
def test_the_colorbar_is_as_tall_as_the_map(case):
    """The bar starts and ends where the drawn maps do (it was taller, up to the figure's top edge)."""
    words = [f"w{i}" for i in range(15)]
    if case == "heatmap":
        fig, ax = plots.plot_heatmap(torch.rand(15, 15), words, words, title="t")
        maps = [ax]
    elif case == "heatmap in a row":
        fig, axes = plt.subplots(1, 3, figsize=(14, 4.6), layout="constrained")
        for a in axes:
            plots.plot_heatmap(torch.rand(12, 12), ax=a, title="x")
        maps = [axes[0]]
    elif case == "attention":
        fig, ax = plots.plot_attention(weights(15, 15), words)
        maps = [ax]
    elif case == "heads":
        fig, axes = plots.plot_attention(torch.softmax(torch.randn(2, 15, 15), -1), words)
        maps = list(axes)
    else:
        fig, axes = plots.plot_attention(torch.softmax(torch.randn(3, 4, 9, 9), -1))
        maps = list(axes.flat)
    cax = next(a for a in fig.axes if a.get_ylabel() in ("value", "attention weight") and a not in maps)
    (m0, m1), (c0, c1) = _extent(fig, maps, cax)
    assert abs(c0 - m0) < 0.005 and abs(c1 - m1) < 0.005, f"maps {m0:.3f}-{m1:.3f}, colorbar {c0:.3f}-{c1:.3f}"
    plt.close(fig)


def test_a_row_of_maps_on_one_scale_shares_one_colorbar():
    """01's dependency maps repeated one colour bar three times: with show_colorbar=False and
    shared_colorbar, three maps get one bar, labelled, as tall as the maps."""
    fig, axes = plt.subplots(1, 3, figsize=(9, 3.1), layout="constrained")
    for a in axes:
        plots.plot_heatmap(torch.rand(12, 12), ax=a, vmin=0, vmax=1, show_colorbar=False)
    assert len(fig.axes) == 3
    bar = plots.shared_colorbar(axes, "relative dependence")
    assert len(fig.axes) == 4 and bar.ax.get_ylabel() == "relative dependence"
    (lo, hi), (bar_lo, bar_hi) = _extent(fig, axes, bar.ax)
    assert abs(lo - bar_lo) < 0.01 and abs(hi - bar_hi) < 0.01
    plt.close(fig)
    fig, ax = plt.subplots()
    with pytest.raises(CourseValueError, match="axes"):
        plots.shared_colorbar([ax], "x")
    plt.close(fig)
