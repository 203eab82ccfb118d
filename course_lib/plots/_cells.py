"""Drawing primitives shared by the heatmap-like plots: images, tick labels, values in cells,
padding bands, the colorbar."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patches as mpatches
from matplotlib.transforms import Bbox

from ._inputs import runs
from .style import PAD_EDGE, PAD_FACE, PAD_LABEL, text_color, tick_fontsize, tick_step


def imshow(ax, data: np.ndarray, cmap, vmin, vmax, aspect="equal"):
    cmap = plt.get_cmap(cmap).with_extremes(bad="white")
    return ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=vmin, vmax=vmax, aspect=aspect,
                     interpolation="nearest")


def frame(ax) -> None:
    for spine in ax.spines.values():
        spine.set_visible(True)
        spine.set_linewidth(0.6)
        spine.set_color("0.35")


def colorbar(fig, im, ax, label: str, aspect: float = 20, **kwargs):
    """A colorbar with its label (every colour scale of the course says what it measures), as tall
    as the maps it belongs to.

    ``ax`` is one Axes or a list of them. Constrained layout reserves the colorbar's room beside them;
    at draw time the bar is then given the height of the images actually drawn (an ``aspect="equal"``
    map is often shorter than the box its Axes was given), and a width of ``1 / aspect`` of that
    height.
    """
    cbar = fig.colorbar(im, ax=ax, aspect=aspect, **kwargs)
    cbar.set_label(label)
    cbar.outline.set_visible(False)
    maps = list(np.ravel(ax)) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
    cbar.ax.set_box_aspect(None)                         # the locator below sets width and height
    cbar.ax.set_axes_locator(_AsTallAsTheMaps(cbar.ax.get_axes_locator(), maps, aspect))
    return cbar


class _AsTallAsTheMaps:
    """An axes locator: the colorbar's box, from the bottom of the lowest map to the top of the
    highest, as they are drawn (after each map's aspect is applied); ``1 / aspect`` as wide."""

    def __init__(self, original, maps, aspect: float):
        self.original, self.maps, self.aspect = original, maps, aspect

    def __call__(self, cax, renderer):
        pos = self.original(cax, renderer) if self.original is not None else cax.get_position(original=True)
        boxes = []
        for a in self.maps:
            a.apply_aspect()                             # where the map really is, not its layout box
            boxes.append(a.get_position(original=False))
        y0, y1 = min(b.y0 for b in boxes), max(b.y1 for b in boxes)
        width_in, height_in = cax.figure.get_size_inches()
        width = min(pos.width, (y1 - y0) * height_in / self.aspect / width_in)
        return Bbox.from_bounds(pos.x0, y0, width, y1 - y0)


def mark_padding(ax, col_pad: np.ndarray | None, row_pad: np.ndarray | None, n_rows: int, n_cols: int) -> None:
    """Light grey bands with faint hatching over padded columns and rows; each patch has gid 'padding'."""
    bands = []
    if col_pad is not None:
        bands += [(s - 0.5, -0.5, n, n_rows) for s, n in runs(col_pad)]
    if row_pad is not None:
        bands += [(-0.5, s - 0.5, n_cols, n) for s, n in runs(row_pad)]
    for x, y, w, h in bands:
        ax.add_patch(mpatches.Rectangle((x, y), w, h, facecolor=PAD_FACE, edgecolor=PAD_EDGE,
                                        hatch="//", linewidth=0.0, zorder=3, gid="padding"))


def set_ticks(ax, labels: list[str] | None, n: int, axis: str, pad: np.ndarray | None,
              cell_inches: float, rotation: float = 60.0, show: bool = True) -> None:
    """Token labels on one axis (every position when they fit, else every k-th); padded ones grey."""
    if not show:
        getattr(ax, f"set_{axis}ticks")([])
        return
    fontsize = tick_fontsize(cell_inches)
    step = tick_step(cell_inches)
    if labels is None:
        step = max(step, -(-n // 12))
    ticks = list(range(0, n, step))
    texts = [str(i) for i in ticks] if labels is None else [labels[i] for i in ticks]
    if axis == "x":
        ax.set_xticks(ticks)
        ax.set_xticklabels(texts, rotation=rotation if labels is not None else 0,
                           ha="right" if labels is not None and rotation else "center",
                           rotation_mode="anchor", fontsize=fontsize)
        tick_labels = ax.get_xticklabels()
    else:
        ax.set_yticks(ticks)
        ax.set_yticklabels(texts, fontsize=fontsize)
        tick_labels = ax.get_yticklabels()
    if pad is not None:
        for t, lab in zip(ticks, tick_labels):
            if pad[t]:
                lab.set_color(PAD_LABEL)
                lab.set_fontstyle("italic")
    ax.tick_params(axis=axis, length=0, pad=2)


def annotate_cells(ax, data: np.ndarray, im, fmt: str, cell_inches: float,
                   skip_rows: np.ndarray | None = None, skip_cols: np.ndarray | None = None) -> None:
    """Each finite value written in its cell, black or white by the cell's colour."""
    fontsize = float(np.clip(cell_inches * 72 * 0.28, 5.0, 9.0))
    for i in range(data.shape[0]):
        if skip_rows is not None and skip_rows[i]:
            continue
        for j in range(data.shape[1]):
            v = data[i, j]
            if (skip_cols is not None and skip_cols[j]) or not np.isfinite(v):
                continue
            ax.text(j, i, format(v, fmt), ha="center", va="center", fontsize=fontsize,
                    color=text_color(im.cmap(im.norm(v))), zorder=2)


def cell_grid(ax, n_rows: int, n_cols: int, color: str = "white", linewidth: float = 1.2) -> None:
    """Thin lines between the cells of an image."""
    ax.set_xticks(np.arange(-0.5, n_cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n_rows, 1), minor=True)
    ax.grid(which="minor", color=color, linewidth=linewidth)
    ax.tick_params(which="minor", length=0)
