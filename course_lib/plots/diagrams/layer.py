"""One encoder layer (lectures 01 and 03): the tensors through it, the feed-forward network
applied per position, and Add & Norm in its two placements."""

from __future__ import annotations

import numpy as np

from ..style import COLORS, position_color
from .canvas import Canvas
from .stack import draw_steps

NOTE = COLORS["note"]


def _vector_row(c: Canvas, xs, y, n, cell=0.16, fills=None):
    """One small vector per position, centred at ``xs``, edged in the position's colour."""
    for t, x in enumerate(xs):
        c.cells(x - n * cell / 2, y, n, cell, fills[t] if fills else "white", edge=position_color(t), lw=1.0)


def draw_encoder_layer():
    """One encoder layer with its tensors: (B, T, d_model) in; self-attention, the only place
    where positions mix; Add & Norm; the feed-forward network, one independent path per position;
    Add & Norm; (B, T, d_model) out."""
    c = Canvas(8.6, 5.65)
    c.title("One encoder layer: positions mix only in self-attention")
    xs = [1.75, 2.95, 4.15, 5.35]
    left, right = 1.15, 5.95
    n = 4
    light = ["#efe9fa", "#f8e5ef", "#e0f0f0", "#f4ebdc"]
    _vector_row(c, xs, 0.45, n, fills=light)
    for t, x in enumerate(xs):
        c.text(x, 0.25, f"position {t}", fontsize=9, color=position_color(t))
    # self-attention: every position reads every position
    c.box(left, 1.35, right - left, 0.55, "multi-head self-attention", fill=COLORS["attn"])
    bus = 0.74                                            # the first residual: one tap per position
    for t, x_from in enumerate(xs):
        c.line((x_from, 0.63), (x_from, 0.84), color=position_color(t), lw=0.8)
        for x_to in xs:
            c.arrow((x_from, 0.84), (x_to, 1.33), color=position_color(t), lw=0.8, head=6)
    y = 1.9
    c.box(left, y + 0.3, right - left, 0.38, "Add & Norm", fill=COLORS["norm"])
    for x in xs:
        c.arrow((x, y), (x, y + 0.28))
    # the feed-forward network: one path per position, the same weights
    y = 2.68
    for x in xs:
        c.arrow((x, 2.58), (x, y + 0.35))                 # from the Add & Norm box's top edge
        c.cbox(x, y + 0.63, 0.9, 0.55, "FFN", fill=COLORS["ffn"], edge="0.25")
        c.arrow((x, y + 0.91), (x, y + 1.22))
    y = 3.9
    c.box(left, y, right - left, 0.38, "Add & Norm", fill=COLORS["norm"])
    for x in xs:
        c.arrow((x, y + 0.38), (x, y + 0.7))
    _vector_row(c, xs, y + 0.72, n, fills=light)
    # residual connections around both sublayers, on the left: each leaves the whole stream, a tap
    # (a dot) on every position's path joining one line, as x + Sublayer(x) adds x at every position
    res = left - 0.35
    bus2 = 2.8
    for bus_y, res_x, top in ((bus, res, 2.39), (bus2, res + 0.12, 4.09)):
        c.arrow((xs[-1], bus_y), (res_x, bus_y), (res_x, top), (left, top), color=COLORS["residual"])
        for x in xs:
            c.dot(x, bus_y, color=COLORS["residual"])
    c.text(res - 0.08, 1.45, "residual", fontsize=9, color=COLORS["residual"], ha="right", rotation=90)
    # shapes and notes on the right
    notes = ((0.53, "(B, T, d_model) in"), (1.62, "positions mix here:\nevery query reads every key"),
             (2.39, "(B, T, d_model)"), (3.31, "one path per position,\nthe same weights: no mixing"),
             (4.09, "(B, T, d_model)"), (4.8, "(B, T, d_model) out"))
    for yy, text in notes:
        c.text(right + 0.25, yy, text, fontsize=10 if "(B" in text[:3] else 9.5, ha="left",
               color="0.15" if "(B" in text[:3] else NOTE)
    c.text((left + right) / 2, 5.1, "contextual vectors: each now depends on the whole sentence", fontsize=10,
           style="italic")
    return c.fig


