"""course_lib.widgets: displayed as controls + a PNG output; a control change replaces the PNG."""

import base64
from unittest import mock

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.display import display  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from course_lib import widgets  # noqa: E402
from course_lib.errors import CourseTypeError, CourseValueError  # noqa: E402

PNG_MAGIC = b"\x89PNG"


@pytest.fixture(autouse=True)
def shell():
    """An IPython shell so that display() publishes outputs (as in a kernel) instead of printing;
    cleared afterwards, or every later test in the session would believe it runs in a notebook."""
    yield InteractiveShell.instance()
    plt.close("all")
    InteractiveShell.clear_instance()


def _show(fig_obj, captions: bool = False):
    """The outputs of displaying ``fig_obj``; without its caption (the last output) unless ``captions``."""
    with capture_output() as cap:
        display(fig_obj)
    if captions:
        return cap.outputs
    return [o for o in cap.outputs if not o.data.get("text/plain", "").startswith("Figure: ")]


def _png(bundle):
    return base64.b64decode(bundle["image/png"])


def _weights():
    torch.manual_seed(0)
    return torch.rand(2, 3, 4, 4).softmax(-1)


def test_attention_explorer_displays_controls_and_a_png():
    explorer = widgets.attention_explorer(_weights(), ["a", "b", "<pad>", "<pad>"],
                                          torch.tensor([False, False, True, True]))
    controls, figure = _show(explorer)
    # 1: the controls, with constant text (nbval compares text/plain, skips the widget view)
    assert "application/vnd.jupyter.widget-view+json" in controls.data
    assert controls.data["text/plain"] == "[attention explorer controls: layer, head]"
    # 2: an ordinary image output, under a display id so that it can be replaced
    assert figure.data["text/plain"] == "[attention explorer figure]"
    assert _png(figure.data).startswith(PNG_MAGIC)
    assert figure.transient["display_id"] == explorer.handle.display_id
    assert [w.description for w in explorer.controls.values()] == ["layer", "head"]
    assert all(isinstance(w, ipywidgets.IntSlider) for w in explorer.controls.values())
    assert plt.get_fignums() == []            # the drawn figure was closed, nothing left to re-show


def test_a_control_change_updates_the_image():
    explorer = widgets.attention_explorer(_weights())
    (_, figure) = _show(explorer)
    with mock.patch.object(explorer.handle, "update") as update:
        explorer.controls["head"].value = 2
    update.assert_called_once()
    bundle = update.call_args.args[0]
    assert update.call_args.kwargs == {"raw": True}
    assert _png(bundle).startswith(PNG_MAGIC) and bundle["image/png"] != figure.data["image/png"]
    assert explorer.values == {"layer": 0, "head": 2}


def test_update_is_published_under_the_same_display_id():
    explorer = widgets.temperature_explorer(torch.tensor([2.0, 0.0, -1.0]), ["x", "y", "z"])
    _show(explorer)
    assert explorer.controls["temperature"].description == "temperature"
    with capture_output() as cap:
        explorer.controls["temperature"].value = 5.0
    (update, caption) = cap.outputs
    assert caption.update and caption.transient["display_id"] == explorer.caption_handle.display_id
    assert update.update and update.transient["display_id"] == explorer.handle.display_id
    assert update.data["text/plain"] == "[temperature explorer figure]"


def test_three_dimensional_weights_have_only_a_head_control():
    explorer = widgets.attention_explorer(_weights()[0], head=1)
    assert list(explorer.controls) == ["head"] and explorer.values == {"head": 1}


def test_pe_explorer_controls_and_dims_parsing():
    explorer = widgets.pe_explorer(max_len=16, d_model=8, dims=(0, 1))
    assert [w.description for w in explorer.controls.values()] == ["length", "dims", "layout"]
    assert widgets._parse_dims("0, 3;x 9 3 -1", 8) == [0, 3]
    with mock.patch.object(explorer, "render", return_value=PNG_MAGIC) as render, \
            mock.patch.object(explorer.handle, "update") as update:
        explorer.controls["dims"].value = "2, 5"
        explorer.controls["layout"].value = "concat"
    assert render.call_count == update.call_count == 2
    assert explorer.values == {"length": 16, "dims": "2, 5", "layout": "concat"}


def test_interactive_figure_with_short_specs():
    def draw(k, scale, name, flag):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot(range(k), [scale] * k, label=f"{name} {flag}")
        return fig, ax                                  # a (fig, axes) pair is accepted too

    explorer = widgets.interactive_figure(draw, k=(2, 4), scale=(0.5, 2.0), name=["a", "b"], flag=True)
    kinds = {k: type(w).__name__ for k, w in explorer.controls.items()}
    assert kinds == {"k": "IntSlider", "scale": "FloatSlider", "name": "Dropdown", "flag": "Checkbox"}
    (_, figure) = _show(explorer)
    assert _png(figure.data).startswith(PNG_MAGIC)


def test_a_failing_draw_shows_the_error_as_text():
    def draw(n):
        if n > 1:
            raise ValueError("too big")
        return plt.figure()

    explorer = widgets.interactive_figure(draw, n=(1, 3))
    with mock.patch.object(explorer.handle, "update") as update:
        explorer.controls["n"].value = 2
    assert update.call_args.args[0] == {"text/plain": "[interactive figure: ValueError: too big]"}


