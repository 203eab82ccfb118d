"""Lecture 01's diagrams (course_lib.plots.diagrams.lecture01): the committed SVGs are what the code
draws, and every frame of the decoding slider reads well (test_figures.py covers the original list)."""

from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from course_lib.plots import figures
from course_lib.plots.diagrams import lecture01
from course_lib.plots.style import course_style

ROOT = Path(__file__).resolve().parents[2]
RES = ROOT / "res"


@pytest.mark.parametrize("name", list(lecture01.FIGURES))
def test_figure_is_registered_committed_and_reads_well(name, tmp_path):
    assert figures.FIGURES[name] is lecture01.FIGURES[name]
    fig = figures.draw(name)
    try:
        assert figures.layout_problems(fig) == []
        assert figures.svg_bytes(fig) == (RES / f"{name}.svg").read_bytes(), "run `make figures`"
    finally:
        plt.close(fig)


@pytest.mark.parametrize("step", range(1, len(lecture01.TARGET) + 1))
def test_every_decoding_frame_reads_well(step):
    with course_style():
        fig = lecture01.draw_decoding_step(step)
    try:
        assert figures.layout_problems(fig) == []
    finally:
        plt.close(fig)


def test_frames_follow_the_decoding_loop():
    assert lecture01.decoding_prefix(1) == (["<bos>"], "down")
    assert lecture01.decoding_prefix(5) == (["<bos>", "down", "sat", "cat", "the"], "<eos>")
    with pytest.raises(ValueError, match=r"step: expected an int in \[1, 5\], got 6"):
        lecture01.decoding_prefix(6)
