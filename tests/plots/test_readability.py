"""Figures read at a notebook's width: no blank band between an axis label and the tick labels it
names, no text under 8 pt (measured by tests/plots/readability.py), for the plot helpers the lectures
use, the figures in res/, and the figures lectures 01-03 store."""

import base64
import json
import struct
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import torch

from course_lib.plots import figures, plot_attention, plot_heatmap
from course_lib.plots.diagrams.stack import draw_norm_placements
from readability import MAX_GAP_IN, MIN_PT, NOTEBOOK_WIDTH_IN, blank_bands, small_texts

ROOT = Path(__file__).resolve().parents[2]
STORED = sorted((ROOT / "notebooks").glob("0[1-3]_*.ipynb"))     # the lectures whose stored figures are checked
PNG_DPI = 100                  # matplotlib's figure.dpi, which the inline backend stores PNGs at
TOKENS = "[CLS] the animal didn ' t cross the street because it was too tired [SEP]".split()
WORDS = ["the", "cat", "sat", "on", "the", "mat"]


def _maps(*shape):
    torch.manual_seed(0)
    return torch.rand(*shape).softmax(-1)


#: the figures of lectures 01-03 that course_lib draws, as the lectures call them
LECTURE_FIGURES = {
    "02 two heads of MiniLM": lambda: plot_attention(_maps(12, 15, 15), TOKENS, heads=[0, 1],
                                                     titles=["layer 3 · head 0", "layer 3 · head 1"]),
    "02 bidirectional and causal weights": lambda: plot_attention(
        _maps(2, 6, 6), WORDS, annotate=True, titles=["bidirectional weights", "causal weights (same scores)"]),
    "03 post-LN and pre-LN": draw_norm_placements,
}


def test_a_blank_band_is_found():
    """A shared label under square maps in a figure far too tall, and an Axes' own label pushed away
    from its ticks, are found; the same maps in a figure of the right height are not."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 7), layout="constrained")
    for ax in axes:
        ax.imshow(torch.rand(5, 5).numpy())
        ax.set_xticks(range(5), list("abcde"))
    fig.supxlabel("key")
    assert any("shared label 'key'" in p for p in blank_bands(fig))
    fig.set_size_inches(8, 4.2)
    assert blank_bands(fig) == []
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("far away", labelpad=40)
    ax.set_ylabel("near")
    found = blank_bands(fig)
    assert len(found) == 1 and found[0].startswith("'far away' sits") and blank_bands(fig, max_gap_in=1.0) == []
    fig, axes = plt.subplots(1, 3, figsize=(9, 5), layout="constrained")          # square maps, a title far above
    for ax in axes:
        ax.imshow(torch.rand(4, 4).numpy())
    fig.suptitle("title")
    assert any(p.startswith("the title 'title'") for p in blank_bands(fig))
    fig.set_size_inches(9, 2.6)
    assert blank_bands(fig) == []


def test_small_text_is_found():
    """Text of 10 pt in a 12 in figure is shown at 7.5 pt at a notebook's 9 in; at 9 in, 10 pt stays
    10 pt and 7 pt is too small."""
    fig = plt.figure(figsize=(12, 3))
    fig.text(0.5, 0.5, "ten points", fontsize=10)
    assert small_texts(fig) == ["'ten points' at 7.5 pt"]
    fig.set_size_inches(9, 3)
    assert small_texts(fig) == []
    fig.text(0.2, 0.2, "seven points", fontsize=7)
    assert small_texts(fig) == ["'seven points' at 7.0 pt"]
    assert MIN_PT == 8.0 and NOTEBOOK_WIDTH_IN == 9.0 and MAX_GAP_IN <= 0.25


@pytest.mark.parametrize("name", LECTURE_FIGURES)
def test_the_lectures_figures_read_well(name):
    fig, _ = LECTURE_FIGURES[name]()
    assert blank_bands(fig) == [] and small_texts(fig) == []


@pytest.mark.parametrize("annotate", [False, True])
@pytest.mark.parametrize("heads", [1, 2, 4])
def test_attention_grids_have_no_band_under_the_maps(heads, annotate):
    fig, _ = plot_attention(_maps(heads, 6, 6), WORDS, annotate=annotate)
    assert blank_bands(fig) == []


def test_a_heatmap_reads_well():
    fig, _ = plot_heatmap(_maps(7, 7), title="map", xlabel="input position $s$", ylabel="output position $t$")
    assert blank_bands(fig) == [] and small_texts(fig) == []


@pytest.mark.parametrize("name", list(figures.FIGURES))
def test_res_figures_have_no_small_text(name):
    fig = figures.draw(name)
    assert small_texts(fig) == []


def _png_widths(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                data = base64.b64decode(png if isinstance(png, str) else "".join(png))
                yield i, struct.unpack(">I", data[16:20])[0]


@pytest.mark.parametrize("path", STORED, ids=lambda p: p.stem[:2])
def test_stored_figures_fit_the_notebook_width(path):
    """A stored figure wider than the notebook is shown scaled down, its text with it: every figure of
    lectures 01-03 is at most 9 in wide (at the PNG's 100 dpi, a few pixels of margin allowed), so the
    course style's 9-10 pt text stays at least 8 pt."""
    wide = [f"cell {i}: {w / PNG_DPI:.1f} in" for i, w in _png_widths(path) if w > NOTEBOOK_WIDTH_IN * PNG_DPI * 1.03]
    assert not wide, f"{path.name}: figures wider than {NOTEBOOK_WIDTH_IN} in: {wide}"
