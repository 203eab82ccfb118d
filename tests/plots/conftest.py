"""Plot tests: headless matplotlib (set by tests/conftest.py), every figure closed after each test."""

import matplotlib.pyplot as plt
import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")
