"""Figures for the course: attention maps, positional encodings, masks, curves, the encoder diagram.

Every helper is pure: it takes tensors (CPU or CUDA, any float dtype; NumPy arrays work too) and
token labels, draws a new figure (or into ``ax=`` when given) and returns ``(fig, axes)``. It
prints nothing, never calls ``plt.show()`` and leaves matplotlib's global settings alone (the
course style is set by :func:`course_style` and restored afterwards). In a notebook the figure appears when the
cell ends (the inline backend shows open pyplot figures); end the cell with ``plt.show()`` or an
assignment (``fig, ax = ...``) so that no ``<Figure size ...>`` text is printed.

Colours are the same everywhere:

- weights and other non-negative values: ``"viridis"`` (dark = small, yellow = large);
- signed values (positional encodings, similarities, dot products): ``"RdBu_r"`` centred at 0
  (blue negative, red positive);
- padding: a light grey band with grey hatching over the padded key columns and query rows, and
  grey italic tick labels.

Masks follow torch's conventions (see ``course_lib.masks``): a ``key_padding_mask`` is bool with
True = padding (ignored), as in ``nn.MultiheadAttention``; an ``attn_mask`` is bool with True = may
attend, as in ``F.scaled_dot_product_attention``; Hugging Face's ``attention_mask`` uses 1 = keep.
"""

from __future__ import annotations

import contextlib
import functools
import math
from typing import Callable, Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib import colors as mcolors
from matplotlib import patches as mpatches
from matplotlib import transforms as mtransforms

from .errors import CourseTypeError, CourseValueError

__all__ = [
    "course_style",
    "plot_attention",
    "plot_heatmap",
    "plot_positional_encoding",
    "plot_pe_curves",
    "plot_mask",
    "plot_batch",
    "plot_curves",
    "plot_probabilities",
    "draw_encoder_diagram",
]

WEIGHTS_CMAP = "viridis"
SIGNED_CMAP = "RdBu_r"
PAD_FACE = "#dcdcdc"                  # light grey band over padded cells (opaque)
PAD_EDGE = "0.45"                     # its hatching
PAD_LABEL = "0.55"                    # grey tick labels of padded tokens
ATTEND_COLOR = "#3b8bc2"              # mask pictures: may attend / kept
BLOCKED_COLOR = "#e6e6e6"             #                blocked / padding

_STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "figure.titlesize": 12,
    "figure.titleweight": "bold",
    "hatch.color": PAD_EDGE,
    "hatch.linewidth": 0.8,
    "image.interpolation": "nearest",
}


@contextlib.contextmanager
def course_style():
    """The course's plot style, set for the ``with`` block and then restored.

    Unlike ``plt.rc_context`` this saves and restores only the keys it sets: ``rc_context`` also
    restores ``backend`` and ``interactive``, so a first figure drawn inside it would undo the
    inline backend's set-up and later figures would no longer show at the end of a cell.
    """
    saved = {key: matplotlib.rcParams[key] for key in _STYLE}
    try:
        matplotlib.rcParams.update(_STYLE)
        yield
    finally:
        matplotlib.rcParams.update(saved)


