"""course_lib.plots.diagrams: draw_encoder_diagram."""

import pytest

from course_lib import plots
from course_lib.errors import CourseValueError


@pytest.mark.parametrize("norm_first", [False, True])
def test_draw_encoder_diagram(norm_first):
    fig, ax = plots.draw_encoder_diagram(num_layers=4, norm_first=norm_first)
    texts = [t.get_text() for t in ax.texts]
    assert "4 ×" in texts
    assert ("final LayerNorm" in texts) == norm_first
    with pytest.raises(CourseValueError, match="num_layers"):
        plots.draw_encoder_diagram(num_layers=0)
