"""Interactive figures (ipywidgets) that stay pictures where no front end is attached.

How it works
------------
An explorer is an :class:`InteractiveFigure`: a ``draw(**values) -> fig`` function plus named
ipywidgets controls. Creating one draws nothing; *displaying* it (it is the last expression of a
cell, or ``display(explorer)``) emits two outputs in the cell's output area:

1. the controls: a ``VBox`` of ipywidgets (output type ``display_data``, mime type
   ``application/vnd.jupyter.widget-view+json``) whose ``text/plain`` is replaced by a constant
   line such as ``[attention explorer controls: layer, head]`` (no model ids, no values);
2. the figure: an ordinary ``display_data`` output holding a PNG (``image/png``, drawn at
   ``dpi=100`` with the controls' initial values) and the constant ``text/plain``
   ``[attention explorer figure]``, published under a ``display_id``.

When a control changes, the callback redraws with the new values and calls
``DisplayHandle.update`` with the new PNG: the front end replaces the image of the second output
in place (an ``update_display_data`` message), nothing new is appended.

So where no front end is attached (nbval, ``nbconvert --execute``, a rendered HTML or book page)
the stored notebook holds a normal PNG output drawn with the initial values; nbval compares only
the constant ``text/plain`` lines (it skips widget views and images). In JupyterLab or Notebook
moving a slider replaces that PNG. A browser test can find a control by its ``description``
label and watch the ``<img>`` of the same cell's output area change.

Control descriptions (stable, for people and for browser tests):

- :func:`attention_explorer`: ``"layer"`` (IntSlider, 4-D weights only), ``"head"`` (IntSlider);
- :func:`pe_explorer`: ``"length"`` (IntSlider, positions shown), ``"dims"`` (Text,
  comma-separated feature indices, applied on Enter or when the box loses focus), ``"layout"``
  (Dropdown ``interleaved`` / ``concat``);
- :func:`temperature_explorer`: ``"temperature"`` (FloatLogSlider).

Accessibility: every control is a native ipywidgets input (a slider, a text box, a drop-down), so it
is reached with Tab and changed with the arrow keys or by typing (a slider: its handle, then its
editable readout); the part with the keyboard focus gets a 2 px outline (``FOCUS_CSS``, scoped to
the box's class ``EXPLORER_CLASS``); its ``description`` is its visible
label, plain text (``description_allow_html=False``), and its ``tooltip`` says what it changes. The
figure output carries an ``alt`` text (``InteractiveFigure(alt=...)``; the explorers write one from
their initial values) in the PNG's output metadata, where a page built from the notebook finds it.

Sliders use ``continuous_update=False``: the figure is redrawn when the slider is released (or
a key press changes it), not at every pixel of a drag.

The first figure (the one stored in the notebook, and the only one a reader without a front end
sees) is chosen by ``fallback=``:

- ``"full"`` (default): drawn like every later one;
- ``"compact"``: drawn at 60 % of the size (``COMPACT_SCALE``), so that it does not dominate
  the page when the cell above already shows a similar figure; later redraws are full size;
- ``"none"``: no image until a control moves, only the line ``[... figure: move a control to
  draw it]``; use it when the cell just above shows exactly the figure the initial values would draw.
"""

from __future__ import annotations

import base64
import html
import io
import uuid
from collections.abc import Callable, Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import DisplayHandle, display
from matplotlib.figure import Figure

from .announce import caption_bundle
from .errors import CourseTypeError, CourseValueError, check_choice, check_float, check_int
from .plots.describe import description

__all__ = [
    "InteractiveFigure",
    "interactive_figure",
    "attention_explorer",
    "pe_explorer",
    "temperature_explorer",
    "figure_to_png",
]

