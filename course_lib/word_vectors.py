"""Lecture 04's experiment: an embedding table learned from BBC News text, and how its neighbours form.

The model is word2vec's CBOW (Mikolov et al. 2013) in the lecture's own pieces: the mean of the embedding
rows of the words around a position (two on each side), an output layer and a softmax over the vocabulary,
the cross-entropy of the word that stands there. Nothing tells the model that Monday and Tuesday are
alike; they get alike rows because they predict, and are predicted by, alike words.

* :func:`cbow_data`: the sentences of every article, a vocabulary of the most frequent words, and every
  (context, centre) pair;
* :data:`GROUPS`: five groups of words that a reader knows belong together; :func:`group_score`, the share
  of a word's nearest neighbours among those words that are in its own group;
* :func:`train_cbow`: one seeded run, the score every ``every`` steps;
* :func:`count_vectors`: a baseline that learns nothing: each word's row of co-occurrence counts;
* :func:`run_all`, :func:`stored_runs`: every seed's run, made by ``python -m course_lib.word_vectors --out
  course_lib/runs/word_vectors.json`` (about 10 s of CPU a seed) and shipped, so that the notebook trains one
  short run live and shows the full ones stored; tests/test_word_vectors.py makes their first steps again.

Float64 on one thread, seeded, so that a run gives the same neighbours on every CPU.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

import torch
import torch.nn.functional as F
from torch import nn

from .capstone import article_sentences, load_articles
from .errors import check_int
from .tokenizer import PAD_ID, UNK_ID, WordTokenizer

__all__ = ["GROUPS", "CONFIG", "SEEDS", "SHOWN", "CBOWData", "cbow_data", "group_score", "CBOW", "train_cbow",
           "count_vectors", "neighbours", "run_all", "stored_runs"]

#: five groups of five words, each word among BBC News's 1,000 most frequent
GROUPS = {
    "days": ["monday", "tuesday", "wednesday", "thursday", "friday"],
    "numbers": ["two", "three", "four", "five", "six"],
    "months": ["january", "february", "march", "april", "december"],
    "countries": ["france", "italy", "china", "japan", "india"],
    "roles": ["minister", "president", "chairman", "secretary", "director"],
}
#: vocabulary size (specials included), width, words each side, steps, batch, Adam's learning rate
CONFIG = {"vocab": 1000, "d": 32, "window": 2, "steps": 800, "batch": 512, "lr": 0.03, "every": 100}


SEEDS = (0, 1, 2)
#: the words whose neighbours the notebook shows
SHOWN = ("monday", "three", "france", "minister", "film")
RUNS_FILE = "word_vectors.json"


@dataclass
class CBOWData:
    """``tokenizer``: the vocabulary; ``context`` ``(N, 2 * window)`` ids (:data:`PAD_ID` past a sentence's
    ends); ``centre`` ``(N,)`` the word at each position (never ``<pad>`` or ``<unk>``)."""

    tokenizer: WordTokenizer
    context: torch.Tensor
    centre: torch.Tensor


def cbow_data(vocab: int = CONFIG["vocab"], window: int = CONFIG["window"]) -> CBOWData:
    """Every article's sentences, the ``vocab`` most frequent words, and every (context, centre) pair."""
    check_int("window", window, low=1)
    sentences = article_sentences(load_articles())
    tokenizer = WordTokenizer.from_texts(sentences, max_size=vocab)
    ids = tokenizer.batch(sentences)["input_ids"]                           # (S, T), PAD_ID after each end
    padded = F.pad(ids, (window, window), value=PAD_ID)                     # (S, T + 2 window)
    T = ids.shape[1]
    offsets = [o for o in range(-window, window + 1) if o != 0]
    context = torch.stack([padded[:, window + o: window + o + T] for o in offsets], dim=-1)   # (S, T, 2w)
    keep = ids > UNK_ID                                                     # a real, known word stands here
    return CBOWData(tokenizer, context[keep], ids[keep])


class CBOW(nn.Module):
    """The mean of the context rows of ``embedding`` (padding left out), then ``out`` scores the vocabulary.

    Shape:
        context: ``(B, 2 * window)`` long; output: logits ``(B, vocab)``.
    """

    def __init__(self, vocab: int, d: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d, padding_idx=PAD_ID)
        self.out = nn.Linear(d, vocab)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        real = (context != PAD_ID).unsqueeze(-1).to(self.embedding.weight.dtype)                    # (B, 2w, 1)
        h = (self.embedding(context) * real).sum(1) / real.sum(1).clamp(min=1)   # (B, d): mean of real rows
        return self.out(h)                                                  # (B, vocab)


