"""Small conveniences for the notebooks: the device, seeding, parameter counts, showing real source."""

from __future__ import annotations

import inspect
import os
import random

import numpy as np
import torch
from torch import nn


def get_device() -> torch.device:
    """CUDA when a GPU is available, else the CPU. Notebooks scale their demos on this one variable."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def seed_everything(seed: int = 0) -> int:
    """Seed Python's, NumPy's and PyTorch's (CPU and every GPU) random generators; returns the seed."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)                       # also seeds every CUDA device
    os.environ["PYTHONHASHSEED"] = str(seed)      # for subprocesses started from here
    return seed


def count_parameters(module: nn.Module, trainable_only: bool = False) -> int:
    """The number of parameters of ``module``; a parameter shared by two places (tied weights) counts once."""
    params = module.parameters()                  # already unique: nn.Module de-duplicates shared tensors
    return sum(p.numel() for p in params if p.requires_grad or not trainable_only)


def show_source(obj, display: bool = True) -> str:
    """Show the real source code of a class or function (the code that runs, not a copy).

    In a notebook the code is displayed with syntax highlighting; elsewhere nothing is printed.
    Returns the source text.
    """
    source = inspect.getsource(obj)
    if display:
        try:
            from IPython import get_ipython
            from IPython.display import Code
            from IPython.display import display as ipy_display
        except ImportError:                        # pragma: no cover - IPython ships with Jupyter
            return source
        if get_ipython() is not None:
            ipy_display(Code(source, language="python"))
    return source
