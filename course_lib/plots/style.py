"""The course's plot style: one palette for every figure, the rc settings, figure-size arithmetic.

Colours mean the same thing in every plot and diagram of the course:

- queries, keys, values: blue, orange, green (:data:`QKV`, light fills in :data:`QKV_FILL`);
- positions: :func:`position_color` (position 0, 1, 2, ... always get the same colours), and the
  positional encoding as a whole is purple (:data:`COLORS` ``"position"``);
- the lines of a line plot: :func:`category_color` (:data:`CATEGORY_COLORS`), with a marker and a
  line style of their own as well (curves.py), so a line is never told by its colour alone;
- weights and other non-negative values: ``"viridis"``; signed values (positional encodings,
  similarities): ``"RdBu_r"`` centred at 0;
- padding: a very light grey band with faint hatching, and grey italic labels.

Every set of category colours stays apart for a reader with protanopia or deuteranopia (simulated
with Machado et al. 2009: CIEDE2000 difference of at least 10 between any two), the position and
line colours read on white (contrast 4.5:1 and 3:1), and the colormaps' lightness is monotone
(viridis) or monotone on each side of 0 (RdBu_r): tests/accessibility/test_palettes.py.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable

import matplotlib
import numpy as np

WEIGHTS_CMAP = "viridis"
SIGNED_CMAP = "RdBu_r"
PAD_FACE = "#efefef"                  # padded cells: a very light grey band ...
PAD_EDGE = "0.72"                     # ... with faint hatching, so a mostly padded map stays readable
PAD_LABEL = "0.55"                    # grey tick labels of padded tokens
ATTEND_COLOR = "#3b8bc2"              # mask pictures: may attend / kept
BLOCKED_COLOR = "#e6e6e6"             #                blocked / padding
TOKEN_FACE = "#dbe9f6"                # plot_batch: a real token's cell

# queries, keys, values: strong colours for lines and text, light ones for filled boxes
QKV = {"q": "#2b6cb0", "k": "#dd6b20", "v": "#2f855a"}
# (the fills of K and V were 5.5 apart for a protanope: K is now more yellow, V a darker green-teal)
QKV_FILL = {"q": "#d4e5f7", "k": "#ffe6b3", "v": "#9fd8c2"}

# the encoder's parts, in every diagram
COLORS = {
    "embed": "#f6d5d1",       # token embedding
    "position": "#e4dcf3",    # positional encoding (fill)
    "position_edge": "#6b46c1",
    "attn": "#fbe7b5",        # attention blocks
    "norm": "#fff6c2",        # LayerNorm / Add & Norm
    "ffn": "#cfeaea",         # position-wise feed-forward
    "out": "#e4e4e4",         # output layer, softmax
    "frame": "#f5f5f5",       # a stack of N layers
    "line": "0.2",            # arrows
    "residual": "#555555",    # residual connections
    "note": "0.35",           # side notes
    "encoder": "#e3e8f0",     # RNN / encoder cells
    "decoder": "#f1e6d8",     # decoder cells
    "hidden": "#ecebf5",      # hidden states, contextual vectors
    "sublayer": "#e9e6df",    # "any sublayer" (attention or feed-forward)
}

# one colour per position, the same in every figure (position 0 first). Dark enough for text on white
# (4.5:1) and told apart with protanopia and deuteranopia (the earlier magenta, teal and brown were
# 3.2 apart for a deuteranope, a grey and a blue too: tests/accessibility/test_palettes.py)
POSITION_COLORS = ("#6b46c1", "#2c7a7b", "#975a16", "#701e34", "#522d62", "#008762", "#801600", "#e1005a")

# the lines of a line plot (in place of matplotlib's tab10, whose orange, green and red are 1.3 to 4.6
# apart for a protanope or deuteranope); 3:1 on white at least
CATEGORY_COLORS = ("#0072b2", "#d55e00", "#00a58e", "#62001e", "#a54b52", "#000062")


def position_color(i: int) -> str:
    """The colour of position ``i`` (cycling through :data:`POSITION_COLORS`)."""
    return POSITION_COLORS[i % len(POSITION_COLORS)]


def category_color(i: int) -> str:
    """The colour of the ``i``-th line of a plot (cycling through :data:`CATEGORY_COLORS`)."""
    return CATEGORY_COLORS[i % len(CATEGORY_COLORS)]


_STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "figure.titlesize": 12,
    "figure.titleweight": "bold",
    "hatch.color": PAD_EDGE,
    "hatch.linewidth": 0.6,
    "image.interpolation": "nearest",
}


@contextlib.contextmanager
def course_style():
    """The course's plot style, set for the ``with`` block and then restored.

    Unlike ``plt.rc_context`` this saves and restores only the keys it sets: ``rc_context`` also
    restores ``backend`` and ``interactive``, so a first figure drawn inside it would undo the
    inline backend's set-up and later figures would no longer show at the end of a cell.
    """
    saved = {key: matplotlib.rcParams[key] for key in _STYLE}
    try:
        matplotlib.rcParams.update(_STYLE)
        yield
    finally:
        matplotlib.rcParams.update(saved)


def styled(func: Callable) -> Callable:
    """Run a plot helper inside :func:`course_style` (global settings are left as they were)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with course_style():
            return func(*args, **kwargs)

    return wrapper


# --------------------------------------------------------------------------------------------
# figure-size arithmetic (inches; 72 points per inch)
# --------------------------------------------------------------------------------------------

def text_color(rgba) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba``."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def tick_fontsize(cell_inches: float, base: float = 9.0) -> float:
    """A font size that fits one label per cell."""
    return float(np.clip(cell_inches * 72 * 0.75, 5.0, base))


def tick_step(cell_inches: float) -> int:
    """Label every k-th cell so that each label keeps at least ~6 pt."""
    return max(1, math.ceil(6.0 / (cell_inches * 72)))


def cell_inches(n: int, lo: float = 0.14, hi: float = 0.42, span: float = 6.5) -> float:
    """The side of one heatmap cell when ``n`` cells share ``span`` inches."""
    return float(np.clip(span / max(n, 1), lo, hi))


def label_inches(labels: list[str] | None, fontsize: float = 9.0) -> float:
    """The room taken by the longest of ``labels`` next to an axis."""
    if not labels:
        return 0.3
    return 0.15 + 0.62 * fontsize / 72 * max(len(s) for s in labels)


def heatmap_size(n_rows: int, n_cols: int, cell: float, row_labels, col_labels, *,
                 extra_w: float = 1.3, extra_h: float = 0.9, min_w: float = 3.2, min_h: float = 2.6):
    """``(width, height)`` in inches of a figure holding one heatmap and its colorbar."""
    width = n_cols * cell + label_inches(row_labels) + extra_w
    height = n_rows * cell + label_inches(col_labels) * 0.87 + extra_h
    return max(width, min_w), max(height, min_h)


def balanced_columns(n: int, max_cols: int) -> int:
    """Columns of a grid of ``n`` panels wrapping after ``max_cols``, with rows as full as possible."""
    return math.ceil(n / math.ceil(n / max_cols))
