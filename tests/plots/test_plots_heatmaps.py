"""course_lib.plots.heatmaps: plot_heatmap."""

import matplotlib.pyplot as plt
import pytest
import torch
from plot_helpers import weights

from course_lib import plots
from course_lib.errors import CourseValueError


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
