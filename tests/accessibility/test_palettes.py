"""The course's colours for colour-blind readers, by simulation rather than by eye.

Each set of category colours (course_lib/plots/style.py) must keep every two of its colours at least
MIN_DE apart (CIEDE2000) for normal vision and as simulated for protanopia and deuteranopia
(Machado et al. 2009, tests/accessibility/cvd.py); colours drawn as text or lines must read on white;
the colormaps' lightness must be monotone (sequential) or monotone on each side of the centre
(diverging), also as a colour-blind reader sees them.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest

from course_lib.plots import style
from cvd import ciede2000, lab, min_difference, simulate

VISIONS = ("normal", "protanopia", "deuteranopia")
MIN_DE = 10.0          # CIEDE2000: two category colours this far apart are told apart at a glance

PALETTES = {
    "QKV": list(style.QKV.values()),
    "QKV_FILL": list(style.QKV_FILL.values()),
    "POSITION_COLORS": list(style.POSITION_COLORS),
    "CATEGORY_COLORS": list(style.CATEGORY_COLORS),
    "attend/blocked": [style.ATTEND_COLOR, style.BLOCKED_COLOR],
}


def contrast_on_white(color: str) -> float:
    rgb = np.array(matplotlib.colors.to_rgb(color))
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return 1.05 / (float(lin @ [0.2126, 0.7152, 0.0722]) + 0.05)


def test_the_colour_science_is_right():
    # Sharma, Wu & Dalal (2005), table 1, pairs 1 and 17
    assert ciede2000([[50, 2.6772, -79.7751]], [[50, 0, -82.7485]])[0] == pytest.approx(2.0425, abs=1e-4)
    assert ciede2000([[50, 2.5, 0]], [[73, 25, -18]])[0] == pytest.approx(27.1492, abs=1e-4)
    assert np.allclose(lab(np.array([[1.0, 1.0, 1.0]])), [[100, 0, 0]], atol=0.01)
    # a protanope or deuteranope cannot tell pure red from a green of the right lightness: the
    # simulation must say so (the check would prove nothing otherwise); grey stays grey
    red_and_olive = ["#d62728", "#8c8c00"]
    assert min_difference(red_and_olive, "deuteranopia")[0] < 10 < min_difference(red_and_olive, "normal")[0]
    assert np.allclose(simulate(["#808080"], "protanopia"), simulate(["#808080"], "normal"), atol=1e-3)


def test_matplotlibs_tab10_fails_the_check():
    """The palette the line plots used before: the check catches it."""
    tab10 = [matplotlib.colormaps["tab10"](i) for i in range(4)]
    assert min(min_difference(tab10, v)[0] for v in VISIONS) < MIN_DE


@pytest.mark.parametrize("name", list(PALETTES))
@pytest.mark.parametrize("vision", VISIONS)
def test_category_colours_stay_apart(name, vision):
    colors = PALETTES[name]
    d, (i, j) = min_difference(colors, vision)
    assert d >= MIN_DE, f"{name} with {vision}: {colors[i]} and {colors[j]} are only {d:.1f} apart (CIEDE2000)"


def test_position_and_line_colours_read_on_white():
    for color in style.POSITION_COLORS:           # the diagrams write "position t" in them
        assert contrast_on_white(color) >= 4.5, color
    for color in [*style.CATEGORY_COLORS, *style.QKV.values()]:
        assert contrast_on_white(color) >= 3.0, color


def _lightness(cmap_name: str, vision: str, n: int = 64) -> np.ndarray:
    rgba = matplotlib.colormaps[cmap_name](np.linspace(0, 1, n))
    return lab(simulate(rgba, vision))[:, 0]


@pytest.mark.parametrize("vision", VISIONS)
def test_the_sequential_map_grows_lighter_all_the_way(vision):
    L = _lightness(style.WEIGHTS_CMAP, vision)
    assert np.all(np.diff(L) > 0), f"{style.WEIGHTS_CMAP} with {vision}: lightness not monotone"
    assert L[-1] - L[0] > 50


@pytest.mark.parametrize("vision", VISIONS)
def test_the_diverging_map_is_lightest_at_zero_and_its_ends_differ(vision):
    L = _lightness(style.SIGNED_CMAP, vision, n=65)
    mid = len(L) // 2
    assert np.all(np.diff(L[:mid + 1]) > -0.5) and np.all(np.diff(L[mid:]) < 0.5), \
        f"{style.SIGNED_CMAP} with {vision}: lightness not monotone on each side of 0"
    ends = lab(simulate(matplotlib.colormaps[style.SIGNED_CMAP]([0.0, 1.0]), vision))
    assert ciede2000(ends[:1], ends[1:])[0] >= 2 * MIN_DE, f"{style.SIGNED_CMAP}: its two ends look alike with {vision}"


def test_no_plot_uses_a_palette_that_fails():
    """The plots draw lines with category_color, never with matplotlib's tab10 (or tab20, Set1...)."""
    root = Path(style.__file__).resolve().parent
    offenders = [f"{p.relative_to(root)}" for p in root.rglob("*.py")
                 if any(name in p.read_text() for name in ('"tab10"', '"tab20"', '"Set1"', '"jet"', '"rainbow"'))]
    assert not offenders, offenders
