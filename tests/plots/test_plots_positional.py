"""course_lib.plots.positional: the PE table and its curves."""

import pytest
import torch

from course_lib import plots
from course_lib.errors import CourseValueError


def test_positional_encoding_plots():
    pe = torch.sin(torch.arange(12.0)[:, None] / torch.arange(1.0, 9.0))    # (12, 8) in [-1, 1]
    fig, ax = plots.plot_positional_encoding(pe, dims=[0, 3])
    assert ax.images[0].get_clim() == (-1.0, 1.0)
    assert ax.get_xlabel().startswith("dimension") and ax.get_ylabel() == "position"
    fig, ax = plots.plot_pe_curves(pe, dims=[0, 1, 5], layout="interleaved")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["dim 0 (sin, i=0)", "dim 1 (cos, i=0)", "dim 5 (cos, i=2)"]
    fig, ax = plots.plot_pe_curves(pe, dims=[0, 4], layout="concat")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["dim 0 (sin, i=0)", "dim 4 (cos, i=0)"]
    with pytest.raises(CourseValueError, match="dims"):
        plots.plot_pe_curves(pe, dims=[8])
    with pytest.raises(CourseValueError, match="pe"):
        plots.plot_positional_encoding(pe[0])
