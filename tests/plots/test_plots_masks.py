"""course_lib.plots.masks: plot_mask, plot_masks, plot_batch."""

import pytest
import torch

from course_lib import plots
from course_lib.errors import CourseTypeError, CourseValueError
from plot_helpers import padding_patches


@pytest.mark.parametrize("mask, convention, legend", [
    (torch.tril(torch.ones(4, 4, dtype=torch.bool)), "attend", "True = may attend"),
    (torch.tensor([[False, False, True], [False, False, False]]), "pad", "True = padding"),
    (torch.tensor([[1, 1, 0], [1, 1, 1]]), "keep", "1 = keep"),
    (torch.tensor([[True, True, False]]).view(1, 1, 1, 3), "attend", "True = may attend"),
])
def test_plot_mask(mask, convention, legend):
    fig, ax = plots.plot_mask(mask, convention, title="mask")
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(legend in t for t in texts)
    blocked = [p for p in ax.patches if p.get_gid() == "blocked"]
    closed = {"attend": ~mask.bool(), "pad": mask, "keep": mask == 0}[convention]
    assert len(blocked) == int(closed.sum())


def test_plot_mask_bad_input():
    with pytest.raises(CourseValueError, match="convention"):
        plots.plot_mask(torch.ones(2, 2, dtype=torch.bool), "ones")
    with pytest.raises(CourseTypeError, match="mask"):
        plots.plot_mask(torch.ones(2, 2), "pad")
    with pytest.raises(CourseValueError, match="mask"):
        plots.plot_mask(torch.ones(2, 2, 2, dtype=torch.bool), "attend")


def test_plot_batch_ragged_lists_and_ids():
    fig, ax = plots.plot_batch([["a", "b", "c"], ["d"]])
    pads = padding_patches(ax)
    assert [(p.get_x(), p.get_y(), p.get_width()) for p in pads] == [(0.5, 0.5, 2)]
    assert "<pad>" in [t.get_text() for t in ax.texts]
    ids = torch.tensor([[5, 6, 0], [7, 0, 0]])
    fig, ax = plots.plot_batch(ids, key_padding_mask=ids == 0)
    assert len(padding_patches(ax)) == 2
    with pytest.raises(CourseTypeError, match="key_padding_mask"):
        plots.plot_batch(ids, key_padding_mask=(ids == 0).long())
    with pytest.raises(CourseTypeError, match="tokens"):
        plots.plot_batch("a b c")


def test_plot_masks_draws_several_masks_in_one_figure():
    pad = torch.tensor([[False, False, True], [False, False, False]])
    fig, axes = plots.plot_masks([pad, ~pad, (~pad).long()], ["pad", "attend", "keep"],
                                 titles=["key_padding_mask", "attn_mask", "attention_mask"])
    assert len(axes) == 3 and len(fig.axes) == 3
    assert [ax.get_title() for ax in axes] == ["key_padding_mask", "attn_mask", "attention_mask"]
    for ax in axes:                      # every panel: the same cells blocked, its own legend
        assert len([p for p in ax.patches if p.get_gid() == "blocked"]) == 1
        assert ax.get_legend() is not None
    assert "True = padding" in axes[0].get_legend().get_texts()[1].get_text()
    assert "1 = keep" in axes[2].get_legend().get_texts()[0].get_text()
    fig, axes = plots.plot_masks([~pad, ~pad[:1]], "attend")   # one convention: one legend for the figure
    assert all(ax.get_legend() is None for ax in axes) and len(fig.legends) == 1
    assert "True = may attend" in fig.legends[0].get_texts()[0].get_text()
    with pytest.raises(CourseValueError, match="conventions"):
        plots.plot_masks([pad, pad], ["pad"] * 3)
    with pytest.raises(CourseTypeError, match="masks"):
        plots.plot_masks(pad, "pad")


def test_plot_batch_fits_a_notebook_and_splits_long_tokens():
    words = ["corresponds"] * 16
    fig, ax = plots.plot_batch([words, words[:3]])
    assert fig.get_figwidth() <= 9.0
    texts = [t.get_text() for t in ax.texts]
    assert all(t.replace("-\n", "").rstrip("…") in ("corresponds", "<pad>") or "…" in t for t in texts)
    assert any("-\n" in t for t in texts)