def draw_feed_forward():
    """The position-wise feed-forward network: the same d_model -> d_ff -> d_model map with a
    ReLU applied to every position on its own."""
    c = Canvas(8.6, 4.5)
    c.title("Position-wise feed-forward: FFN(x) = max(0, x W₁ + b₁) W₂ + b₂")
    d_model, d_ff, cell = 4, 16, 0.1                      # d_ff = 4 d_model, as in the paper
    rng = np.random.default_rng(7)
    w1, b1 = rng.normal(size=(d_model, d_ff)) / 2, rng.normal(size=d_ff) * 0.2
    w2 = rng.normal(size=(d_ff, d_model)) / 3
    xs = [3.45, 5.3, 7.15]
    ys = {"x": 0.55, "h": 1.95, "y": 3.35}
    labels = (("x", "$x_t$  (d_model)"), ("h", "$h_t$ = max(0, $x_t W_1 + b_1$)\n(d_ff = 4 · d_model)"),
              ("y", "$y_t = h_t W_2 + b_2$  (d_model)"))
    for key, text in labels:
        c.text(0.15, ys[key] + cell / 2, text, fontsize=10, ha="left")
    for t, cx in enumerate(xs):
        x = np.tanh(rng.normal(size=d_model))
        h = np.maximum(0, x @ w1 + b1)
        y = np.tanh(h @ w2)
        for key, values in (("x", x), ("h", np.clip(h, -1, 1)), ("y", y)):
            n = len(values)
            c.cells(cx - n * cell / 2, ys[key], n, cell, values=values, cmap="RdBu_r", edge="0.4", lw=0.6)
        for lo, hi, name in (("x", "h", "$W_1$"), ("h", "y", "$W_2$")):
            c.arrow((cx, ys[lo] + cell + 0.05), (cx, ys[hi] - 0.05))
            c.cbox(cx + 0.3, (ys[lo] + ys[hi] + cell) / 2, 0.42, 0.3, name, fill=COLORS["ffn"], fontsize=10)
        c.text(cx, ys["x"] - 0.22, f"position {t}", fontsize=9.5, color=position_color(t))
    c.text(0.15, 4.0, "The same $W_1, b_1, W_2, b_2$ at every position; no arrow crosses between positions.",
           fontsize=10, ha="left", color="0.15")
    c.text(0.15, 1.3, "ReLU: negative entries become 0 (white)", fontsize=9, ha="left", color=NOTE)
    c.text(0.15, 0.12, "d_ff = 4 · d_model in the paper (2048 = 4 · 512); cells coloured by value, blue < 0 < red.",
           fontsize=9, ha="left", color=NOTE)
    return c.fig


def draw_add_norm():
    """Add & Norm around a sublayer: post-LN (the paper), x = LayerNorm(x + Sublayer(x)), against
    pre-LN, x = x + Sublayer(LayerNorm(x)); both drawn at the same scale."""
    c = Canvas(8.6, 4.15)
    c.title("Add & Norm: where the LayerNorm goes")
    panels = ((2.15, "post-LN (the paper)", "x ← LayerNorm(x + Sublayer(x))",
               [("branch",), ("block", "Sublayer (attention or FFN)", "sublayer"), ("add",),
                ("block", "LayerNorm", "norm")],
               "the residual sum is normalised:\nevery path goes through LayerNorm"),
              (6.45, "pre-LN (GPT-2 and most recent models)", "x ← x + Sublayer(LayerNorm(x))",
               [("branch",), ("block", "LayerNorm", "norm"), ("block", "Sublayer (attention or FFN)", "sublayer"),
                ("add",)],
               "an identity path from input to output;\none final LayerNorm after the last layer"))
    for cx, name, formula, steps, note in panels:
        c.text(cx, 3.55, name, fontsize=10.5, fontweight="bold")
        c.text(cx, 3.27, formula, fontsize=10, color="0.15")
        c.text(cx, 0.62, "x", fontsize=10, style="italic")
        c.line((cx, 0.74), (cx, 0.8))
        top, _ = draw_steps(c, cx, 0.8, steps, width=2.5, res_offset=0.25)
        c.arrow((cx, top), (cx, top + 0.2))
        c.text(cx, 0.18, note, fontsize=9, color=NOTE, va="center")
    c.line((4.3, 0.55), (4.3, 3.6), color="0.8", lw=1.0)
    return c.fig
