"""Lecture 09's word-order test: tell a BBC News headline from the same headline with its words shuffled.

Without positions an encoder is permutation equivariant (lecture 05), so the mean of its output vectors is
the same for a headline and for any shuffle of it: whatever it learns, a classifier on that mean gives both
the same answer, and on pairs (each headline once as it is, once shuffled) it is right exactly half the
time. With positions it can read the order. The task needs no large vocabulary and trains in seconds.

* :func:`order_pairs`: the headlines, tokenized, each with one shuffle that differs from it;
* :class:`OrderClassifier`: an encoder, a masked mean over the real tokens, a linear layer to two scores;
* :func:`train_order`: the training loop; :func:`order_accuracy`: the share of headlines told apart right;
* :class:`PairCounts`, :func:`pair_counts_baseline`: the rule to beat, which learns nothing by gradient: naive
  Bayes on the word pairs of a headline (each word with the next, the edges included), its smoothing chosen
  by cross-validation on the training headlines.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .capstone import article_groups, balanced_split, load_articles
from .encoder import Encoder
from .tokenizer import PAD_ID, WordTokenizer

__all__ = ["order_pairs", "OrderClassifier", "make_order_model", "train_order", "order_accuracy", "PairCounts",
           "pair_counts_baseline"]


def _shuffled(ids: list[int], generator: torch.Generator) -> list[int] | None:
    """A random order of ``ids`` that differs from it, or None when every order is the same."""
    if len(set(ids)) < 2:
        return None
    while True:
        out = [ids[i] for i in torch.randperm(len(ids), generator=generator).tolist()]
        if out != ids:
            return out


def order_pairs(max_len: int = 12, split_seed: int = 0, seed: int = 0, vocab: int = 200):
    """``(tokenizer, (train_x, train_y), (test_x, test_y))``: every distinct headline (lecture 08's test
    headlines held out, with every headline of their stories: :func:`~course_lib.capstone.article_groups`) as
    it is (label 1) and shuffled (label 0), ids ``(2N, max_len)``, the two versions of a headline side by side.
    The vocabulary is the ``vocab`` most frequent words of the training headlines."""
    data = load_articles()
    group = article_groups(data)
    _, test_index = balanced_split(data, train_per_topic=60, test_per_topic=60, seed=split_seed)
    test_groups = {group[i] for i in test_index}
    test_text = sorted({data.headline[i] for i in test_index})
    train_text = sorted({h for h, g in zip(data.headline, group) if g not in test_groups} - set(test_text))
    tokenizer = WordTokenizer.from_texts(train_text, max_size=vocab)
    generator = torch.Generator().manual_seed(seed)

    def pairs(texts):
        rows, labels = [], []
        for text in texts:
            ids = tokenizer.encode(text)[:max_len]
            other = _shuffled(ids, generator)
            if other is not None:
                rows += [ids, other]
                labels += [1, 0]
        x = torch.full((len(rows), max_len), PAD_ID, dtype=torch.long)
        for r, ids in enumerate(rows):
            x[r, :len(ids)] = torch.tensor(ids)
        return x, torch.tensor(labels)

    return tokenizer, pairs(train_text), pairs(test_text)


class OrderClassifier(nn.Module):
    """An encoder, the mean of its outputs over the real tokens, and a linear layer: two scores (shuffled,
    as written) per headline. ``tokens (B, T)`` to ``(B, 2)``."""

    def __init__(self, encoder: nn.Module):
        super().__init__()
        self.encoder = encoder
        self.out = nn.Linear(encoder.embedding.embedding_dim, 2)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        keep = (tokens != PAD_ID).unsqueeze(-1).to(self.out.weight.dtype)        # (B, T, 1)
        h = self.encoder(tokens)                                                 # (B, T, d_model)
        return self.out((h * keep).sum(1) / keep.sum(1))                         # (B, 2)


def make_order_model(vocab_size: int, seed: int, positional: str = "sinusoidal", d_model: int = 32,
                     num_layers: int = 1, max_len: int = 12) -> OrderClassifier:
    """An :class:`OrderClassifier` in float64 over course_lib's pre-LN ``Encoder``, weights drawn from ``seed``."""
    torch.manual_seed(seed)
    encoder = Encoder(vocab_size, d_model, 4, 2 * d_model, num_layers, max_len=max_len, norm_first=True,
                      positional=positional)
    return OrderClassifier(encoder).double()


def train_order(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int = 200, pairs_per_batch: int = 32,
                lr: float = 3e-3, seed: int = 0) -> list[float]:
    """Adam on batches of ``pairs_per_batch`` headlines, each with its shuffle; returns the loss of each step."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    for _ in range(steps):
        pairs = torch.randint(0, len(x) // 2, (pairs_per_batch,), generator=generator)
        rows = torch.stack([2 * pairs, 2 * pairs + 1], 1).flatten()              # a headline and its shuffle
        loss = F.cross_entropy(model(x[rows]), y[rows])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return losses


@torch.no_grad()
def order_accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """The share of the examples of ``x`` whose top score is their label."""
    model.eval()
    return float((model(x).argmax(-1) == y).double().mean())


class PairCounts:
    """Naive Bayes on word pairs: for each class (0 shuffled, 1 as written), how often each pair of neighbours
    ``(a, b)`` stands in its training rows (``a`` the edge before the first word, ``b`` the edge after the last),
    add-``alpha`` smoothed; a row goes to the class under which its pairs are likelier."""

    def __init__(self, alpha: float):
        self.alpha = alpha

    @staticmethod
    def pairs(row: torch.Tensor) -> list[tuple[int, int]]:
        ids = [-1] + [int(i) for i in row if i != PAD_ID] + [-2]                 # -1, -2: the edges
        return list(zip(ids[:-1], ids[1:]))

    def fit(self, x: torch.Tensor, y: torch.Tensor) -> PairCounts:
        self.counts = [{}, {}]
        for row, label in zip(x, y.tolist()):
            for pair in self.pairs(row):
                self.counts[label][pair] = self.counts[label].get(pair, 0) + 1
        self.totals = [sum(c.values()) for c in self.counts]
        self.kinds = len(set(self.counts[0]) | set(self.counts[1])) + 1           # + 1: a pair never seen
        return self

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        def log_p(row, k):
            return sum(math.log((self.counts[k].get(p, 0) + self.alpha) / (self.totals[k] + self.alpha * self.kinds))
                       for p in self.pairs(row))
        return torch.tensor([int(log_p(row, 1) > log_p(row, 0)) for row in x])


def pair_counts_baseline(x: torch.Tensor, y: torch.Tensor, test_x: torch.Tensor, test_y: torch.Tensor,
                         grid=(0.03, 0.1, 0.3, 1.0, 3.0), folds: int = 5) -> tuple[float, float]:
    """:class:`PairCounts` with its ``alpha`` chosen by ``folds``-fold cross-validation on the training rows (a
    headline and its shuffle always in the same fold), then fitted on all of them: ``(alpha, test accuracy)``."""
    fold = (torch.arange(len(x)) // 2) % folds
    right = []
    for alpha in grid:
        right.append(sum(int((PairCounts(alpha).fit(x[fold != k], y[fold != k]).predict(x[fold == k])
                              == y[fold == k]).sum()) for k in range(folds)))
    alpha = grid[right.index(max(right))]
    accuracy = float((PairCounts(alpha).fit(x, y).predict(test_x) == test_y).double().mean())
    return alpha, accuracy
