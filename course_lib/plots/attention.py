"""Attention maps: one map, a row of heads, or a grid of layers x heads.

Rows are queries (the positions that attend), columns are keys (the positions attended to); each
row of a softmax attention map sums to 1. Padded positions get a light grey band with faint
hatching and grey italic labels; ``max_padding=`` drops padded positions beyond the first few, so a
short sentence in a long batch is not a map of hatching.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import torch

from ..errors import CourseValueError, check_int
from ._cells import annotate_cells, colorbar, frame, imshow, mark_padding, set_ticks
from ._inputs import indices, labels, padding_mask, pick_example, shape_text, to_numpy
from .describe import MAX_MAPS_IN_FULL, attention_sentence, describe
from .style import WEIGHTS_CMAP, balanced_columns, cell_inches, heatmap_size, label_inches, styled

__all__ = ["plot_attention"]


def attention_input(weights, example):
    """``weights`` as one NumPy array: a list of per-layer tensors is stacked; with ``example=b``
    the batch axis is indexed."""
    if isinstance(weights, (list, tuple)) and weights and isinstance(weights[0], (torch.Tensor, np.ndarray)):
        arrs = [to_numpy(f"weights[{i}]", w) for i, w in enumerate(weights)]
        if len({a.shape for a in arrs}) != 1:
            raise CourseValueError(
                f"weights: expected one tensor per layer, all of the same shape, got shapes "
                f"{[tuple(a.shape) for a in arrs]}"
            )
        arr, batched, axis = np.stack(arrs), 5, 1              # (L, H, Tq, Tk) or (L, B, H, Tq, Tk)
        what = f"per-layer tensors (B, H, T_q, T_k), got shape {tuple(arrs[0].shape)}"
    else:
        arr, batched, axis = to_numpy("weights", weights), 4, 0
        what = f"(B, H, T_q, T_k), got {shape_text(arr)}"
    if example is None:
        return arr
    if arr.ndim != batched:
        raise CourseValueError(f"weights: with example=, expected {what}")
    b = indices("example", example, arr.shape[axis])[0]
    return arr[:, b] if axis == 1 else arr[b]


@dataclass
class _Maps:
    """What to draw: the maps, their names, the grid shape and its kind."""
    maps: list
    names: list
    shape: tuple
    kind: str               # "single", "heads", "layers" or "grid"
    layer_idx: list


def _select(arr: np.ndarray, layers, heads, max_cols: int) -> _Maps:
    if arr.ndim not in (2, 3, 4):
        raise CourseValueError(
            f"weights: expected (T_q, T_k), (H, T_q, T_k) or (L, H, T_q, T_k), got {shape_text(arr)}"
        )
    kind = {2: "single", 3: "heads", 4: "grid"}[arr.ndim]
    if arr.ndim == 2 and (layers is not None or heads is not None):
        raise CourseValueError("heads: a single (T_q, T_k) map has no heads or layers to choose")
    if arr.ndim == 3 and layers is not None:
        raise CourseValueError(f"layers: weights of shape {tuple(arr.shape)} have no layer axis")
    arr = arr.reshape((1,) * (4 - arr.ndim) + arr.shape)
    n_layers, n_heads = arr.shape[:2]
    layer_idx, head_idx = indices("layers", layers, n_layers), indices("heads", heads, n_heads)
    if isinstance(layers, (int, np.integer)) and kind == "grid":
        kind = "heads"                                         # one layer: a row of heads
    if isinstance(heads, (int, np.integer)):
        kind = "layers" if kind == "grid" else "single"        # one head of every chosen layer
    sel = arr[np.ix_(layer_idx, head_idx)]                     # (l, h, Tq, Tk)
    prefix = f"layer {layer_idx[0]} · " if n_layers > 1 else ""
    if kind == "single":
        name = f"{prefix}head {head_idx[0]}" if n_heads > 1 or n_layers > 1 else None
        return _Maps([sel[0, 0]], [name], (1, 1), kind, layer_idx)
    if kind == "grid":
        maps = [sel[i, j] for i in range(len(layer_idx)) for j in range(len(head_idx))]
        names = [f"head {h}" for _ in layer_idx for h in head_idx]
        return _Maps(maps, names, (len(layer_idx), len(head_idx)), kind, layer_idx)
    if kind == "heads":
        maps, names = list(sel[0]), [f"{prefix}head {h}" for h in head_idx]
    else:
        maps, names = list(sel[:, 0]), [f"layer {i} · head {head_idx[0]}" for i in layer_idx]
    ncols = balanced_columns(len(maps), max_cols)
    return _Maps(maps, names, (math.ceil(len(maps) / ncols), ncols), kind, layer_idx)


def _crop_padding(maps: list, pads: tuple, max_padding: int | None):
    """Keep every real position and the first ``max_padding`` padded ones (per axis); returns the
    cropped maps, the kept (row, column) index lists and how many padded keys were dropped."""
    query_pad, key_pad = pads
    t_q, t_k = maps[0].shape

    def kept(pad, n):
        if pad is None or max_padding is None:
            return list(range(n))
        seen, keep = 0, []
        for i, p in enumerate(pad):
            seen += bool(p)
            if not p or seen <= max_padding:
                keep.append(i)
        return keep

    rows, cols = kept(query_pad, t_q), kept(key_pad, t_k)
    return [m[np.ix_(rows, cols)] for m in maps], rows, cols, t_k - len(cols)


def _panel(ax, data, queries, keys, query_pad, key_pad, style: dict, cell, show_x=True, show_y=True,
           rotation=60.0):
    im = imshow(ax, data, style["cmap"], style["vmin"], style["vmax"])
    mark_padding(ax, key_pad, query_pad, data.shape[0], data.shape[1])
    set_ticks(ax, keys, data.shape[1], "x", key_pad, cell, rotation=rotation, show=show_x)
    set_ticks(ax, queries, data.shape[0], "y", query_pad, cell, show=show_y)
    if style["annotate"]:
        annotate_cells(ax, data, im, ".2f", cell, skip_rows=query_pad, skip_cols=key_pad)
    frame(ax)
    return im


def _key_label(dropped: int) -> str:
    return "key (attended to)" + (f";  {dropped} more padded keys not shown" if dropped else "")


def _single(sel: _Maps, lab: dict, style: dict, title, ax):
    t_q, t_k = sel.maps[0].shape
    cell = cell_inches(max(t_q, t_k), lo=0.12, hi=0.5 if style["annotate"] else 0.42)
    if style["annotate"]:
        cell = max(cell, 0.42)
    if ax is None:
        size = heatmap_size(t_q, t_k, cell, lab["queries"], lab["keys"])
        fig, ax = plt.subplots(figsize=size, layout="constrained")
    else:
        fig = ax.figure
    im = _panel(ax, sel.maps[0], lab["queries"], lab["keys"], lab["query_pad"], lab["key_pad"], style, cell)
    if title:
        ax.set_title(title)
    ax.set_xlabel(_key_label(lab["dropped"]))
    ax.set_ylabel("query (attending)")
    colorbar(fig, im, ax, "attention weight", aspect=18, pad=0.02)
    return fig, ax


def _grid(sel: _Maps, lab: dict, style: dict, titles):
    nrows, ncols = sel.shape
    t_q, t_k = sel.maps[0].shape
    side = max(t_q, t_k)
    panel = min(float(np.clip(14.5 / ncols, 1.3, 3.2)), float(np.clip(0.3 * side, 1.6, 3.2)))
    cell = panel / side
    if style["annotate"]:                      # room for the numbers, within ~8.5 in of maps
        cell = max(cell, min(0.42, 8.5 / (ncols * side)))
    panel = cell * side
    show_labels = cell * 72 >= 5.0
    extra_w = (label_inches(lab["queries"]) if show_labels else 0.3) + 1.4
    extra_h = (label_inches(lab["keys"]) * 0.87 if show_labels else 0.3) + 0.9
    title_h = 0.35 if sel.kind != "grid" else 0.1
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                             figsize=(ncols * panel * t_k / side + extra_w + 0.1 * ncols,
                                      nrows * (panel * t_q / side + title_h) + extra_h + 0.3))
    for k, data in enumerate(sel.maps):
        r, c = divmod(k, ncols)
        a = axes[r, c]
        im = _panel(a, data, lab["queries"], lab["keys"], lab["query_pad"], lab["key_pad"], style, cell,
                    show_x=show_labels and k + ncols >= len(sel.maps), show_y=show_labels and c == 0,
                    rotation=90.0)
        if sel.kind != "grid" or r == 0 or titles is not None:  # a grid names its heads once, on top
            a.set_title(sel.names[k], fontsize=10 if panel >= 1.8 else 9)
        if sel.kind == "grid" and c == 0:
            a.set_ylabel(f"layer {sel.layer_idx[r]}", fontsize=10, fontweight="bold")
    for k in range(len(sel.maps), nrows * ncols):
        axes.flat[k].remove()
    key_label = fig.supxlabel(_key_label(lab["dropped"]), fontsize=10)
    fig.supylabel("query (attending)", fontsize=10)
    if isinstance(titles, str):
        fig.suptitle(titles)
    used = [axes.flat[k] for k in range(len(sel.maps))]
    colorbar(fig, im, used, "attention weight", aspect=25, pad=0.01)
    _close_band(fig, used, key_label)
    return fig, (axes if sel.kind == "grid" else np.array(used, dtype=object))


def _close_band(fig, panels, label, gap_in: float = 0.08, rounds: int = 3) -> None:
    """Take out the empty band that constrained layout leaves between the maps' tick labels and the
    shared key label when the maps' aspect, not the figure's height, sets their size: the figure
    loses that much height (the maps keep theirs)."""
    for _ in range(rounds):
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        lowest = min(a.get_tightbbox(renderer).y0 for a in panels)
        slack = (lowest - label.get_window_extent(renderer).y1) / fig.dpi - gap_in
        if slack < 0.02:
            return
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height - slack)


def _resolve_labels(sel: _Maps, tokens, query_tokens, key_padding_mask, query_padding_mask, example,
                    max_padding) -> dict:
    t_q, t_k = sel.maps[0].shape
    key_pad = padding_mask("key_padding_mask", pick_example(key_padding_mask, example), None, t_k)
    query_pad = padding_mask("query_padding_mask", query_padding_mask, None, t_q)
    if query_pad is None and key_pad is not None and t_q == t_k:
        query_pad = key_pad
    keys = labels("tokens", pick_example(tokens, example), t_k, key_pad)
    query_tokens = pick_example(query_tokens, example)
    if query_tokens is None and keys is not None and t_q == t_k:
        queries = keys
    else:
        queries = labels("query_tokens", query_tokens, t_q, query_pad)
    sel.maps, rows, cols, dropped = _crop_padding(sel.maps, (query_pad, key_pad), max_padding)

    def take(values, idx):
        return None if values is None else [values[i] for i in idx]

    return {"keys": take(keys, cols), "queries": take(queries, rows), "dropped": dropped,
            "key_pad": None if key_pad is None else key_pad[cols],
            "query_pad": None if query_pad is None else query_pad[rows]}


@styled
def plot_attention(weights, tokens: Sequence[str] | None = None, query_tokens: Sequence[str] | None = None,
                   key_padding_mask=None, query_padding_mask=None, *, layers=None, heads=None,
                   example: int | None = None, titles=None, annotate: bool = False,
                   vmin: float | None = 0.0, vmax: float | None = None, cmap=WEIGHTS_CMAP,
                   max_cols: int = 6, max_padding: int | None = None, ax=None):
    """Attention weights as heatmaps: one map, a grid of heads, or a grid layers x heads.

    Args:
        weights: ``(T_q, T_k)``, ``(H, T_q, T_k)`` or ``(L, H, T_q, T_k)``, or a list of maps (a list
            of ``(T_q, T_k)`` maps draws them side by side, named by ``titles``), or the list of
            per-layer ``(H, T_q, T_k)`` tensors; with ``example=b``, ``(B, H, T_q, T_k)`` or the
            list of per-layer ``(B, H, T_q, T_k)`` tensors that ``Encoder(..., return_attention=True)``
            returns, of which example ``b`` is drawn.
        tokens: ``T_k`` key labels (or, with ``example=``, one list per example). A list naming
            only the unpadded positions is accepted; padded ones are labelled ``"<pad>"``.
        query_tokens: ``T_q`` query labels; default ``tokens`` when ``T_q == T_k``.
        key_padding_mask: bool ``(T_k,)`` (or ``(B, T_k)`` with ``example=``), True = padding:
            those columns are marked.
        query_padding_mask: bool ``(T_q,)``, True = padding: those rows are marked. Default: the
            key padding mask when the map is square (self-attention).
        layers, heads: an int or a list of ints choosing what to draw (default all). An int
            drops that axis: ``layers=2, heads=5`` draws one map.
        titles: a str (the figure's title) or a list of str, one per map.
        annotate: write each weight in its cell (for small maps).
        vmin, vmax: colour limits, shared by all maps (default 0 .. the largest weight drawn).
        cmap: the colormap (default ``"viridis"``).
        max_cols: a grid of heads wraps after this many columns.
        max_padding: draw at most this many padded keys (and padded query rows); the others are
            left out and the axis label says how many. Default None: all.
        ax: draw a single map into this Axes.

    Returns:
        ``(fig, axes)``: one Axes for a single map; for heads, an array ``(n_heads,)`` in head
        order; for layers x heads, an array ``(n_layers, n_heads)``.
    """
    check_int("max_padding", max_padding, 0, optional=True)
    sel = _select(attention_input(weights, example), layers, heads, max_cols)
    if titles is not None and not isinstance(titles, str):
        titles = [str(t) for t in titles]
        if len(titles) != len(sel.maps):
            raise CourseValueError(f"titles: expected {len(sel.maps)} titles (one per map), got {len(titles)}")
        sel.names = titles
    lab = _resolve_labels(sel, tokens, query_tokens, key_padding_mask, query_padding_mask, example, max_padding)
    if vmax is None:
        finite = np.concatenate([m[np.isfinite(m)] for m in sel.maps])
        vmax = float(finite.max()) if finite.size else 1.0
        vmax = vmax if vmax > (vmin or 0.0) else (vmin or 0.0) + 1.0
    style = {"cmap": cmap, "vmin": vmin, "vmax": vmax, "annotate": annotate}
    if len(sel.maps) == 1:
        name = titles if isinstance(titles, str) else sel.names[0]
        fig, ax = _single(sel, lab, style, name, ax)
        describe(ax, attention_sentence(name, sel.maps[0], lab["queries"], lab["keys"], lab["query_pad"]))
        return fig, ax
    if ax is not None:
        raise CourseValueError(
            f"ax: a single Axes can hold one map, but {len(sel.maps)} were asked for (choose heads=, layers=)"
        )
    fig, axes = _grid(sel, lab, style, titles)
    full = len(sel.maps) <= MAX_MAPS_IN_FULL         # a grid of many maps: one summary each
    for panel, name, data in zip(np.ravel(axes), sel.names, sel.maps):
        describe(panel, attention_sentence(name, data, lab["queries"], lab["keys"], lab["query_pad"], full))
    return fig, axes
