"""Batches and the encoder at work (lectures 06 and 08): a padded batch and its mask, and an
encoder with a per-token head and a pooled head."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patches as mpatches

from ..style import BLOCKED_COLOR, COLORS, PAD_EDGE, TOKEN_FACE, position_color
from .canvas import Canvas

NOTE = COLORS["note"]
BATCH = [["the", "cat", "sat", "on", "the", "mat"], ["dogs", "bark"], ["a", "bird", "sang"]]


def _cell(c: Canvas, x, y, w, h, pad, text=None, fontsize=10, face=None):
    c.ax.add_patch(mpatches.Rectangle((x, y), w, h, facecolor=face or (BLOCKED_COLOR if pad else TOKEN_FACE),
                                      edgecolor="white", linewidth=1.5 * c.scale, zorder=3,
                                      hatch="///" if pad else None))
    if pad:
        c.ax.add_patch(mpatches.Rectangle((x, y), w, h, fill=False, edgecolor=PAD_EDGE, hatch="///",
                                          linewidth=0, zorder=3.5))
    if text is not None:
        c.text(x + w / 2, y + h / 2, text, fontsize=fontsize, color="0.45" if pad else "black",
               style="italic" if pad else "normal")


def draw_padded_batch():
    """Sentences of different lengths padded to T, the key_padding_mask (True = padding), and the
    attention columns it blocks."""
    c = Canvas(8.6, 5.65)
    c.title("A padded batch, its key_padding_mask, and what the mask blocks")
    T, (w, h) = 6, (0.62, 0.36)
    top, mx = 4.25, 5.3
    c.text(1.0 + T * w / 2, top + 0.76, "tokens (B = 3, T = 6)", fontsize=10.5, fontweight="bold")
    c.text(mx + T * 0.36 / 2, top + 0.76, "key_padding_mask (B, T)", fontsize=10.5, fontweight="bold")
    for b, sentence in enumerate(BATCH):
        y = top - b * h
        c.text(0.9, y + h / 2, f"sentence {b}", fontsize=9.5, ha="right")
        for t in range(T):
            pad = t >= len(sentence)
            _cell(c, 1.0 + t * w, y, w, h, pad, "<pad>" if pad else sentence[t], fontsize=9.5 if pad else 10)
            _cell(c, mx + t * 0.36, y, 0.36, h, pad, "T" if pad else "F", face=None)
    for t in range(T):
        for x0, cw in ((1.0, w), (mx, 0.36)):
            c.text(x0 + (t + 0.5) * cw, top + h + 0.08, f"{t}", fontsize=9, color=NOTE, va="bottom")
    c.text(mx + T * 0.36 / 2, top - 2 * h - 0.12, "True = padding (torch's convention;\nHugging Face's attention_mask: 1 = keep)",
           fontsize=9, color=NOTE, va="top")
    # sentence 2's attention weights: padded key columns get exactly 0
    b, n = 2, len(BATCH[2])
    tokens = BATCH[b] + ["<pad>"] * (T - n)
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(T, T))
    weights = np.exp(scores[:, :n]) / np.exp(scores[:, :n]).sum(axis=1, keepdims=True)
    cmap, s, x0, y0 = plt.get_cmap("viridis"), 0.34, 1.9, 0.45
    for q in range(T):
        for k in range(T):
            pad = k >= n
            face = None if pad else cmap(weights[q, k] / weights.max())
            _cell(c, x0 + k * s, y0 + (T - 1 - q) * s, s, s, pad, "0" if pad else None, fontsize=9, face=face)
        c.text(x0 - 0.08, y0 + (T - 0.5 - q) * s, tokens[q], fontsize=9.5, ha="right",
               color="0.45" if q >= n else "black")
    for k in range(T):
        c.text(x0 + (k + 0.5) * s, y0 + T * s + 0.08, tokens[k], fontsize=9.5, rotation=90, va="bottom",
               color="0.45" if k >= n else "black")
    c.text(x0 - 0.75, y0 + T * s / 2, "queries", fontsize=9.5, rotation=90, color=NOTE)
    c.text(x0 + T * s / 2, 3.22, "attention weights of sentence 2 (keys across)", fontsize=10.5,
           fontweight="bold")
    notes = ("The mask removes padded keys: their",
             "scores get the most negative float",
             "(−∞ in the paper), so after the softmax",
             "their weights are exactly 0 and",
             "each real row still sums to 1.",
             "Padded query rows are computed too,",
             "but nothing reads them: the next layer",
             "masks them again, pooling skips them.")
    for i, line in enumerate(notes):
        c.text(4.3, 2.5 - i * 0.28, line, fontsize=10, ha="left", color="0.15" if i < 5 else NOTE)
    return c.fig


def draw_encoder_classifier():
    """The encoder at work: tokens -> encoder -> one contextual vector per token, read either by
    a per-token head (a prediction at every position) or pooled into one vector for the sentence
    (classification, sentence embeddings)."""
    c = Canvas(8.6, 4.75)
    c.title("The encoder at work: per-token outputs, or one vector for the sentence")
    words = ["the", "movie", "was", "great"]
    xs = [0.9 + 1.2 * t for t in range(len(words))]
    d, cell = 4, 0.16
    for t, (x, word) in enumerate(zip(xs, words)):
        pad = word == "<pad>"
        c.text(x, 0.3, word, fontsize=10, style="italic", color="0.45" if pad else "black")
        c.arrow((x, 0.45), (x, 0.75))
    c.box(xs[0] - 0.5, 0.75, xs[-1] - xs[0] + 1.0, 0.62, "embedding + positions, N encoder layers",
          fill=COLORS["attn"])
    c.text(xs[-1] + 0.62, 1.06, "padding, if any,\nis masked", fontsize=9, ha="left", color=NOTE)
    y_h = 1.75
    for t, (x, word) in enumerate(zip(xs, words)):
        pad = word == "<pad>"
        c.arrow((x, 1.37), (x, y_h - 0.02))
        c.cells(x - d * cell / 2, y_h, d, cell, BLOCKED_COLOR if pad else COLORS["hidden"],
                edge="0.6" if pad else position_color(t), lw=1.0)
        c.text(x + d * cell / 2 + 0.06, y_h + cell / 2, f"$h_{t + 1}$", fontsize=10, ha="left")
        if not pad:
            c.arrow((x, y_h + cell + 0.02), (x, 2.55))
            c.cbox(x, 2.75, 0.72, 0.38, "Linear", fill=COLORS["out"], fontsize=9.5)
            c.arrow((x, 2.94), (x, 3.2))
            c.text(x, 3.34, f"$y_{t + 1}$", fontsize=10)
    c.text(xs[0] - 0.5, 3.95, "per-token head: one prediction per position", fontsize=10.5, ha="left",
           fontweight="bold")
    c.text(xs[0] - 0.5, 3.68, "(a tag per word; in 08, the reversed or counted sequence)", fontsize=9.5,
           ha="left", color=NOTE)
    # pooling: the mean of the real tokens' vectors
    px = 6.65
    c.box(xs[0] - 0.45, y_h - 0.1, xs[-1] - xs[0] + 1.1, 0.36, fill="none", edge="0.55", linestyle=(0, (3, 2)),
          zorder=2, rounding=0.06)
    c.arrow((xs[-1] + 0.65, y_h + cell / 2), (px - 0.67, y_h + cell / 2))
    c.cbox(px, y_h + cell / 2, 1.3, 0.5, "mean over the\nreal tokens", fill=COLORS["hidden"], fontsize=9.5)
    c.arrow((px, y_h + 0.33), (px, 2.55))
    c.cbox(px, 2.75, 1.35, 0.38, "Linear + softmax", fill=COLORS["out"], fontsize=9.5)
    c.arrow((px, 2.94), (px, 3.2))
    c.text(px, 3.34, "positive 0.93   negative 0.07", fontsize=9.5)
    c.text(px, 3.95, "pooled head: one vector", fontsize=10.5, fontweight="bold")
    c.text(px, 3.68, "(classification; sentence embedding)", fontsize=9.5, color=NOTE)
    c.line((5.75, 0.3), (5.75, 4.1), color="0.85", lw=1.0)
    return c.fig
