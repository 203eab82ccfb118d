"""Lecture 02's pictures: attention as a soft dictionary, and its six steps for one query.

The numbers are the lecture's own: the husky example of section 1, and the sentence "cats chase
mice" of section 3 (float64, seed 0), which the lecture computes and prints step by step.
"""

from __future__ import annotations

import math

from matplotlib import colors as mcolors

from ..style import COLORS, QKV, QKV_FILL
from .canvas import Canvas

NOTE = COLORS["note"]
OUTPUT = "#6b5fb5"                        # the output of attention (z), as in the matrix figure
OUTPUT_FILL = COLORS["hidden"]

# section 1: the query 'husky' against the keys dog, wolf, cat
DICT_KEYS = ("dog", "wolf", "cat")
DICT_VALUES = ("bark", "howl", "meow")
DICT_SCORES = (4.0, 3.0, -1.0)

# section 3: 'cats' attends over "cats chase mice" (d_model = 512, d_k = 64), as the lecture prints it
STEP_WORDS = ("cats", "chase", "mice")
STEP_SCORES = ("-4.52", "6.59", "-1.00")
STEP_SCALED = ("-0.565", "0.823", "-0.125")
STEP_WEIGHTS = ("0.15", "0.61", "0.24")


def _softmax(scores):
    top = max(scores)
    e = [math.exp(s - top) for s in scores]
    return [x / sum(e) for x in e]


def _tint(color, amount: float):
    """``color`` mixed with white: ``amount`` 1 is the colour itself, 0 is white."""
    r, g, b = mcolors.to_rgb(color)
    return (1 - amount * (1 - r), 1 - amount * (1 - g), 1 - amount * (1 - b))


def draw_soft_dictionary():
    """A query compared with every key; the softmax of the scores weighs every value; the output is
    their blend. A Python dict, by contrast, returns the value of the one equal key."""
    c = Canvas(8.6, 4.1)
    c.title("Attention as a soft dictionary: every key scored, every value blended")
    weights = _softmax(DICT_SCORES)
    ys = (2.75, 1.85, 0.95)
    head_y = 3.45
    for x, s in ((0.85, "query"), (2.55, "keys"), (3.75, "score q·k"), (5.05, "weight\n(softmax)"),
                 (6.45, "values"), (7.85, "output")):
        c.text(x, head_y, s, fontsize=10, fontweight="bold", color=NOTE)
    c.cbox(0.85, ys[1], 1.0, 0.55, "husky", fill=QKV_FILL["q"], edge=QKV["q"], fontsize=11)
    bar_x, bar_len = 4.45, 1.2
    for key, value, score, w, y in zip(DICT_KEYS, DICT_VALUES, DICT_SCORES, weights, ys):
        c.arrow((1.38, ys[1]), (2.05, y), color=QKV["q"], lw=1.1)
        c.cbox(2.55, y, 0.95, 0.5, key, fill=QKV_FILL["k"], edge=QKV["k"], fontsize=11)
        c.text(3.75, y, f"{score:+.0f}".replace("-", "−"), fontsize=11)
        c.ax.add_patch(_rect(bar_x, y - 0.13, max(bar_len * w, 0.015), 0.26, QKV["v"]))
        c.text(bar_x + bar_len * w + 0.08, y, f"{w:.2f}" if w >= 0.01 else f"{w:.3f}", fontsize=10,
               ha="left")
        c.cbox(6.45, y, 0.95, 0.5, value, fill=QKV_FILL["v"], edge=QKV["v"], fontsize=11)
        c.arrow((6.95, y), (7.45, ys[1] + (y - ys[1]) * 0.35), color=QKV["v"], lw=0.6 + 2.2 * w)
    # the output: one column whose parts are the weights
    col_x, col_w, col_h, top = 7.5, 0.7, 1.6, ys[1] + 0.8
    y = top
    for value, w in zip(DICT_VALUES, weights):
        h = col_h * w
        c.ax.add_patch(_rect(col_x, y - h, col_w, h, _tint(QKV["v"], 0.25 + 0.75 * w), edge="white"))
        if h > 0.3:
            c.text(col_x + col_w / 2, y - h / 2, value, fontsize=10)
        y -= h
    c.text(col_x + col_w / 2, top - col_h - 0.2, "a blend", fontsize=10, color=NOTE, va="top")
    c.text(4.3, 0.28, "weights = softmax(scores): positive, summing to 1.   output = Σ weight × value",
           fontsize=10, color=NOTE)
    return c.fig


