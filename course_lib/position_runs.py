"""Lecture 05's experiment: one attention head learns to copy the previous token, its positions given by one
of four schemes, trained on sequences of :data:`TRAIN_LEN` tokens and then read on longer ones.

The task needs the *offset* between two positions and nothing else: the output at position ``t`` is the
token at ``t - 1``. The tokens are drawn uniformly at random, so nothing but the position says which
key to read. The four arms (:data:`SCHEMES`) differ only in how a position enters:

* ``"none"``: no position at all (the head cannot tell its neighbours from the rest: a baseline);
* ``"learned"``: a trained row per position, added to the token (rows past :data:`TRAIN_LEN` exist but
  never receive a gradient);
* ``"sinusoidal"``: the paper's fixed table, added to the token;
* ``"rope"``: the queries and keys rotated by their position (:class:`~course_lib.rope.RotaryEmbedding`).

Everything is float64 and seeded, so a run gives the same numbers on every CPU.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .errors import check_choice, check_int
from .positional import sinusoidal_positional_encoding
from .rope import RotaryEmbedding

__all__ = ["SCHEMES", "TRAIN_LEN", "TEST_LENS", "CONFIG", "PreviousTokenHead", "copy_batch", "train_head",
           "accuracy_by_length", "run_schemes"]

SCHEMES = ("none", "learned", "sinusoidal", "rope")
TRAIN_LEN = 16
TEST_LENS = (16, 32, 64, 128)
#: vocabulary, width, training steps, batch size, Adam's learning rate
CONFIG = {"vocab": 32, "d": 32, "steps": 200, "batch": 32, "lr": 0.01}


class PreviousTokenHead(nn.Module):
    """Token embedding (+ positions), one attention head, a linear read-out over the vocabulary.

    Shape:
        tokens: ``(B, T)`` long, ``T <= max_len``; output: logits ``(B, T, vocab)``.
    """

    def __init__(self, scheme: str, vocab: int, d: int, max_len: int = max(TEST_LENS)):
        super().__init__()
        check_choice("scheme", scheme, SCHEMES)
        self.scheme = scheme
        self.embedding = nn.Embedding(vocab, d)
        self.w_q, self.w_k, self.w_v = (nn.Linear(d, d, bias=False) for _ in range(3))
        self.out = nn.Linear(d, vocab)
        if scheme == "learned":
            self.positions = nn.Embedding(max_len, d)                      # one trained row per position
        if scheme == "sinusoidal":
            self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d), persistent=False)
        if scheme == "rope":
            self.rope = RotaryEmbedding(d, max_len=max_len)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        T = tokens.shape[1]
        x = self.embedding(tokens)                                          # (B, T, d)
        if self.scheme == "learned":
            x = x + self.positions.weight[:T]
        if self.scheme == "sinusoidal":
            x = x + self.pe[:T].to(x.dtype)
        q, k, v = self.w_q(x), self.w_k(x), self.w_v(x)                     # (B, T, d) each
        if self.scheme == "rope":
            q, k = self.rope(q), self.rope(k)                               # turned by their positions
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)   # (B, T, T)
        return self.out(weights @ v)                                        # (B, T, vocab)


def copy_batch(n: int, T: int, vocab: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``(tokens, targets)``, both ``(n, T)`` long: uniform random tokens; the target at ``t`` is the token at
    ``t - 1``, and -100 (``F.cross_entropy``'s ``ignore_index``) at position 0, which has no previous token."""
    tokens = torch.randint(vocab, (n, T), generator=generator)
    targets = torch.full_like(tokens, -100)
    targets[:, 1:] = tokens[:, :-1]
    return tokens, targets


def train_head(scheme: str, seed: int, steps: int = CONFIG["steps"]) -> tuple[PreviousTokenHead, list[float]]:
    """One run: the head of ``scheme`` trained on sequences of :data:`TRAIN_LEN` tokens with Adam; returns the
    model and its training loss at every step."""
    check_int("steps", steps, low=1)
    torch.manual_seed(seed)
    model = PreviousTokenHead(scheme, CONFIG["vocab"], CONFIG["d"]).double()
    optimizer = torch.optim.Adam(model.parameters(), lr=CONFIG["lr"])
    data = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        tokens, targets = copy_batch(CONFIG["batch"], TRAIN_LEN, CONFIG["vocab"], data)
        loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten(), ignore_index=-100)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses


@torch.no_grad()
def accuracy_by_length(model: PreviousTokenHead, lengths=TEST_LENS, n: int = 64, seed: int = 1000) -> dict:
    """The share of positions ``1 .. T-1`` whose previous token the model names, on ``n`` fresh sequences of each
    length (the same sequences for every model), and separately on the positions past :data:`TRAIN_LEN`."""
    result = {}
    for T in lengths:
        tokens, targets = copy_batch(n, T, CONFIG["vocab"], torch.Generator().manual_seed(seed + T))
        right = model(tokens).argmax(-1) == targets                          # (n, T)
        result[T] = right[:, 1:].double().mean().item()
        if T > TRAIN_LEN:
            result[f"{T} past {TRAIN_LEN}"] = right[:, TRAIN_LEN:].double().mean().item()
    return result


def run_schemes(seeds=(0, 1, 2), steps: int = CONFIG["steps"]) -> dict:
    """Every scheme, every seed: ``{scheme: {"loss": (seeds, steps) tensor, "accuracy": [dict per seed]}}``."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                                          # one thread: the same sums on every run
    try:
        runs = {}
        for scheme in SCHEMES:
            losses, accuracies = [], []
            for seed in seeds:
                model, curve = train_head(scheme, seed, steps)
                losses.append(curve)
                accuracies.append(accuracy_by_length(model))
            runs[scheme] = {"loss": torch.tensor(losses, dtype=torch.float64), "accuracy": accuracies}
    finally:
        torch.set_num_threads(threads)
    return runs
