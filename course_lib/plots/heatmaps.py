"""A labelled heatmap of any matrix (cosine similarities, gradients d y_t / d x_s, ...)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from ..errors import CourseValueError
from ._cells import annotate_cells, colorbar, frame, imshow, set_ticks
from ._inputs import labels, shape_text, to_numpy
from .describe import describe, heatmap_sentence
from .style import SIGNED_CMAP, WEIGHTS_CMAP, cell_inches, heatmap_size, styled

__all__ = ["plot_heatmap", "shared_colorbar"]


@styled
def plot_heatmap(matrix, row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None,
                 title: str | None = None, cmap=None, annotate: bool = False, *, fmt: str = ".2f",
                 vmin: float | None = None, vmax: float | None = None, xlabel: str | None = None,
                 ylabel: str | None = None, colorbar_label: str = "value", ax=None, show_colorbar: bool = True):
    """A labelled heatmap of a 2-D matrix.

    The colormap is chosen from the values unless given: signed data -> ``"RdBu_r"`` with limits
    symmetric around 0; non-negative data -> ``"viridis"``.

    Args:
        matrix: ``(R, C)`` tensor or array.
        row_labels, col_labels: ``R`` and ``C`` tick labels (default: indices).
        title, xlabel, ylabel: texts.
        colorbar_label: what the colours measure (default ``"value"``; say more when you can,
            e.g. ``"cosine similarity"``).
        cmap: a colormap name or object.
        annotate: write each value in its cell with ``fmt``.
        vmin, vmax: colour limits.
        ax: draw into this Axes.
        show_colorbar: ``False`` for maps on one scale side by side, which share one bar
            (:func:`shared_colorbar`) rather than repeat it.

    Returns:
        ``(fig, ax)``.
    """
    arr = to_numpy("matrix", matrix)
    if arr.ndim != 2:
        raise CourseValueError(f"matrix: expected a 2-D matrix (rows, cols), got {shape_text(arr)}")
    n_rows, n_cols = arr.shape
    rows = labels("row_labels", row_labels, n_rows)
    cols = labels("col_labels", col_labels, n_cols)
    finite = arr[np.isfinite(arr)]
    signed = finite.size > 0 and finite.min() < 0 < finite.max()
    if cmap is None:
        cmap = SIGNED_CMAP if signed else WEIGHTS_CMAP
    if signed and vmin is None and vmax is None and cmap == SIGNED_CMAP:
        lim = float(np.abs(finite).max())
        vmin, vmax = -lim, lim
    cell = cell_inches(max(n_rows, n_cols), lo=0.1, hi=0.5 if annotate else 0.42)
    if annotate:
        cell = max(cell, 0.45)
    if ax is None:
        size = heatmap_size(n_rows, n_cols, cell, rows, cols, extra_w=1.5, extra_h=0.9 if title else 0.6)
        fig, ax = plt.subplots(figsize=size, layout="constrained")
    else:
        fig = ax.figure
    im = imshow(ax, arr, cmap, vmin, vmax)
    set_ticks(ax, cols, n_cols, "x", None, cell)
    set_ticks(ax, rows, n_rows, "y", None, cell)
    if annotate:
        annotate_cells(ax, arr, im, fmt, cell)
    frame(ax)
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if show_colorbar:
        colorbar(fig, im, ax, colorbar_label, aspect=18, pad=0.02)
    describe(ax, heatmap_sentence(arr, rows, cols, title, colorbar_label))
    return fig, ax


def shared_colorbar(axes, label: str):
    """One colour bar for several heatmaps drawn with the same ``vmin``, ``vmax`` and colormap (each
    with ``show_colorbar=False``), beside the last of them and as tall as the maps. Returns it."""
    axes = list(np.ravel(axes))
    if not axes or not axes[-1].images:
        raise CourseValueError("axes: expected the Axes of heatmaps already drawn, got Axes with no image")
    return colorbar(axes[-1].figure, axes[-1].images[0], axes, label, aspect=18, pad=0.02)
