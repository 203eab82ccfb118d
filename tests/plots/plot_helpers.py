"""Shared inputs of the plot tests (a plain module: tests/plots is on the tests' pythonpath, pyproject.toml)."""

import torch

TOKENS = ["the", "cat", "sat", "<pad>", "<pad>"]
PAD = torch.tensor([False, False, False, True, True])


def weights(*shape, dtype=torch.float32):
    torch.manual_seed(0)
    return torch.rand(*shape).softmax(-1).to(dtype)


def padding_patches(ax):
    return [p for p in ax.patches if p.get_gid() == "padding"]
