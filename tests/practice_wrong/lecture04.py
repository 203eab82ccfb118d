"""Wrong answers to lecture 04's checks, each with the word of its message that names the cause."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from practice_wrong import Wrong


def _softmax(shift_axis=-1, sum_axis=-1, tau_power=-1, shift=True):
    def stable_softmax(z, tau=1.0):
        z = z * tau ** tau_power
        if shift:
            z = z - (z.max(dim=shift_axis, keepdim=True).values if shift_axis is not None else z.max())
        e = z.exp()
        return e / e.sum(dim=sum_axis, keepdim=True)
    return stable_softmax


def _sample(kind):
    def sample(logits, tau, k, n, generator, top_p=1.0):
        if kind == "uniform":
            return logits.topk(k).indices[torch.randint(k, (n,), generator=generator)]
        if kind == "greedy":
            return logits.argmax().repeat(n)
        kept = len(logits) if kind == "all kept" else k
        top = logits.topk(kept)
        p = torch.softmax(top.values * tau if kind == "times tau" else top.values / tau, dim=-1)
        if kind == "not renormalised":
            p = torch.softmax(logits / tau, -1)[top.indices]
        if kind != "top_p ignored":
            sel = torch.softmax(top.values, dim=-1) if kind == "nucleus before tau" else p
            keep = sel.cumsum(-1) < top_p if kind == "crossing token dropped" else sel.cumsum(-1) - sel < top_p
            keep[0] = True
            p = p * keep
        cdf = p.cumsum(-1)
        scale = 1.0 if kind in ("not renormalised", "nucleus not renormalised") else cdf[-1]
        u = torch.rand(n, generator=generator, dtype=cdf.dtype) * scale
        return top.indices[torch.searchsorted(cdf, u, right=True).clamp(max=kept - 1)]
    return sample


def _nearest(kind):
    def nearest(table, i, k=5):
        if kind == "dot":
            sims = table @ table[i]
        else:
            unit = F.normalize(table, dim=-1)
            sims = unit @ unit[i]
        if kind != "itself":
            sims[i] = -math.inf
        top = sims.topk(k).indices
        return top.flip(0) if kind == "reversed" else top
    return nearest


class _Tied(nn.Module):
    def __init__(self, embedding):
        super().__init__()
        self.embedding = embedding
        self.bias = nn.Parameter(torch.zeros(embedding.num_embeddings))

    def forward(self, h):
        return h @ self.embedding.weight.T + self.bias

    def loss(self, h, targets):
        z = self(h)
        log_p = z - z.logsumexp(dim=-1, keepdim=True)
        return -log_p[torch.arange(len(targets)), targets].mean()


class _RandomBias(_Tied):
    def __init__(self, embedding):
        super().__init__(embedding)
        self.bias = nn.Parameter(torch.randn(embedding.num_embeddings))


class _Library(_Tied):
    def loss(self, h, targets):
        return F.cross_entropy(self(h), targets)


class _Copied(_Tied):
    def __init__(self, embedding):
        nn.Module.__init__(self)
        self.weight = nn.Parameter(embedding.weight.detach().clone())
        self.bias = nn.Parameter(torch.zeros(embedding.num_embeddings))

    def forward(self, h):
        return h @ self.weight.T + self.bias


class _Naive(_Tied):
    def loss(self, h, targets):
        p = self(h).exp() / self(h).exp().sum(dim=-1, keepdim=True)
        return -p[torch.arange(len(targets)), targets].log().mean()


class _Summed(_Tied):
    def loss(self, h, targets):
        return super().loss(h, targets) * len(targets)


def _split(longest=True, mark="##", unk_piece=False):
    def wordpiece_split(word, vocab):
        pieces, start = [], 0
        while start < len(word):
            ends = range(len(word), start, -1) if longest else range(start + 1, len(word) + 1)
            piece = next((p for p in ((word[start:e] if start == 0 else mark + word[start:e]) for e in ends)
                          if p in vocab), None)
            if piece is None:
                if not unk_piece:
                    return ["[UNK]"]
                pieces.append("[UNK]")
                start += 1
                continue
            pieces.append(piece)
            start += len(piece) - (len(mark) if start else 0)
        return pieces
    return wordpiece_split


WRONG = {
    "check_stable_softmax": [
        Wrong("no shift: e^1000 overflows", (_softmax(shift=False),), word="overflows"),
        Wrong("one maximum for the whole batch", (_softmax(shift_axis=None),), word="over which axis"),
        Wrong("the maximum over the batch axis", (_softmax(shift_axis=0),), word="one number per row"),
        Wrong("the sum over the batch axis", (_softmax(sum_axis=0),), word="axis of the sum"),
        Wrong("times tau instead of divided", (_softmax(tau_power=1),), word="sharpen"),
    ],
    "check_sample": [
        Wrong("multiplied by tau", (_sample("times tau"),), word="the wrong way"),
        Wrong("every token kept", (_sample("all kept"),), word="outside the 3 largest"),
        Wrong("kept probabilities not renormalised", (_sample("not renormalised"),), word="do not sum to 1"),
        Wrong("uniform among the k", (_sample("uniform"),), word="equally often"),
        Wrong("the argmax every time", (_sample("greedy"),), word="same draws"),
        Wrong("top_p never applied", (_sample("top_p ignored"),), word="top_p has no effect"),
        Wrong("the nucleus chosen at tau = 1", (_sample("nucleus before tau"),), word="before the temperature"),
        Wrong("the token that crosses top_p dropped", (_sample("crossing token dropped"),), word="reaches top_p"),
        Wrong("the nucleus not renormalised", (_sample("nucleus not renormalised"),), word="outside the nucleus"),
    ],
    "check_nearest": [
        Wrong("a plain dot product", (_nearest("dot"),), word="dot product rewards length"),
        Wrong("the word among its own neighbours", (_nearest("itself"),), word="its own neighbours"),
        Wrong("least similar first", (_nearest("reversed"),), word="order"),
    ],
    "check_tied_head": [
        Wrong("a copy of the table", (_Copied,), word="a copy of E"),
        Wrong("a random bias", (_RandomBias,), word="not at zero"),
        Wrong("F.cross_entropy called", (_Library,), word="calls cross_entropy"),
        Wrong("exp without the shift", (_Naive,), word="overflows"),
        Wrong("the sum, not the mean", (_Summed,), word="the sum"),
    ],
    "check_wordpiece": [
        Wrong("the shortest piece first", (_split(longest=False),), word="the longest piece"),
        Wrong("continuations without ##", (_split(mark=""),), word="## before it"),
        Wrong("[UNK] for one piece, not the word", (_split(unk_piece=True),), word="the whole word"),
    ],
    "check_doubled_logits": [
        Wrong("p_1 before the change", (1 / (1 + math.exp(-2)),), word="before the change"),
        Wrong("the gap kept at 2, plus 2", (1 / (1 + math.exp(-3)),), word="gap between the logits"),
        Wrong("1/2 as if uniform", (0.5,), word="gap between the logits"),
    ],
    "check_score_std": [
        Wrong("no division by sqrt(d_k)", (8,), word="division by sqrt(d_k) is missing"),
        Wrong("the variance", (64,), word="variance"),
        Wrong("divided twice", (0.125,), word="twice"),
    ],
}
