"""Attention (lecture 02): Q, K, V from one embedding; the matrix form; multi-head attention."""

from __future__ import annotations

import numpy as np

from ..style import COLORS, QKV, QKV_FILL
from .canvas import Canvas

NOTE = COLORS["note"]
HEAD_FILLS = ("#c9e4de", "#f2d0dd")      # head 1, head 2 in the multi-head figure


def draw_qkv():
    """One input embedding x_i projected by W^Q, W^K, W^V into q_i, k_i, v_i."""
    c = Canvas(8.4, 3.9)
    c.title("Query, key and value: three projections of the same embedding")
    cell, d_model, d_k = 0.2, 6, 3
    x0, y_mid = 0.45, 1.75
    c.cells(x0, y_mid - cell / 2, d_model, cell, COLORS["embed"])
    c.text(x0 + d_model * cell / 2, y_mid - 0.35, "$x_i$   (1 × d_model)", va="top")
    c.text(x0 + d_model * cell / 2, y_mid + 0.3, "token i", fontsize=9, color=NOTE)
    rows = (("q", "Q", 2.85, "query: what token i looks for"),
            ("k", "K", 1.75, "key: what token i offers to be found by"),
            ("v", "V", 0.65, "value: what token i passes on"))
    mx = 2.6
    for key, name, y, meaning in rows:
        w, h = d_k * 0.13, d_model * 0.13
        c.arrow((x0 + d_model * cell + 0.08, y_mid), (mx - 0.55, y), color=QKV[key], lw=1.3)
        c.text(mx - 0.3, y, "×", fontsize=13)
        c.matrix(mx, y - h / 2, d_model, d_k, cell=0.13, fill=QKV_FILL[key], edge=QKV[key])
        c.text(mx + w + 0.12, y + h / 2 - 0.06, f"$W^{name}$", fontsize=11, color=QKV[key], ha="left", va="top")
        c.text(mx + w + 0.12, y - h / 2 + 0.06, f"d_model × d_{'v' if key == 'v' else 'k'}", fontsize=9,
               color=NOTE, ha="left", va="bottom")
        c.text(mx + w + 1.45, y, "=", fontsize=13)
        ox = mx + w + 1.7
        c.cells(ox, y - cell / 2, d_k, cell, QKV[key], edge="white")
        c.text(ox + d_k * cell + 0.15, y + 0.1, f"${key}_i = x_i W^{name}$", fontsize=11, color=QKV[key],
               ha="left", va="bottom")
        c.text(ox + d_k * cell + 0.15, y - 0.02, meaning, fontsize=9.5, color=NOTE, ha="left", va="top")
    c.text(4.2, 0.12, "The same three matrices serve every position i; they are learned.", fontsize=9.5,
           color=NOTE)
    return c.fig


def _labelled(c: Canvas, x, y, rows, cols, fill, edge, name, shape, cell=0.22, name_color=None, highlight_row=None,
              highlight=None):
    """A matrix with its name above and its shape below; returns its width."""
    w, h = c.matrix(x, y, rows, cols, cell=cell, fill=fill, edge=edge,
                    highlight_rows=() if highlight_row is None else (highlight_row,), highlight=highlight)
    c.text(x + w / 2, y + h + 0.16, name, fontsize=11, color=name_color or edge, fontweight="bold")
    c.text(x + w / 2, y - 0.14, shape, fontsize=9.5, color=NOTE, va="top")
    return w


