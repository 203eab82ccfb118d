"""Shared test set-up: offline Hugging Face, a headless matplotlib, a fixed seed."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import matplotlib  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

# Headless figures in this process only: an MPLBACKEND variable would reach the notebook kernels
# that nbval and the browser tests start, and take their inline figures away.
matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield
