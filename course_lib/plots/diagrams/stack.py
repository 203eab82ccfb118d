"""Layers as block diagrams: a column of sublayers with residual connections, and the encoder.

A layer is a list of steps drawn upwards from a starting height:

- ``("branch",)``: the point where a residual connection leaves the main path;
- ``("block", label, colour_key)``: a sublayer box (``"attn"`` boxes get Q, K, V inputs);
- ``("add",)``: a circled plus where the residual joins;
- ``("addnorm",)``: an "Add & Norm" box where the residual joins (post-LN).
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from ...errors import check_int
from ..describe import describe
from ..style import COLORS, QKV, styled
from .canvas import Canvas

POST_LN = [("branch",), ("block", "multi-head self-attention", "attn"), ("addnorm",),
           ("branch",), ("block", "feed-forward (per position)", "ffn"), ("addnorm",)]
PRE_LN = [("branch",), ("block", "LayerNorm", "norm"), ("block", "multi-head self-attention", "attn"), ("add",),
          ("branch",), ("block", "LayerNorm", "norm"), ("block", "feed-forward (per position)", "ffn"), ("add",)]

BLOCK_H = {"attn": 0.5, "ffn": 0.5, "norm": 0.36, "sublayer": 0.5}
GAP = 0.2
QKV_GAP = 0.34          # room under an attention box for its Q, K, V arrows


def step_height(step) -> float:
    kind = step[0]
    if kind == "branch":
        return 0.14
    if kind == "add":
        return 0.26 + GAP
    if kind == "addnorm":
        return 0.36 + GAP
    return BLOCK_H[step[2]] + (QKV_GAP if step[2] == "attn" else GAP)


def stack_height(steps) -> float:
    return sum(step_height(s) for s in steps)


def _qkv_fan(c: Canvas, cx, y, top, width, cross=False):
    """Arrows from the main path at y into the box bottom at ``top``, labelled Q, K, V (only Q
    for cross-attention, whose K and V come from elsewhere: see ``cross_inputs``)."""
    fan = ((0.25, "Q", "q"),) if cross else ((-0.3, "Q", "q"), (0.0, "K", "k"), (0.3, "V", "v"))
    for frac, name, key in fan:
        dx = width * frac
        c.line((cx, y), (cx + dx, y + 0.1), color=QKV[key], lw=1.1)
        c.arrow((cx + dx, y + 0.1), (cx + dx, top), color=QKV[key], lw=1.1, head=8)
        c.text(cx + dx + 0.05, (y + 0.1 + top) / 2, name, fontsize=9, ha="left", color=QKV[key], fontweight="bold")


def cross_inputs(box) -> dict:
    """Where the K and V arrows of a cross-attention box enter: ``{"k": (x, y), "v": (x, y)}``."""
    x, y, w, _ = box
    return {"k": (x + 0.12 * w, y), "v": (x + 0.34 * w, y)}


def draw_steps(c: Canvas, cx: float, y: float, steps, width: float = 2.9, res_offset: float = 0.3,
               names=None) -> tuple[float, dict]:
    """Draw ``steps`` upwards from (cx, y); returns the top y and ``{label: (x, y, w, h)}`` of the boxes."""
    res_x = cx - width / 2 - res_offset
    branch, boxes = None, {}
    for step in steps:
        kind = step[0]
        if kind == "branch":
            c.line((cx, y), (cx, y + 0.14))
            branch = y + 0.07
            c.dot(cx, branch)
            y += 0.14
        elif kind == "add":
            c.arrow((cx, y), (cx, y + GAP))
            c.plus(cx, y + GAP + 0.13)
            c.arrow((cx, branch), (res_x, branch), (res_x, y + GAP + 0.13), (cx - 0.13, y + GAP + 0.13),
                    color=COLORS["residual"])
            y += GAP + 0.26
        elif kind == "addnorm":
            c.arrow((cx, y), (cx, y + GAP))
            c.box(cx - width / 2, y + GAP, width, 0.36, "Add & Norm", fill=COLORS["norm"])
            c.arrow((cx, branch), (res_x, branch), (res_x, y + GAP + 0.18), (cx - width / 2, y + GAP + 0.18),
                    color=COLORS["residual"])
            y += GAP + 0.36
        else:
            label, key = step[1], step[2]
            h, w = BLOCK_H[key], width * (0.62 if key == "norm" else 1.0)
            gap = QKV_GAP if key == "attn" else GAP
            if key == "attn":
                c.line((cx, y), (cx, y + 0.04))
                _qkv_fan(c, cx, y + 0.04, y + gap, width, cross=step[3:] == ("cross",))
            else:
                c.arrow((cx, y), (cx, y + gap))
            c.box(cx - w / 2, y + gap, w, h, label, fill=COLORS[key])
            boxes[label] = (cx - w / 2, y + gap, w, h)
            y += gap + h
    return y, boxes


def embedding_input(c: Canvas, cx: float, y: float, width: float, ids_text="token ids  (B, T)") -> float:
    """Token ids -> embedding x sqrt(d_model) -> plus the positional encoding; returns the top y."""
    c.text(cx, y + 0.12, ids_text, fontsize=10, style="italic")
    c.arrow((cx, y + 0.25), (cx, y + 0.45))
    c.box(cx - width / 2, y + 0.45, width, 0.42, "token embedding × √d_model", fill=COLORS["embed"])
    c.arrow((cx, y + 0.87), (cx, y + 1.05))
    c.plus(cx, y + 1.18)
    c.box(cx - width / 2 - 1.2, y + 0.98, 1.0, 0.42, "positional\nencoding", fill=COLORS["position"],
          edge=COLORS["position_edge"], fontsize=9)
    c.arrow((cx - width / 2 - 0.2, y + 1.18), (cx - 0.13, y + 1.18), color=COLORS["position_edge"])
    return y + 1.31


def _encoder_canvas_size(norm_first: bool, show_mask: bool = True):
    """(width, height): room for the embedding, the layer, the final LayerNorm (pre-LN), the output;
    the width leaves room for the mask's label on the right only when it is shown."""
    steps, final = (PRE_LN, 0.56) if norm_first else (POST_LN, 0.0)
    return 6.0 if show_mask else 4.75, 1.31 + 0.25 + stack_height(steps) + 0.2 + final + 0.6 + 0.45