def draw_attention_matrix():
    """softmax(Q K^T / sqrt(d_k)) V in matrix form, with every shape."""
    c = Canvas(7.95, 4.4)                      # cropped to what is drawn: no blank band at an edge
    c.title("Attention in matrix form: softmax(QKᵀ / √d_k) V")
    t_q, t_k, d_k, d_v, cell = 4, 5, 3, 3, 0.22
    y1 = 2.62
    x = 0.4
    x += _labelled(c, x, y1, t_q, d_k, QKV_FILL["q"], QKV["q"], "Q", "(T_q, d_k)", highlight_row=1,
                   highlight="#9ec2ea") + 0.25
    c.text(x, y1 + t_q * cell / 2, "×", fontsize=14)
    x += 0.25
    x += _labelled(c, x, y1 + (t_q - d_k) * cell / 2, d_k, t_k, QKV_FILL["k"], QKV["k"], "Kᵀ", "(d_k, T_k)") + 0.25
    c.text(x, y1 + t_q * cell / 2, "=", fontsize=14)
    x += 0.25
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(t_q, t_k))
    xs = x
    x += _labelled(c, x, y1, t_q, t_k, "#eeeeee", "0.35", "scores S", "(T_q, T_k)", name_color="0.15",
                   highlight_row=1, highlight="#cfcfcf") + 0.2
    c.arrow((x, y1 + t_q * cell / 2), (x + 1.15, y1 + t_q * cell / 2))
    c.text(x + 0.58, y1 + t_q * cell / 2 + 0.3, "÷ √d_k, then", fontsize=9.5, color=NOTE)
    c.text(x + 0.58, y1 + t_q * cell / 2 - 0.3, "softmax by row", fontsize=9.5, color=NOTE)
    x += 1.3
    weights = np.exp(scores / np.sqrt(d_k))
    weights /= weights.sum(axis=1, keepdims=True)
    _weights_matrix(c, x, y1, weights, cell, row=1)
    c.text(x + t_k * cell / 2, y1 + t_q * cell + 0.16, "weights A", fontsize=11, fontweight="bold")
    c.text(x + t_k * cell / 2, y1 - 0.14, "(T_q, T_k)\neach row sums to 1", fontsize=9.5, color=NOTE, va="top")
    # second row: A V
    y2, x = 0.45, 2.0
    _weights_matrix(c, x, y2 + 0.11, weights, cell, row=1)
    c.text(x + t_k * cell / 2, y2 + 0.11 + t_q * cell + 0.16, "A", fontsize=11, fontweight="bold")
    c.text(x + t_k * cell / 2, y2 - 0.03, "(T_q, T_k)", fontsize=9.5, color=NOTE, va="top")
    x += t_k * cell + 0.25
    c.text(x, y2 + t_k * cell / 2, "×", fontsize=14)
    x += 0.25
    x += _labelled(c, x, y2, t_k, d_v, QKV_FILL["v"], QKV["v"], "V", "(T_k, d_v)") + 0.25
    c.text(x, y2 + t_k * cell / 2, "=", fontsize=14)
    x += 0.25
    w = _labelled(c, x, y2 + 0.11, t_q, d_v, COLORS["hidden"], "0.3", "output", "(T_q, d_v)", name_color="0.15",
                  highlight_row=1, highlight="#cbc7e6")
    c.text(x + w + 0.25, y2 + 0.55, "row i: a weighted average\nof the value rows", fontsize=9.5, color=NOTE,
           ha="left")
    c.text(xs + t_k * cell / 2, y1 - 0.42, "row i: query i against every key", fontsize=9.5, color=NOTE, va="top")
    return c.fig


def _weights_matrix(c: Canvas, x, y, weights, cell, row=None):
    """The attention weights as cells shaded by value (viridis, as every attention map of the course)."""
    import matplotlib.pyplot as plt
    from matplotlib import patches as mpatches

    cmap = plt.get_cmap("viridis")
    rows, cols = weights.shape
    for r in range(rows):
        for k in range(cols):
            c.ax.add_patch(mpatches.Rectangle((x + k * cell, y + (rows - 1 - r) * cell), cell, cell,
                                              facecolor=cmap(weights[r, k] / weights.max()), edgecolor="white",
                                              linewidth=0.6 * c.scale, zorder=3))
    if row is not None:
        c.ax.add_patch(mpatches.Rectangle((x, y + (rows - 1 - row) * cell), cols * cell, cell, fill=False,
                                          edgecolor="#c53030", linewidth=1.6 * c.scale, zorder=5))


