"""Positional encodings: the table as a heatmap, and chosen columns as curves against the position."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patches as mpatches
from matplotlib import transforms as mtransforms

from ..errors import CourseValueError, check_choice
from ._cells import colorbar, frame
from ._inputs import indices, shape_text, to_numpy
from .describe import describe, number, value_range
from .style import SIGNED_CMAP, category_color, styled

__all__ = ["plot_positional_encoding", "plot_pe_curves"]


def _table(pe) -> np.ndarray:
    arr = to_numpy("pe", pe)
    if arr.ndim != 2:
        raise CourseValueError(f"pe: expected a table (max_len, d_model), got {shape_text(arr)}")
    return arr


def _mark_dims(ax, fig, dims: list[int], t: int) -> None:
    """Outline the chosen columns, with a marker above in the colour plot_pe_curves uses."""
    for i, dim in enumerate(dims):
        color = category_color(i)
        ax.add_patch(mpatches.Rectangle((dim - 0.5, -0.5), 1, t, fill=False, linewidth=1.2,
                                        edgecolor=color, zorder=3, gid="dim"))
        ax.plot([dim], [1.0], marker="v", markersize=7, color=color, clip_on=False, zorder=4,
                markeredgecolor="white", markeredgewidth=0.5, linestyle="none",
                transform=ax.get_xaxis_transform() + mtransforms.ScaledTranslation(0, 4 / 72, fig.dpi_scale_trans))


@styled
def plot_positional_encoding(pe, ax=None, title: str | None = "Sinusoidal positional encoding", *,
                             dims: Sequence[int] | None = None, cmap=SIGNED_CMAP,
                             colorbar_label: str = "PE value"):
    """The table ``PE (T, d_model)`` as a heatmap: position down, feature (dimension) across.

    Values are drawn on a fixed -1 .. 1 diverging scale (blue -1, white 0, red +1), so tables of
    different sizes compare at a glance. ``dims`` outlines those feature columns (to link the
    picture with :func:`plot_pe_curves`).

    Returns:
        ``(fig, ax)``.
    """
    arr = _table(pe)
    t, d = arr.shape
    if ax is None:
        width = float(np.clip(2.2 + 0.06 * d, 5.0, 9.5))
        height = float(np.clip(1.6 + 0.05 * t, 3.0, 6.0))
        fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    else:
        fig = ax.figure
    im = ax.imshow(arr, cmap=cmap, vmin=-1.0, vmax=1.0, aspect="auto", interpolation="nearest")
    ax.set_xlabel("dimension (feature index)")
    ax.set_ylabel("position")
    ax.xaxis.set_major_locator(plt.MaxNLocator(nbins=10, integer=True, steps=[1, 2, 4, 5, 8, 10]))
    ax.yaxis.set_major_locator(plt.MaxNLocator(nbins=8, integer=True, steps=[1, 2, 4, 5, 8, 10]))
    if dims is not None:
        _mark_dims(ax, fig, indices("dims", dims, d), t)
    frame(ax)
    if title:
        ax.set_title(title, pad=14 if dims is not None else 6)
    colorbar(fig, im, ax, colorbar_label, pad=0.02, aspect=25, ticks=[-1, -0.5, 0, 0.5, 1])
    marked = f"; features {', '.join(str(i) for i in indices('dims', dims, d))} outlined" if dims is not None else ""
    describe(ax, f"{title or 'Positional encoding table'}: a heatmap of {t} positions (down) by {d} features "
                 f"(across), {value_range(arr)} on a scale from -1 (blue) to 1 (red){marked}")
    return fig, ax


def _curve_label(dim: int, d: int, layout: str | None) -> str:
    label = f"dim {dim}"
    if layout == "interleaved":
        label += f" ({'sin' if dim % 2 == 0 else 'cos'}, i={dim // 2})"
    elif layout == "concat":
        half = d // 2
        label += f" ({'sin' if dim < half else 'cos'}, i={dim % half if half else 0})"
    return label


@styled
def plot_pe_curves(pe, dims: Sequence[int] = (0, 1, 4, 5, 10, 11), ax=None,
                   title: str | None = "Positional encoding: one curve per dimension", *,
                   layout: str | None = None, positions=None, legend: str = "right"):
    """Selected columns of a positional-encoding table, each against the position.

    Args:
        pe: ``(T, d_model)`` table.
        dims: the feature indices to draw.
        layout: ``"interleaved"`` or ``"concat"`` adds "sin"/"cos" to each legend entry.
        positions: x values (default ``0 .. T-1``).
        legend: ``"right"`` (outside, beside the axes) or ``"below"`` (under the axes, in
            columns: for narrow panels).

    Returns:
        ``(fig, ax)``.
    """
    arr = _table(pe)
    t, d = arr.shape
    dims = indices("dims", dims, d)
    check_choice("layout", layout, (None, "interleaved", "concat"))
    check_choice("legend", legend, ("right", "below"))
    x = np.arange(t) if positions is None else to_numpy("positions", positions)
    if x.shape != (t,):
        raise CourseValueError(f"positions: expected shape ({t},), got {shape_text(x)}")
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 3.4), layout="constrained")
    else:
        fig = ax.figure
    palette = category_color
    for i, dim in enumerate(dims):
        ax.plot(x, arr[:, dim], color=palette(i), linewidth=1.6, label=_curve_label(dim, d, layout),
                marker="o" if t <= 40 else None, markersize=3)
    ax.axhline(0.0, color="0.6", linewidth=0.8, zorder=0)
    ax.set_ylim(-1.15, 1.15)
    ax.set_xlim(x[0], x[-1])
    ax.set_xlabel("position")
    ax.set_ylabel("PE value")
    ax.grid(alpha=0.25)
    ax.spines[["top", "right"]].set_visible(False)
    if legend == "right":
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=min(len(dims), 3), borderaxespad=0.0)
    if title:
        ax.set_title(title)
    ends = "; ".join(f"{_curve_label(dim, d, layout)} from {number(arr[0, dim])} at position {x[0]:g} to "
                     f"{number(arr[-1, dim])} at {x[-1]:g}, crossing 0 {_crossings(arr[:, dim])} times"
                     for dim in dims)
    describe(ax, f"{title or 'Positional encoding curves'}: {len(dims)} features against the position; {ends}")
    return fig, ax


def _crossings(values: np.ndarray) -> int:
    signs = np.sign(np.round(values, 6))
    signs = signs[signs != 0]
    return int((signs[1:] != signs[:-1]).sum())