@styled
def draw_encoder_diagram(num_layers: int = 6, norm_first: bool = False, *, d_model: int | None = None,
                         activation: str = "ReLU", show_mask: bool = True, title: str | None = None, ax=None):
    """The encoder stack as a block diagram, data flowing upwards.

    Token embedding (scaled by sqrt(d_model)) plus positional encoding, then ``num_layers``
    identical layers, each a multi-head self-attention block and a position-wise feed-forward
    block (Linear -> ``activation`` -> Linear) with a residual connection around each.
    ``norm_first=False`` draws the paper's post-LN layer, x = LayerNorm(x + Sublayer(x));
    ``True`` draws pre-LN, x = x + Sublayer(LayerNorm(x)), with a final LayerNorm after the stack.

    Drawn into an Axes (``ax=``), both variants use a canvas of the same size, so post-LN and pre-LN
    side by side share one scale (``draw_norm_placements``); the title is written inside the
    canvas. Without the mask the canvas is narrower (4.75 in instead of 6), so that two fit a
    notebook's width with their text at 8 pt or more.

    Returns:
        ``(fig, ax)``.
    """
    check_int("num_layers", num_layers, 1)
    width, height = _encoder_canvas_size(norm_first or ax is not None, show_mask)   # into an Axes: one size for both
    c = Canvas(width, height, ax)
    cx, bw = 2.75, 2.9
    y = embedding_input(c, cx, 0.1, bw)
    steps = [(s[0], s[1].replace("feed-forward (per position)", f"feed-forward: Linear, {activation}, Linear"), s[2])
             if s[0] == "block" else s for s in (PRE_LN if norm_first else POST_LN)]
    c.line((cx, y), (cx, y + 0.25))
    frame_bottom = y + 0.12
    top, boxes = draw_steps(c, cx, y + 0.25, steps, width=bw)
    frame_top = top + 0.12
    c.box(cx - bw / 2 - 0.55, frame_bottom, bw + 0.9, frame_top - frame_bottom, fill=COLORS["frame"], edge="0.5",
          linestyle=(0, (4, 3)), zorder=1, rounding=0.15)
    c.text(cx - bw / 2 - 0.65, (frame_bottom + frame_top) / 2, f"{num_layers} ×", fontsize=14, ha="right",
           fontweight="bold", color="0.25")
    c.text(cx + bw / 2 + 0.3, frame_bottom - 0.04, "one layer, " + ("pre-LN" if norm_first else "post-LN"),
           fontsize=9, ha="right", va="top", style="italic", color=COLORS["note"])
    if show_mask:
        ax_, ay, aw, ah = boxes["multi-head self-attention"]
        c.arrow((width - 0.05, ay + ah / 2), (ax_ + aw, ay + ah / 2), color=COLORS["note"], lw=1.0, head=8)
        c.text(width - 0.08, ay + ah + 0.05, "key_padding_mask\n(True = padding)", fontsize=8, ha="right",
               va="bottom", color=COLORS["note"])
    y = top
    if norm_first:
        c.arrow((cx, y), (cx, y + 0.2))
        c.box(cx - bw * 0.31, y + 0.2, bw * 0.62, 0.36, "final LayerNorm", fill=COLORS["norm"])
        y += 0.56
    c.arrow((cx, y), (cx, y + 0.3))
    d_txt = f"d_model = {d_model}" if d_model else "d_model"
    c.text(cx, y + 0.45, f"contextual vectors  (B, T, {d_txt})", fontsize=10, style="italic")
    c.title(title if title is not None else
            f"Transformer encoder ({'pre-LN' if norm_first else 'post-LN, as in the paper'})")
    return c.fig, c.ax


