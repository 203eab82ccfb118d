"""Two things a reader of a notebook's figure stumbles on, measured on the figure (a plain module:
tests/plots is on the tests' pythonpath).

* :func:`blank_bands`: an axis label far from the tick labels it names, a band of empty space
  between them (the shared ``supxlabel``/``supylabel`` of a grid of panels, or an Axes' own label),
  or a figure title far above its panels;
* :func:`small_texts`: text under 8 pt once the figure is shown at a notebook's width (JupyterLab's
  column, about 9 in: a wider figure is scaled down, its text with it).
"""

from __future__ import annotations

import matplotlib
from matplotlib.transforms import Bbox

NOTEBOOK_WIDTH_IN = 9.0       # course_lib.plots.figures.MAX_WIDTH_IN
MIN_PT = 8.0                  # the smallest text a figure may show at that width
MAX_GAP_IN = 0.2              # the most empty space between an axis label and its tick labels


def _shown(text) -> bool:
    if not (text.get_visible() and text.get_text().strip()):
        return False
    ax = text.axes
    return ax is None or (ax.get_visible() and ax.axison) or text in ax.texts or text is ax.title


def small_texts(fig, min_pt: float = MIN_PT, width_in: float = NOTEBOOK_WIDTH_IN) -> list[str]:
    """Every shown text smaller than ``min_pt`` points at ``width_in`` inches of figure width."""
    fig.draw_without_rendering()
    scale = min(1.0, width_in / fig.get_figwidth())
    return [f"{t.get_text()!r} at {t.get_fontsize() * scale:.1f} pt" for t in fig.findobj(matplotlib.text.Text)
            if _shown(t) and t.get_fontsize() * scale < min_pt - 1e-6]


def _tick_box(axis, renderer):
    boxes = [t.get_window_extent(renderer) for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
    return Bbox.union(boxes) if boxes else None


def blank_bands(fig, max_gap_in: float = MAX_GAP_IN) -> list[str]:
    """Axis labels more than ``max_gap_in`` inches from the tick labels (or, without tick labels, the
    Axes) they name: an Axes' x label below its x tick labels, its y label left of its y tick labels,
    and the figure's shared labels below (left of) the lowest (leftmost) tick labels of any panel; and
    the figure's title (``suptitle``) more than ``max_gap_in`` above the highest panel and its title."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    limit = max_gap_in * fig.dpi
    found = []
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    for ax in panels:
        for axis, horizontal in ((ax.xaxis, True), (ax.yaxis, False)):
            label = axis.label
            if not _shown(label):
                continue
            near = _tick_box(axis, renderer) or ax.get_window_extent(renderer)
            box = label.get_window_extent(renderer)
            if horizontal:
                gap = near.y0 - box.y1 if box.y1 <= near.y0 + 1 else box.y0 - near.y1
            else:
                gap = near.x0 - box.x1 if box.x1 <= near.x0 + 1 else box.x0 - near.x1
            if gap > limit:
                found.append(f"{label.get_text()!r} sits {gap / fig.dpi:.2f} in from its tick labels")
    for label, horizontal in ((fig._supxlabel, True), (fig._supylabel, False)):
        if label is None or not _shown(label):
            continue
        box = label.get_window_extent(renderer)
        edges = []
        for ax in panels:
            near = _tick_box(ax.xaxis if horizontal else ax.yaxis, renderer) or ax.get_window_extent(renderer)
            edges.append(near.y0 if horizontal else near.x0)
        if not edges:
            continue
        gap = (min(edges) - box.y1) if horizontal else (min(edges) - box.x1)
        if gap > limit:
            found.append(f"the shared label {label.get_text()!r} sits {gap / fig.dpi:.2f} in from the tick labels")
    title = fig._suptitle
    if title is not None and _shown(title) and panels:
        top = max(ax.get_tightbbox(renderer).y1 for ax in panels)
        gap = title.get_window_extent(renderer).y0 - top
        if gap > limit:
            found.append(f"the title {title.get_text()!r} sits {gap / fig.dpi:.2f} in above the panels")
    return found
