"""The big picture (lecture 01): seq2seq with RNNs, the whole Transformer, recurrence against attention."""

from __future__ import annotations

import math

from ..style import COLORS, QKV, position_color
from .canvas import Canvas
from .stack import cross_inputs, draw_steps

NOTE = COLORS["note"]


def _rnn_row(c: Canvas, xs, y, labels, fill, w=0.78, h=0.5):
    """RNN cells at ``xs`` (centres), with the hidden state passed left to right."""
    for i, (x, s) in enumerate(zip(xs, labels)):
        c.cbox(x, y, w, h, s, fill=fill)
        if i:
            c.arrow((xs[i - 1] + w / 2, y), (x - w / 2, y))


def draw_seq2seq():
    """An RNN encoder reads the source; its last state (the context) starts the decoder, which
    generates one token at a time and reads its previous output (teacher forcing in training)."""
    c = Canvas(8.6, 3.85)
    c.title("Sequence to sequence with RNNs: encode, then decode one token at a time")
    y, w = 1.95, 0.78
    enc_x = [0.75, 1.8, 2.85]
    dec_x = [4.7, 5.75, 6.8, 7.85]
    _rnn_row(c, enc_x, y, ["$h_1$", "$h_2$", "$h_3$"], COLORS["encoder"])
    _rnn_row(c, dec_x, y, ["$s_1$", "$s_2$", "$s_3$", "$s_4$"], COLORS["decoder"])
    for x, tok in zip(enc_x, ["ich", "mag", "Katzen"]):
        c.text(x, y - 0.98, tok, style="italic")
        c.arrow((x, y - 0.82), (x, y - 0.25))
    c.cbox(3.78, y, 0.5, 0.5, "$c$", fill="white", edge="0.1", lw=1.6)
    c.arrow((enc_x[-1] + w / 2, y), (3.53, y))
    c.arrow((4.03, y), (dec_x[0] - w / 2, y))
    c.text(3.78, y + 0.42, "context", fontsize=9, color=NOTE)
    c.text(1.8, y + 1.22, "encoder (reads the source)", fontweight="bold")
    c.text(6.28, y + 1.22, "decoder (writes the target)", fontweight="bold")
    inputs, outputs = ["<bos>", "I", "like", "cats"], ["I", "like", "cats", "<eos>"]
    for i, (x, tok_in, tok_out) in enumerate(zip(dec_x, inputs, outputs)):
        c.text(x, y - 0.98, tok_in, style="italic")
        c.arrow((x, y - 0.82), (x, y - 0.25))
        c.arrow((x, y + 0.25), (x, y + 0.62))
        c.text(x, y + 0.8, tok_out, style="italic", fontweight="bold")
        if i + 1 < len(dec_x):
            c.arrow((x + 0.22, y + 0.8), (x + 0.5, y + 0.8), (x + 0.5, y - 0.98), (dec_x[i + 1] - 0.3, y - 0.98),
                    color=NOTE, lw=1.0, linestyle=(0, (3, 2)), head=8)
    c.text(0.2, 0.5, "Dashed: at inference the decoder feeds back its own prediction (autoregressive decoding).",
           fontsize=9.5, ha="left", color=NOTE)
    c.text(0.2, 0.22, "In training, teacher forcing feeds the true previous target token instead.",
           fontsize=9.5, ha="left", color=NOTE)
    return c.fig


def _stack(c: Canvas, cx, y, steps, label, width=2.4):
    """A framed stack of layers, "N x" at its side; returns (top, boxes)."""
    c.line((cx, y), (cx, y + 0.2))
    top, boxes = draw_steps(c, cx, y + 0.2, steps, width=width, res_offset=0.22)
    c.box(cx - width / 2 - 0.42, y + 0.1, width + 0.7, top - y, fill=COLORS["frame"], edge="0.5",
          linestyle=(0, (4, 3)), zorder=1, rounding=0.12)
    c.text(cx + width / 2 + 0.36, y + 0.02, label, fontsize=9, ha="right", va="top", style="italic", color=NOTE)
    return top + 0.1, boxes


def _embed(c: Canvas, cx, y, ids_text, pe_side, width=2.4):
    c.text(cx, y, ids_text, fontsize=10, style="italic")
    c.arrow((cx, y + 0.14), (cx, y + 0.34))
    c.box(cx - width / 2, y + 0.34, width, 0.38, "embedding × √d_model", fill=COLORS["embed"])
    c.arrow((cx, y + 0.72), (cx, y + 0.88))
    c.plus(cx, y + 1.0)
    px = cx + pe_side * (width / 2 + 0.25)
    c.cbox(px, y + 1.0, 0.42, 0.36, "PE", fill=COLORS["position"], edge=COLORS["position_edge"], fontsize=9)
    c.arrow((px - pe_side * 0.21, y + 1.0), (cx + pe_side * 0.13, y + 1.0), color=COLORS["position_edge"])
    return y + 1.13