def draw_multi_head():
    """Multi-head attention: project X with W^Q, W^K, W^V into Q, K, V (T, d_model), split their columns
    into h blocks of d_k, attend per head, concatenate the heads, project with W^O."""
    c = Canvas(8.85, 4.0)
    c.title("Multi-head attention: project, split into h heads, attend per head, concatenate, project")
    T, d, h, cell = 4, 8, 2, 0.09
    mw, mh, sw = d * cell, T * cell, d // h * cell
    y_mid, rows = 1.95, {"q": 2.95, "k": 1.95, "v": 0.95}
    # X
    x = 0.2
    c.matrix(x, y_mid - mh / 2, T, d, cell=cell, fill=COLORS["embed"])
    c.text(x + mw / 2, y_mid + mh / 2 + 0.16, "X", fontsize=11, fontweight="bold")
    c.text(x + mw / 2, y_mid - mh / 2 - 0.1, "(T, d_model)", fontsize=9.5, color=NOTE, va="top")
    # one projection per role, each (d_model, d_model); its output split by columns into h blocks
    bx, qx = x + mw + 0.22, x + mw + 1.04
    for key, y in rows.items():
        c.arrow((x + mw + 0.05, y_mid), (bx, y), lw=1.1)
        c.box(bx, y - 0.19, 0.62, 0.38, f"× $W^{key.upper()}$", fill=QKV_FILL[key], edge=QKV[key])
        c.arrow((bx + 0.62, y), (qx - 0.03, y), lw=1.1)
        for i in range(h):
            c.ax.add_patch(_rect(qx + i * sw, y - mh / 2, sw, mh, HEAD_FILLS[i]))
        c.matrix(qx, y - mh / 2, T, d, cell=cell, fill="none", edge=QKV[key])
        c.line((qx + sw, y - mh / 2 - 0.05), (qx + sw, y + mh / 2 + 0.05), color=QKV[key], lw=2.2, zorder=4)
        c.text(qx + mw / 2, y + mh / 2 + 0.15, key.upper(), fontsize=10.5, color=QKV[key], fontweight="bold")
    # the split: block i of Q, K and V goes to head i
    sx, hx, hw = qx + mw + 0.14, qx + mw + 0.55, 1.8
    c.line((sx, rows["v"]), (sx, rows["q"]), color=COLORS["line"], lw=1.1)
    for y in rows.values():
        c.line((qx + mw + 0.04, y), (sx, y), color=COLORS["line"], lw=1.1)
    head_y = (rows["q"], rows["v"])
    ox = hx + hw + 0.25
    for i, y in enumerate(head_y):
        c.arrow((sx, y), (hx, y), lw=1.1)
        sub = "₁₂"[i]
        c.box(hx, y - 0.32, hw, 0.64, f"head {i + 1}\nsoftmax(Q{sub}K{sub}ᵀ/√d_k) V{sub}", fill=HEAD_FILLS[i],
              fontsize=9)
        c.arrow((hx + hw, y), (ox - 0.03, y), lw=1.1)
        c.matrix(ox, y - mh / 2, T, d // h, cell=cell, fill=HEAD_FILLS[i])
        c.text(ox + sw / 2, y - mh / 2 - 0.1, "(T, d_k)", fontsize=9, color=NOTE, va="top")
    # concat, W^O, output
    cx = ox + sw + 0.38
    for i, y in enumerate(head_y):
        c.arrow((ox + sw + 0.05, y), (cx + (i + 0.5) * sw, y_mid + (mh / 2 + 0.04) * (1 if i == 0 else -1)), lw=1.1)
    for i in range(h):
        c.ax.add_patch(_rect(cx + i * sw, y_mid - mh / 2, sw, mh, HEAD_FILLS[i]))
    c.matrix(cx, y_mid - mh / 2, T, d, cell=cell, fill="none")
    c.text(cx - 0.1, y_mid + 0.03, "concat", fontsize=10, fontweight="bold", ha="right", va="bottom")
    c.text(cx - 0.1, y_mid - 0.03, "(T, h · d_k)", fontsize=9, color=NOTE, ha="right", va="top")
    wx = cx + mw + 0.18
    c.arrow((cx + mw + 0.04, y_mid), (wx, y_mid), lw=1.1)
    c.box(wx, y_mid - 0.19, 0.62, 0.38, "× $W^O$", fill=COLORS["out"])
    c.arrow((wx + 0.62, y_mid), (wx + 0.8, y_mid), lw=1.1)
    c.matrix(wx + 0.82, y_mid - mh / 2, T, d, cell=cell, fill=COLORS["hidden"])
    c.text(wx + 0.82 + mw / 2, y_mid + mh / 2 + 0.16, "output", fontsize=10, fontweight="bold")
    c.text(wx + 0.82 + mw / 2, y_mid - mh / 2 - 0.1, "(T, d_model)", fontsize=9.5, color=NOTE, va="top")
    c.text(c.width / 2, 0.3, f"Q, K, V: (T, d_model) each, split by columns into h blocks of d_k = d_model / h "
           f"(here h = {h}); block i goes to head i", fontsize=9.5, color=NOTE)
    return c.fig


def _rect(x, y, w, h, color):
    from matplotlib import patches as mpatches

    return mpatches.Rectangle((x, y), w, h, facecolor=color, edgecolor="none", zorder=2.5)
