"""What a figure shows, in words, beside the image inside a notebook.

JupyterLab reads no alt text from an output's metadata, so a figure that is only an image says nothing
to a screen reader there. Every plot helper therefore records, on the Axes it draws, one sentence with
the numbers that matter (``describe``; an attention map: each query's strongest key and its weight).
When IPython displays a figure whose Axes carry such sentences, ``show_figure`` puts them under the
image as a visible caption (``course_lib.announce.caption``: ``text/plain`` ``"Figure: ..."`` and a
``role="note"`` paragraph named "figure description"). A figure no helper drew shows as before.

``enable_captions`` registers ``show_figure`` with the running IPython (``course_lib.plots``
does it when imported in a kernel); it changes how figures display and nothing else.
"""

from __future__ import annotations

import re

import numpy as np

ATTR = "_course_description"
MAX_MAPS_IN_FULL = 4          # more attention maps than this: one summary line per map


def spoken(text: str) -> str:
    """``text`` with matplotlib's mathtext (``$...$``) written as plain text a screen reader can say:
    ``$\\sqrt{d_k}$`` -> ``sqrt(d_k)``, ``$d_{model}$`` -> ``d_model``, ``$\\|\\partial L / \\partial W_1\\|$``
    -> ``norm of (∂L / ∂W_1)``. A caption is text: JupyterLab typesets ``$...$`` in it as maths, which
    reaches a reader as mathematical-italic letters spelled one by one."""
    def plain(math: str) -> str:
        math = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", math)
        math = re.sub(r"\\\|(.*?)\\\|", r"norm of (\1)", math)
        math = re.sub(r"_\{([^{}]*)\}", r"_\1", math)
        math = re.sub(r"\\partial\s*", "∂", math)
        math = re.sub(r"\\(cdot|times)", lambda m: {"cdot": "·", "times": "×"}[m.group(1)], math)
        math = re.sub(r"\\([A-Za-z]+)", r"\1", math)
        return math.replace("{", "").replace("}", "")
    return re.sub(r"\$([^$]*)\$", lambda m: plain(m.group(1)), str(text))


def describe(ax, text: str) -> str:
    """Record ``text`` as what ``ax`` shows (replacing an earlier sentence, its maths in plain text:
    :func:`spoken`); returns it."""
    setattr(ax, ATTR, " ".join(spoken(text).split()))
    return getattr(ax, ATTR)


def description(fig) -> str | None:
    """The sentences of ``fig``'s Axes, in their order (None when no helper described any)."""
    said = [getattr(ax, ATTR) for ax in fig.axes if getattr(ax, ATTR, None)]
    extra = getattr(fig, ATTR, None)
    said += [extra] if extra else []
    return " ".join(s if s.endswith(".") else s + "." for s in said) or None


def number(v: float) -> str:
    """A value as a caption prints it: 2 decimals (stable across CPUs for what the course draws)."""
    return f"{float(v):.2f}".replace("-0.00", "0.00")


def strongest_keys(data: np.ndarray, queries, keys, query_pad=None) -> str:
    """``"it: animal 0.64, ..."``: each (unpadded) query's largest weight and its key."""
    names_q = queries or [str(i) for i in range(data.shape[0])]
    names_k = keys or [str(j) for j in range(data.shape[1])]
    parts = []
    for i, row in enumerate(data):
        if (query_pad is not None and query_pad[i]) or not np.isfinite(row).any():
            continue
        j = int(np.nanargmax(np.where(np.isfinite(row), row, -np.inf)))
        parts.append(f"{names_q[i]}: {names_k[j]} {number(row[j])}")
    return ", ".join(parts)


