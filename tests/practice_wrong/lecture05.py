"""Wrong answers to lecture 05's checks, each with the word of its message that names the cause."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_lib import Encoder
from course_lib.tokenizer import WordTokenizer
from practice_wrong import Wrong


def _order(same_mean, same_first):
    def args():
        torch.manual_seed(0)
        tok = WordTokenizer.from_texts(["cls dog bites man"])
        a, b = tok(["cls dog bites man"])["input_ids"], tok(["cls man bites dog"])["input_ids"]
        encoder = Encoder(len(tok), d_model=32, num_heads=4, d_ff=64, num_layers=2, positional="none").eval()
        return (same_mean, same_first, encoder, a, b), {}
    return args


class _Bias(nn.Module):
    def __init__(self, K):
        super().__init__()
        self.K = K
        self.table = nn.Parameter(torch.zeros(2 * K + 1))

    def offsets(self, T):
        return torch.arange(T)[None, :] - torch.arange(T)[:, None]

    def forward(self, scores):
        return scores + self.table[self.offsets(scores.shape[-1]).clamp(-self.K, self.K) + self.K]


class _Mirrored(_Bias):
    def offsets(self, T):
        return super().offsets(T).T


class _Wrapped(_Bias):
    def forward(self, scores):
        return scores + self.table[(self.offsets(scores.shape[-1]) + self.K) % len(self.table)]


class _Absolute(_Bias):
    def forward(self, scores):
        T = scores.shape[-1]
        return scores + self.table[torch.arange(T).clamp(max=2 * self.K)][None, :]


class _Fixed(_Bias):
    def __init__(self, K):
        nn.Module.__init__(self)
        self.K = K
        self.table = torch.zeros(2 * K + 1)


def _probe(kind):
    def probe_accuracy(h_train, pos_train, h_test, pos_test, T, ridge=0.0):
        if kind == "on train":
            h_test, pos_test = h_train, pos_train
        if kind == "fit on test":
            h_train, pos_train = h_test, pos_test
        ones = (lambda h: torch.ones(len(h), 1, dtype=h.dtype)) if kind != "no bias" else (lambda h: h[:, :0])
        X = torch.cat([h_train, ones(h_train)], dim=1)
        penalty = ridge * (1 if kind == "no N" else len(X)) * torch.eye(X.shape[1], dtype=X.dtype)
        if kind not in ("constant shrunk", "no bias"):
            penalty[-1, -1] = 0.0
        if kind == "ridge ignored":
            penalty = 0 * penalty
        W = torch.linalg.solve(X.T @ X + penalty, X.T @ F.one_hot(pos_train, T).to(h_train.dtype))
        right = (torch.cat([h_test, ones(h_test)], dim=1) @ W).argmax(dim=1) == pos_test
        return right.double().mean().item() * (100 if kind == "percent" else 1)
    return probe_accuracy


def _rope(kind):
    def apply_rope(x, positions, theta):
        if kind == "positions ignored":
            positions = torch.arange(x.shape[-2])
        angle = positions.to(x.dtype)[:, None] * theta * (-1 if kind == "clockwise" else 1)
        a, b = (x.chunk(2, dim=-1) if kind == "halves" else (x[..., 0::2], x[..., 1::2]))
        first, second = a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()
        if kind == "halves":
            return torch.cat([first, second], dim=-1)
        return torch.stack([first, second], dim=-1).flatten(-2)

    def score_grid(q, k, theta, T):
        pos = torch.arange(T)
        if kind == "not turned":
            return (q.expand(T, -1) @ k.expand(T, -1).T).clone()
        grid = apply_rope(q.expand(T, -1), pos, theta) @ apply_rope(k.expand(T, -1), pos, theta).T
        return grid.T if kind == "transposed" else grid
    return apply_rope, score_grid


WRONG = {
    "check_order_prediction": [
        Wrong("position 0 differs", _order(True, False), word="position 0"),
        Wrong("the mean differs", _order(False, True), word="permutation"),
        Wrong("both differ", _order(False, False), word="permutation"),
    ],
    "check_relative_position_bias": [
        Wrong("offset i - j, mirrored", (_Mirrored,), word="mirrored"),
        Wrong("offsets wrapped round, not clipped", (_Wrapped,), word="clipping"),
        Wrong("indexed by the key's position", (_Absolute,), word="along a diagonal"),
        Wrong("a table that is not learned", (_Fixed,), word="2K + 1"),
    ],
    "check_probe": [
        Wrong("scored on its own training vectors", (_probe("on train"),), word="fit on"),
        Wrong("fit on the test vectors", (_probe("fit on test"),), word="fit on the test"),
        Wrong("a percentage", (_probe("percent"),), word="between 0 and 1"),
        Wrong("no constant column", (_probe("no bias"),), word="constant column"),
        Wrong("the ridge never reaches the fit", (_probe("ridge ignored"),), word="no effect"),
        Wrong("the constant shrunk too", (_probe("constant shrunk"),), word="constant column is shrunk"),
        Wrong("the penalty not times N", (_probe("no N"),), word="multiplied by N"),
    ],
    "check_rope": [
        Wrong("turned clockwise", _rope("clockwise"), word="wrong way"),
        Wrong("the halves layout", _rope("halves"), word="neighbours"),
        Wrong("positions 0 .. T-1, not those given", _rope("positions ignored"), word="positions argument"),
        Wrong("the grid transposed", _rope("transposed"), word="transposed"),
        Wrong("the grid of unturned vectors", _rope("not turned"), word="not turned"),
    ],
    "check_rope_score": [
        Wrong("no rotation", (1.0,), word="unturned"),
        Wrong("angles added", (math.cos(8),), word="subtract"),
        Wrong("only the query turned", (math.cos(5),), word="key is turned"),
        Wrong("only the key turned", (math.cos(3),), word="query is turned"),
        Wrong("the sign lost", (-math.cos(2),), word="sign"),
    ],
    "check_biased_weight": [
        Wrong("the bias ignored", (0.25,), word="before the softmax"),
        Wrong("the argmax", (1.0,), word="argmax"),
        Wrong("the bias as a share", (0.75,), word="e^3"),
        Wrong("the previous key counted twice", (math.exp(3) / (math.exp(3) + 4),), word="twice"),
    ],
}
