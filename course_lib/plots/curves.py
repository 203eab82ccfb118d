"""Measured quantities as curves (timings, memory, losses) and a softmax as bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from ..errors import CourseTypeError, CourseValueError, check_choice, check_float
from ._inputs import labels as token_labels
from ._inputs import shape_text, to_numpy
from .describe import curves_sentence, describe, number
from .style import WEIGHTS_CMAP, category_color, styled

__all__ = ["plot_curves", "plot_probabilities"]

_MARKERS = "osD^v<>ph*"
_LINESTYLES = ("-", "--", "-.", ":")    # series that coincide stay visible: dashes over a solid line


def _series(name, value, x_arr):
    if isinstance(value, tuple) and len(value) == 2 and np.ndim(value[0]) == 1 and np.ndim(value[1]) == 1:
        xs, yv = to_numpy(f"ys[{name!r}][0]", value[0]), to_numpy(f"ys[{name!r}][1]", value[1])
    else:
        xs, yv = x_arr, to_numpy(f"ys[{name!r}]", value)
    if yv.shape != xs.shape:
        raise CourseValueError(f"ys[{name!r}]: expected {xs.shape[0]} values (one per x), got {shape_text(yv)}")
    return xs, yv


def _log_x(ax, x_arr) -> None:
    """A log x axis, base 2 with plain tick labels when every x is a power of two."""
    pos = x_arr[x_arr > 0]
    powers_of_two = pos.size > 0 and np.allclose(np.log2(pos), np.round(np.log2(pos)))
    ax.set_xscale("log", base=2 if powers_of_two else 10)
    if powers_of_two:
        ax.set_xticks(pos)
        ax.set_xticklabels([f"{int(v)}" for v in pos])
        ax.minorticks_off()


@styled
def plot_curves(x, ys: Mapping[str, Sequence[float]], xlabel: str = "x", ylabel: str = "y",
                title: str | None = None, *, logx: bool = False, logy: bool = False,
                marker: float | None = None, marker_label: str | None = None,
                bands: Mapping[str, tuple] | None = None, legend: str = "best", ax=None):
    """Measured quantities against x, one line per series (timings, memory, errors ...).

    Each series has its own colour, marker and line style (solid, dashed, dash-dot, dotted), so
    two series that coincide stay visible as dashes over a solid line.

    Args:
        x: the shared x values.
        ys: ``{name: y values}``; a value may also be ``(x_values, y_values)`` for its own x.
        logx, logy: logarithmic axes (base 2 for x when every x is a power of two).
        marker, marker_label: a dashed vertical line at ``x = marker``, with its label.
        bands: ``{name: (low, high)}`` shaded around the series of that name (e.g. min/max of
            repeated timings).
        legend: ``"best"`` (inside the axes, where it hides least), ``"below"`` (under the axes)
            or ``"none"``.

    Returns:
        ``(fig, ax)``.
    """
    if not isinstance(ys, Mapping) or not ys:
        raise CourseTypeError(f"ys: expected a non-empty dict name -> values, got {type(ys).__name__}")
    check_choice("legend", legend, ("best", "below", "none"))
    x_arr = to_numpy("x", x)
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 3.9), layout="constrained")
    else:
        fig = ax.figure
    palette = category_color
    for i, (name, value) in enumerate(ys.items()):
        xs, yv = _series(name, value, x_arr)
        color = palette(i)
        ax.plot(xs, yv, marker=_MARKERS[i % len(_MARKERS)], markersize=5, linewidth=1.8, color=color,
                linestyle=_LINESTYLES[i % len(_LINESTYLES)], label=str(name),
                markevery=max(1, len(xs) // 25))
        if bands and name in bands:
            lo, hi = (to_numpy(f"bands[{name!r}]", b) for b in bands[name])
            ax.fill_between(xs, lo, hi, color=color, alpha=0.18, linewidth=0)
    if logx:
        _log_x(ax, x_arr)
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
    ax.spines[["top", "right"]].set_visible(False)
    if len(ys) > 1 and legend == "best":
        ax.legend(loc="best")
    elif len(ys) > 1 and legend == "below":
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=min(len(ys), 3), borderaxespad=0.0)
    if title:
        ax.set_title(title)
    describe(ax, curves_sentence(title, list(ys), xlabel, ylabel, x_arr))
    return fig, ax


def _softmax(z: np.ndarray, t: float) -> np.ndarray:
    s = z / t
    e = np.exp(s - s.max())
    return e / e.sum()


@styled
def plot_probabilities(logits, labels: Sequence[str] | None = None, temperature: float = 1.0, *,
                       reference_temperature: float | None = 1.0, title: str | None = None, ax=None):
    """``softmax(logits / temperature)`` as a bar chart, each bar labelled with its probability.

    A dashed outline shows the distribution at ``reference_temperature`` (default 1) for
    comparison; pass None to drop it. Each probability is written on its own bar, never on the
    outline's.

    Returns:
        ``(fig, ax)``.
    """
    z = to_numpy("logits", logits)
    if z.ndim != 1:
        raise CourseValueError(f"logits: expected a 1-D vector, got {shape_text(z)}")
    check_float("temperature", temperature, 0, low_open=True)
    names = token_labels("labels", labels, z.shape[0]) or [str(i) for i in range(z.shape[0])]
    p = _softmax(z, float(temperature))
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(4.5, 0.55 * len(names) + 1.8), 3.6), layout="constrained")
    else:
        fig = ax.figure
    xs = np.arange(len(names))
    ax.bar(xs, p, color=plt.get_cmap(WEIGHTS_CMAP)(0.35), width=0.7, zorder=2, label=f"τ = {temperature:g}")
    ref = None
    if reference_temperature is not None and reference_temperature != temperature:
        ref = _softmax(z, float(reference_temperature))
        # a white halo under the dashed outline keeps it visible where it runs inside a dark bar
        ax.bar(xs, ref, width=0.7, fill=False, edgecolor="white", linewidth=3.0, zorder=3, label="_halo")
        ax.bar(xs, ref, width=0.7, fill=False, edgecolor="black", linestyle="--", linewidth=1.4, zorder=3,
               label=f"τ = {reference_temperature:g}")
        ax.legend(loc="upper right")
    # each value sits on its own bar (not on top of the dashed outline, which would read as the
    # outline's value); a white backing keeps an outline that crosses it from striking it through
    for x_i, p_i in zip(xs, p):
        ax.text(x_i, p_i + 0.015, f"{p_i:.2f}", ha="center", va="bottom", fontsize=8, zorder=4,
                bbox={"boxstyle": "square,pad=0.08", "facecolor": "white", "edgecolor": "none"})
    rotate = max(len(n) for n in names) * len(names) > 60
    ax.set_xticks(xs, names, rotation=45 if rotate else 0, ha="right" if rotate else "center",
                  rotation_mode="anchor")
    tallest = max(p.max(), ref.max() if ref is not None else 0.0)
    ax.set_ylim(0, min(1.08, 1.15 * tallest + 0.04))            # the tallest bar or outline and its label
    ax.set_ylabel("probability")
    entropy = float(-(p * np.log(np.clip(p, 1e-300, None))).sum())
    ax.set_title(title or f"softmax(logits / τ), τ = {temperature:.3g}   (entropy {entropy:.2f} nats)")
    ax.grid(axis="y", alpha=0.3, zorder=0)
    ax.spines[["top", "right"]].set_visible(False)
    order = np.argsort(-p, kind="stable")
    describe(ax, f"Bars of softmax(logits / τ) at τ = {temperature:.3g}, entropy {entropy:.2f} nats; probabilities, "
                 "largest first: " + ", ".join(f"{names[i]} {number(p[i])}" for i in order)
                 + ("" if ref is None else f"; dashed outlines at τ = {reference_temperature:g}: "
                    + ", ".join(f"{names[i]} {number(ref[i])}" for i in order)))
    return fig, ax