def test_bad_input():
    with pytest.raises(CourseTypeError, match="draw"):
        widgets.interactive_figure("not callable")
    with pytest.raises(CourseTypeError, match="n:"):
        widgets.interactive_figure(lambda n: None, n=3)
    with pytest.raises(CourseValueError, match="weights"):
        widgets.attention_explorer(torch.rand(4, 4))
    with pytest.raises(CourseValueError, match="head"):
        widgets.attention_explorer(_weights(), head=5)
    with pytest.raises(CourseValueError, match="length"):
        widgets.pe_explorer(max_len=8, d_model=8, length=20)
    with pytest.raises(CourseValueError, match="temperature"):
        widgets.temperature_explorer(torch.zeros(3), temperature=100.0)


@pytest.mark.parametrize("fallback", ["full", "compact", "none"])
def test_fallback_controls_the_first_figure_only(fallback):
    import io

    from PIL import Image

    explorer = widgets.attention_explorer(_weights(), fallback=fallback)
    (_, figure) = _show(explorer)
    full = Image.open(io.BytesIO(explorer.render())).size
    if fallback == "none":
        assert "image/png" not in figure.data
        assert figure.data["text/plain"] == "[attention explorer figure: move a control to draw it]"
    else:
        size = Image.open(io.BytesIO(_png(figure.data))).size
        assert (size == full) == (fallback == "full")
        assert size[0] <= full[0]
    with mock.patch.object(explorer.handle, "update") as update:
        explorer.controls["head"].value = 2                 # a moved control always draws full size
    assert Image.open(io.BytesIO(_png(update.call_args.args[0]))).size == full
    with pytest.raises(CourseValueError, match="fallback"):
        widgets.attention_explorer(_weights(), fallback="small")


@pytest.mark.parametrize("make", [
    lambda: widgets.pe_explorer(max_len=16, d_model=8, dims=(0, 1)),
    lambda: widgets.attention_explorer(_weights(), layer=0, head=1),
    lambda: widgets.temperature_explorer(torch.tensor([1.0, 2.0, 0.5])),
    lambda: widgets.interactive_figure(lambda k: plt.figure(), k=(1, 3)),
], ids=["pe", "attention", "temperature", "generic"])
def test_every_control_has_a_plain_text_label_and_a_tooltip(make):
    """Keyboard and screen-reader users: a native input per control, labelled in plain text."""
    explorer = make()
    for name, control in explorer.controls.items():
        assert control.description == name and control.description_allow_html is False
        assert control.tooltip and not control.disabled


def test_the_static_figure_carries_its_alt_text():
    explorer = widgets.pe_explorer(max_len=16, d_model=8, dims=(0, 1), length=12)
    assert "12 positions" in explorer.alt and "features 0, 1" in explorer.alt
    with capture_output() as captured:
        display(explorer)
    figure = [o for o in captured.outputs if "image/png" in o.data][0]
    assert figure.metadata["image/png"]["alt"] == explorer.alt


@pytest.mark.parametrize("make", [
    lambda: widgets.pe_explorer(max_len=16, d_model=8, dims=(0, 1)),
    lambda: widgets.temperature_explorer(torch.tensor([1.0, 2.0, 0.5])),
], ids=["pe", "temperature"])
def test_the_controls_carry_a_visible_focus_style(make):
    """The 2 px focus outline (tests/browser/test_lecture_notebooks.py checks it in JupyterLab):
    the box has the class the style is scoped to, the style rides in a hidden HTML widget after
    the controls, and the controls' text/plain line does not change."""
    explorer = make()
    box = explorer.box
    assert widgets.EXPLORER_CLASS in box._dom_classes
    assert list(box.children[:-2]) == list(explorer.controls.values()) and box.children[-2] is explorer.readout
    style = box.children[-1]
    assert isinstance(style, ipywidgets.HTML) and style.layout.display == "none"
    assert style.value == widgets.FOCUS_CSS and f".{widgets.EXPLORER_CLASS} " in style.value
    assert ":focus-visible" in style.value and "outline: 2px solid" in style.value
    assert explorer._controls_bundle()["text/plain"].endswith(f"controls: {', '.join(explorer.controls)}]")


def test_the_explorer_says_what_its_figure_shows_and_says_it_again_after_a_move():
    """Inside JupyterLab the image has no alt text: a caption output under it says what the map shows
    (each query's strongest key), the script in it names the sliders, and a move replaces the caption
    and the spoken read-out (a live region) with the new values and the new map's description."""
    weights = torch.zeros(2, 3, 3, 3)
    weights[..., 0] = 1.0                                  # every query looks at the first key ...
    weights[1, 2, :, 2], weights[1, 2, :, 0] = 0.9, 0.1    # ... except in layer 1, head 2: the third
    explorer = widgets.attention_explorer(weights, ["a", "b", "c"])
    *_, caption = _show(explorer, captions=True)
    said = caption.data["text/plain"]
    assert said == ("Figure: layer 0, head 0: Attention map layer 0, head 0, 3 queries by 3 keys; each query's "
                    "strongest key: a: a 1.00, b: a 1.00, c: a 1.00.")
    assert 'role="note"' in caption.data["text/html"] and "aria-label" in widgets.NAME_JS
    with capture_output() as cap:
        explorer.controls["layer"].value = 1
        explorer.controls["head"].value = 2
    caption = cap.outputs[-1]
    assert caption.update and caption.data["text/plain"].startswith("Figure: layer 1, head 2: ")
    assert "a: c 0.90" in caption.data["text/plain"] and "a: c 0.90" in explorer.readout.value
