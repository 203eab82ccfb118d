"""course_lib.plots.attention: plot_attention's inputs, layouts, padding, titles and errors."""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from course_lib import plots
from course_lib.errors import CourseTypeError, CourseValueError
from plot_helpers import PAD, TOKENS, padding_patches, weights


@pytest.mark.parametrize("shape, kwargs, expected", [
    ((5, 5), {}, "single"),
    ((2, 5, 5), {}, (2,)),
    ((2, 5, 5), {"heads": 1}, "single"),
    ((3, 2, 5, 5), {}, (3, 2)),
    ((3, 2, 5, 5), {"layers": 1}, (2,)),
    ((3, 2, 5, 5), {"heads": 0}, (3,)),
    ((3, 2, 5, 5), {"layers": [0, 2], "heads": [1]}, (2, 1)),
    ((3, 2, 5, 5), {"layers": 2, "heads": 1}, "single"),
])
def test_plot_attention_shapes(shape, kwargs, expected):
    fig, axes = plots.plot_attention(weights(*shape), TOKENS, key_padding_mask=PAD, **kwargs)
    assert isinstance(fig, Figure)
    if expected == "single":
        assert isinstance(axes, Axes)
        axes = np.array([axes])
    else:
        assert axes.shape == expected
    for ax in axes.flat:
        # one band over the padded key columns, one over the padded query rows
        assert len(padding_patches(ax)) == 2
        assert ax.images[0].get_array().shape == (5, 5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_plot_attention_dtypes_and_grad(dtype):
    w = weights(5, 5, dtype=dtype).requires_grad_(dtype != torch.float16)
    fig, ax = plots.plot_attention(w, TOKENS)
    np.testing.assert_allclose(ax.images[0].get_array(), w.detach().double().numpy())


def test_plot_attention_padding_is_marked():
    fig, ax = plots.plot_attention(weights(5, 5), TOKENS, key_padding_mask=PAD)
    (cols, rows) = padding_patches(ax)
    assert (cols.get_x(), cols.get_width()) == (2.5, 2)      # key columns 3 and 4
    assert (rows.get_y(), rows.get_height()) == (2.5, 2)     # query rows 3 and 4
    labels = ax.get_xticklabels()
    assert [t.get_text() for t in labels] == TOKENS
    assert labels[3].get_color() != labels[0].get_color()    # padded labels are greyed
    assert ax.figure.axes[-1].get_ylabel() == "attention weight"   # the colorbar


def test_plot_attention_rectangular_map_marks_only_keys():
    fig, ax = plots.plot_attention(weights(2, 5), TOKENS, query_tokens=["a", "b"], key_padding_mask=PAD)
    assert len(padding_patches(ax)) == 1


def test_plot_attention_short_token_list_fills_pad_labels():
    fig, ax = plots.plot_attention(weights(5, 5), ["the", "cat", "sat"], key_padding_mask=PAD)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["the", "cat", "sat", "<pad>", "<pad>"]


def test_plot_attention_encoder_output_with_example():
    per_layer = [weights(2, 3, 5, 5) for _ in range(2)]     # what Encoder(..., return_attention=True) gives
    mask = torch.stack([PAD, torch.zeros(5, dtype=torch.bool)])
    fig, axes = plots.plot_attention(per_layer, [TOKENS, list("abcde")], key_padding_mask=mask, example=1)
    assert axes.shape == (2, 3)
    assert not padding_patches(axes[0, 0])
    np.testing.assert_allclose(axes[1, 2].images[0].get_array(), per_layer[1][1, 2].double().numpy())


def test_plot_attention_annotate_writes_values():
    fig, ax = plots.plot_attention(weights(3, 3), annotate=True)
    assert len(ax.texts) == 9


def test_plot_attention_leaves_rcparams_alone_and_prints_nothing(capsys):
    before = dict(matplotlib.rcParams)
    plots.plot_attention(weights(2, 5, 5), TOKENS, key_padding_mask=PAD)
    assert dict(matplotlib.rcParams) == before
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("call, error, match", [
    (lambda: plots.plot_attention(weights(1, 1, 2, 5, 5)), CourseValueError, "weights"),
    (lambda: plots.plot_attention(weights(5)), CourseValueError, "weights"),
    (lambda: plots.plot_attention("weights"), CourseTypeError, "weights"),
    (lambda: plots.plot_attention(weights(5, 5), TOKENS[:2]), CourseValueError, "tokens: expected 5"),
    (lambda: plots.plot_attention(weights(5, 5), key_padding_mask=PAD.long()), CourseTypeError,
     "key_padding_mask"),
    (lambda: plots.plot_attention(weights(5, 5), key_padding_mask=PAD[:4]), CourseValueError,
     r"key_padding_mask: expected bool of shape \(5,\)"),
    (lambda: plots.plot_attention(weights(2, 5, 5), heads=2), CourseValueError, r"heads: .*\[0, 2\)"),
    (lambda: plots.plot_attention(weights(2, 5, 5), layers=0), CourseValueError, "layers"),
    (lambda: plots.plot_attention(weights(2, 5, 5), titles=["one"]), CourseValueError, "titles"),
    (lambda: plots.plot_attention(weights(2, 5, 5), ax=plt.subplots()[1]), CourseValueError, "ax"),
])
def test_plot_attention_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_max_padding_keeps_the_real_tokens_and_a_few_pads():
    w = weights(2, 8, 8)
    pad = torch.tensor([False] * 3 + [True] * 5)
    fig, axes = plots.plot_attention(w, ["a", "b", "c"], key_padding_mask=pad, max_padding=1)
    for ax in axes:
        assert ax.images[0].get_array().shape == (4, 4)
        np.testing.assert_allclose(ax.images[0].get_array(), w[int(ax.get_title()[-1])][:4, :4].double().numpy())
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["a", "b", "c", "<pad>"]
    assert "4 more padded keys not shown" in fig.get_supxlabel()
    with pytest.raises(CourseValueError, match="max_padding"):
        plots.plot_attention(w, key_padding_mask=pad, max_padding=-1)


def test_padding_band_is_light():
    from matplotlib.colors import to_rgb

    fig, ax = plots.plot_attention(weights(5, 5), TOKENS, key_padding_mask=PAD)
    for patch in padding_patches(ax):
        assert min(to_rgb(patch.get_facecolor())) > 0.9                   # a pale band, not a grey block
        assert patch.get_hatch() == "//"


def test_a_list_of_maps_is_one_figure_with_titles():
    maps = [weights(4, 4), weights(4, 4) * 0.5]
    fig, axes = plots.plot_attention(maps, ["a", "b", "c", "d"], titles=["bidirectional", "causal"])
    assert [ax.get_title() for ax in axes] == ["bidirectional", "causal"]
    assert fig.axes[-1].get_ylabel() == "attention weight"
