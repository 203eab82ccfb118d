"""Masks and padded batches as grids of cells.

Masks follow torch's conventions (see ``course_lib.masks``): a ``key_padding_mask`` is bool with
True = padding (ignored), as in ``nn.MultiheadAttention``; an ``attn_mask`` is bool with True = may
attend, as in ``F.scaled_dot_product_attention``; Hugging Face's ``attention_mask`` uses 1 = keep.
Whatever the convention, blue means "attention flows" and light grey (hatched) means "blocked".
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib import colors as mcolors
from matplotlib import patches as mpatches
from matplotlib import transforms as mtransforms

from ..errors import CourseTypeError, CourseValueError, check_attn_mask, check_choice, check_key_padding_mask
from ._cells import cell_grid, set_ticks
from ._inputs import labels, padding_mask, runs, shape_text, to_numpy
from .describe import describe, mask_sentence
from .style import ATTEND_COLOR, BLOCKED_COLOR, PAD_EDGE, TOKEN_FACE, cell_inches, label_inches, styled

__all__ = ["plot_mask", "plot_masks", "plot_batch"]

MAX_WIDTH = 9.0        # inches: the widest figure that fits JupyterLab's notebook column

_CONVENTIONS = {
    # convention: (what True means, what False means, does True mean "may attend / kept"?)
    "attend": ("True = may attend", "False = blocked", True),
    "pad": ("True = padding (ignored)", "False = real token", False),
    "keep": ("1 = keep", "0 = padding", True),
}


def _mask_grid(mask, convention: str):
    """``(raw, open_, batch_like)``: the mask as a 2-D bool grid, where attention flows, and whether
    it was a ``(B, 1, 1, T)`` batch of key masks."""
    check_choice("convention", convention, tuple(_CONVENTIONS))
    if isinstance(mask, torch.Tensor) and convention == "attend":
        check_attn_mask(mask, tuple(mask.shape), name="mask")
    elif isinstance(mask, torch.Tensor) and convention == "pad":
        check_key_padding_mask(mask, *((None,) + tuple(mask.shape) if mask.dim() < 2 else mask.shape[:2]), name="mask")
    arr = to_numpy("mask", mask, allow_bool=True)
    batch_like = arr.ndim == 4 and arr.shape[1] == 1 and arr.shape[2] == 1
    if arr.ndim > 2:
        arr = arr.reshape([s for s in arr.shape if s != 1] or [1])
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2:
        raise CourseValueError(f"mask: expected (T_q, T_k) or (B, T) after dropping size-1 axes, got {shape_text(arr)}")
    if arr.dtype != bool and not np.isin(arr, (0, 1)).all():
        raise CourseValueError("mask: expected only 0 and 1 values for convention='keep'")
    raw = arr.astype(bool)
    return raw, raw if _CONVENTIONS[convention][2] else ~raw, batch_like


def _legend_handles(convention: str) -> list:
    true_text, false_text, true_is_open = _CONVENTIONS[convention]
    return [mpatches.Patch(facecolor=ATTEND_COLOR,
                           label=(true_text if true_is_open else false_text) + "  (attention flows)"),
            mpatches.Patch(facecolor=BLOCKED_COLOR, hatch="///", edgecolor="0.7",
                           label=(false_text if true_is_open else true_text) + "  (no attention)")]


def _mask_panel(ax, raw, open_, convention, rows, cols, cell, annotate) -> None:
    n_rows, n_cols = raw.shape
    cmap = mcolors.ListedColormap([BLOCKED_COLOR, ATTEND_COLOR])
    ax.imshow(open_.astype(float), cmap=cmap, vmin=0, vmax=1, aspect="equal", interpolation="nearest")
    for (r, c) in zip(*np.nonzero(~open_)):
        ax.add_patch(mpatches.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, hatch="///",
                                        edgecolor="0.75", linewidth=0.0, zorder=2, gid="blocked"))
    cell_grid(ax, n_rows, n_cols)
    set_ticks(ax, cols, n_cols, "x", None, cell)
    set_ticks(ax, rows, n_rows, "y", None, cell)
    if annotate is None:
        annotate = n_cols <= 24 and cell >= 0.22
    if annotate:
        t_txt, f_txt = ("1", "0") if convention == "keep" else ("T", "F")
        fs = float(np.clip(cell * 72 * 0.4, 6, 10))
        for r in range(n_rows):
            for c in range(n_cols):
                ax.text(c, r, t_txt if raw[r, c] else f_txt, ha="center", va="center", fontsize=fs,
                        color="white" if open_[r, c] else "0.3", fontweight="bold", zorder=4)
    ax.spines[:].set_visible(False)


def _axis_labels(convention: str, batch_like: bool) -> tuple[str, str]:
    if convention == "attend" and not batch_like:
        return "key position", "query position"
    return "position", "example"


@styled
def plot_mask(mask, convention: str, row_labels: Sequence[str] | None = None,
              col_labels: Sequence[str] | None = None, title: str | None = None, *,
              xlabel: str | None = None, ylabel: str | None = None, annotate: bool | None = None,
              ax=None):
    """A mask as a grid of cells: blue = may attend / kept, light grey (hatched) = blocked / padding.

    The colours mean the same thing whatever the convention; the legend says what True (or 1)
    means in this mask, and each cell shows its raw value (T/F, or 1/0 for ``"keep"``) when the
    grid is small enough. To draw several masks side by side in one figure, use :func:`plot_masks`.

    Args:
        mask: ``(T_q, T_k)`` (an ``attn_mask``) or ``(B, T)`` (a batch of key padding masks).
            Singleton axes are dropped, so the ``(B, 1, 1, T)`` of ``key_padding_to_attn_mask``
            works too.
        convention: ``"attend"`` (bool, True = may attend: ``F.scaled_dot_product_attention``'s
            ``attn_mask``), ``"pad"`` (bool, True = padding: torch's ``key_padding_mask``) or
            ``"keep"`` (0/1, 1 = keep: Hugging Face's ``attention_mask``).
        row_labels, col_labels: tick labels (tokens, or "example 0", ...).
        xlabel, ylabel: axis labels (defaults from the convention and shape).
        annotate: write T/F in the cells (default: when the grid has at most 24 columns).

    Returns:
        ``(fig, ax)``.
    """
    raw, open_, batch_like = _mask_grid(mask, convention)
    n_rows, n_cols = raw.shape
    rows = labels("row_labels", row_labels, n_rows)
    cols = labels("col_labels", col_labels, n_cols)
    default_x, default_y = _axis_labels(convention, batch_like)
    cell = cell_inches(max(n_rows, n_cols), lo=0.12, hi=0.42)
    if ax is None:
        width = n_cols * cell + label_inches(rows) + 0.9
        height = n_rows * cell + label_inches(cols) * 0.87 + 1.3
        fig, ax = plt.subplots(figsize=(max(width, 3.6), max(height, 2.4)), layout="constrained")
    else:
        fig = ax.figure
    _mask_panel(ax, raw, open_, convention, rows, cols, cell, annotate)
    ax.set_xlabel(xlabel or default_x)
    ax.set_ylabel(ylabel or default_y)
    if title:
        ax.set_title(title)
    describe(ax, mask_sentence(title, open_, rows))
    fig.legend(handles=_legend_handles(convention), loc="outside lower center",
               ncols=1 if n_cols * cell < 4.5 else 2, frameon=False, handlelength=1.6)
    return fig, ax


@styled
def plot_masks(masks: Sequence, conventions, titles: Sequence[str] | None = None, *,
               row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None,
               ncols: int | None = None):
    """Several masks in one figure, side by side: each with its own legend underneath when their
    conventions differ, one legend for the figure when they share one.

    For comparing conventions (torch's key_padding_mask, SDPA's attn_mask, Hugging Face's
    attention_mask) or masks (bidirectional against causal, and how they combine) at a glance.

    Args:
        masks: a list of masks, each as :func:`plot_mask` takes them.
        conventions: one convention for all, or a list of one per mask.
        titles: one title per mask.
        row_labels, col_labels: shared tick labels.
        ncols: panels per row (default: all in one row, at most 3).

    Returns:
        ``(fig, axes)`` with ``axes`` a 1-D array, one Axes per mask.
    """
    if isinstance(masks, (torch.Tensor, np.ndarray)) or not isinstance(masks, Sequence) or not masks:
        raise CourseTypeError(f"masks: expected a non-empty list of masks, got {type(masks).__name__}")
    conventions = [conventions] * len(masks) if isinstance(conventions, str) else list(conventions)
    titles = [None] * len(masks) if titles is None else [str(t) for t in titles]
    for name, values in (("conventions", conventions), ("titles", titles)):
        if len(values) != len(masks):
            raise CourseValueError(f"{name}: expected {len(masks)} (one per mask), got {len(values)}")
    grids = [_mask_grid(m, c) for m, c in zip(masks, conventions)]
    ncols = ncols or min(len(masks), 3)
    nrows = math.ceil(len(masks) / ncols)
    side = max(max(g[0].shape) for g in grids)
    n_rows_max = max(g[0].shape[0] for g in grids)
    cell = cell_inches(side * ncols, lo=0.12, hi=0.36, span=6.0)
    panel_w = min(max(side * cell + label_inches(row_labels and list(row_labels)) + 0.4, 2.7), 9.0 / ncols)
    below = 0.42 + (0.87 * label_inches(list(col_labels)) if col_labels else 0.1)   # tick labels + x label
    shared = len(set(conventions)) == 1
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                             figsize=(ncols * panel_w, nrows * (n_rows_max * cell + below + (0.75 if shared else 1.0))
                                      + (0.45 if shared else 0.0)))
    for k, ((raw, open_, batch_like), convention, title) in enumerate(zip(grids, conventions, titles)):
        ax = axes.flat[k]
        rows = labels("row_labels", row_labels, raw.shape[0])
        cols = labels("col_labels", col_labels, raw.shape[1])
        _mask_panel(ax, raw, open_, convention, rows, cols, cell, None)
        xlabel, ylabel = _axis_labels(convention, batch_like)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel if k % ncols == 0 else "")
        if title:
            ax.set_title(textwrap.fill(title, max(12, int(panel_w * 8))), fontsize=10)
        describe(ax, mask_sentence(title, open_, rows))
        if shared:
            continue
        ax.legend(handles=_legend_handles(convention), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  bbox_transform=ax.transAxes + mtransforms.ScaledTranslation(0, -below, fig.dpi_scale_trans),
                  ncols=1, frameon=False, handlelength=1.4, fontsize=9, borderaxespad=0.0)
    for k in range(len(masks), nrows * ncols):
        axes.flat[k].remove()
    if shared:
        fig.legend(handles=_legend_handles(conventions[0]), loc="outside lower center", ncols=2, frameon=False,
                   handlelength=1.4, fontsize=9)
    return fig, np.array(list(axes.flat[:len(masks)]), dtype=object)


def _batch_grid(tokens, pad_token: str):
    if isinstance(tokens, (torch.Tensor, np.ndarray)):
        ids = to_numpy("tokens", tokens)
        if ids.ndim != 2:
            raise CourseValueError(f"tokens: expected (B, T) token ids, got {shape_text(ids)}")
        return [[str(int(v)) for v in row] for row in ids], np.zeros(ids.shape, dtype=bool)
    if isinstance(tokens, Sequence) and tokens and all(
            isinstance(r, Sequence) and not isinstance(r, str) for r in tokens):
        width = max(len(r) for r in tokens)
        grid = [[str(t) for t in r] + [pad_token] * (width - len(r)) for r in tokens]
        return grid, np.array([[j >= len(r) for j in range(width)] for r in tokens], dtype=bool)
    raise CourseTypeError(
        f"tokens: expected a list of token lists or a (B, T) tensor of ids, got {type(tokens).__name__}"
    )


def _fit_token(token: str, fit: int) -> str:
    """A token that fits ``fit`` characters per line: as it is, split over two lines with a
    hyphen, or (longer still) cut with an ellipsis."""
    if len(token) <= fit:
        return token
    head, tail = token[:fit - 1] + "-", token[fit - 1:]
    return f"{head}\n{tail if len(tail) <= fit else tail[:fit - 1] + '…'}"


def _mark_padding_cells(ax, pad: np.ndarray) -> None:
    for r in range(pad.shape[0]):
        for s, n in runs(pad[r]):
            ax.add_patch(mpatches.Rectangle((s - 0.5, r - 0.5), n, 1, fill=False, hatch="///",
                                            edgecolor="0.7", linewidth=0.0, zorder=3, gid="padding"))


@styled
def plot_batch(tokens, key_padding_mask=None, pad_token: str = "<pad>", *, title: str | None = None,
               row_labels: Sequence[str] | None = None, ax=None):
    """A padded batch as a grid: one row per example, one cell per position, the token written in
    it; padded cells grey and hatched.

    Args:
        tokens: a list of ``B`` lists of str (ragged lists are padded with ``pad_token``), or a
            ``(B, T)`` tensor of token ids.
        key_padding_mask: bool ``(B, T)``, True = padding (default: where the token is
            ``pad_token``, or ragged positions).
        row_labels: ``B`` row labels (default "example 0", ...).

    Returns:
        ``(fig, ax)``.
    """
    grid, ragged = _batch_grid(tokens, pad_token)
    n_rows, n_cols = len(grid), len(grid[0])
    pad = padding_mask("key_padding_mask", key_padding_mask, n_rows, n_cols)
    if pad is None:
        pad = ragged | np.array([[t == pad_token for t in r] for r in grid], dtype=bool)
    rows = labels("row_labels", row_labels, n_rows) or [f"example {i}" for i in range(n_rows)]
    longest = max(len(t) for r in grid for t in r)
    cell_w = float(np.clip(0.12 + 0.085 * longest, 0.5, 1.4))
    cell_w = min(cell_w, max((MAX_WIDTH - label_inches(rows) - 0.5) / n_cols, 0.3))   # fits a notebook
    if ax is None:
        fig, ax = plt.subplots(figsize=(n_cols * cell_w + label_inches(rows) + 0.5, n_rows * 0.42 + 1.3),
                               layout="constrained")
    else:
        fig = ax.figure
    ax.imshow(np.where(pad, 0.0, 1.0), cmap=mcolors.ListedColormap([BLOCKED_COLOR, TOKEN_FACE]),
              vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    _mark_padding_cells(ax, pad)
    fs = float(np.clip(cell_w * 72 / max(longest, 1) * 1.45, 7.5, 10))
    fit = max(2, int((cell_w - 0.06) / (0.6 * fs / 72)))                  # characters per line
    for r in range(n_rows):
        for c in range(n_cols):
            ax.text(c, r, _fit_token(grid[r][c], fit), ha="center", va="center", fontsize=fs, zorder=4,
                    color="0.45" if pad[r, c] else "black", fontstyle="italic" if pad[r, c] else "normal")
    cell_grid(ax, n_rows, n_cols, linewidth=2.0)
    ax.tick_params(which="both", length=0)
    ax.set_xticks(range(n_cols), [str(i) for i in range(n_cols)])
    ax.set_yticks(range(n_rows), rows)
    ax.set_xlabel("position")
    ax.spines[:].set_visible(False)
    if title:
        ax.set_title(title)
    describe(ax, f"{title or 'A padded batch'}: {n_rows} examples padded to {n_cols} positions; " + "; ".join(
        f"{rows[r]}: {' '.join(t for t, p in zip(grid[r], pad[r]) if not p)} ({int((~pad[r]).sum())} tokens, "
        f"{int(pad[r].sum())} padding)" for r in range(n_rows)))
    fig.legend(handles=[mpatches.Patch(facecolor=TOKEN_FACE, label="token  (key_padding_mask False)"),
                        mpatches.Patch(facecolor=BLOCKED_COLOR, hatch="///", edgecolor=PAD_EDGE,
                                       label="padding  (key_padding_mask True)")],
               loc="outside lower center", ncols=2 if fig.get_size_inches()[0] >= 6.5 else 1, frameon=False)
    return fig, ax