DPI = 100
COMPACT_SCALE = 0.6
FALLBACKS = ("full", "compact", "none")
# The keyboard focus, shown: ipywidgets marks a focused control only by a colour change (a slider's
# handle fills, a text field's or a select's border turns light blue, about 1.3:1 against the grey
# it replaces; a slider's editable readout gets the browser's thin ring). This rule, scoped to the
# explorers' box (class EXPLORER_CLASS), draws a 2 px outline in JupyterLab's brand colour around
# whichever part has the keyboard focus (WCAG 2.4.7; tests/browser/test_lecture_notebooks.py).
EXPLORER_CLASS = "course-lib-explorer"
READOUT_CLASS = "course-lib-readout"
FOCUS_CSS = (
    f"<style>.{EXPLORER_CLASS} :is(.noUi-handle, .widget-readout, input, select, textarea, button)"
    ":focus-visible { outline: 2px solid var(--jp-brand-color1, #1976d2) !important; outline-offset: 1px; }"
    # the spoken read-out is for screen readers: the caption under the figure shows the same text
    f".{EXPLORER_CLASS} .{READOUT_CLASS} {{ position: absolute !important; width: 1px; height: 1px; "
    "overflow: hidden; clip-path: inset(50%); white-space: nowrap; }"
    "</style>"
)
# Names for what ipywidgets leaves unnamed: a slider's handle (role slider) and its editable readout
# have no accessible name ("slider 128"), and a changed figure says nothing. This script, run once per
# page by the first explorer caption JupyterLab renders (a trusted output's <script> runs), names each
# handle by its control's description and each readout "<description> value", and makes the explorer's
# read-out a polite live region, whose text the explorer replaces at every redraw. A page that shows
# no explorer (the site, a stored notebook not yet run) finds nothing to name.
NAME_JS = (
    "<script>(function(){if(window.courseLibExplorers)return;window.courseLibExplorers=true;"
    "var queued=false;function name(){queued=false;"
    f"document.querySelectorAll('.{EXPLORER_CLASS}').forEach(function(box){{"
    "box.querySelectorAll('.widget-slider').forEach(function(s){var l=s.querySelector('.widget-label');"
    "var n=l?l.textContent.trim():'';var h=s.querySelector('.noUi-handle');"
    "if(h&&h.getAttribute('aria-label')!==n)h.setAttribute('aria-label',n);"
    "var r=s.querySelector('.widget-readout');if(r&&r.getAttribute('aria-label')!==n+' value'){"
    "r.setAttribute('role','textbox');r.setAttribute('aria-label',n+' value');}});"
    f"box.querySelectorAll('.{READOUT_CLASS}').forEach(function(o){{if(o.getAttribute('role')!=='status'){{"
    "o.setAttribute('role','status');o.setAttribute('aria-live','polite');"
    "o.setAttribute('aria-label','figure now');}});});}"
    "name();new MutationObserver(function(){if(!queued){queued=true;requestAnimationFrame(name);}})"
    ".observe(document.body,{childList:true,subtree:true});})();</script>"
)


