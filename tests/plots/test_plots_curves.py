"""course_lib.plots.curves: plot_curves and plot_probabilities."""

import pytest
import torch

from course_lib import plots
from course_lib.errors import CourseValueError


def test_plot_curves_and_probabilities():
    fig, ax = plots.plot_curves([128, 256, 512], {"explicit": [1.0, 4.0, 16.0], "fused": ([128, 512], [1.0, 8.0])},
                                xlabel="T", ylabel="ms", logx=True, logy=True, marker=256, marker_label="here")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["explicit", "fused"]
    assert any(t.get_text() == "here" for t in ax.texts)
    with pytest.raises(CourseValueError, match=r"ys\['a'\]"):
        plots.plot_curves([1, 2], {"a": [1.0]})
    fig, ax = plots.plot_probabilities(torch.tensor([2.0, 1.0, 0.0]), ["a", "b", "c"], temperature=0.5)
    heights = [p.get_height() for p in ax.patches[:3]]
    assert sum(heights) == pytest.approx(1.0)
    assert heights == sorted(heights, reverse=True)
    with pytest.raises(CourseValueError, match="temperature"):
        plots.plot_probabilities(torch.zeros(3), temperature=0)


def test_probability_labels_sit_on_their_own_bars_not_on_the_reference_outline():
    logits = torch.tensor([3.0, 2.2, 1.6, 1.2, 0.8, 0.3, 0.0, -1.5])
    fig, ax = plots.plot_probabilities(logits, temperature=4.0)             # dashed outline: tau = 1
    p = torch.softmax(logits / 4.0, dim=0)
    labels = [t for t in ax.texts if t.get_text().startswith("0.")]
    assert [t.get_text() for t in labels] == [f"{v:.2f}" for v in p.tolist()]
    for text, value in zip(labels, p.tolist()):
        assert text.get_position()[1] == pytest.approx(value + 0.015)      # its own bar's top, not max(p, ref)


def test_coinciding_series_stay_visible():
    fig, ax = plots.plot_curves([1, 2, 3], {"a": [1.0, 2.0, 3.0], "b": [1.0, 2.0, 3.0]}, legend="below")
    styles = [line.get_linestyle() for line in ax.get_lines()]
    assert styles[0] != styles[1]                                      # dashes over a solid line
    assert ax.get_legend() is not None
    with pytest.raises(CourseValueError, match="legend"):
        plots.plot_curves([1], {"a": [1.0]}, legend="outside")
