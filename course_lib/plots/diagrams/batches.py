"""Batches and the encoder at work (lectures 06 and 08): a padded batch and its mask, and the
topic classifier of lecture 08 (a frozen encoder, mean pooling, a linear head, a softmax)."""

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
    c.text(mx + T * 0.36 / 2, top - 2 * h - 0.12,
           "True = padding (torch's convention;\nHugging Face's attention_mask: 1 = keep)", fontsize=9, color=NOTE,
           va="top")
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
             "(the paper's −∞ is for its decoder's",
             "causal mask; it never mentions padding),",
             "so their weights are exactly 0 and",
             "each real row still sums to 1.",
             "Padded query rows are computed too,",
             "but nothing reads them: the next layer",
             "masks them again, pooling skips them.")
    for i, line in enumerate(notes):
        c.text(4.3, 2.6 - i * 0.28, line, fontsize=10, ha="left", color="0.15" if i < 6 else NOTE)
    return c.fig


def draw_encoder_classifier():
    """The classifier lecture 08 builds: a headline's word pieces (with [CLS], [SEP] and padding) through
    the frozen MiniLM encoder, the mean of the real tokens' states as the headline's vector ``e``, and
    a trained linear head with a softmax over the five topics (P(sport) as the notebook computes it)."""
    c = Canvas(8.6, 5.0)
    c.title("A topic classifier: a frozen encoder, mean pooling, a trained linear head")
    words = ["[CLS]", "chelsea", "sack", "mu", "##tu", "[SEP]", "[PAD]", "[PAD]"]
    real = 6
    xs = [0.75 + 0.9 * t for t in range(len(words))]
    d, cell = 4, 0.15
    for t, (x, word) in enumerate(zip(xs, words)):
        pad = t >= real
        c.text(x, 0.3, word, fontsize=9.5, style="italic" if pad else "normal", color="0.45" if pad else "black")
        c.arrow((x, 0.45), (x, 0.75))
    c.box(xs[0] - 0.42, 0.75, xs[-1] - xs[0] + 0.84, 0.62,
          "MiniLM (frozen): embedding + positions, 6 encoder layers", fill=COLORS["attn"])
    y_h = 1.75
    for t, x in enumerate(xs):
        pad = t >= real
        c.arrow((x, 1.37), (x, y_h - 0.02))
        c.cells(x - d * cell / 2, y_h, d, cell, BLOCKED_COLOR if pad else COLORS["hidden"],
                edge="0.6" if pad else position_color(t), lw=1.0)
        c.text(x + d * cell / 2 + 0.05, y_h + cell / 2, f"$h_{t + 1}$", fontsize=9.5, ha="left")
        if not pad:
            c.arrow((x, y_h + cell + 0.02), (x, 2.5))
    # the head, above the real tokens only
    mx0, mx1 = xs[0] - 0.42, xs[real - 1] + 0.42
    cx = (mx0 + mx1) / 2
    c.box(mx0, 2.5, mx1 - mx0, 0.5, "mean over the real tokens, scaled to length 1:  $e$ (384 numbers)",
          fill=COLORS["hidden"], fontsize=9.5)
    c.text((xs[real] + xs[-1]) / 2, 2.75, "padding: masked in\nattention, left out\nof the mean", fontsize=8.5,
           color=NOTE)
    c.arrow((cx, 3.0), (cx, 3.35))
    c.box(cx - 1.9, 3.35, 3.8, 0.45, r"Linear:  $e\,W + b$,  then softmax", fill=COLORS["out"],
          fontsize=9.5)
    c.text(cx + 2.05, 3.575, "trained: 384 × 5 + 5\n= 1,925 numbers", fontsize=8.5, ha="left", color=NOTE)
    c.arrow((cx, 3.8), (cx, 4.12))
    c.text(cx, 4.3, "P(sport) = 0.67,  the largest of the five topics", fontsize=10.5, fontweight="bold")
    return c.fig