def _styled(func: Callable) -> Callable:
    """Run a plot helper inside :func:`course_style` (global settings are left as they were)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with course_style():
            return func(*args, **kwargs)

    return wrapper


# --------------------------------------------------------------------------------------------
# input checks and conversions
# --------------------------------------------------------------------------------------------

def _to_numpy(name: str, x, *, allow_bool: bool = False) -> np.ndarray:
    """A float64 (or bool) NumPy copy of a tensor / array / nested list, detached and on the CPU."""
    if isinstance(x, torch.Tensor):
        x = x.detach().to("cpu")
        if x.dtype == torch.bool:
            arr = x.numpy()
        elif x.is_complex():
            raise CourseTypeError(f"{name}: expected a real tensor, got {x.dtype}")
        else:
            arr = x.to(torch.float64).numpy()
    elif isinstance(x, (np.ndarray, list, tuple)):
        try:
            arr = np.asarray(x)
        except ValueError as exc:  # ragged lists
            raise CourseValueError(f"{name}: expected a rectangular array, got a ragged list") from exc
        if arr.dtype != bool and not np.issubdtype(arr.dtype, np.number):
            raise CourseTypeError(f"{name}: expected numbers, got an array of {arr.dtype}")
        if arr.dtype != bool:
            arr = arr.astype(np.float64)
    else:
        raise CourseTypeError(f"{name}: expected a torch.Tensor or a NumPy array, got {type(x).__name__}")
    if arr.dtype == bool and not allow_bool:
        arr = arr.astype(np.float64)
    return arr


def _describe(arr: np.ndarray) -> str:
    return f"shape {tuple(arr.shape)}"


def _bool_vector(name: str, mask, length: int) -> np.ndarray | None:
    """A bool (length,) mask, True = padding; None stays None."""
    if mask is None:
        return None
    if isinstance(mask, torch.Tensor) and mask.dtype != torch.bool:
        raise CourseTypeError(
            f"{name}: expected bool of shape ({length},) with True = padding, got {mask.dtype} of shape "
            f"{tuple(mask.shape)} (convert a Hugging Face 1 = keep mask with "
            "course_lib.hf_to_key_padding_mask)"
        )
    arr = _to_numpy(name, mask, allow_bool=True)
    if arr.dtype != bool:
        raise CourseTypeError(f"{name}: expected bool with True = padding, got {arr.dtype}")
    if arr.shape != (length,):
        raise CourseValueError(f"{name}: expected bool of shape ({length},), got {_describe(arr)}")
    return arr


def _labels(name: str, labels, length: int, pad: np.ndarray | None = None,
            pad_token: str = "<pad>") -> list[str] | None:
    """Tick labels: one str per position. A list shorter than ``length`` is accepted when it names
    exactly the unpadded positions (as ``load_minilm``'s tokenizer returns them); the padded
    positions are then labelled ``pad_token``."""
    if labels is None:
        return None
    if isinstance(labels, str) or not isinstance(labels, Sequence):
        raise CourseTypeError(f"{name}: expected a list of str, got {type(labels).__name__}")
    labels = [str(t) for t in labels]
    if len(labels) == length:
        return labels
    if pad is not None and len(labels) == int((~pad).sum()):
        it = iter(labels)
        return [pad_token if p else next(it) for p in pad]
    raise CourseValueError(f"{name}: expected {length} labels (one per position), got {len(labels)}")


def _indices(name: str, value, size: int) -> list[int]:
    """None -> all of range(size); an int or a sequence of ints -> that list, range-checked."""
    if value is None:
        return list(range(size))
    items = [value] if isinstance(value, (int, np.integer)) else list(value)
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise CourseTypeError(f"{name}: expected an int or a list of ints, got {type(v).__name__} {v!r}")
        if not -size <= v < size:
            raise CourseValueError(f"{name}: expected indices in [0, {size}), got {v}")
        out.append(int(v) % size)
    if not out:
        raise CourseValueError(f"{name}: expected at least one index, got an empty list")
    return out


# --------------------------------------------------------------------------------------------
# drawing primitives
# --------------------------------------------------------------------------------------------

def _text_color(rgba) -> str:
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of each run of True in a 1-D bool array."""
    runs, start = [], None
    for i, f in enumerate(list(flags) + [False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            runs.append((start, i - start))
            start = None
    return runs


def _mark_padding(ax, col_pad: np.ndarray | None, row_pad: np.ndarray | None, n_rows: int, n_cols: int) -> None:
    """Grey hatched bands over padded columns and rows; each patch has gid 'padding'."""
    bands = []
    if col_pad is not None:
        bands += [(s - 0.5, -0.5, n, n_rows) for s, n in _runs(col_pad)]
    if row_pad is not None:
        bands += [(-0.5, s - 0.5, n_cols, n) for s, n in _runs(row_pad)]
    for x, y, w, h in bands:
        ax.add_patch(mpatches.Rectangle((x, y), w, h, facecolor=PAD_FACE, edgecolor=PAD_EDGE,
                                        hatch="///", linewidth=0.0, zorder=3, gid="padding"))


def _tick_fontsize(cell_inches: float, base: float = 9.0) -> float:
    """A font size that fits one label per cell (72 points per inch)."""
    return float(np.clip(cell_inches * 72 * 0.75, 5.0, base))


def _set_ticks(ax, labels: list[str] | None, n: int, axis: str, pad: np.ndarray | None,
               cell_inches: float, rotation: float = 60.0, show: bool = True) -> None:
    """Token labels on one axis (every position when they fit, else every k-th); padded ones grey."""
    if not show:
        getattr(ax, f"set_{axis}ticks")([])
        return
    fontsize = _tick_fontsize(cell_inches)
    step = max(1, math.ceil(6.0 / (cell_inches * 72)))  # keep at least ~6 pt per label
    if labels is None:
        step = max(step, math.ceil(n / 12))
        ticks = list(range(0, n, step))
        texts = [str(i) for i in ticks]
    else:
        ticks = list(range(0, n, step))
        texts = [labels[i] for i in ticks]
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


def _annotate_cells(ax, data: np.ndarray, im, fmt: str, cell_inches: float,
                    skip_rows: np.ndarray | None = None, skip_cols: np.ndarray | None = None) -> None:
    fontsize = float(np.clip(cell_inches * 72 * 0.28, 5.0, 9.0))
    for i in range(data.shape[0]):
        if skip_rows is not None and skip_rows[i]:
            continue
        for j in range(data.shape[1]):
            if skip_cols is not None and skip_cols[j]:
                continue
            v = data[i, j]
            if not np.isfinite(v):
                continue
            ax.text(j, i, format(v, fmt), ha="center", va="center", fontsize=fontsize,
                    color=_text_color(im.cmap(im.norm(v))), zorder=2)


def _cell_inches(n: int, lo: float = 0.14, hi: float = 0.42, span: float = 6.5) -> float:
    return float(np.clip(span / max(n, 1), lo, hi))


def _label_inches(labels: list[str] | None, fontsize: float = 9.0) -> float:
    if not labels:
        return 0.3
    return 0.15 + 0.62 * fontsize / 72 * max(len(s) for s in labels)


def _imshow(ax, data: np.ndarray, cmap, vmin, vmax):
    cmap = plt.get_cmap(cmap).with_extremes(bad="white")
    return ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=vmin, vmax=vmax, aspect="equal",
                     interpolation="nearest")


def _frame(ax) -> None:
    for spine in ax.spines.values():
        spine.set_visible(True)
        spine.set_linewidth(0.6)
        spine.set_color("0.35")


# --------------------------------------------------------------------------------------------
# attention
# --------------------------------------------------------------------------------------------

def _attention_input(weights, example):
    if isinstance(weights, (list, tuple)) and weights and isinstance(weights[0], (torch.Tensor, np.ndarray)):
        arrs = [_to_numpy(f"weights[{i}]", w) for i, w in enumerate(weights)]
        if len({a.shape for a in arrs}) != 1:
            raise CourseValueError(
                f"weights: expected one tensor per layer, all of the same shape, got shapes "
                f"{[tuple(a.shape) for a in arrs]}"
            )
        arr = np.stack(arrs)                                   # (L, H, Tq, Tk) or (L, B, H, Tq, Tk)
        if example is not None:
            if arr.ndim != 5:
                raise CourseValueError(
                    f"weights: with example=, expected per-layer tensors (B, H, T_q, T_k), got shape "
                    f"{tuple(arrs[0].shape)}"
                )
            b = _indices("example", example, arr.shape[1])[0]
            arr = arr[:, b]                                    # (L, H, Tq, Tk)
        return arr
    arr = _to_numpy("weights", weights)
    if example is not None:
        if arr.ndim != 4:
            raise CourseValueError(
                f"weights: with example=, expected (B, H, T_q, T_k), got {_describe(arr)}"
            )
        b = _indices("example", example, arr.shape[0])[0]
        arr = arr[b]                                           # (H, Tq, Tk)
    return arr


def _pick_example(name: str, value, example):
    """With ``example=``, a (B, T) mask or a list of B label lists gives its example-th row."""
    if value is None or example is None:
        return value
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return value[example] if value.ndim == 2 else value
    if isinstance(value, Sequence) and value and not isinstance(value[0], str) and isinstance(value[0], Sequence):
        return value[example]
    return value


@_styled
def plot_attention(weights, tokens: Sequence[str] | None = None, query_tokens: Sequence[str] | None = None,
                   key_padding_mask=None, query_padding_mask=None, *, layers=None, heads=None,
                   example: int | None = None, titles=None, annotate: bool = False,
                   vmin: float | None = 0.0, vmax: float | None = None, cmap=WEIGHTS_CMAP,
                   max_cols: int = 6, ax=None):
    """Attention weights as heatmaps: one map, a grid of heads, or a grid layers x heads.

    Rows are queries (the positions that attend), columns are keys (the positions attended to);
    each row of a softmax attention map sums to 1. Padded positions get a grey hatched band and
    grey italic labels.

    Args:
        weights: ``(T_q, T_k)``, ``(H, T_q, T_k)`` or ``(L, H, T_q, T_k)``, or the list of per-layer
            ``(H, T_q, T_k)`` tensors; with ``example=b``, ``(B, H, T_q, T_k)`` or the list of
            per-layer ``(B, H, T_q, T_k)`` tensors that ``Encoder(..., return_attention=True)``
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
        ax: draw a single map into this Axes.

    Returns:
        ``(fig, axes)``: one Axes for a single map; for heads, an array ``(n_heads,)`` in head
        order; for layers x heads, an array ``(n_layers, n_heads)``.
    """
    arr = _attention_input(weights, example)
    if arr.ndim not in (2, 3, 4):
        raise CourseValueError(
            f"weights: expected (T_q, T_k), (H, T_q, T_k) or (L, H, T_q, T_k), got {_describe(arr)}"
        )
    kind = {2: "single", 3: "heads", 4: "grid"}[arr.ndim]
    if arr.ndim == 2:
        arr = arr[None, None]
        if layers is not None or heads is not None:
            raise CourseValueError("heads: a single (T_q, T_k) map has no heads or layers to choose")
    elif arr.ndim == 3:
        if layers is not None:
            raise CourseValueError(f"layers: weights of shape {tuple(arr.shape)} have no layer axis")
        arr = arr[None]
    n_layers, n_heads, t_q, t_k = arr.shape
    layer_idx = _indices("layers", layers, n_layers)
    head_idx = _indices("heads", heads, n_heads)
    if isinstance(layers, (int, np.integer)) and kind == "grid":
        kind = "heads"                                         # one layer: a row of heads
    if isinstance(heads, (int, np.integer)):
        kind = "layers" if kind == "grid" else "single"        # one head of every chosen layer
    sel = arr[np.ix_(layer_idx, head_idx)]                     # (l, h, Tq, Tk)

    key_pad = _bool_vector("key_padding_mask", _pick_example("key_padding_mask", key_padding_mask, example), t_k)
    query_pad = _bool_vector("query_padding_mask", query_padding_mask, t_q)
    if query_pad is None and key_pad is not None and t_q == t_k:
        query_pad = key_pad
    keys = _labels("tokens", _pick_example("tokens", tokens, example), t_k, key_pad)
    query_tokens = _pick_example("query_tokens", query_tokens, example)
    if query_tokens is None and keys is not None and t_q == t_k:
        queries = keys
    else:
        queries = _labels("query_tokens", query_tokens, t_q, query_pad)

    if vmax is None:
        finite = sel[np.isfinite(sel)]
        vmax = float(finite.max()) if finite.size else 1.0
        vmax = vmax if vmax > (vmin or 0.0) else (vmin or 0.0) + 1.0

    if kind == "single":
        maps, names = [sel[0, 0]], [None]
        if n_layers > 1:
            names = [f"layer {layer_idx[0]} · head {head_idx[0]}"]
        elif n_heads > 1:
            names = [f"head {head_idx[0]}"]
        shape = (1, 1)
    elif kind == "heads":
        maps = [sel[0, j] for j in range(len(head_idx))]
        prefix = f"layer {layer_idx[0]} · " if n_layers > 1 else ""
        names = [f"{prefix}head {h}" for h in head_idx]
        ncols = math.ceil(len(maps) / math.ceil(len(maps) / max_cols))   # balanced rows
        shape = (math.ceil(len(maps) / ncols), ncols)
    elif kind == "layers":
        maps = [sel[i, 0] for i in range(len(layer_idx))]
        names = [f"layer {l} · head {head_idx[0]}" for l in layer_idx]
        ncols = math.ceil(len(maps) / math.ceil(len(maps) / max_cols))
        shape = (math.ceil(len(maps) / ncols), ncols)
    else:
        maps = [sel[i, j] for i in range(len(layer_idx)) for j in range(len(head_idx))]
        names = [f"head {h}" for _ in layer_idx for h in head_idx]
        shape = (len(layer_idx), len(head_idx))
    if titles is not None and not isinstance(titles, str):
        titles = [str(t) for t in titles]
        if len(titles) != len(maps):
            raise CourseValueError(f"titles: expected {len(maps)} titles (one per map), got {len(titles)}")
        names = titles

    if len(maps) == 1:
        cell = _cell_inches(max(t_q, t_k), lo=0.12, hi=0.5 if annotate else 0.42)
        if annotate:
            cell = max(cell, 0.42)
        if ax is None:
            width = t_k * cell + _label_inches(queries) + 1.3
            height = t_q * cell + _label_inches(keys) * 0.87 + 0.9
            fig, ax = plt.subplots(figsize=(max(width, 3.2), max(height, 2.6)), layout="constrained")
        else:
            fig = ax.figure
        im = _attention_panel(ax, maps[0], queries, keys, query_pad, key_pad, cmap, vmin, vmax,
                              cell, annotate, show_x=True, show_y=True)
        title = titles if isinstance(titles, str) else names[0]
        if title:
            ax.set_title(title)
        ax.set_xlabel("key (attended to)")
        ax.set_ylabel("query (attending)")
        cbar = fig.colorbar(im, ax=ax, shrink=min(1.0, 0.25 + 0.06 * t_q), aspect=18, pad=0.02)
        cbar.set_label("attention weight")
        cbar.outline.set_visible(False)
        return fig, ax

    if ax is not None:
        raise CourseValueError(
            f"ax: a single Axes can hold one map, but {len(maps)} were asked for (choose heads=, layers=)"
        )
    nrows, ncols = shape
    panel = float(np.clip(14.5 / ncols, 1.3, 3.2))
    panel = min(panel, float(np.clip(0.3 * max(t_q, t_k), 1.6, 3.2)))
    cell = panel / max(t_q, t_k)
    if annotate:
        cell = max(cell, 0.42)
        panel = cell * max(t_q, t_k)
    show_labels = cell * 72 >= 5.0
    extra_w = (_label_inches(queries) if show_labels else 0.3) + 1.4
    extra_h = (_label_inches(keys) * 0.87 if show_labels else 0.3) + 0.9
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                             figsize=(ncols * panel * t_k / max(t_q, t_k) + extra_w + 0.1 * ncols,
                                      nrows * (panel * t_q / max(t_q, t_k) + (0.35 if kind != "grid" else 0.1))
                                      + extra_h + 0.3))
    im = None
    for k, data in enumerate(maps):
        r, c = divmod(k, ncols)
        a = axes[r, c]
        last_in_col = k + ncols >= len(maps)
        im = _attention_panel(a, data, queries, keys, query_pad, key_pad, cmap, vmin, vmax, cell,
                              annotate, show_x=show_labels and last_in_col,
                              show_y=show_labels and c == 0, rotation=90.0)
        if kind != "grid" or r == 0 or titles is not None:   # a grid names its heads once, on top
            a.set_title(names[k], fontsize=10 if panel >= 1.8 else 9)
        if kind == "grid" and c == 0:
            a.set_ylabel(f"layer {layer_idx[r]}", fontsize=10, fontweight="bold")
    for k in range(len(maps), nrows * ncols):
        axes.flat[k].remove()
    fig.supxlabel("key (attended to)", fontsize=10)
    fig.supylabel("query (attending)", fontsize=10)
    if isinstance(titles, str):
        fig.suptitle(titles)
    used = [axes.flat[k] for k in range(len(maps))]
    cbar = fig.colorbar(im, ax=used, shrink=min(1.0, 0.3 + 0.25 * nrows), aspect=25, pad=0.01)
    cbar.set_label("attention weight")
    cbar.outline.set_visible(False)
    if kind == "grid":
        return fig, axes
    return fig, np.array(used, dtype=object)


def _attention_panel(ax, data, queries, keys, query_pad, key_pad, cmap, vmin, vmax, cell, annotate,
                     show_x=True, show_y=True, rotation=60.0):
    im = _imshow(ax, data, cmap, vmin, vmax)
    _mark_padding(ax, key_pad, query_pad, data.shape[0], data.shape[1])
    _set_ticks(ax, keys, data.shape[1], "x", key_pad, cell, rotation=rotation, show=show_x)
    _set_ticks(ax, queries, data.shape[0], "y", query_pad, cell, show=show_y)
    if annotate:
        _annotate_cells(ax, data, im, ".2f", cell, skip_rows=query_pad, skip_cols=key_pad)
    _frame(ax)
    return im


# --------------------------------------------------------------------------------------------
# generic heatmap
# --------------------------------------------------------------------------------------------

@_styled
def plot_heatmap(matrix, row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None,
                 title: str | None = None, cmap=None, annotate: bool = False, *, fmt: str = ".2f",
                 vmin: float | None = None, vmax: float | None = None, xlabel: str | None = None,
                 ylabel: str | None = None, colorbar_label: str | None = None, ax=None):
    """A labelled heatmap of a 2-D matrix (cosine similarities, gradients d y_t / d x_s, ...).

    The colormap is chosen from the values unless given: signed data -> ``"RdBu_r"`` with limits
    symmetric around 0; non-negative data -> ``"viridis"``.

    Args:
        matrix: ``(R, C)`` tensor or array.
        row_labels, col_labels: ``R`` and ``C`` tick labels (default: indices).
        title, xlabel, ylabel, colorbar_label: texts.
        cmap: a colormap name or object.
        annotate: write each value in its cell with ``fmt``.
        vmin, vmax: colour limits.
        ax: draw into this Axes.

    Returns:
        ``(fig, ax)``.
    """
    arr = _to_numpy("matrix", matrix)
    if arr.ndim != 2:
        raise CourseValueError(f"matrix: expected a 2-D matrix (rows, cols), got {_describe(arr)}")
    n_rows, n_cols = arr.shape
    rows = _labels("row_labels", row_labels, n_rows)
    cols = _labels("col_labels", col_labels, n_cols)
    finite = arr[np.isfinite(arr)]
    signed = finite.size > 0 and finite.min() < 0 < finite.max()
    if cmap is None:
        cmap = SIGNED_CMAP if signed else WEIGHTS_CMAP
    if signed and vmin is None and vmax is None and cmap == SIGNED_CMAP:
        lim = float(np.abs(finite).max())
        vmin, vmax = -lim, lim
    cell = _cell_inches(max(n_rows, n_cols), lo=0.1, hi=0.5 if annotate else 0.42)
    if annotate:
        cell = max(cell, 0.45)
    if ax is None:
        width = n_cols * cell + _label_inches(rows) + 1.4
        height = n_rows * cell + _label_inches(cols) * 0.87 + (0.9 if title else 0.6)
        fig, ax = plt.subplots(figsize=(max(width, 3.2), max(height, 2.6)), layout="constrained")
    else:
        fig = ax.figure
    im = _imshow(ax, arr, cmap, vmin, vmax)
    _set_ticks(ax, cols, n_cols, "x", None, cell)
    _set_ticks(ax, rows, n_rows, "y", None, cell)
    if annotate:
        _annotate_cells(ax, arr, im, fmt, cell)
    _frame(ax)
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    cbar = fig.colorbar(im, ax=ax, shrink=min(1.0, 0.25 + 0.06 * n_rows), aspect=18, pad=0.02)
    cbar.outline.set_visible(False)
    if colorbar_label:
        cbar.set_label(colorbar_label)
    return fig, ax


# --------------------------------------------------------------------------------------------
# positional encodings
# --------------------------------------------------------------------------------------------

@_styled
def plot_positional_encoding(pe, ax=None, title: str | None = "Sinusoidal positional encoding", *,
                             dims: Sequence[int] | None = None, cmap=SIGNED_CMAP):
    """The table ``PE (T, d_model)`` as a heatmap: position down, feature (dimension) across.

    Values are drawn on a fixed -1 .. 1 diverging scale (blue -1, white 0, red +1), so tables of
    different sizes compare at a glance. ``dims`` outlines those feature columns (to link the
    picture with :func:`plot_pe_curves`).

    Returns:
        ``(fig, ax)``.
    """
    arr = _to_numpy("pe", pe)
    if arr.ndim != 2:
        raise CourseValueError(f"pe: expected a table (max_len, d_model), got {_describe(arr)}")
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
        # the chosen columns: outlined, with a marker above in the colour plot_pe_curves uses
        for i, dim in enumerate(_indices("dims", dims, d)):
            color = plt.get_cmap("tab10")(i % 10)
            ax.add_patch(mpatches.Rectangle((dim - 0.5, -0.5), 1, t, fill=False, linewidth=1.2,
                                            edgecolor=color, zorder=3, gid="dim"))
            ax.plot([dim], [1.0], marker="v", markersize=7, color=color, clip_on=False, zorder=4,
                    markeredgecolor="white", markeredgewidth=0.5, transform=ax.get_xaxis_transform(),
                    linestyle="none")
            ax.lines[-1].set_transform(ax.get_xaxis_transform() + mtransforms.ScaledTranslation(
                0, 4 / 72, fig.dpi_scale_trans))
    _frame(ax)
    if title:
        ax.set_title(title, pad=14 if dims is not None else 6)
    cbar = fig.colorbar(im, ax=ax, pad=0.02, aspect=25)
    cbar.set_label("value")
    cbar.outline.set_visible(False)
    return fig, ax


@_styled
def plot_pe_curves(pe, dims: Sequence[int] = (0, 1, 4, 5, 10, 11), ax=None,
                   title: str | None = "Positional encoding: one curve per dimension", *,
                   layout: str | None = None, positions=None):
    """Selected columns of a positional-encoding table, each against the position.

    Args:
        pe: ``(T, d_model)`` table.
        dims: the feature indices to draw.
        layout: ``"interleaved"`` or ``"concat"`` adds "sin"/"cos" to each legend entry.
        positions: x values (default ``0 .. T-1``).

    Returns:
        ``(fig, ax)``.
    """
    arr = _to_numpy("pe", pe)
    if arr.ndim != 2:
        raise CourseValueError(f"pe: expected a table (max_len, d_model), got {_describe(arr)}")
    t, d = arr.shape
    dims = _indices("dims", dims, d)
    if layout not in (None, "interleaved", "concat"):
        raise CourseValueError(f"layout: expected None, 'interleaved' or 'concat', got {layout!r}")
    x = np.arange(t) if positions is None else _to_numpy("positions", positions)
    if x.shape != (t,):
        raise CourseValueError(f"positions: expected shape ({t},), got {_describe(x)}")
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 3.4), layout="constrained")
    else:
        fig = ax.figure
    palette = plt.get_cmap("tab10")
    for i, dim in enumerate(dims):
        label = f"dim {dim}"
        if layout == "interleaved":
            label += f" ({'sin' if dim % 2 == 0 else 'cos'}, i={dim // 2})"
        elif layout == "concat":
            half = d // 2
            label += f" ({'sin' if dim < half else 'cos'}, i={dim % half if half else 0})"
        ax.plot(x, arr[:, dim], color=palette(i % 10), linewidth=1.6, label=label,
                marker="o" if t <= 40 else None, markersize=3)
    ax.axhline(0.0, color="0.6", linewidth=0.8, zorder=0)
    ax.set_ylim(-1.15, 1.15)
    ax.set_xlim(x[0], x[-1])
    ax.set_xlabel("position")
    ax.set_ylabel("value")
    ax.grid(alpha=0.25)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    if title:
        ax.set_title(title)
    return fig, ax