@styled
def draw_norm_placements(num_layers: int = 6):
    """Post-LN (the paper) and pre-LN side by side, on one scale, both stacks starting at the same
    height: lecture 03's figure. 9 in wide (a notebook's width), its text at 8 pt or more.

    Returns:
        ``(fig, axes)``.
    """
    fig, axes = plt.subplots(1, 2, figsize=(9, 6.4), layout="constrained")
    titles = ("post-LN (the paper)", "pre-LN (GPT-2 and most models since)")
    top = _encoder_canvas_size(True, show_mask=False)[1] - 0.3                # the taller stack, pre-LN's
    for ax, norm_first, title in zip(axes, (False, True), titles):
        draw_encoder_diagram(num_layers=num_layers, norm_first=norm_first, show_mask=False, ax=ax, title="")
        ax.set_ylim(0, top)                  # two equal panels, on one scale, both stacks starting at the bottom
        ax.set_title(title, fontsize=11, fontweight="bold")
    # post-LN's stack is shorter (no final LayerNorm, no separate norm boxes): what differs, in the room above it
    post_top = _encoder_canvas_size(False, show_mask=False)[1] - 0.3
    axes[0].text(2.75, (post_top + top) / 2 + 0.05,
                 "The norm sits on the residual path:\nx ← LayerNorm(x + Sublayer(x)), twice a layer.\n"
                 "Pre-LN normalises the sublayer's input,\nx ← x + Sublayer(LayerNorm(x)),\n"
                 "and needs a final LayerNorm.", ha="center", va="center", fontsize=9, color=COLORS["note"],
                 linespacing=1.35)
    describe(axes[0], f"Two encoder stacks of {num_layers} layers on one scale. Post-LN (the paper), left: "
             "x becomes LayerNorm(x + Sublayer(x)) after each of the two sublayers, no final LayerNorm. Pre-LN, right: "
             "x becomes x + Sublayer(LayerNorm(x)), the norm on the sublayer's input, and a final LayerNorm after the "
             "stack")
    return fig, axes
