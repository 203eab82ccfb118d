"""The checks of lecture 04's practice say what is wrong for the usual mistakes, in one line."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_lib.practice import lecture04
from practice_wrong.lecture04 import _Tied as TiedHead  # a right head, written with logsumexp


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


def stable_softmax(z, tau=1.0):
    z = z / tau
    z = z - z.max(dim=-1, keepdim=True).values
    e = z.exp()
    return e / e.sum(dim=-1, keepdim=True)


def test_stable_softmax(capsys):
    assert said(capsys, lecture04.check_stable_softmax, stable_softmax).startswith("✓")
    naive = lambda z, tau=1.0: (z / tau).exp() / (z / tau).exp().sum(dim=-1, keepdim=True)
    assert "overflows" in said(capsys, lecture04.check_stable_softmax, naive)
    global_max = lambda z, tau=1.0: stable_softmax(z - z.max(), tau) if False else (
        ((z / tau) - (z / tau).max()).exp() / ((z / tau) - (z / tau).max()).exp().sum(dim=-1, keepdim=True))
    assert "over which axis" in said(capsys, lecture04.check_stable_softmax, global_max)
    times_tau = lambda z, tau=1.0: stable_softmax(z * tau)
    assert "sharpen" in said(capsys, lecture04.check_stable_softmax, times_tau)
    wrong_axis = lambda z, tau=1.0: (z - z.max()).exp() / (z - z.max()).exp().sum(dim=0, keepdim=True)
    assert "axis of the sum" in said(capsys, lecture04.check_stable_softmax, wrong_axis)
    column_max = lambda z, tau=1.0: stable_softmax(z / tau - (z / tau).max(dim=0).values)      # max over the batch
    assert "one number per row" in said(capsys, lecture04.check_stable_softmax, column_max)
    assert said(capsys, lecture04.check_stable_softmax, lambda z, tau=1.0: ...).startswith("○")


def nearest(table, i, k=5):
    unit = table / table.norm(dim=-1, keepdim=True)
    sims = unit @ unit[i]
    sims[i] = -math.inf
    return sims.topk(k).indices


def test_nearest(capsys):
    assert said(capsys, lecture04.check_nearest, nearest).startswith("✓")

    def by_dot(table, i, k=5):
        sims = table @ table[i]
        sims[i] = -math.inf
        return sims.topk(k).indices
    assert "dot product" in said(capsys, lecture04.check_nearest, by_dot)

    def with_itself(table, i, k=5):
        return (F.normalize(table, dim=-1) @ F.normalize(table, dim=-1)[i]).topk(k).indices
    assert "its own neighbours" in said(capsys, lecture04.check_nearest, with_itself)

    def wrong_axis(table, i, k=5):
        unit = F.normalize(table, dim=0)
        sims = unit @ unit[i]
        sims[i] = -math.inf
        return sims.topk(k).indices
    assert said(capsys, lecture04.check_nearest, wrong_axis).startswith("✗")
    assert said(capsys, lecture04.check_nearest, lambda table, i, k=5: None).startswith("○")


def sample(logits, tau, k, n, generator, top_p=1.0):
    top = logits.topk(k)
    p = torch.softmax(top.values / tau, dim=-1)
    p = p * (p.cumsum(dim=-1) - p < top_p)
    cdf = p.cumsum(dim=-1)
    u = torch.rand(n, generator=generator, dtype=cdf.dtype) * cdf[-1]
    picks = torch.searchsorted(cdf, u, right=True).clamp(max=k - 1)
    return top.indices[picks]


def test_sample(capsys):
    assert said(capsys, lecture04.check_sample, sample).startswith("✓")

    def by_multinomial(logits, tau, k, n, generator, top_p=1.0):
        top = logits.topk(k)
        p = torch.softmax(top.values / tau, -1)
        p = torch.where(p.cumsum(-1) - p < top_p, p, 0.0)
        return top.indices[torch.multinomial(p, n, True, generator=generator)]
    assert said(capsys, lecture04.check_sample, by_multinomial).startswith("✓")
    no_top_p = lambda z, tau, k, n, g, top_p=1.0: sample(z, tau, k, n, g)
    assert "top_p has no effect" in said(capsys, lecture04.check_sample, no_top_p)
    old_signature = lambda z, tau, k, n, g: sample(z, tau, k, n, g)
    assert "top_p" in said(capsys, lecture04.check_sample, old_signature)
    times_tau = lambda z, tau, k, n, g: sample(z, 1 / tau, k, n, g)
    assert "the wrong way" in said(capsys, lecture04.check_sample, times_tau)
    no_tau = lambda z, tau, k, n, g: sample(z, 1.0, k, n, g)
    assert "no effect" in said(capsys, lecture04.check_sample, no_tau)
    no_top_k = lambda z, tau, k, n, g: sample(z, tau, len(z), n, g)
    assert "outside the 3 largest" in said(capsys, lecture04.check_sample, no_top_k)

    def unnormalised(z, tau, k, n, g):                      # softmax over all V, then keep k, no renormalising
        p = torch.softmax(z / tau, -1)
        top = z.topk(k).indices
        cdf = p[top].cumsum(-1)
        return top[torch.searchsorted(cdf, torch.rand(n, generator=g, dtype=cdf.dtype)).clamp(max=k - 1)]
    assert "do not sum to 1" in said(capsys, lecture04.check_sample, unnormalised)
    uniform = lambda z, tau, k, n, g: z.topk(k).indices[torch.randint(k, (n,), generator=g)]
    assert "equally often" in said(capsys, lecture04.check_sample, uniform)
    unseeded = lambda z, tau, k, n, g: sample(z, tau, k, n, torch.Generator().manual_seed(torch.seed() % 1000))
    assert "seeded alike" in said(capsys, lecture04.check_sample, unseeded)
    greedy = lambda z, tau, k, n, g: z.argmax().repeat(n)
    assert "seeds gave the same" in said(capsys, lecture04.check_sample, greedy)
    assert said(capsys, lecture04.check_sample, lambda z, tau, k, n, g: ...).startswith("○")


def test_tied_head(capsys):
    assert said(capsys, lecture04.check_tied_head, TiedHead).startswith("✓")

    class Copied(TiedHead):
        def __init__(self, embedding):
            nn.Module.__init__(self)
            self.weight = nn.Parameter(embedding.weight.detach().clone())
            self.bias = nn.Parameter(torch.zeros(embedding.num_embeddings))

        def forward(self, h):
            return h @ self.weight.T + self.bias
    assert "a copy of E" in said(capsys, lecture04.check_tied_head, Copied)

    class NoBias(TiedHead):
        def __init__(self, embedding):
            nn.Module.__init__(self)
            self.embedding = embedding

        def forward(self, h):
            return h @ self.embedding.weight.T
    assert "no bias" in said(capsys, lecture04.check_tied_head, NoBias)

    class Unused(TiedHead):
        def forward(self, h):
            return h @ self.embedding.weight.T
    assert "whether b is added" in said(capsys, lecture04.check_tied_head, Unused)

    class NotTransposed(TiedHead):
        def forward(self, h):
            return h @ self.embedding.weight + self.bias
    assert said(capsys, lecture04.check_tied_head, NotTransposed).startswith("✗")

    class Detached(TiedHead):
        def forward(self, h):
            return h @ self.embedding.weight.detach().T + self.bias
    assert "no gradient" in said(capsys, lecture04.check_tied_head, Detached)
    class Naive(TiedHead):
        def loss(self, h, targets):
            p = self(h).exp() / self(h).exp().sum(dim=-1, keepdim=True)
            return -p[torch.arange(len(targets)), targets].log().mean()
    assert "overflows" in said(capsys, lecture04.check_tied_head, Naive)

    class Summed(TiedHead):
        def loss(self, h, targets):
            return super().loss(h, targets) * len(targets)
    assert "the sum" in said(capsys, lecture04.check_tied_head, Summed)

    class WrongEntry(TiedHead):
        def loss(self, h, targets):
            z = self(h)
            log_p = z - z.logsumexp(dim=-1, keepdim=True)
            return -log_p[:, 0].mean()
    assert "which entry" in said(capsys, lecture04.check_tied_head, WrongEntry)

    class RandomBias(TiedHead):
        def __init__(self, embedding):
            super().__init__(embedding)
            self.bias = nn.Parameter(torch.randn(embedding.num_embeddings))
    assert "not at zero" in said(capsys, lecture04.check_tied_head, RandomBias)

    class Library(TiedHead):
        def loss(self, h, targets):
            return F.cross_entropy(self(h), targets)
    assert "calls cross_entropy" in said(capsys, lecture04.check_tied_head, Library)
    assert said(capsys, lecture04.check_tied_head, lambda e: None).startswith("○")


def test_quizzes(capsys):
    assert said(capsys, lecture04.check_doubled_logits, 0.982).startswith("✓")
    assert "before the change" in said(capsys, lecture04.check_doubled_logits, 0.881)
    assert said(capsys, lecture04.check_doubled_logits, None).startswith("○")
    assert said(capsys, lecture04.check_score_std, 1).startswith("✓")
    for wrong, word in ((8, "division by sqrt(d_k) is missing"), (64, "variance"), (0.125, "twice"), (3, "too large")):
        assert word in said(capsys, lecture04.check_score_std, wrong)
    assert "not done yet: set score_std" in said(capsys, lecture04.check_score_std, ...)


def wordpiece_split(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:
            return ["[UNK]"]
        pieces.append(piece)
        start = end
    return pieces


def test_wordpiece(capsys):
    check = lecture04.check_wordpiece
    assert said(capsys, check, wordpiece_split).startswith("✓")

    def shortest(word, vocab):
        pieces, start = [], 0
        while start < len(word):
            end = start + 1
            while end <= len(word) and (word[start:end] if start == 0 else "##" + word[start:end]) not in vocab:
                end += 1
            if end > len(word):
                return ["[UNK]"]
            pieces.append(word[start:end] if start == 0 else "##" + word[start:end])
            start = end
        return pieces
    assert "the longest piece" in said(capsys, check, shortest)

    def unmarked(word, vocab):
        return wordpiece_split(word, {p.removeprefix("##") for p in vocab})
    assert "## before it" in said(capsys, check, lambda w, v: wordpiece_split(w, v) and _no_mark(w, v))

    def skips(word, vocab):                                  # drops a letter it cannot match
        pieces = wordpiece_split(word, vocab)
        return [p for p in pieces if p != "[UNK]"] or wordpiece_split(word.replace("z", "").replace("x", ""), vocab)
    assert "becomes [UNK]" in said(capsys, check, skips)

    def piece_unk(word, vocab):                             # [UNK] for the piece, not the word
        return wordpiece_split(word, vocab) if set(word) <= set("unbelievablyplayingcatsed") else \
            wordpiece_split(word.strip("zx"), vocab) + ["[UNK]"]
    assert "the whole word" in said(capsys, check, piece_unk)
    assert said(capsys, check, lambda w, v: ...).startswith("○")
    assert unmarked("play", {"play"}) == ["play"]


def _no_mark(word, vocab):
    """The split with continuation pieces looked up without ##."""
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start and word[start:end] not in vocab:
            end -= 1
        if end == start:
            return ["[UNK]"]
        pieces.append(word[start:end])
        start = end
    return pieces
