"""What goes in and what comes out (lectures 04 and 05): the embedding and the output layer,
token embedding plus positional encoding, the sinusoids of the positional encoding."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patches as mpatches

from ...positional import sinusoidal_positional_encoding
from ..style import COLORS, position_color
from .canvas import Canvas

NOTE = COLORS["note"]
VOCAB = ["<pad>", "<unk>", "[MASK]", "the", "cat", "sat", "mat"]   # the ids of lecture 04 and course_lib.training


def _bars(c: Canvas, x, y_top, words, probs, row_h=0.24, length=1.0, highlight=None):
    """A horizontal bar per word (word on the left of x), top row at y_top."""
    for i, (word, p) in enumerate(zip(words, probs)):
        y = y_top - i * row_h
        c.text(x - 0.08, y, word, fontsize=9.5, ha="right", style="italic")
        color = "#2b6cb0" if i == highlight else "#9bb8d8"
        c.ax.add_patch(mpatches.Rectangle((x, y - row_h * 0.35), max(p * length, 0.01), row_h * 0.7,
                                          facecolor=color, edgecolor="none", zorder=3))
        c.text(x + p * length + 0.06, y, f"{p:.2f}", fontsize=8.5, ha="left", color=NOTE)


def draw_embedding_output():
    """Token ids -> embedding lookup (x sqrt(d_model)) -> encoder -> output linear layer (its
    weight tied to the embedding) -> softmax over the vocabulary, at a masked position: an encoder
    reads the whole sentence, so it scores the token hidden under [MASK] (BERT's task), not a next
    token."""
    c = Canvas(8.6, 4.0)
    c.title("In and out: embedding lookup, ..., output layer and softmax over the vocabulary")
    cell, d = 0.2, 4
    ids = {w: VOCAB.index(w) for w in ("the", "cat", "[MASK]")}
    ys = [2.75, 2.15, 1.55]
    for (word, i), y, t in zip(ids.items(), ys, range(3)):
        c.text(0.2, y, f"{word}", fontsize=10, ha="left", style="italic")
        c.text(0.75, y, f"id {i}", fontsize=10, ha="left", color=position_color(t))
    ex, ey = 1.75, 1.35
    c.matrix(ex, ey, len(VOCAB), d, cell=cell, fill=COLORS["embed"], highlight_rows=tuple(ids.values()),
             highlight="#e8a49b")
    c.text(ex + d * cell / 2, ey + len(VOCAB) * cell + 0.18, "E", fontsize=11, fontweight="bold")
    c.text(ex + d * cell / 2, ey - 0.12, "(V, d_model)", fontsize=9, color=NOTE, va="top")
    for i, y, t in zip(ids.values(), ys, range(3)):
        row_y = ey + (len(VOCAB) - i - 0.5) * cell
        c.arrow((1.3, y), (ex - 0.04, row_y), color=position_color(t), lw=1.0, head=7)
        c.arrow((ex + d * cell + 0.04, row_y), (2.95, y), color=position_color(t), lw=1.0, head=7)
        c.cells(3.0, y - cell / 2, d, cell, COLORS["embed"], edge=position_color(t), lw=1.0)
    c.text(3.4, 3.2, "row lookup\n× √d_model", fontsize=9, color=NOTE)
    c.box(4.1, 1.3, 1.3, 1.7, "+ positions\n\nN layers", fill=COLORS["frame"], edge="0.5",
          linestyle=(0, (4, 3)), fontsize=10)
    for y in ys:
        c.arrow((3.85, y), (4.08, y), lw=1.0, head=7)
    c.arrow((5.42, 1.55), (5.62, 1.55), lw=1.0, head=7)
    c.cells(5.65, 1.55 - cell / 2, d, cell, COLORS["hidden"], edge="0.3")
    c.text(6.05, 1.15, "$h_t$ at [MASK]", fontsize=9.5, va="top")
    c.arrow((6.05, 1.68), (6.05, 2.02))
    c.cbox(6.05, 2.3, 1.1, 0.52, "$h_t E^\\top + b$", fill=COLORS["out"], fontsize=10)
    c.text(6.05, 2.75, "output layer\n(weights tied to E)", fontsize=9, color=NOTE, va="bottom")
    # the softmax runs over the whole vocabulary, but a trained masked-language model gives <pad> and
    # [MASK] next to nothing (they are never the hidden word): only the words are drawn as bars
    specials = ("<pad>", "<unk>", "[MASK]")
    shown = {"the": 0.09, "cat": 0.14, "sat": 0.59, "mat": 0.18}             # rounded, they sum to 1.00
    logits = np.array([-12.0 if w in specials else np.log(shown[w]) for w in VOCAB])
    probs = np.exp(logits) / np.exp(logits).sum()
    words = [i for i, w in enumerate(VOCAB) if w not in specials]
    assert np.round(probs[words], 2).sum() == 1.0 and probs[[VOCAB.index(w) for w in specials]].max() < 5e-3
    c.arrow((6.66, 2.3), (7.3, 2.3))
    c.text(6.98, 2.38, "softmax", fontsize=9, color=NOTE, va="bottom")   # over the arrow, clear of the box
    _bars(c, 7.75, 2.85, [VOCAB[i] for i in words], probs[words], length=0.7,
          highlight=words.index(int(np.argmax(probs))))
    c.text(7.75, 3.32, "p(token at [MASK])", fontsize=9.5, fontweight="bold")
    c.text(7.1, 1.75, "<pad>, <unk>,\n[MASK]: 0.00 each", fontsize=8.5, color=NOTE, va="top", ha="left")
    c.text(0.2, 0.45, "Tied weights (Press & Wolf 2017; Vaswani et al. 2017, section 3.4): the output layer "
           "reuses E,\nso a token's input vector and its output vector are the same learned vector.",
           fontsize=9.5, ha="left", color=NOTE)
    c.ax.set_ylim(0.2, c.height)                     # no blank band under the note
    c.fig.set_figheight(c.height - 0.2)
    return c.fig


def draw_embedding_plus_position():
    """Token embedding plus positional encoding = the encoder's input, position by position: the
    same word at two positions gets two different input vectors."""
    c = Canvas(8.6, 3.85)
    c.title("Encoder input = token embedding + positional encoding")
    words = ["the", "cat", "saw", "the", "dog"]
    d, cell = 8, 0.14
    rng = np.random.default_rng(5)
    table = {w: rng.normal(size=d) for w in dict.fromkeys(words)}   # unit-variance entries (× √d_model)
    pe = sinusoidal_positional_encoding(len(words), d).numpy()
    rows = (("token embedding", 2.45), ("positional encoding", 1.6), ("encoder input", 0.75))
    for text, y in rows:
        c.text(0.15, y + cell / 2, text, fontsize=10, ha="left")
    c.text(0.15, 2.45 - 0.15, "E[id] · √d_model", fontsize=9, ha="left", color=NOTE, va="top")
    c.text(0.15, 1.6 - 0.15, "PE(t): depends on the position only", fontsize=9, ha="left", color=NOTE, va="top")
    for t, word in enumerate(words):
        x = 2.35 + t * 1.2
        vecs = (table[word], pe[t], table[word] + pe[t])
        for (_, y), v, edge in zip(rows, vecs, (COLORS["embed"], position_color(t), "0.3")):
            c.cells(x, y, d, cell, values=np.clip(v / 2, -1, 1), cmap="RdBu_r", edge=edge, lw=1.0)
        mid = x + d * cell / 2
        c.text(mid, 3.0, f"“{word}”", fontsize=10.5, style="italic")
        c.text(mid, 2.8, f"position {t}", fontsize=9, color=position_color(t))
        c.text(mid, 2.2, "+", fontsize=13)
        c.text(mid, 1.36, "=", fontsize=13)
    c.text(4.3, 0.35, "“the” at positions 0 and 3: the same token embedding, different inputs.  "
           "Cells: blue < 0 < red.", fontsize=9.5, color=NOTE)
    return c.fig


def draw_positional_waves():
    """Each dimension of the sinusoidal encoding is a wave over the positions (sin on even
    dimensions, cos on odd, slower for higher pairs); one position is a vertical slice."""
    d_model, n_pos, p = 16, 40, 9
    dims = (0, 1, 4, 5, 10)
    positions = np.linspace(0, n_pos - 1, 400)
    pe = sinusoidal_positional_encoding(n_pos, d_model).numpy()
    fig = plt.figure(figsize=(8.6, 4.6), layout="constrained")
    grid = fig.add_gridspec(len(dims), 2, width_ratios=(6.2, 1.0))
    fig.suptitle(f"Positional encoding (d_model = {d_model}): a wave per dimension, a position is a vertical slice",
                 fontsize=12)
    for r, dim in enumerate(dims):
        ax = fig.add_subplot(grid[r, 0])
        i = dim // 2
        freq = 1 / 10000 ** (2 * i / d_model)
        wave = np.sin(positions * freq) if dim % 2 == 0 else np.cos(positions * freq)
        ax.plot(positions, wave, color="#2b6cb0" if dim % 2 == 0 else "#c05621", linewidth=1.6)
        ax.plot(np.arange(n_pos), pe[:, dim], "o", markersize=2.2, color="0.35")
        ax.axvline(p, color=position_color(p), linewidth=2.0, alpha=0.85)
        ax.plot([p], [pe[p, dim]], "o", markersize=6, color=position_color(p), zorder=5)
        ax.set_ylim(-1.25, 1.25)
        ax.set_xlim(0, n_pos - 1)
        ax.set_yticks([-1, 1])
        ax.tick_params(labelsize=10)
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_ylabel(f"dim {dim}\n{'sin' if dim % 2 == 0 else 'cos'}, i={i}", fontsize=10, rotation=0,
                      ha="right", va="center")
        if r < len(dims) - 1:
            ax.set_xticklabels([])
        else:
            ax.set_xlabel("position")
    ax = fig.add_subplot(grid[:, 1])
    values = pe[p, list(dims)]
    ax.imshow(values[:, None], cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    for r, v in enumerate(values):
        ax.text(0, r, f"{v:+.2f}", ha="center", va="center", fontsize=10, color="white" if abs(v) > 0.6 else "black")
    ax.set_xticks([])
    ax.set_yticks(range(len(dims)), [f"dim {dim}" for dim in dims], fontsize=10)
    ax.set_title(f"PE({p})", fontsize=11, color=position_color(p))
    for spine in ax.spines.values():
        spine.set_edgecolor(position_color(p))
        spine.set_linewidth(2.0)
    return fig
