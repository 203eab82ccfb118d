"""Lecture 02's figures read well and show the numbers the lecture computes."""

import math

import matplotlib.pyplot as plt
import pytest
import torch

from course_lib.plots import figures
from course_lib.plots.diagrams import lecture02


@pytest.mark.parametrize("name", list(lecture02.FIGURES))
def test_registered_and_reads_well(name):
    assert figures.FIGURES[name] is lecture02.FIGURES[name]
    fig = figures.draw(name)
    try:
        assert figures.layout_problems(fig) == []
        assert figures.svg_bytes(fig) == figures.svg_bytes(fig)
    finally:
        plt.close(fig)


def test_six_steps_show_the_numbers_of_section_3():
    # the cell of lecture 02, section 3: float64, one generator seeded 0, X then W^Q, W^K, W^V
    g = torch.Generator().manual_seed(0)
    X = torch.randn(3, 512, generator=g, dtype=torch.float64)
    W_Q, W_K, _ = (torch.randn(512, 64, generator=g, dtype=torch.float64) / math.sqrt(512) for _ in range(3))
    score = (X @ W_K) @ (X[0] @ W_Q)
    scaled = score / math.sqrt(64)
    weights = torch.softmax(scaled, dim=0)
    assert [f"{x:.2f}" for x in score] == list(lecture02.STEP_SCORES)
    assert [f"{x:.3f}" for x in scaled] == list(lecture02.STEP_SCALED)
    assert [f"{x:.2f}" for x in weights] == list(lecture02.STEP_WEIGHTS)


def test_soft_dictionary_shows_the_weights_of_section_1():
    weights = torch.softmax(torch.tensor(lecture02.DICT_SCORES, dtype=torch.float64), dim=0)
    assert torch.allclose(weights, torch.tensor(lecture02._softmax(lecture02.DICT_SCORES), dtype=torch.float64))
    assert [round(w, 4) for w in weights.tolist()] == [0.7275, 0.2676, 0.0049]
