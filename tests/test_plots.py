"""course_lib.plots: inputs accepted, what is drawn, (fig, axes) returned, bad input rejected."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from course_lib import plots  # noqa: E402
from course_lib.errors import CourseTypeError, CourseValueError  # noqa: E402

TOKENS = ["the", "cat", "sat", "<pad>", "<pad>"]
PAD = torch.tensor([False, False, False, True, True])


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _weights(*shape, dtype=torch.float32):
    torch.manual_seed(0)
    return torch.rand(*shape).softmax(-1).to(dtype)


def _padding_patches(ax):
    return [p for p in ax.patches if p.get_gid() == "padding"]


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
    fig, axes = plots.plot_attention(_weights(*shape), TOKENS, key_padding_mask=PAD, **kwargs)
    assert isinstance(fig, Figure)
    if expected == "single":
        assert isinstance(axes, Axes)
        axes = np.array([axes])
    else:
        assert axes.shape == expected
    for ax in axes.flat:
        # one band over the padded key columns, one over the padded query rows
        assert len(_padding_patches(ax)) == 2
        assert ax.images[0].get_array().shape == (5, 5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_plot_attention_dtypes_and_grad(dtype):
    w = _weights(5, 5, dtype=dtype).requires_grad_(dtype != torch.float16)
    fig, ax = plots.plot_attention(w, TOKENS)
    np.testing.assert_allclose(ax.images[0].get_array(), w.detach().double().numpy())


def test_plot_attention_padding_is_marked():
    fig, ax = plots.plot_attention(_weights(5, 5), TOKENS, key_padding_mask=PAD)
    (cols, rows) = _padding_patches(ax)
    assert (cols.get_x(), cols.get_width()) == (2.5, 2)      # key columns 3 and 4
    assert (rows.get_y(), rows.get_height()) == (2.5, 2)     # query rows 3 and 4
    labels = ax.get_xticklabels()
    assert [t.get_text() for t in labels] == TOKENS
    assert labels[3].get_color() != labels[0].get_color()    # padded labels are greyed
    assert ax.figure.axes[-1].get_ylabel() == "attention weight"   # the colorbar


def test_plot_attention_rectangular_map_marks_only_keys():
    fig, ax = plots.plot_attention(_weights(2, 5), TOKENS, query_tokens=["a", "b"], key_padding_mask=PAD)
    assert len(_padding_patches(ax)) == 1


def test_plot_attention_short_token_list_fills_pad_labels():
    fig, ax = plots.plot_attention(_weights(5, 5), ["the", "cat", "sat"], key_padding_mask=PAD)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["the", "cat", "sat", "<pad>", "<pad>"]


def test_plot_attention_encoder_output_with_example():
    per_layer = [_weights(2, 3, 5, 5) for _ in range(2)]     # what Encoder(..., return_attention=True) gives
    mask = torch.stack([PAD, torch.zeros(5, dtype=torch.bool)])
    fig, axes = plots.plot_attention(per_layer, [TOKENS, list("abcde")], key_padding_mask=mask, example=1)
    assert axes.shape == (2, 3)
    assert not _padding_patches(axes[0, 0])
    np.testing.assert_allclose(axes[1, 2].images[0].get_array(), per_layer[1][1, 2].double().numpy())


def test_plot_attention_annotate_writes_values():
    fig, ax = plots.plot_attention(_weights(3, 3), annotate=True)
    assert len(ax.texts) == 9


def test_plot_attention_leaves_rcparams_alone_and_prints_nothing(capsys):
    before = dict(matplotlib.rcParams)
    plots.plot_attention(_weights(2, 5, 5), TOKENS, key_padding_mask=PAD)
    assert dict(matplotlib.rcParams) == before
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("call, error, match", [
    (lambda: plots.plot_attention(_weights(1, 1, 2, 5, 5)), CourseValueError, "weights"),
    (lambda: plots.plot_attention(_weights(5)), CourseValueError, "weights"),
    (lambda: plots.plot_attention("weights"), CourseTypeError, "weights"),
    (lambda: plots.plot_attention(_weights(5, 5), TOKENS[:2]), CourseValueError, "tokens: expected 5"),
    (lambda: plots.plot_attention(_weights(5, 5), key_padding_mask=PAD.long()), CourseTypeError,
     "key_padding_mask"),
    (lambda: plots.plot_attention(_weights(5, 5), key_padding_mask=PAD[:4]), CourseValueError,
     r"key_padding_mask: expected bool of shape \(5,\)"),
    (lambda: plots.plot_attention(_weights(2, 5, 5), heads=2), CourseValueError, r"heads: .*\[0, 2\)"),
    (lambda: plots.plot_attention(_weights(2, 5, 5), layers=0), CourseValueError, "layers"),
    (lambda: plots.plot_attention(_weights(2, 5, 5), titles=["one"]), CourseValueError, "titles"),
    (lambda: plots.plot_attention(_weights(2, 5, 5), ax=plt.subplots()[1]), CourseValueError, "ax"),
])
def test_plot_attention_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


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
    pads = _padding_patches(ax)
    assert [(p.get_x(), p.get_y(), p.get_width()) for p in pads] == [(0.5, 0.5, 2)]
    assert "<pad>" in [t.get_text() for t in ax.texts]
    ids = torch.tensor([[5, 6, 0], [7, 0, 0]])
    fig, ax = plots.plot_batch(ids, key_padding_mask=ids == 0)
    assert len(_padding_patches(ax)) == 2
    with pytest.raises(CourseTypeError, match="key_padding_mask"):
        plots.plot_batch(ids, key_padding_mask=(ids == 0).long())
    with pytest.raises(CourseTypeError, match="tokens"):
        plots.plot_batch("a b c")


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


@pytest.mark.parametrize("norm_first", [False, True])
def test_draw_encoder_diagram(norm_first):
    fig, ax = plots.draw_encoder_diagram(num_layers=4, norm_first=norm_first)
    texts = [t.get_text() for t in ax.texts]
    assert "4 ×" in texts
    assert ("final LayerNorm" in texts) == norm_first
    with pytest.raises(CourseValueError, match="num_layers"):
        plots.draw_encoder_diagram(num_layers=0)


def test_draws_into_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    assert plots.plot_attention(_weights(5, 5), ax=a) == (fig, a)
    assert plots.plot_heatmap(torch.eye(3), ax=b) == (fig, b)
