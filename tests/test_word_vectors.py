"""Lecture 04's experiment (course_lib.word_vectors) on a tiny made-up corpus, and its stored runs."""

import torch

from course_lib import word_vectors
from course_lib.tokenizer import PAD_ID, WordTokenizer


def tiny():
    words = [w for group in word_vectors.GROUPS.values() for w in group]
    tok = WordTokenizer.from_texts([" ".join(words)])
    ids = torch.tensor([tok.vocab[w] for w in words])
    context = torch.stack([ids.roll(1), ids.roll(-1), torch.full_like(ids, PAD_ID), ids.roll(2)], dim=1)
    return word_vectors.CBOWData(tok, context, ids), tok


def test_group_score_counts_neighbours_in_their_group():
    data, tok = tiny()
    V = len(tok)
    table = torch.zeros(V, 5, dtype=torch.float64)
    for g, group in enumerate(word_vectors.GROUPS.values()):
        for j, w in enumerate(group):
            table[tok.vocab[w], g] = 1.0
            table[tok.vocab[w], (g + 1) % 5] = 0.01 * j               # each group alike, other groups orthogonal
    assert word_vectors.group_score(table, tok) == 1.0
    assert word_vectors.group_score(torch.randn(V, 64, generator=torch.Generator().manual_seed(0)), tok) < 0.5


def test_count_vectors_and_the_model():
    data, tok = tiny()
    counts = word_vectors.count_vectors(data)
    assert counts.shape == (len(tok), len(tok)) and counts[:, PAD_ID].sum() == 0
    assert counts.sum() == (data.context != PAD_ID).sum()
    model = word_vectors.CBOW(len(tok), 8)
    assert model(data.context).shape == (len(data.centre), len(tok))
    torch.manual_seed(0)
    ones = torch.full((1, 4), data.centre[0].item())
    assert torch.allclose(model(ones)[0], model.out(model.embedding.weight[data.centre[0]]))   # mean of one row


def test_the_stored_runs_are_complete():
    stored = word_vectors.stored_runs()
    every, steps = stored["config"]["every"], stored["config"]["steps"]
    assert len(stored["scores"]) == len(stored["seeds"]) == 3
    assert all(len(s) == steps // every + 1 for s in stored["scores"])
    assert set(stored["neighbours"]) == set(word_vectors.SHOWN)
