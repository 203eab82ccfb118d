"""Tests of course_lib.utils: device, seeding, parameter counts, show_source."""

import inspect
import random

import numpy as np
import torch
from torch import nn

import course_lib
from course_lib import EncoderLayer, MultiHeadAttention, count_parameters, get_device, seed_everything, show_source


def test_get_device(monkeypatch):
    assert get_device() == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert get_device() == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert get_device() == torch.device("cuda")


def test_seed_everything_makes_every_generator_repeat():
    def draw():
        return random.random(), float(np.random.rand()), torch.rand(3).tolist(), nn.Linear(2, 2).weight.tolist()

    assert seed_everything(7) == 7
    first = draw()
    seed_everything(7)
    assert draw() == first
    seed_everything(8)
    assert draw() != first
    assert not torch.are_deterministic_algorithms_enabled()                  # not forced


def test_count_parameters():
    d, ff = 8, 16
    layer = EncoderLayer(d, 2, ff)
    assert count_parameters(layer) == 4 * (d * d + d) + (d * ff + ff) + (ff * d + d) + 2 * 2 * d
    assert count_parameters(layer) == sum(p.numel() for p in layer.parameters())
    layer.norm1.requires_grad_(False)
    assert count_parameters(layer, trainable_only=True) == count_parameters(layer) - 2 * d


def test_count_parameters_counts_tied_weights_once():
    emb = nn.Embedding(10, 4)
    head = nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    assert count_parameters(nn.ModuleList([emb, head])) == 40


def test_show_source_returns_the_real_code(capsys):
    source = show_source(MultiHeadAttention)
    assert source == inspect.getsource(course_lib.attention.MultiHeadAttention)
    assert "def forward" in source and "class MultiHeadAttention" in source
    function = show_source(course_lib.scaled_dot_product_attention, display=False)
    assert function.startswith("def scaled_dot_product_attention")
    assert capsys.readouterr().out == ""                                     # nothing printed outside a notebook
