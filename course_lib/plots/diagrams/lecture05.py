"""Positional encodings (lecture 05): what attention without positions cannot see, and RoPE's
rotation of each pair of features by an angle that grows with the position."""

from __future__ import annotations

import math

from matplotlib import patches as mpatches

from ..style import COLORS, position_color
from .canvas import Canvas

NOTE = COLORS["note"]
SUB = "₀₁₂₃₄₅₆₇₈₉"
WORDS = ("dog", "bites", "man")
# one fixed output vector per word (4 features, values in [-1, 1]): the same word, the same vector
VECTORS = {"dog": (0.8, -0.3, 0.5, -0.7), "bites": (-0.6, 0.9, 0.1, 0.4), "man": (0.2, -0.8, -0.9, 0.6)}


def _sentence(c: Canvas, x0, y, order, title):
    """One sentence through the position-blind encoder: tokens, the box, one output vector per token."""
    cell, step = 0.22, 1.15
    c.text(x0 + step, y + 2.85, title, fontsize=11, fontweight="bold")
    c.cbox(x0 + step, y + 1.3, 3.2, 0.55, "encoder without positions", fill=COLORS["frame"], edge="0.45",
           fontsize=10)
    for t, word in enumerate(order):
        x = x0 + t * step
        c.cbox(x, y + 2.1, 0.86, 0.36, word, fill=COLORS["embed"], edge="0.4", fontsize=10.5, style="italic")
        c.text(x, y + 2.45, f"position {t}", fontsize=9, color=NOTE)       # above the word: the arrow runs below
        c.arrow((x, y + 1.92), (x, y + 1.6), lw=1.0, head=7)
        c.arrow((x, y + 1.0), (x, y + 0.72), lw=1.0, head=7)
        c.cells(x - 2 * cell, y + 0.45, 4, cell, values=VECTORS[word], cmap="RdBu_r")
        c.text(x, y + 0.25, f"h({word})", fontsize=10)


def draw_permutation_blind():
    """Two orders of one sentence through an encoder without positions: the same three output
    vectors, listed in another order, so any order-free summary (the mean) is identical."""
    c = Canvas(8.6, 4.55)
    c.title("Without positions, attention sees a set of tokens, not a sequence")
    _sentence(c, 0.75, 1.05, ("dog", "bites", "man"), "“dog bites man”")
    _sentence(c, 5.15, 1.05, ("man", "bites", "dog"), "“man bites dog”")
    for (a, b) in ((0, 2), (2, 0)):                                  # dog <-> man: the same vectors, swapped
        xa, xb = 0.75 + a * 1.15, 5.15 + b * 1.15
        c.arrow((xa, 1.12), (xb, 1.12), color=NOTE, lw=0.9, linestyle=(0, (3, 3)), head=7,
                connection=f"arc3,rad={0.06 if a == 0 else 0.08}")
    c.text(4.3, 0.62, "the same vectors, only swapped: their mean, or a [CLS]-style summary, is identical",
           fontsize=10, color="0.15")
    c.text(4.3, 0.3, "h(word) depends on the word and on which other words are present, never on where they are",
           fontsize=10, color=NOTE)
    return c.fig


def _pair(c: Canvas, cx, cy, angle, color, r=0.36):
    """A unit circle of radius r at (cx, cy) with a vector at ``angle`` (radians, from the x axis)."""
    c.ax.add_patch(mpatches.Circle((cx, cy), r, fill=False, edgecolor="0.75", linewidth=0.9 * c.scale, zorder=2))
    c.line((cx - r - 0.05, cy), (cx + r + 0.05, cy), color="0.85", lw=0.7)
    c.line((cx, cy - r - 0.05), (cx, cy + r + 0.05), color="0.85", lw=0.7)
    c.arrow((cx, cy), (cx + r * math.cos(angle), cy + r * math.sin(angle)), color=color, lw=1.6, head=8, zorder=4)


def draw_rope_rotation():
    """RoPE: the query (or key) of the token at position m has each feature pair (2i, 2i+1)
    rotated by the angle m * theta_i; fast pairs turn a lot per position, slow pairs hardly."""
    c = Canvas(8.6, 4.85)
    c.title("RoPE: each pair of features is turned by m·θᵢ, an angle growing with the position m")
    positions = (0, 1, 2, 3)
    thetas = (1.0, 0.3, 0.05)                                        # theta_i of three pairs, fast to slow
    base = math.radians(25)                                          # the pair's direction in q, at m = 0
    x0, dx, y0, dy = 2.75, 1.45, 3.5, 1.08
    for j, m in enumerate(positions):
        c.text(x0 + j * dx, y0 + 0.65, f"position m = {m}", fontsize=10, fontweight="bold",
               color=position_color(m))
    for i, theta in enumerate(thetas):
        y = y0 - i * dy
        c.text(0.2, y + 0.12, f"pair {i}: features {2 * i}, {2 * i + 1}", fontsize=10, ha="left")
        c.text(0.2, y - 0.17, f"θ{SUB[i]} = {theta:g} rad per position", fontsize=9.5, ha="left", color=NOTE)
        for j, m in enumerate(positions):
            _pair(c, x0 + j * dx, y, base + m * theta, position_color(m))
            c.text(x0 + j * dx + 0.43, y - 0.36, f"{math.degrees(base + m * theta):.0f}°", fontsize=9,
                   ha="left", color=NOTE)
    c.text(4.3, 0.68, "illustrative angles: RoPE's own are θᵢ = 10000^(−2i/d), 1 rad for pair 0, "
                      "then falling geometrically", fontsize=9.5, color=NOTE, style="italic")
    c.text(4.3, 0.4, "q·k after rotating q by m·θᵢ and k by n·θᵢ depends only on the angle between them, (n − m)·θᵢ:",
           fontsize=10, color="0.15")
    c.text(4.3, 0.12, "the score sees the offset n − m, not the absolute positions; lengths never change",
           fontsize=10, color=NOTE)
    return c.fig


FIGURES = {
    "permutation_blind": draw_permutation_blind,
    "rope_rotation": draw_rope_rotation,
}