def group_score(table: torch.Tensor, tokenizer: WordTokenizer, k: int = 4) -> float:
    """For each of the 25 words of :data:`GROUPS`, its ``k`` nearest others among those 25 by cosine; the share
    that are in its own group (each group has 4 others: 1.0 is every neighbour right; chance is 4/24)."""
    words = [w for group in GROUPS.values() for w in group]
    group_of = torch.tensor([g for g, group in enumerate(GROUPS.values()) for _ in group])
    rows = F.normalize(table[[tokenizer.vocab[w] for w in words]].double(), dim=-1)   # (25, d)
    cos = rows @ rows.T
    cos.fill_diagonal_(-2.0)                                                # not the word itself
    near = cos.topk(k, dim=-1).indices                                      # (25, k)
    return (group_of[near] == group_of[:, None]).double().mean().item()


def train_cbow(data: CBOWData, seed: int, steps: int = CONFIG["steps"], every: int = CONFIG["every"]):
    """One run, seeded: ``(model, scores)`` with ``scores[j]`` the :func:`group_score` of the input table after
    ``j * every`` steps (``scores[0]``: the random table before training)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                                                # the same sums on every run
    try:
        torch.manual_seed(seed)
        model = CBOW(len(data.tokenizer), CONFIG["d"]).double()
        optimizer = torch.optim.Adam(model.parameters(), lr=CONFIG["lr"])
        order = torch.Generator().manual_seed(seed)
        scores = [group_score(model.embedding.weight.detach(), data.tokenizer)]
        for step in range(1, steps + 1):
            pick = torch.randint(len(data.centre), (CONFIG["batch"],), generator=order)
            loss = F.cross_entropy(model(data.context[pick]), data.centre[pick])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % every == 0:
                scores.append(group_score(model.embedding.weight.detach(), data.tokenizer))
    finally:
        torch.set_num_threads(threads)
    return model, scores


def count_vectors(data: CBOWData) -> torch.Tensor:
    """The baseline that learns nothing: row ``i`` counts how often each word stands within the window of
    word ``i`` (``(vocab, vocab)``, float64)."""
    V = len(data.tokenizer)
    counts = torch.zeros(V * V, dtype=torch.float64)
    pairs = data.centre[:, None] * V + data.context                         # (N, 2w): (centre, neighbour)
    counts.index_add_(0, pairs.flatten(), torch.ones(pairs.numel(), dtype=torch.float64))
    counts = counts.view(V, V)
    counts[:, PAD_ID] = 0                                                   # the sentence's ends are no word
    return counts


def neighbours(table: torch.Tensor, tokenizer: WordTokenizer, word: str, k: int = 5) -> list[str]:
    """The ``k`` words of highest cosine with ``word`` in ``table`` (itself and the specials left out)."""
    unit = F.normalize(table.double(), dim=-1)
    cos = unit @ unit[tokenizer.vocab[word]]
    cos[[PAD_ID, UNK_ID, tokenizer.vocab[word]]] = -2.0
    return [tokenizer.vocab.lookup_token(i) for i in cos.topk(k).indices.tolist()]


def run_all(seeds=SEEDS) -> dict:
    """Every seed's run: the scores of :func:`train_cbow`, the counts baseline's score, and the neighbours of the
    :data:`SHOWN` words in seed 0's table before and after training."""
    data = cbow_data()
    runs = {"config": CONFIG, "seeds": list(seeds), "scores": [],
            "counts_score": group_score(count_vectors(data), data.tokenizer)}
    for seed in seeds:
        torch.manual_seed(seed)
        before = CBOW(len(data.tokenizer), CONFIG["d"]).double().embedding.weight.detach()   # train_cbow's start
        model, scores = train_cbow(data, seed)
        runs["scores"].append(scores)
        if seed == seeds[0]:
            after = model.embedding.weight.detach()
            runs["neighbours"] = {w: {"before": neighbours(before, data.tokenizer, w),
                                      "after": neighbours(after, data.tokenizer, w)} for w in SHOWN}
    return runs


def stored_runs() -> dict:
    """The runs of ``python -m course_lib.word_vectors`` shipped with course_lib (see the module doc)."""
    return json.loads((resources.files("course_lib") / "runs" / RUNS_FILE).read_text(encoding="utf-8"))


def main(argv=None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Re-make lecture 04's CBOW runs (float64, one thread).")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    args = parser.parse_args(argv)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(run_all(), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
