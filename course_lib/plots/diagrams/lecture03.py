"""Lecture 03's own figures: dropout, where the paper applies it (and where PyTorch and the Annotated
Transformer add it), and what it does in training against evaluation."""

from __future__ import annotations

from ..style import COLORS
from .canvas import Canvas

NOTE = COLORS["note"]
DROP = "#f3d9c4"          # dropout boxes


def _flow_sublayer(c: Canvas, y: float):
    """x -> Sublayer -> Dropout -> (+ x) -> LayerNorm, left to right, residual below."""
    c.text(0.3, y, "x", fontsize=11, style="italic")
    c.arrow((0.42, y), (0.62, y))
    c.box(0.64, y - 0.2, 1.05, 0.4, "Sublayer", fill=COLORS["sublayer"])
    c.arrow((1.71, y), (1.91, y))
    c.box(1.93, y - 0.2, 0.9, 0.4, "Dropout", fill=DROP)
    c.arrow((2.85, y), (3.02, y))
    c.plus(3.15, y)
    c.arrow((3.28, y), (3.45, y))
    c.box(3.47, y - 0.2, 1.05, 0.4, "LayerNorm", fill=COLORS["norm"])
    c.dot(0.52, y, color=COLORS["residual"])
    c.arrow((0.52, y), (0.52, y - 0.42), (3.15, y - 0.42), (3.15, y - 0.13), color=COLORS["residual"], head=8)
    c.text(1.85, y - 0.6, "residual", fontsize=9, color=COLORS["residual"])


def _flow_input(c: Canvas, y: float):
    """E[tokens] * sqrt(d_model) + PE -> Dropout -> first layer."""
    c.box(4.88, y - 0.2, 1.37, 0.4, "√d_model · E[tok]", fill=COLORS["embed"])
    c.arrow((6.27, y), (6.45, y))
    c.plus(6.58, y)
    c.box(6.18, y - 0.75, 0.8, 0.34, "PE", fill=COLORS["position"])
    c.arrow((6.58, y - 0.41), (6.58, y - 0.13))
    c.arrow((6.71, y), (6.88, y))
    c.box(6.9, y - 0.2, 0.9, 0.4, "Dropout", fill=DROP)
    c.arrow((7.82, y), (8.05, y))
    c.text(8.1, y, "layer 1", fontsize=10, ha="left")


def _flow_added(c: Canvas, y: float):
    """The two places PyTorch and the Annotated Transformer add: attention weights, FFN hidden layer."""
    dashed = (0, (4, 2))
    c.box(0.3, y - 0.2, 1.55, 0.4, "softmax(QKᵀ/√d_k)", fill=COLORS["sublayer"], fontsize=9.5)
    c.arrow((1.87, y), (2.05, y))
    c.box(2.07, y - 0.2, 0.9, 0.4, "Dropout", fill=DROP, linestyle=dashed)
    c.arrow((2.99, y), (3.17, y))
    c.box(3.19, y - 0.2, 0.75, 0.4, "· V", fill=COLORS["sublayer"])
    c.text(2.1, y + 0.42, "3. attention weights", fontsize=10, fontweight="bold")
    c.box(4.88, y - 0.2, 1.35, 0.4, "Linear, ReLU", fill=COLORS["sublayer"])
    c.arrow((6.25, y), (6.43, y))
    c.box(6.45, y - 0.2, 0.9, 0.4, "Dropout", fill=DROP, linestyle=dashed)
    c.arrow((7.37, y), (7.55, y))
    c.box(7.57, y - 0.2, 0.85, 0.4, "Linear", fill=COLORS["sublayer"])
    c.text(6.6, y + 0.42, "4. the FFN's hidden layer", fontsize=10, fontweight="bold")


def draw_dropout():
    """Dropout, P = 0.1. The paper's two places (Vaswani et al. 2017, section 5.4): every sublayer's
    output before the residual sum, and the sum of embeddings and positions. Two more that PyTorch's
    ``nn.TransformerEncoderLayer`` and the Annotated Transformer add (not in the paper, dashed): the
    attention weights and the FFN's hidden layer. In training dropout zeroes each entry with
    probability P and scales the others by a factor that lecture 03's practice asks the student to find
    (so the figure shows it as "s"); in evaluation it does nothing."""
    c = Canvas(8.8, 6.3)
    c.title("Dropout, P = 0.1: where it acts, and training against evaluation")
    c.text(0.2, 5.62, "In the paper (section 5.4):", fontsize=10.5, ha="left", style="italic", color=NOTE)
    y = 4.95
    _flow_sublayer(c, y)
    _flow_input(c, y)
    c.text(2.45, y + 0.45, "1. each sublayer's output", fontsize=10, fontweight="bold")
    c.text(6.6, y + 0.45, "2. the encoder's input", fontsize=10, fontweight="bold")
    c.line((4.75, 4.15), (4.75, 5.45), color="0.8", lw=1.0)
    c.line((0.2, 3.95), (8.6, 3.95), color="0.8", lw=1.0)
    c.text(0.2, 3.72, "Added by PyTorch (nn.TransformerEncoderLayer) and the Annotated Transformer, "
           "not in the paper (dashed):", fontsize=10.5, ha="left", style="italic", color=NOTE)
    _flow_added(c, 3.0)
    c.line((4.75, 2.75), (4.75, 3.5), color="0.8", lw=1.0)
    c.line((0.2, 2.55), (8.6, 2.55), color="0.8", lw=1.0)
    # what it does to a vector of ones
    n, cell, x0 = 10, 0.46, 3.95
    dropped = (3, 8)
    rows = ((2.05, "x (ten features, all 1)", ["1"] * n, ["white"] * n),
            (1.3, "training: each entry zeroed with\nprobability 0.1, the rest × s",
             ["0" if i in dropped else "s" for i in range(n)],
             ["#d9d9d9" if i in dropped else DROP for i in range(n)]),
            (0.55, "evaluation (model.eval()):\nthe identity", ["1"] * n, ["white"] * n))
    for yy, label, values, fills in rows:
        c.text(0.3, yy, label, fontsize=10, ha="left", va="center")
        c.cells(x0, yy - cell / 2, n, cell, colors=fills, edge="0.4")
        for i, v in enumerate(values):
            c.text(x0 + (i + 0.5) * cell, yy, v, fontsize=10, color="0.15")
    c.text(4.4, 0.12, "s keeps each entry's expected value at 1, so evaluation needs no rescaling",
           fontsize=9.5, color=NOTE)
    return c.fig


FIGURES = {"dropout": draw_dropout}
