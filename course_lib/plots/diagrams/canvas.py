"""A drawing surface for block diagrams whose units are inches: boxes, arrows, vectors, matrices.

A :class:`Canvas` of ``width x height`` has its origin at the bottom left. Drawn as its own figure,
one unit is one inch, so a 10 pt label is 10/72 in tall and the box sizes below are chosen to
hold their text. Drawn into an existing Axes (``ax=``), fonts and lines are scaled with the Axes,
so two canvases of the same size drawn side by side share one scale.

Every box records the text it holds (``canvas.boxed``) so that tests can check no text leaves
its box.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib import patches as mpatches

from ..style import COLORS

MIN_FONT = 10.0     # points: readable at JupyterLab's notebook width (figures are at most 9 in wide)


class Canvas:
    def __init__(self, width: float, height: float, ax=None):
        self.width, self.height = float(width), float(height)
        if ax is None:
            fig = plt.figure(figsize=(self.width, self.height))
            ax = fig.add_axes((0, 0, 1, 1))
            self.scale = 1.0
        else:
            self.scale = _room(ax, self.width, self.height)
        ax.set_xlim(0, self.width)
        ax.set_ylim(0, self.height)
        ax.set_aspect("equal")
        ax.axis("off")
        self.fig, self.ax = ax.figure, ax
        self.boxed: list[tuple] = []          # (patch, text) pairs
        self.fig.course_boxed = getattr(self.fig, "course_boxed", []) if ax is not None else []
        self.boxed = self.fig.course_boxed    # shared by every canvas of the figure

    # ---------------------------------------------------------------- text and boxes
    def text(self, x, y, s, fontsize=10, ha="center", va="center", color="black", **kw):
        """Text at (x, y); never smaller than :data:`MIN_FONT` (before scaling into an Axes)."""
        return self.ax.text(x, y, s, fontsize=max(fontsize, MIN_FONT) * self.scale, ha=ha, va=va, color=color,
                            zorder=6, **kw)

    def title(self, s, fontsize=12, y=None):
        """A bold title inside the canvas, centred near its top edge."""
        return self.text(self.width / 2, self.height - 0.22 if y is None else y, s, fontsize=fontsize,
                         fontweight="bold", va="center")

    def box(self, x, y, w, h, s="", fill="white", edge="0.25", fontsize=10, lw=1.1, rounding=0.08,
            linestyle="-", zorder=3, text_color="black", **text_kw):
        """A rounded box with its lower left corner at (x, y), the text centred in it."""
        patch = mpatches.FancyBboxPatch((x, y), w, h, boxstyle=f"round,pad=0,rounding_size={rounding}",
                                        facecolor=fill, edgecolor=edge, linewidth=lw * self.scale,
                                        linestyle=linestyle, zorder=zorder)
        self.ax.add_patch(patch)
        label = None
        if s:
            label = self.text(x + w / 2, y + h / 2, s, fontsize=fontsize, color=text_color, **text_kw)
            self.boxed.append((patch, label))
        return patch

    def cbox(self, cx, cy, w, h, s="", **kw):
        """A box centred at (cx, cy)."""
        return self.box(cx - w / 2, cy - h / 2, w, h, s, **kw)

    # ---------------------------------------------------------------- lines
    def line(self, *points, color=COLORS["line"], lw=1.3, linestyle="-", zorder=2):
        xs, ys = zip(*points)
        self.ax.plot(xs, ys, color=color, linewidth=lw * self.scale, linestyle=linestyle, zorder=zorder,
                     solid_capstyle="butt", solid_joinstyle="miter")

    def arrow(self, *points, color=COLORS["line"], lw=1.3, linestyle="-", head=10, zorder=2, connection=None):
        """A polyline through ``points`` with an arrow head at the last one (``connection``: a
        matplotlib connectionstyle for a curved two-point arrow)."""
        if len(points) > 2:
            self.line(*points[:-1], color=color, lw=lw, linestyle=linestyle, zorder=zorder)
        self.ax.add_patch(mpatches.FancyArrowPatch(
            points[-2], points[-1], arrowstyle="-|>", mutation_scale=head * self.scale, color=color,
            linewidth=lw * self.scale, linestyle=linestyle, zorder=zorder, shrinkA=0, shrinkB=0,
            connectionstyle=connection or "arc3", joinstyle="miter", capstyle="butt"))

    def dot(self, x, y, color=COLORS["line"], size=3.5):
        self.ax.plot(x, y, "o", color=color, markersize=size * self.scale, zorder=5)

    def plus(self, x, y, r=0.13, color=COLORS["line"]):
        """A circled plus (addition), radius ``r``."""
        self.ax.add_patch(mpatches.Circle((x, y), r, facecolor="white", edgecolor=color,
                                          linewidth=1.2 * self.scale, zorder=4))
        self.line((x - 0.6 * r, y), (x + 0.6 * r, y), color=color, lw=1.2, zorder=5)
        self.line((x, y - 0.6 * r), (x, y + 0.6 * r), color=color, lw=1.2, zorder=5)

    # ---------------------------------------------------------------- vectors and matrices
    def cells(self, x, y, n, cell=0.18, colors="white", vertical=False, edge="0.3", values=None, cmap=None,
              lw=0.7, height=None):
        """``n`` square cells in a row (or a column, ``vertical=True``) from (x, y): a vector.

        ``colors`` is one colour or one per cell; ``values`` with ``cmap`` colours the cells by value
        (in [-1, 1])."""
        if values is not None:
            cm = plt.get_cmap(cmap)
            colors = [cm((float(v) + 1) / 2) for v in values]
        colors = [colors] * n if isinstance(colors, str) else list(colors)
        h = cell if height is None else height
        for i in range(n):
            cx, cy = (x, y + (n - 1 - i) * cell) if vertical else (x + i * cell, y)
            self.ax.add_patch(mpatches.Rectangle((cx, cy), cell if vertical else cell, h if not vertical else cell,
                                                 facecolor=colors[i], edgecolor=edge, linewidth=lw * self.scale,
                                                 zorder=3))
        return (cell, n * cell) if vertical else (n * cell, h)

    def matrix(self, x, y, rows, cols, cell=0.16, fill="white", edge="0.3", label=None, label_color="black",
               fontsize=10, highlight_rows=(), highlight=None):
        """A grid of ``rows x cols`` cells with its lower left corner at (x, y); ``label`` is written
        below it. Returns (width, height)."""
        w, h = cols * cell, rows * cell
        for r in range(rows):
            color = highlight if (r in highlight_rows and highlight) else fill
            self.ax.add_patch(mpatches.Rectangle((x, y + h - (r + 1) * cell), w, cell, facecolor=color,
                                                 edgecolor="none", zorder=3))
        for r in range(rows + 1):
            self.line((x, y + r * cell), (x + w, y + r * cell), color=edge, lw=0.5, zorder=4)
        for c in range(cols + 1):
            self.line((x + c * cell, y), (x + c * cell, y + h), color=edge, lw=0.5, zorder=4)
        self.ax.add_patch(mpatches.Rectangle((x, y), w, h, fill=False, edgecolor=edge, linewidth=1.0 * self.scale,
                                             zorder=5))
        if label:
            self.text(x + w / 2, y - 0.2, label, fontsize=fontsize, color=label_color, va="top")
        return w, h

    def brace_text(self, x0, x1, y, s, fontsize=10, color=COLORS["note"], below=True):
        """A thin bracket from x0 to x1 at height y with ``s`` under (or over) it."""
        d = -0.06 if below else 0.06
        self.line((x0, y), (x0, y + d), (x1, y + d), (x1, y), color=color, lw=0.9)
        self.text((x0 + x1) / 2, y + 3 * d, s, fontsize=fontsize, color=color, va="top" if below else "bottom")


def _room(ax, width: float, height: float) -> float:
    """How much a ``width x height`` in canvas must shrink to fit ``ax``: its cell of the subplot
    grid (the Axes' final size is known only after layout), less a margin for the layout."""
    fig = ax.figure
    spec = ax.get_subplotspec()
    if spec is not None:
        rows, cols = spec.get_gridspec().get_geometry()
        r0, r1, c0, c1 = spec.rowspan.start, spec.rowspan.stop, spec.colspan.start, spec.colspan.stop
        w_in, h_in = fig.get_figwidth() * (c1 - c0) / cols, fig.get_figheight() * (r1 - r0) / rows
    else:
        box = ax.get_position()
        w_in, h_in = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
    return min(1.0, 0.94 * w_in / width, 0.94 * h_in / height)