def draw_transformer():
    """The encoder-decoder Transformer: N encoder layers, N decoder layers whose cross-attention
    reads the encoder's output, embeddings plus positional encodings at the bottom, linear and
    softmax at the top."""
    c = Canvas(8.4, 8.2)
    c.title("The Transformer (Vaswani et al. 2017): encoder and decoder")
    ex, dx = 2.3, 6.0
    enc = [("branch",), ("block", "multi-head self-attention", "attn"), ("addnorm",),
           ("branch",), ("block", "feed-forward", "ffn"), ("addnorm",)]
    dec = [("branch",), ("block", "masked self-attention", "attn"), ("addnorm",),
           ("branch",), ("block", "cross-attention", "attn", "cross"), ("addnorm",),
           ("branch",), ("block", "feed-forward", "ffn"), ("addnorm",)]
    y_e = _embed(c, ex, 0.3, "source tokens", -1)
    y_d = _embed(c, dx, 0.3, "target tokens, shifted right", -1)
    top_e, _ = _stack(c, ex, y_e, enc, "encoder layer")
    top_d, boxes = _stack(c, dx, y_d, dec, "decoder layer")
    c.text(ex - 1.75, (y_e + top_e) / 2, "N ×", fontsize=13, fontweight="bold", ha="right", color="0.25")
    c.text(dx + 1.78, (y_d + top_d) / 2, "× N", fontsize=13, fontweight="bold", ha="left", color="0.25")
    # the encoder's output feeds every decoder layer's cross-attention as keys and values
    entry = cross_inputs(boxes["cross-attention"])
    route_y = entry["k"][1] - 0.2
    # on its way it crosses the decoder's residual line without joining it: a hop marks the crossing
    hop_x, r = dx - 2.4 / 2 - 0.22, 0.09                      # that residual's x (see _stack, draw_steps)
    hop = [(hop_x - r * math.cos(math.pi * i / 12), route_y + r * math.sin(math.pi * i / 12)) for i in range(13)]
    c.line((ex, top_e), (ex, top_e + 0.3), (3.98, top_e + 0.3), (3.98, route_y), *hop, (entry["v"][0], route_y),
           color=COLORS["line"], lw=1.6)
    c.ax.lines[-1].set_gid("crossing")
    for key, name in (("k", "K"), ("v", "V")):
        x, y_top = entry[key]
        c.arrow((x, route_y), (x, y_top), color=QKV[key], lw=1.3, head=8)
        c.text(x + 0.05, route_y + 0.12, name, fontsize=9, ha="left", color=QKV[key], fontweight="bold")
    c.dot(entry["k"][0], route_y)
    c.text(ex, top_e + 0.45, "encoder output: K and V for every decoder layer", fontsize=9, va="bottom")
    y = top_d
    for label, key in (("Linear", "out"), ("softmax", "out")):
        c.arrow((dx, y), (dx, y + 0.2))
        c.box(dx - 0.8, y + 0.2, 1.6, 0.36, label, fill=COLORS[key])
        y += 0.56
    c.arrow((dx, y), (dx, y + 0.2))
    c.text(dx, y + 0.34, "next-token probabilities", fontsize=10, style="italic")
    return c.fig


def draw_recurrence_vs_attention():
    """One layer each: an RNN layer needs T dependent steps; a self-attention layer one step, all
    positions at once; the price is the T x T matrix of scores."""
    c = Canvas(8.6, 3.75)
    c.title("One layer of each: sequential steps of recurrence and of self-attention")
    T, r = 5, 0.16
    # left: one RNN layer unrolled over T positions
    xs = [0.6 + 0.78 * t for t in range(T)]
    y0 = 1.9
    for t, x in enumerate(xs):
        c.ax.add_patch(_circle(x, y0, r, position_color(t), c.scale))
        c.arrow((x, y0 - 0.62), (x, y0 - r))
        c.text(x, y0 - 0.78, f"$x_{t}$", fontsize=10)
        if t:
            c.arrow((xs[t - 1] + r, y0), (x - r, y0), lw=1.6)
        c.text(x, y0 + 0.34, f"step {t + 1}", fontsize=9, color=NOTE)
    c.text(2.16, 3.1, "one RNN layer", fontweight="bold")
    c.text(2.16, 2.82, "step t waits for step t−1", fontsize=10, color=NOTE)
    c.text(2.16, 0.55, "T dependent steps: O(T)", fontsize=10)
    # right: one self-attention layer, all-to-all over the positions, in parallel
    xs = [4.85 + 0.66 * t for t in range(T)]
    ys = [1.3, 2.3]
    for layer, y in enumerate(ys):
        for t, x in enumerate(xs):
            c.ax.add_patch(_circle(x, y, r * 0.85, position_color(t), c.scale))
            if layer:
                for xu in xs:
                    c.line((xu, ys[0] + r * 0.85), (x, y - r * 0.85), color="0.6", lw=0.5)
        c.text(xs[-1] + 0.3, y, ("inputs", "outputs")[layer], fontsize=9, ha="left", color=NOTE)
    for t, x in enumerate(xs):
        c.text(x, ys[0] - 0.36, f"$x_{t}$", fontsize=10)
    c.text(6.17, 3.1, "one self-attention layer", fontweight="bold")
    c.text(6.17, 2.82, "every output reads every input, all at once", fontsize=10, color=NOTE)
    c.text(6.17, 0.55, "one step, whatever T: O(1)", fontsize=10)
    c.text(4.3, 0.17, "The price: the layer builds a T × T matrix of scores per head, O(T²) time and memory.",
           fontsize=10, color="0.15")
    c.line((4.3, 0.8), (4.3, 3.25), color="0.8", lw=1.0)
    return c.fig


def _circle(x, y, r, color, scale):
    from matplotlib import patches as mpatches

    return mpatches.Circle((x, y), r, facecolor=color, edgecolor="white", linewidth=1.0 * scale, zorder=4)