def figure_to_png(fig: Figure, dpi: int = DPI) -> bytes:
    """PNG bytes of ``fig`` at ``dpi`` (its own layout, no software metadata)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def _labelled(control: widgets.ValueWidget, name: str) -> widgets.ValueWidget:
    """The control with a plain-text label (``description``) and a tooltip, for keyboard and
    screen-reader users."""
    if not control.description:
        control.description = name
    control.description_allow_html = False
    if not getattr(control, "tooltip", None):
        control.tooltip = control.description
    return control


def _as_control(name: str, spec) -> widgets.ValueWidget:
    """A widget from a widget or a short spec, with ``description=name``.

    Specs: ``(min, max)`` or ``(min, max, step)`` of ints -> IntSlider, with a float -> FloatSlider
    (starting at min); a list -> Dropdown (first option); a bool -> Checkbox; a str -> Text.
    """
    return _labelled(_control(name, spec), name)


def _control(name: str, spec) -> widgets.ValueWidget:
    if isinstance(spec, widgets.ValueWidget):
        return spec
    if isinstance(spec, bool):
        return widgets.Checkbox(value=spec, description=name, indent=False)
    if isinstance(spec, str):
        return widgets.Text(value=spec, description=name, continuous_update=False)
    if isinstance(spec, tuple) and len(spec) in (2, 3) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in spec):
        lo, hi = spec[0], spec[1]
        check_float(f"{name} (max of (min, max))", hi, lo, low_open=True)
        if all(isinstance(v, int) for v in spec):
            step = spec[2] if len(spec) == 3 else 1
            return widgets.IntSlider(value=lo, min=lo, max=hi, step=step, description=name,
                                     continuous_update=False)
        step = spec[2] if len(spec) == 3 else (hi - lo) / 100
        return widgets.FloatSlider(value=lo, min=lo, max=hi, step=step, description=name,
                                   continuous_update=False)
    if isinstance(spec, list) and spec:
        return widgets.Dropdown(options=spec, value=spec[0] if not isinstance(spec[0], tuple) else spec[0][1],
                                description=name)
    raise CourseTypeError(
        f"{name}: expected an ipywidgets control, (min, max[, step]), a non-empty list, a bool or a str, "
        f"got {type(spec).__name__} {spec!r}"
    )


class InteractiveFigure:
    """A figure redrawn from named controls; displays as controls + a PNG (see the module doc).

    Attributes:
        draw: ``draw(**values)`` returning a matplotlib Figure or a ``(fig, axes)`` pair.
        controls: ``{name: widget}``, in display order.
        box: the ``VBox`` holding the controls.
        handle: the ``DisplayHandle`` of the figure output.
        name: used in the constant ``text/plain`` lines.
        fallback: ``"full"``, ``"compact"`` or ``"none"``: how the first figure is shown (see the
            module doc).
        alt: what the first figure shows, with its key numbers (the PNG's ``alt`` in the output
            metadata); None for none.
    """

    def __init__(self, draw: Callable, controls: dict, name: str = "interactive figure", dpi: int = DPI,
                 fallback: str = "full", alt: str | None = None):
        if not callable(draw):
            raise CourseTypeError(f"draw: expected a callable draw(**values) -> fig, got {type(draw).__name__}")
        check_int("dpi", dpi, 10)
        check_choice("fallback", fallback, FALLBACKS)
        self.draw = draw
        self.name = str(name)
        self.dpi = dpi
        self.fallback = fallback
        self.alt = None if alt is None else str(alt)
        self.controls = {k: _as_control(k, v) for k, v in controls.items()}
        # the focus style rides along as a hidden HTML widget (no room taken, nothing to read out)
        self._focus_style = widgets.HTML(FOCUS_CSS, layout=widgets.Layout(display="none"))
        # what a screen reader hears after a move: the values and the figure's description (a live
        # region once NAME_JS has run; visually hidden, the caption under the figure shows the text)
        self.readout = widgets.HTML("")
        self.readout.add_class(READOUT_CLASS)
        self.box = widgets.VBox([*self.controls.values(), self.readout, self._focus_style])
        self.box.add_class(EXPLORER_CLASS)
        uid = uuid.uuid4().hex
        self.handle = DisplayHandle(f"course-lib-figure-{uid}")  # transient, never stored
        self.caption_handle = DisplayHandle(f"course-lib-caption-{uid}")
        self.description = None
        self.redraws = 0
        for w in self.controls.values():
            w.observe(self._on_change, names="value")

    @property
    def values(self) -> dict:
        """The current value of every control, by name."""
        return {k: w.value for k, w in self.controls.items()}

    def render(self, dpi: int | None = None) -> bytes:
        """Draw with the current values and return the PNG (the figure is closed afterwards)."""
        result = self.draw(**self.values)
        fig = result[0] if isinstance(result, tuple) else result
        if not isinstance(fig, Figure):
            raise CourseTypeError(
                f"draw: expected a matplotlib Figure or a (fig, axes) pair, got {type(result).__name__}"
            )
        try:
            self.description = description(fig)
            return figure_to_png(fig, dpi or self.dpi)
        finally:
            plt.close(fig)   # ours: keeps the inline backend from showing it a second time

    def spoken(self) -> str:
        """The values and what the figure drawn with them shows (its helpers' description, else ``alt``)."""
        values = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in self.values.items())
        if self.redraws == 0 and self.fallback == "none":
            shows = "the figure is drawn when a control moves"
        else:
            shows = self.description or self.alt or f"the {self.name} figure"
        return f"{values}: {shows}" if values else shows

    def _caption(self) -> dict:
        bundle = caption_bundle(self.spoken())
        bundle["text/html"] += NAME_JS
        return bundle

    def _figure_bundle(self, first: bool = False) -> dict:
        if first and self.fallback == "none":
            return {"text/plain": f"[{self.name} figure: move a control to draw it]"}
        dpi = round(self.dpi * COMPACT_SCALE) if first and self.fallback == "compact" else self.dpi
        return {
            "image/png": base64.b64encode(self.render(dpi)).decode("ascii"),
            "text/plain": f"[{self.name} figure]",
        }

    def _controls_bundle(self) -> dict:
        bundle = self.box._repr_mimebundle_()
        names = ", ".join(self.controls)
        bundle["text/plain"] = f"[{self.name} controls: {names}]" if names else f"[{self.name}]"
        return bundle

    def _ipython_display_(self) -> None:
        if self.controls:
            display(self._controls_bundle(), raw=True)
        bundle = self._figure_bundle(first=True)
        drawn = "image/png" in bundle
        alt = self.alt or (self.description if drawn else None)
        metadata = {"image/png": {"alt": alt}} if alt and drawn else None
        self.handle.display(bundle, raw=True, metadata=metadata)
        self.caption_handle.display(self._caption(), raw=True)

    def show(self) -> InteractiveFigure:
        """Display the controls and the figure (same as ending a cell with the object)."""
        display(self)
        return self

    def _on_change(self, change=None) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Redraw with the current values and replace the displayed image."""
        try:
            bundle = self._figure_bundle()
        except Exception as exc:  # noqa: BLE001 - a widget callback has nowhere else to report
            bundle = {"text/plain": f"[{self.name}: {type(exc).__name__}: {exc}]"}
        self.redraws += 1
        self.handle.update(bundle, raw=True)
        if "image/png" in bundle:
            caption = self._caption()
            self.readout.value = html.escape(self.spoken())
            self.caption_handle.update(caption, raw=True)    # shown with its first display (else a no-op)
        else:
            self.readout.value = html.escape(bundle["text/plain"])

    def __repr__(self) -> str:
        return f"<InteractiveFigure {self.name!r}: {', '.join(self.controls) or 'no controls'}>"


def interactive_figure(draw: Callable, /, **controls) -> InteractiveFigure:
    """An :class:`InteractiveFigure` from ``draw(**values) -> fig`` and named controls.

    Each keyword is a control, named (``description``) by its keyword: an ipywidgets control, or
    a short spec: ``(min, max[, step])`` (ints: IntSlider, floats: FloatSlider), a list
    (Dropdown), a bool (Checkbox), a str (Text). Every keyword is a control; to name the figure
    (its constant ``text/plain``) or change the dpi, use ``InteractiveFigure(draw, controls,
    name=..., dpi=...)``. Display the result to show it::

        interactive_figure(lambda head: course_lib.plot_attention(w, tokens, heads=head),
                           head=(0, w.shape[0] - 1))
    """
    return InteractiveFigure(draw, controls)


def attention_explorer(weights, tokens: Sequence[str] | None = None, key_padding_mask=None, *,
                       query_tokens: Sequence[str] | None = None, example: int | None = None,
                       annotate: bool = False, layer: int = 0, head: int = 0,
                       fallback: str = "full") -> InteractiveFigure:
    """Pick a layer and a head of ``weights`` and see its attention map.

    Args:
        weights: ``(H, T_q, T_k)`` or ``(L, H, T_q, T_k)`` (or a list of per-layer tensors, or
            with ``example=`` the batched tensors; see :func:`course_lib.plots.plot_attention`).
        tokens, query_tokens, key_padding_mask, annotate: as in ``plot_attention``.
        layer, head: the initial values of the controls.
        fallback: ``"full"``, ``"compact"`` or ``"none"`` (see the module doc): ``"none"`` when
            the cell above already shows this layer and head.

    Controls: ``"layer"`` (4-D weights only) and ``"head"``, both IntSliders. The colour scale is
    fixed over all layers and heads so that maps compare across slider positions.
    """
    from .plots import attention as plots_attention
    from .plots._inputs import indices, pick_example

    arr = plots_attention.attention_input(weights, example)
    if arr.ndim not in (3, 4):
        raise CourseValueError(
            f"weights: expected (H, T_q, T_k) or (L, H, T_q, T_k) to explore, got shape {tuple(arr.shape)}"
        )
    if key_padding_mask is not None and example is not None:
        key_padding_mask = pick_example(key_padding_mask, example)
        tokens = pick_example(tokens, example)
    n_heads = arr.shape[-3]
    vmax = float(arr.max()) if arr.size else 1.0
    controls = {}
    if arr.ndim == 4:
        indices("layer", layer, arr.shape[0])
        controls["layer"] = widgets.IntSlider(value=layer % arr.shape[0], min=0, max=arr.shape[0] - 1,
                                              description="layer", continuous_update=False)
    indices("head", head, n_heads)
    controls["head"] = widgets.IntSlider(value=head % n_heads, min=0, max=n_heads - 1, description="head",
                                         continuous_update=False)

    def draw(head, layer=None):
        return plots_attention.plot_attention(arr, tokens, query_tokens, key_padding_mask,
                                    layers=layer, heads=head, annotate=annotate, vmin=0.0, vmax=vmax)

    for name, control in controls.items():
        _labelled(control, name)
    return InteractiveFigure(draw, controls, name="attention explorer", fallback=fallback)


def _parse_dims(text: str, d_model: int) -> list[int]:
    """Feature indices from "0, 1, 10" (entries that are not ints in range are skipped)."""
    dims = []
    for part in str(text).replace(";", ",").replace(" ", ",").split(","):
        part = part.strip()
        if part.lstrip("-").isdigit() and 0 <= int(part) < d_model and int(part) not in dims:
            dims.append(int(part))
    return dims


def pe_explorer(max_len: int = 64, d_model: int = 64, *, dims: Sequence[int] = (0, 1, 6, 7),
                length: int | None = None, layout: str = "interleaved", base: float = 10000.0,
                fallback: str = "full") -> InteractiveFigure:
    """The sinusoidal table and chosen dimensions as curves, for a chosen number of positions.

    Left: the heatmap of ``PE[:length]`` with the chosen columns marked; right: those columns
    against the position, the legend underneath. The table is
    ``course_lib.sinusoidal_positional_encoding``.

    Controls: ``"length"`` (IntSlider, 2 .. max_len), ``"dims"`` (Text, e.g. ``"0, 1, 6, 7"``),
    ``"layout"`` (Dropdown: ``interleaved`` = the paper's even sin / odd cos, ``concat`` =
    tensor2tensor's first half sin / second half cos). ``fallback``: see the module doc.
    """
    from .plots import course_style, plot_pe_curves, plot_positional_encoding
    from .plots._inputs import indices
    from .positional import LAYOUTS, sinusoidal_positional_encoding

    check_int("max_len", max_len, 2)
    check_int("d_model", d_model, 2)
    check_choice("layout", layout, LAYOUTS)
    indices("dims", list(dims), d_model)
    length = max_len if length is None else length
    check_int("length", length, 2, max_len)
    tables = {lay: sinusoidal_positional_encoding(max_len, d_model, layout=lay, base=base) for lay in LAYOUTS}
    controls = {
        "length": widgets.IntSlider(value=length, min=2, max=max_len, description="length",
                                    tooltip="number of positions shown", continuous_update=False),
        "dims": widgets.Text(value=", ".join(str(d) for d in dims), description="dims",
                             tooltip="feature indices drawn as curves, comma-separated (Enter applies)",
                             placeholder="e.g. 0, 1, 6, 7", continuous_update=False),
        "layout": widgets.Dropdown(options=list(LAYOUTS), value=layout, description="layout",
                                   tooltip="interleaved (the paper) or concat (sines, then cosines)"),
    }

    def draw(length, dims, layout):
        chosen = _parse_dims(dims, d_model)
        pe = tables[layout][:length]
        with course_style():
            # one above the other, each the full width: side by side the table was squeezed
            fig, (ax_heat, ax_curves) = plt.subplots(
                2, 1, figsize=(9.0, 7.0), layout="constrained", gridspec_kw={"height_ratios": [1.15, 1.0]})
        plot_positional_encoding(pe, ax=ax_heat, dims=chosen or None, title=f"PE[:{length}] ({layout})")
        if chosen:
            plot_pe_curves(pe, dims=chosen, ax=ax_curves, layout=layout, legend="below",
                           title="chosen dimensions against position")
        else:
            ax_curves.axis("off")
            ax_curves.text(0.5, 0.5, "type feature indices in 'dims',\ne.g. 0, 1, 6, 7",
                           ha="center", va="center", transform=ax_curves.transAxes)
        return fig

    shown = ", ".join(str(d) for d in dims)
    alt = (f"Top: the sinusoidal table for {length} positions and {d_model} features ({layout} layout) as a "
           f"heatmap, values from -1 (blue) to 1 (red): the low features alternate fast down the positions, the "
           f"high ones hardly change. Bottom: features {shown} as curves against the position.")
    # dpi 80: the noisy table compresses poorly, this keeps the stored PNG near 100 KB
    return InteractiveFigure(draw, controls, name="positional encoding explorer", dpi=80, fallback=fallback,
                             alt=alt)


def temperature_explorer(logits, labels: Sequence[str] | None = None, *, temperature: float = 1.0,
                         min_temperature: float = 0.05, max_temperature: float = 20.0,
                         fallback: str = "full") -> InteractiveFigure:
    """``softmax(logits / T)`` as bars while ``T`` moves: small T sharpens towards the arg max,
    large T flattens towards uniform.

    Control: ``"temperature"`` (FloatLogSlider from ``min_temperature`` to ``max_temperature``).
    ``fallback``: see the module doc.
    """
    import math

    from .plots import plot_probabilities
    from .plots._inputs import to_numpy

    to_numpy("logits", logits)   # type check now rather than in the callback
    check_float("min_temperature", min_temperature, 0, low_open=True)
    check_float("max_temperature", max_temperature, min_temperature, low_open=True)
    check_float("temperature", temperature, min_temperature, max_temperature)
    control = widgets.FloatLogSlider(value=temperature, base=10, min=math.log10(min_temperature),
                                     max=math.log10(max_temperature), step=0.01, description="temperature",
                                     readout_format=".3g", continuous_update=False,
                                     style={"description_width": "initial"})

    def draw(temperature):
        return plot_probabilities(logits, labels, temperature=round(float(temperature), 4))

    return InteractiveFigure(draw, {"temperature": _labelled(control, "temperature")}, name="temperature explorer",
                             fallback=fallback)
