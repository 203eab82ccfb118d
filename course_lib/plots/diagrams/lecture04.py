"""Lecture 04's own figures: masked-language-model pre-training, the task that trains an encoder's
embeddings and layers from raw text (BERT, MiniLM)."""

from __future__ import annotations

import matplotlib.patches as mpatches

from ..style import COLORS
from .canvas import Canvas

NOTE = COLORS["note"]
MASKED = "#fbd38d"


def draw_mlm_pretraining():
    """Masked-language-model pre-training (Devlin et al. 2019): hide some tokens of a sentence,
    let the encoder read the rest from both sides, and score the vocabulary at each hidden position
    with the output layer; the loss is the cross-entropy of the token that was there."""
    c = Canvas(8.6, 4.3)
    c.title("Masked-language-model pre-training: the sentence is its own label")
    tokens = ["[CLS]", "the", "cat", "sat", "on", "the", "[MASK]", "[SEP]"]
    masked = tokens.index("[MASK]")
    xs = [0.75 + 0.72 * i for i in range(len(tokens))]
    y_tok, w, h = 0.75, 0.64, 0.34
    for i, (x, tok) in enumerate(zip(xs, tokens)):
        c.cbox(x, y_tok, w, h, tok, fill=MASKED if i == masked else "white", fontsize=10)
        c.arrow((x, y_tok + h / 2 + 0.02), (x, 1.43), lw=1.0, head=7)
    c.text(0.43, 0.3, "input: “the cat sat on the mat”, with “mat” hidden", fontsize=10, ha="left", color="0.15")
    left, right = 0.4, xs[-1] + 0.35
    c.box(left, 1.45, right - left, 0.6, "encoder: every position reads the whole sentence, on both sides",
          fill=COLORS["frame"], edge="0.5", fontsize=10)
    for i, x in enumerate(xs):
        c.arrow((x, 2.07), (x, 2.33), lw=1.0, head=7)
        c.cells(x - 0.2, 2.35, 4, 0.1, colors=MASKED if i == masked else COLORS["hidden"], edge="0.4")
    xm = xs[masked]
    c.arrow((xm, 2.47), (xm, 2.8), lw=1.2, head=8)
    c.cbox(xm, 3.05, 1.75, 0.46, "output layer + softmax", fill=COLORS["out"], fontsize=10)
    c.text(xm - 0.08, 2.64, "$h_t$", fontsize=10, ha="right")
    # the prediction at the hidden position
    words, probs = ["mat", "floor", "bed", "sofa"], [0.58, 0.17, 0.09, 0.05]
    x_bar, y_top, row = 7.25, 3.45, 0.27
    c.arrow((xm + 0.9, 3.05), (x_bar - 0.6, 3.05), lw=1.2, head=8)
    for i, (word, p) in enumerate(zip(words, probs)):
        y = y_top - i * row
        c.text(x_bar - 0.08, y, word, fontsize=10, ha="right", style="italic")
        c.ax.add_patch(mpatches.Rectangle((x_bar, y - row * 0.33), p * 1.5, row * 0.66,
                                          facecolor="#2b6cb0" if i == 0 else "#9bb8d8", edgecolor="none", zorder=3))
        c.text(x_bar + p * 1.5 + 0.06, y, f"{p:.2f}", fontsize=9, ha="left", color=NOTE)
    c.text(x_bar + 0.3, 2.2, "loss = −log p(mat)", fontsize=10, color="0.15")
    c.text(x_bar + 0.3, 1.55, "15 % of the tokens are\nchosen; of those, 80 %\nbecome [MASK], 10 % a\n"
           "random token, 10 % stay", fontsize=9, color=NOTE, va="top")
    return c.fig


FIGURES = {"mlm_pretraining": draw_mlm_pretraining}
