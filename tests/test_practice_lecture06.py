"""The checks of lecture 06's practice say what is wrong for the usual mistakes, in one line."""

import math

import torch

from course_lib import causal_mask
from course_lib.practice import lecture06
from practice_wrong.lecture06 import _pack


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


def collate(seqs, pad_id, max_len):
    seqs = [s[:max_len] for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs])
    ids = torch.full((len(seqs), int(lengths.max())), pad_id)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = torch.tensor(s)
    key_padding_mask = torch.arange(ids.shape[1])[None, :] >= lengths[:, None]
    return ids, key_padding_mask


def test_collate(capsys):
    check = lecture06.check_collate
    assert said(capsys, check, collate).startswith("✓")
    inverted = lambda seqs, pad_id, max_len: (collate(seqs, pad_id, max_len)[0],
                                              ~collate(seqs, pad_id, max_len)[1])
    assert "True means padding" in said(capsys, check, inverted)
    untruncated = lambda seqs, pad_id, max_len: collate(seqs, pad_id, 10**6)
    assert "not truncated" in said(capsys, check, untruncated)

    def to_max_len(seqs, pad_id, max_len):
        seqs = [s[:max_len] for s in seqs]
        ids = torch.full((len(seqs), max_len), pad_id)
        for b, s in enumerate(seqs):
            ids[b, :len(s)] = torch.tensor(s)
        return ids, ids == pad_id
    assert "not to max_len" in said(capsys, check, to_max_len)
    last = lambda seqs, pad_id, max_len: collate([s[-max_len:] for s in seqs], pad_id, max_len)
    assert "first max_len" in said(capsys, check, last)
    zero_pad = lambda seqs, pad_id, max_len: collate(seqs, 0, max_len)
    assert "what fills the rest" in said(capsys, check, zero_pad)
    floats = lambda seqs, pad_id, max_len: (collate(seqs, pad_id, max_len)[0].float(),
                                            collate(seqs, pad_id, max_len)[1])
    assert "torch.long" in said(capsys, check, floats)
    assert "not done yet" in said(capsys, check, lambda seqs, pad_id, max_len: None)


def test_nan_rows_names_the_missed_row_and_its_mask(capsys):
    allowed = causal_mask(5) & ~torch.tensor([True, True, False, False, False])[None, :]
    assert said(capsys, lecture06.check_nan_rows, [0, 1], allowed).startswith("✓")
    out = said(capsys, lecture06.check_nan_rows, [0], allowed)
    assert "row 1" in out and "[F F F F F]" in out
    assert "row 2 is not NaN" in said(capsys, lecture06.check_nan_rows, [0, 1, 2], allowed)


def test_mean_pool(capsys):
    def right(h, pad):
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        return (h * keep).sum(1) / keep.sum(1)

    def by_T(h, pad):
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        return (h * keep).sum(1) / h.shape[1]

    def inverted(h, pad):
        keep = pad.unsqueeze(-1).to(h.dtype)
        return (h * keep).sum(1) / keep.sum(1).clamp(min=1)

    assert said(capsys, lecture06.check_mean_pool, right).startswith("✓")
    assert "averaged in too" in said(capsys, lecture06.check_mean_pool, lambda h, pad: h.mean(1))
    assert "what you divide by" in said(capsys, lecture06.check_mean_pool, by_T)
    assert "padded positions" in said(capsys, lecture06.check_mean_pool, inverted)
    assert "(B, d_model)" in said(capsys, lecture06.check_mean_pool, lambda h, pad: h)
    normalised = lambda h, pad: torch.nn.functional.normalize(right(h, pad), dim=-1)    # mean_pool's default
    assert "length 1" in said(capsys, lecture06.check_mean_pool, normalised)


def test_bucketed(capsys):
    gen = torch.Generator().manual_seed(0)
    lengths = torch.randint(3, 100, (512,), generator=gen)
    order = torch.randperm(512, generator=gen)
    B, pool = 16, 128

    def cut(idx):
        return [idx[i:i + B] for i in range(0, len(idx), B)]

    def right(order):
        out = []
        for start in range(0, len(order), pool):
            chunk = order[start:start + pool]
            out += cut(chunk[lengths[chunk].argsort(stable=True)])
        return out

    real = lengths.sum().item()
    random_share = 1 - real / sum(len(b) * lengths[b].max().item() for b in cut(order))
    args = (order, lengths, B, pool, random_share)
    assert said(capsys, lecture06.check_bucketed, right, *args).startswith("✓")
    assert "different pools" in said(capsys, lecture06.check_bucketed,
                                     lambda o: cut(o[lengths[o].argsort(stable=True)]), *args)
    assert "mix long and short" in said(capsys, lecture06.check_bucketed, cut, *args)
    assert "in none" in said(capsys, lecture06.check_bucketed, lambda o: right(o)[:-1], *args)
    assert "not done yet" in said(capsys, lecture06.check_bucketed, lambda o: [], *args)


def test_quizzes(capsys):
    assert said(capsys, lecture06.check_masked_weight, math.exp(2) / (math.exp(2) + 2)).startswith("✓")
    for wrong, word in ((math.exp(2) / (math.exp(2) + 4), "padded keys were counted"), (1 / 3, "equal"),
                        (0.2, "all five"), (1.0, "argmax"), (0.5, "too small")):
        assert word in said(capsys, lecture06.check_masked_weight, wrong)
    assert "not done yet: set weight" in said(capsys, lecture06.check_masked_weight, ...)
    assert said(capsys, lecture06.check_ignored_loss, 3).startswith("✓")
    for wrong, word in ((2, "leave the count"), (4, "means"), (12, "sum"), (2.5, "too small")):
        assert word in said(capsys, lecture06.check_ignored_loss, wrong)
    assert "not done yet: set loss" in said(capsys, lecture06.check_ignored_loss, ...)


def test_pack(capsys):
    check = lecture06.check_pack
    assert said(capsys, check, _pack()).startswith("✓")
    assert "padding, not packing" in said(capsys, check, _pack(fits=lambda u, n, L: u == 0))
    assert "exactly fills" in said(capsys, check, _pack(fits=lambda u, n, L: u + n < L))
    assert "read each other" in said(capsys, check, _pack(together=True))
    assert "not done yet" in said(capsys, check, lambda s, L, p: ...)
