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


def test_post_ln_and_pre_ln_share_one_scale_and_keep_their_title_inside():
    import matplotlib.pyplot as plt

    from course_lib.plots.figures import layout_problems

    fig, axes = plt.subplots(1, 2, figsize=(12, 8.6), layout="constrained")
    plots.draw_encoder_diagram(num_layers=6, norm_first=False, ax=axes[0], title="post-LN (the paper)")
    plots.draw_encoder_diagram(num_layers=6, norm_first=True, ax=axes[1], title="pre-LN")
    assert axes[0].get_xlim() == axes[1].get_xlim() and axes[0].get_ylim() == axes[1].get_ylim()
    assert axes[0].get_title() == "" and "post-LN (the paper)" in [t.get_text() for t in axes[0].texts]
    assert layout_problems(fig, max_width=None) == []
    for norm_first in (False, True):
        fig, ax = plots.draw_encoder_diagram(num_layers=2, norm_first=norm_first, d_model=512)
        assert layout_problems(fig) == []


@pytest.mark.parametrize("norm_first, order", [
    (False, ["multi-head self-attention", "Add & Norm", "feed-forward: Linear, ReLU, Linear", "Add & Norm"]),
    (True, ["LayerNorm", "multi-head self-attention", "LayerNorm", "feed-forward: Linear, ReLU, Linear",
            "final LayerNorm"]),
])
def test_encoder_diagram_draws_the_layer_in_order(norm_first, order):
    fig, ax = plots.draw_encoder_diagram(norm_first=norm_first)
    boxes = sorted((t.get_position()[1], t.get_text()) for t in ax.texts
                    if t.get_text() in {"multi-head self-attention", "Add & Norm", "LayerNorm", "final LayerNorm",
                                        "feed-forward: Linear, ReLU, Linear"})
    assert [text for _, text in boxes] == order