# --------------------------------------------------------------------------------------------
# masks and padded batches
# --------------------------------------------------------------------------------------------

_CONVENTIONS = {
    # convention: (what True means, what False means, does True mean "may attend / kept"?)
    "attend": ("True = may attend", "False = blocked", True),
    "pad": ("True = padding (ignored)", "False = real token", False),
    "keep": ("1 = keep", "0 = padding", True),
}


@_styled
def plot_mask(mask, convention: str, row_labels: Sequence[str] | None = None,
              col_labels: Sequence[str] | None = None, title: str | None = None, *,
              xlabel: str | None = None, ylabel: str | None = None, annotate: bool | None = None,
              ax=None):
    """A mask as a grid of cells: blue = may attend / kept, light grey (hatched) = blocked / padding.

    The colours mean the same thing whatever the convention; the legend says what True (or 1)
    means in this mask, and each cell shows its raw value (T/F, or 1/0 for ``"keep"``) when the
    grid is small enough.

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
    if convention not in _CONVENTIONS:
        raise CourseValueError(f"convention: expected one of {tuple(_CONVENTIONS)}, got {convention!r}")
    if isinstance(mask, torch.Tensor) and convention in ("attend", "pad") and mask.dtype != torch.bool:
        raise CourseTypeError(
            f"mask: expected a bool tensor for convention={convention!r}, got {mask.dtype} "
            "(for a Hugging Face 1 = keep mask use convention='keep')"
        )
    arr = _to_numpy("mask", mask, allow_bool=True)
    batch_like = arr.ndim == 4 and arr.shape[1] == 1 and arr.shape[2] == 1
    if arr.ndim > 2:
        arr = arr.reshape([s for s in arr.shape if s != 1] or [1])
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2:
        raise CourseValueError(f"mask: expected (T_q, T_k) or (B, T) after dropping size-1 axes, got {_describe(arr)}")
    if arr.dtype != bool:
        if not np.isin(arr, (0, 1)).all():
            raise CourseValueError("mask: expected only 0 and 1 values for convention='keep'")
        raw = arr.astype(bool)
    else:
        raw = arr
    true_text, false_text, true_is_open = _CONVENTIONS[convention]
    open_ = raw if true_is_open else ~raw                      # True where attention may flow
    n_rows, n_cols = raw.shape
    rows = _labels("row_labels", row_labels, n_rows)
    cols = _labels("col_labels", col_labels, n_cols)
    if convention == "attend" and not batch_like:
        ylabel = ylabel or "query position"
        xlabel = xlabel or "key position"
    else:
        ylabel = ylabel or "example"
        xlabel = xlabel or "position"
    cell = _cell_inches(max(n_rows, n_cols), lo=0.12, hi=0.42)
    if ax is None:
        width = n_cols * cell + _label_inches(rows) + 0.9
        height = n_rows * cell + _label_inches(cols) * 0.87 + 1.3
        fig, ax = plt.subplots(figsize=(max(width, 3.6), max(height, 2.4)), layout="constrained")
    else:
        fig = ax.figure
    cmap = mcolors.ListedColormap([BLOCKED_COLOR, ATTEND_COLOR])
    ax.imshow(open_.astype(float), cmap=cmap, vmin=0, vmax=1, aspect="equal", interpolation="nearest")
    for (r, c) in zip(*np.nonzero(~open_)):
        ax.add_patch(mpatches.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, hatch="///",
                                        edgecolor="0.75", linewidth=0.0, zorder=2, gid="blocked"))
    # thin white grid between cells
    ax.set_xticks(np.arange(-0.5, n_cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n_rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.2)
    ax.tick_params(which="minor", length=0)
    _set_ticks(ax, cols, n_cols, "x", None, cell)
    _set_ticks(ax, rows, n_rows, "y", None, cell)
    if annotate is None:
        annotate = n_cols <= 24 and cell >= 0.22
    if annotate:
        t_txt, f_txt = ("1", "0") if convention == "keep" else ("T", "F")
        fs = float(np.clip(cell * 72 * 0.4, 6, 10))
        for r in range(n_rows):
            for c in range(n_cols):
                ax.text(c, r, t_txt if raw[r, c] else f_txt, ha="center", va="center", fontsize=fs,
                        color="white" if open_[r, c] else "0.3", fontweight="bold", zorder=4)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    open_patch = mpatches.Patch(facecolor=ATTEND_COLOR,
                                label=(true_text if true_is_open else false_text) + "  (attention flows)")
    closed_patch = mpatches.Patch(facecolor=BLOCKED_COLOR, hatch="///", edgecolor="0.7",
                                  label=(false_text if true_is_open else true_text) + "  (no attention)")
    fig.legend(handles=[open_patch, closed_patch], loc="outside lower center",
               ncols=1 if n_cols * cell < 4.5 else 2, frameon=False, handlelength=1.6)
    return fig, ax


@_styled
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
    if isinstance(tokens, (torch.Tensor, np.ndarray)):
        ids = _to_numpy("tokens", tokens)
        if ids.ndim != 2:
            raise CourseValueError(f"tokens: expected (B, T) token ids, got {_describe(ids)}")
        grid = [[str(int(v)) for v in row] for row in ids]
        ragged = np.zeros(ids.shape, dtype=bool)
    elif isinstance(tokens, Sequence) and tokens and all(
            isinstance(r, Sequence) and not isinstance(r, str) for r in tokens):
        width = max(len(r) for r in tokens)
        grid = [[str(t) for t in r] + [pad_token] * (width - len(r)) for r in tokens]
        ragged = np.array([[j >= len(r) for j in range(width)] for r in tokens], dtype=bool)
    else:
        raise CourseTypeError(
            f"tokens: expected a list of token lists or a (B, T) tensor of ids, got {type(tokens).__name__}"
        )
    n_rows, n_cols = len(grid), len(grid[0])
    if key_padding_mask is None:
        pad = ragged | np.array([[t == pad_token for t in r] for r in grid], dtype=bool)
    else:
        if isinstance(key_padding_mask, torch.Tensor) and key_padding_mask.dtype != torch.bool:
            raise CourseTypeError(
                f"key_padding_mask: expected bool of shape ({n_rows}, {n_cols}) with True = padding, "
                f"got {key_padding_mask.dtype}"
            )
        pad = _to_numpy("key_padding_mask", key_padding_mask, allow_bool=True)
        if pad.dtype != bool or pad.shape != (n_rows, n_cols):
            raise CourseValueError(
                f"key_padding_mask: expected bool of shape ({n_rows}, {n_cols}), got {pad.dtype} of "
                f"{_describe(pad)}"
            )
    rows = _labels("row_labels", row_labels, n_rows) or [f"example {i}" for i in range(n_rows)]
    longest = max(len(t) for r in grid for t in r)
    cell_w = float(np.clip(0.12 + 0.085 * longest, 0.5, 1.4))
    cell_h = 0.42
    if ax is None:
        fig, ax = plt.subplots(figsize=(n_cols * cell_w + _label_inches(rows) + 0.5,
                                        n_rows * cell_h + 1.3), layout="constrained")
    else:
        fig = ax.figure
    ax.imshow(np.where(pad, 0.0, 1.0), cmap=mcolors.ListedColormap([BLOCKED_COLOR, "#dbe9f6"]),
              vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    _mark_padding_cells(ax, pad)
    fs = float(np.clip(cell_w * 72 / max(longest, 1) * 1.45, 6.5, 10))
    for r in range(n_rows):
        for c in range(n_cols):
            ax.text(c, r, grid[r][c], ha="center", va="center", fontsize=fs, zorder=4,
                    color="0.45" if pad[r, c] else "black", fontstyle="italic" if pad[r, c] else "normal")
    ax.set_xticks(np.arange(-0.5, n_cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n_rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=2.0)
    ax.tick_params(which="both", length=0)
    ax.set_xticks(range(n_cols))
    ax.set_xticklabels([str(i) for i in range(n_cols)])
    ax.set_yticks(range(n_rows))
    ax.set_yticklabels(rows)
    ax.set_xlabel("position")
    for spine in ax.spines.values():
        spine.set_visible(False)
    if title:
        ax.set_title(title)
    fig_width = fig.get_size_inches()[0]
    fig.legend(handles=[mpatches.Patch(facecolor="#dbe9f6", label="token  (key_padding_mask False)"),
                        mpatches.Patch(facecolor=BLOCKED_COLOR, hatch="///", edgecolor=PAD_EDGE,
                                       label="padding  (key_padding_mask True)")],
               loc="outside lower center", ncols=2 if fig_width >= 6.5 else 1, frameon=False)
    return fig, ax


def _mark_padding_cells(ax, pad: np.ndarray) -> None:
    for r in range(pad.shape[0]):
        for s, n in _runs(pad[r]):
            ax.add_patch(mpatches.Rectangle((s - 0.5, r - 0.5), n, 1, fill=False, hatch="///",
                                            edgecolor="0.7", linewidth=0.0, zorder=3, gid="padding"))


# --------------------------------------------------------------------------------------------
# curves and bars
# --------------------------------------------------------------------------------------------

@_styled
def plot_curves(x, ys: Mapping[str, Sequence[float]], xlabel: str = "x", ylabel: str = "y",
                title: str | None = None, *, logx: bool = False, logy: bool = False,
                marker: float | None = None, marker_label: str | None = None,
                bands: Mapping[str, tuple] | None = None, ax=None):
    """Measured quantities against x, one line per series (timings, memory, errors ...).

    Args:
        x: the shared x values.
        ys: ``{name: y values}``; a value may also be ``(x_values, y_values)`` for its own x.
        logx, logy: logarithmic axes (base 2 for x when every x is a power of two).
        marker, marker_label: a dashed vertical line at ``x = marker``, with its label.
        bands: ``{name: (low, high)}`` shaded around the series of that name (e.g. min/max of
            repeated timings).

    Returns:
        ``(fig, ax)``.
    """
    if not isinstance(ys, Mapping) or not ys:
        raise CourseTypeError(f"ys: expected a non-empty dict name -> values, got {type(ys).__name__}")
    x_arr = _to_numpy("x", x)
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 3.9), layout="constrained")
    else:
        fig = ax.figure
    palette = plt.get_cmap("tab10")
    markers = "osD^v<>ph*"
    for i, (name, value) in enumerate(ys.items()):
        if isinstance(value, tuple) and len(value) == 2 and np.ndim(value[0]) == 1 and np.ndim(value[1]) == 1:
            xs, yv = _to_numpy(f"ys[{name!r}][0]", value[0]), _to_numpy(f"ys[{name!r}][1]", value[1])
        else:
            xs, yv = x_arr, _to_numpy(f"ys[{name!r}]", value)
        if yv.shape != xs.shape:
            raise CourseValueError(f"ys[{name!r}]: expected {xs.shape[0]} values (one per x), got {_describe(yv)}")
        color = palette(i % 10)
        ax.plot(xs, yv, marker=markers[i % len(markers)], markersize=5, linewidth=1.8, color=color, label=str(name))
        if bands and name in bands:
            lo, hi = (_to_numpy(f"bands[{name!r}]", b) for b in bands[name])
            ax.fill_between(xs, lo, hi, color=color, alpha=0.18, linewidth=0)
    if logx:
        pos = x_arr[x_arr > 0]
        powers_of_two = pos.size > 0 and np.allclose(np.log2(pos), np.round(np.log2(pos)))
        ax.set_xscale("log", base=2 if powers_of_two else 10)
        if powers_of_two:
            ax.set_xticks(pos)
            ax.set_xticklabels([f"{int(v)}" for v in pos])
            ax.minorticks_off()
    if logy:
        ax.set_yscale("log")
    if marker is not None:
        ax.axvline(marker, color="0.3", linestyle="--", linewidth=1.2, zorder=0)
        if marker_label:
            ax.annotate(marker_label, xy=(marker, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(4, -4), textcoords="offset points", ha="left", va="top",
                        fontsize=9, color="0.25")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="major")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if len(ys) > 1:
        ax.legend()
    if title:
        ax.set_title(title)
    return fig, ax


@_styled
def plot_probabilities(logits, labels: Sequence[str] | None = None, temperature: float = 1.0, *,
                       reference_temperature: float | None = 1.0, title: str | None = None, ax=None):
    """``softmax(logits / temperature)`` as a bar chart, each bar labelled with its probability.

    A dashed outline shows the distribution at ``reference_temperature`` (default 1) for
    comparison; pass None to drop it.

    Returns:
        ``(fig, ax)``.
    """
    z = _to_numpy("logits", logits)
    if z.ndim != 1:
        raise CourseValueError(f"logits: expected a 1-D vector, got {_describe(z)}")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature > 0:
        raise CourseValueError(f"temperature: expected a positive number, got {temperature!r}")
    names = _labels("labels", labels, z.shape[0]) or [str(i) for i in range(z.shape[0])]

    def softmax(t):
        s = z / t
        e = np.exp(s - s.max())
        return e / e.sum()

    p = softmax(float(temperature))
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(4.5, 0.55 * len(names) + 1.8), 3.6), layout="constrained")
    else:
        fig = ax.figure
    xs = np.arange(len(names))
    ax.bar(xs, p, color=plt.get_cmap(WEIGHTS_CMAP)(0.35), width=0.7, zorder=2, label=f"T = {temperature:g}")
    if reference_temperature is not None and reference_temperature != temperature:
        ax.bar(xs, softmax(float(reference_temperature)), width=0.7, fill=False, edgecolor="0.35",
               linestyle="--", linewidth=1.0, zorder=3, label=f"T = {reference_temperature:g}")
        ax.legend(loc="upper right")
    top = p if reference_temperature is None else np.maximum(p, softmax(float(reference_temperature)))
    for x_i, p_i, top_i in zip(xs, p, top):
        ax.text(x_i, top_i + 0.015, f"{p_i:.2f}", ha="center", va="bottom", fontsize=8, zorder=4)
    ax.set_xticks(xs)
    rotate = max(len(n) for n in names) * len(names) > 60
    ax.set_xticklabels(names, rotation=45 if rotate else 0, ha="right" if rotate else "center",
                       rotation_mode="anchor")
    ax.set_ylim(0, 1.08)
    ax.set_ylabel("probability")
    entropy = float(-(p * np.log(np.clip(p, 1e-300, None))).sum())
    ax.set_title(title or f"softmax(logits / T), T = {temperature:.3g}   (entropy {entropy:.2f} nats)")
    ax.grid(axis="y", alpha=0.3, zorder=0)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


# --------------------------------------------------------------------------------------------
# the encoder diagram
# --------------------------------------------------------------------------------------------

_BOX_COLORS = {
    "embed": "#f6d5d1",
    "attn": "#fbdcae",
    "norm": "#fff1a8",
    "ffn": "#cfe3f4",
    "out": "#e4e4e4",
}


def _box(ax, xc, yc, w, h, text, color, fontsize=10):
    ax.add_patch(mpatches.FancyBboxPatch((xc - w / 2, yc - h / 2), w, h,
                                         boxstyle="round,pad=0.02,rounding_size=0.12",
                                         facecolor=color, edgecolor="0.25", linewidth=1.1, zorder=3))
    ax.text(xc, yc, text, ha="center", va="center", fontsize=fontsize, zorder=4)


def _arrow(ax, points, color="0.2", lw=1.3):
    """A polyline through ``points`` with an arrow head at the last point."""
    xs, ys = zip(*points)
    if len(points) > 2:
        ax.plot(xs[:-1], ys[:-1], color=color, linewidth=lw, zorder=2, solid_capstyle="butt")
    ax.add_patch(mpatches.FancyArrowPatch(points[-2], points[-1], arrowstyle="-|>", mutation_scale=12,
                                          color=color, linewidth=lw, zorder=2, shrinkA=0, shrinkB=0))


def _add_circle(ax, xc, yc, r=0.17):
    ax.add_patch(mpatches.Circle((xc, yc), r, facecolor="white", edgecolor="0.2", linewidth=1.2, zorder=3))
    ax.plot([xc - r * 0.6, xc + r * 0.6], [yc, yc], color="0.2", linewidth=1.2, zorder=4)
    ax.plot([xc, xc], [yc - r * 0.6, yc + r * 0.6], color="0.2", linewidth=1.2, zorder=4)


@_styled
def draw_encoder_diagram(num_layers: int = 6, norm_first: bool = False, *, d_model: int | None = None,
                         activation: str = "ReLU", show_mask: bool = True, title: str | None = None, ax=None):
    """The encoder stack as a block diagram, data flowing upwards.

    Token embedding (scaled by sqrt(d_model)) plus positional encoding, then ``num_layers``
    identical layers, each a multi-head self-attention block and a position-wise feed-forward
    block with a residual connection around each. ``norm_first=False`` draws the paper's post-LN
    layer (Add & Norm after each block); ``True`` draws pre-LN (LayerNorm first inside each
    branch, and a final LayerNorm after the stack).

    Returns:
        ``(fig, ax)``.
    """
    if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
        raise CourseValueError(f"num_layers: expected a positive int, got {num_layers!r}")
    own_figure = ax is None
    if own_figure:
        fig, ax = plt.subplots(layout="constrained")
    else:
        fig = ax.figure
    cx, bw, bh = 4.6, 3.8, 0.62
    d_txt = f"d_model = {d_model}" if d_model else "d_model"
    y = 0.25
    ax.text(cx, y, "token ids  (B, T)", ha="center", va="center", fontsize=10, style="italic")
    _arrow(ax, [(cx, y + 0.18), (cx, 0.95)])
    _box(ax, cx, 1.3, bw, bh, "token embedding  × √d_model", _BOX_COLORS["embed"])
    _arrow(ax, [(cx, 1.3 + bh / 2), (cx, 2.08)])
    _add_circle(ax, cx, 2.25)
    # positional encoding joins from the left
    _box(ax, 1.4, 2.25, 2.0, 0.62, "positional\nencoding", "white", fontsize=9)
    _arrow(ax, [(1.4 + 1.0, 2.25), (cx - 0.17, 2.25)])
    # the stack frame
    steps = (["norm", "attn", "add", "norm", "ffn", "add"] if norm_first
             else ["attn", "addnorm", "ffn", "addnorm"])
    heights = {"attn": 0.75, "ffn": 0.75, "norm": 0.5, "addnorm": 0.5, "add": 0.34}
    gap = 0.42
    frame_bottom = 2.85
    y = frame_bottom + 0.45                                    # the first split point
    ax.plot([cx, cx], [2.25 + 0.17, y], color="0.2", lw=1.3, zorder=2)
    split_y = y
    ax.plot(cx, split_y, "o", color="0.2", markersize=3.5, zorder=4)
    y += gap
    layout = []
    for step in steps:
        h = heights[step]
        layout.append((step, y, h))
        y += h + gap
    frame_top = y - gap + 0.35
    ax.add_patch(mpatches.FancyBboxPatch((cx - bw / 2 - 0.85, frame_bottom), bw + 1.7, frame_top - frame_bottom,
                                         boxstyle="round,pad=0.02,rounding_size=0.25", facecolor="#f5f5f5",
                                         edgecolor="0.45", linewidth=1.2, linestyle=(0, (5, 3)), zorder=1))
    ax.text(cx - bw / 2 - 1.05, (frame_bottom + frame_top) / 2, f"{num_layers} ×", ha="right", va="center",
            fontsize=15, fontweight="bold", color="0.25")
    ax.text(cx + bw / 2 + 0.85, frame_bottom - 0.08, "one encoder layer" + (" (pre-LN)" if norm_first else " (post-LN)"),
            ha="right", va="top", fontsize=9, color="0.35", style="italic")
    res_x = cx - bw / 2 - 0.45                                 # residual lines run on the left
    prev_top = split_y
    branch_start = split_y
    for k, (step, y0, h) in enumerate(layout):
        yc = y0 + h / 2
        last = k == len(layout) - 1
        if step in ("add",):
            _arrow(ax, [(cx, prev_top), (cx, yc - 0.17)])
            _add_circle(ax, cx, yc)
            _arrow(ax, [(cx, branch_start), (res_x, branch_start), (res_x, yc), (cx - 0.17, yc)], color="#555555")
            prev_top = yc + 0.17
            if last:
                continue
            branch_start = prev_top + gap / 2
            ax.plot([cx, cx], [prev_top, branch_start], color="0.2", lw=1.3, zorder=2)
            ax.plot(cx, branch_start, "o", color="0.2", markersize=3.5, zorder=4)
            prev_top = branch_start
            continue
        label, color = {
            "attn": ("multi-head self-attention", _BOX_COLORS["attn"]),
            "ffn": (f"position-wise feed-forward\nLinear → {activation} → Linear", _BOX_COLORS["ffn"]),
            "norm": ("LayerNorm", _BOX_COLORS["norm"]),
            "addnorm": ("Add & LayerNorm", _BOX_COLORS["norm"]),
        }[step]
        w = bw if step != "norm" else bw * 0.7
        if step == "attn":
            # query, key and value all come from the same input
            for dx, name in ((-1.0, "Q"), (0.0, "K"), (1.0, "V")):
                ax.plot([cx, cx + dx], [prev_top, prev_top + 0.2], color="0.2", lw=1.1, zorder=2)
                _arrow(ax, [(cx + dx, prev_top + 0.2), (cx + dx, y0)])
                ax.text(cx + dx + 0.08, (prev_top + y0) / 2 + 0.08, name, fontsize=8, ha="left", va="center",
                        color="0.3")
            if show_mask:
                ax.annotate("key_padding_mask\n(True = padding)", xy=(cx + w / 2, yc), xytext=(cx + bw / 2 + 1.0, yc),
                            fontsize=8, ha="left", va="center", color="0.3", zorder=5,
                            arrowprops=dict(arrowstyle="-|>", color="0.4", lw=1.0, shrinkA=0, shrinkB=0))
        else:
            _arrow(ax, [(cx, prev_top), (cx, y0)])
        _box(ax, cx, yc, w, h, label, color)
        if step == "addnorm":
            _arrow(ax, [(cx, branch_start), (res_x, branch_start), (res_x, yc), (cx - w / 2, yc)], color="#555555")
            if last:
                prev_top = y0 + h
                continue
            branch_start = y0 + h + gap / 2
            ax.plot([cx, cx], [y0 + h, branch_start], color="0.2", lw=1.3, zorder=2)
            ax.plot(cx, branch_start, "o", color="0.2", markersize=3.5, zorder=4)
            prev_top = branch_start
        else:
            prev_top = y0 + h
    y = frame_top + 0.35
    if norm_first:
        _arrow(ax, [(cx, prev_top), (cx, y)])
        _box(ax, cx, y + 0.25, bw * 0.7, 0.5, "final LayerNorm", _BOX_COLORS["norm"])
        prev_top = y + 0.5
        y = prev_top + 0.35
    _arrow(ax, [(cx, prev_top), (cx, y)])
    ax.text(cx, y + 0.22, f"contextual vectors  (B, T, {d_txt})", ha="center", va="center", fontsize=10,
            style="italic")
    x_lo, x_hi, y_hi = 0.2, 10.6 if show_mask else 8.6, y + 0.45
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(0.0, y_hi)
    if own_figure:
        fig.set_size_inches(0.68 * (x_hi - x_lo) + 0.2, 0.68 * y_hi + 0.5)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title if title is not None else
                 f"Transformer encoder ({'pre-LN' if norm_first else 'post-LN, as in the paper'})")
    return fig, ax