def _rect(x, y, w, h, fill, edge="none"):
    from matplotlib import patches as mpatches
    return mpatches.Rectangle((x, y), w, h, facecolor=fill, edgecolor=edge, linewidth=0.8, zorder=3)


def draw_attention_steps():
    """Scaled dot-product attention for one query, step by step, with the lecture's numbers: the
    query of 'cats' scored against the key of every word, divided by sqrt(d_k), softmaxed, the values
    weighted and summed into z_1."""
    c = Canvas(8.6, 6.2)
    c.title("Attention for one query, step by step: the output z₁ of “cats”")
    cols = (4.05, 5.75, 7.45)
    cell, n = 0.17, 6
    vec_w = n * cell
    weights = [float(w) for w in STEP_WEIGHTS]
    label_x = 0.2
    rows = {"word": 5.55, "x": 5.1, "q": 4.65, "k": 4.25, "v": 3.85, "score": 3.25, "scaled": 2.7,
            "softmax": 2.15, "weighted": 1.55, "sum": 0.8}
    labels = {
        "x": ("embedding $x_j$", "1 × 512"),
        "q": ("① project: query $q_1$", "$x_1 W^Q$  (1 × 64)"),
        "k": ("     key $k_j$", "$x_j W^K$"),
        "v": ("     value $v_j$", "$x_j W^V$"),
        "score": ("② score $q_1 \\cdot k_j$", None),
        "scaled": ("③ divide by $\\sqrt{d_k} = 8$", None),
        "softmax": ("④ softmax: $w_j$", "sums to 1"),
        "weighted": ("⑤ weight × value", "$w_j v_j$"),
        "sum": ("⑥ sum: $z_1 = \\Sigma_j\\, w_j v_j$", "1 × 64"),
    }
    for key, (name, note) in labels.items():
        y = rows[key]
        c.text(label_x, y, name, fontsize=10.5, ha="left", fontweight=None if key in "xkv" else "bold")
        if note:
            c.text(2.3, y, note, fontsize=9.5, ha="left", color=NOTE)
    for j, (x, word) in enumerate(zip(cols, STEP_WORDS)):
        c.text(x, rows["word"], word, fontsize=12, fontweight="bold")
        c.cells(x - vec_w / 2, rows["x"] - cell / 2, n, cell, COLORS["embed"])
        if j == 0:
            c.cells(x - vec_w / 2, rows["q"] - cell / 2, n, cell, QKV["q"], edge="white")
        for key in "kv":
            c.cells(x - vec_w / 2, rows[key] - cell / 2, n, cell, QKV[key], edge="white")
        c.cbox(x, rows["score"], 0.95, 0.36, STEP_SCORES[j].replace("-", "−"), fill="#eeeeee", edge="0.45",
               fontsize=11)
        c.cbox(x, rows["scaled"], 0.95, 0.36, STEP_SCALED[j].replace("-", "−"), fill="#eeeeee", edge="0.45",
               fontsize=11)
        c.cbox(x, rows["softmax"], 0.95, 0.36, STEP_WEIGHTS[j], fill=_tint("#f6c343", 0.3 + 0.7 * weights[j] /
               max(weights)), edge="0.45", fontsize=11)
        c.arrow((x, rows["score"] - 0.2), (x, rows["scaled"] + 0.19), lw=0.9, head=7)
        c.arrow((x, rows["scaled"] - 0.2), (x, rows["softmax"] + 0.19), lw=0.9, head=7)
        shade = _tint(QKV["v"], 0.12 + 0.88 * weights[j] / max(weights))
        c.cells(x - vec_w / 2, rows["weighted"] - cell / 2, n, cell, [shade] * n, edge="white")
        c.arrow((x, rows["softmax"] - 0.2), (x, rows["weighted"] + cell / 2 + 0.04), lw=0.9, head=7)
        c.arrow((x, rows["weighted"] - cell / 2 - 0.04), (cols[1] + (j - 1) * 0.3, rows["sum"] + cell / 2 + 0.06),
                lw=0.6 + 2.0 * weights[j], color=_tint(QKV["v"], 0.9))
    c.cells(cols[1] - vec_w / 2, rows["sum"] - cell / 2, n, cell, OUTPUT, edge="white")
    c.text(cols[1] + vec_w / 2 + 0.15, rows["sum"], "z₁", fontsize=12, ha="left", color=OUTPUT,
           fontweight="bold")
    c.text(4.3, 0.22, "The query of “cats” against the key of every word; the others’ queries take their turn "
           "the same way.", fontsize=9.5, color=NOTE)
    return c.fig


FIGURES = {
    "soft_dictionary": draw_soft_dictionary,
    "attention_steps": draw_attention_steps,
}