def attention_sentence(name: str | None, data: np.ndarray, queries, keys, query_pad=None,
                       full: bool = True) -> str:
    """One map in words: its size and each query's strongest key (``full``), or the key most queries
    look at most (a summary, for grids of many maps)."""
    t_q, t_k = data.shape
    name = name.replace(" · ", ", ") if name else name         # a middle dot is read out as "middle dot"
    head = f"Attention map{' ' + name if name else ''}, {t_q} queries by {t_k} keys"
    if full:
        return f"{head}; each query's strongest key: {strongest_keys(data, queries, keys, query_pad)}"
    names_k = keys or [str(j) for j in range(t_k)]
    rows = [r for i, r in enumerate(data) if not (query_pad is not None and query_pad[i]) and np.isfinite(r).any()]
    winners = [int(np.nanargmax(np.where(np.isfinite(r), r, -np.inf))) for r in rows]
    if not winners:
        return head
    top = max(set(winners), key=lambda j: (winners.count(j), -j))
    return f"{head}; {winners.count(top)} of {len(winners)} queries look most at {names_k[top]}"


def value_range(arr: np.ndarray) -> str:
    finite = arr[np.isfinite(arr)]
    if not finite.size:
        return "no finite values"
    return f"values from {number(finite.min())} to {number(finite.max())}"


def heatmap_sentence(arr: np.ndarray, rows, cols, title: str | None, measured: str) -> str:
    """A heatmap in words: its size, what it measures, its range and where its largest value is."""
    head = f"{title or 'Heatmap'}: {arr.shape[0]} rows by {arr.shape[1]} columns of {measured}, {value_range(arr)}"
    finite = np.where(np.isfinite(arr), arr, -np.inf)
    if not np.isfinite(finite).any():
        return head
    # the first of the largest at the precision printed: ties (a diagonal of 1s) read the same on any CPU
    i, j = np.unravel_index(int(np.argmax(np.round(finite, 2))), arr.shape)
    row = rows[i] if rows else str(i)
    col = cols[j] if cols else str(j)
    return f"{head}; the largest at row {row}, column {col}"


def mask_sentence(title: str | None, open_: np.ndarray, rows, kind: str = "Mask") -> str:
    """A mask in words: how many cells are open (may attend, kept), and how many in each row."""
    n_rows, n_cols = open_.shape
    names = rows or [str(i) for i in range(n_rows)]
    per_row = ", ".join(f"{names[i]}: {int(open_[i].sum())}" for i in range(n_rows))
    return (f"{title or kind}: a grid of {n_rows} rows by {n_cols} columns, {int(open_.sum())} of {open_.size} "
            f"cells open (blue: may attend or kept), the others blocked (grey, hatched); open cells per row: "
            f"{per_row}")


def curves_sentence(title: str | None, names, xlabel: str, ylabel: str, x: np.ndarray) -> str:
    """Curves in words: what is drawn against what, over which x (no measured values: a timing differs
    from run to run, and the cell prints the numbers it discusses)."""
    span = f" from {x.min():g} to {x.max():g}" if x.size else ""
    return f"{title or 'Curves'}: {ylabel} against {xlabel}{span}, one line per series: {', '.join(map(str, names))}"


def show_figure(fig) -> None:
    """Display ``fig`` as IPython would (the inline backend's PNG and size), then its caption if
    any helper described it."""
    from IPython import get_ipython
    from IPython.display import display

    from ..announce import caption

    formatter = get_ipython().display_formatter.ipython_display_formatter
    metadata = _inline_metadata(fig)
    formatter.enabled = False                  # display the figure itself, without coming back here
    try:
        display(fig, metadata=metadata)
    finally:
        formatter.enabled = True
    said = description(fig)
    if said:
        caption(said)


def _inline_metadata(fig):
    try:
        from matplotlib_inline.backend_inline import _fetch_figure_metadata
    except ImportError:                        # pragma: no cover - the course's kernels have it
        return None
    return _fetch_figure_metadata(fig)


def enable_captions(shell=None) -> bool:
    """Register ``show_figure`` for matplotlib figures with ``shell`` (default: the running
    IPython); False outside IPython."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:                    # pragma: no cover
            return False
        shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    from matplotlib.figure import Figure

    shell.display_formatter.ipython_display_formatter.for_type(Figure, show_figure)
    return True
