"""Wrong answers to lecture 06's checks, each with the word of its message that names the cause."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from course_lib import causal_mask
from practice_wrong import Wrong

ALLOWED = causal_mask(5) & ~torch.tensor([True, True, False, False, False])[None, :]   # left padding, causal


def _collate(kind):
    def collate(seqs, pad_id, max_len):
        seqs = [s[-max_len:] if kind == "last ids" else s if kind == "untruncated" else s[:max_len] for s in seqs]
        lengths = torch.tensor([len(s) for s in seqs])
        T = max_len if kind == "to max_len" else int(lengths.max())
        ids = torch.full((len(seqs), T), 0 if kind == "zero pad" else pad_id)
        for b, s in enumerate(seqs):
            ids[b, :len(s)] = torch.tensor(s)
        mask = torch.arange(T)[None, :] >= lengths[:, None]
        return ids, ~mask if kind == "inverted" else mask
    return collate


def _pool(kind):
    def my_mean_pool(h, key_padding_mask):
        keep = (~key_padding_mask).unsqueeze(-1).to(h.dtype)
        if kind == "naive":
            return h.mean(1)
        if kind == "divided by T":
            return (h * keep).sum(1) / h.shape[1]
        mean = (h * keep).sum(1) / keep.sum(1)
        return F.normalize(mean, dim=-1) if kind == "normalised" else mean
    return my_mean_pool


def _bucketed(kind):
    def args():
        gen = torch.Generator().manual_seed(0)
        lengths = torch.randint(3, 100, (512,), generator=gen)
        order = torch.randperm(512, generator=gen)
        B, pool = 16, 128

        def cut(idx):
            return [idx[i:i + B] for i in range(0, len(idx), B)]

        def bucketed(o):
            if kind == "sorted whole":
                return cut(o[lengths[o].argsort(stable=True)])
            if kind == "not sorted":
                return cut(o)
            out = []
            for start in range(0, len(o), pool):
                chunk = o[start:start + pool]
                out += cut(chunk[lengths[chunk].argsort(stable=True)])
            return out[:-1]
        share = 1 - lengths.sum().item() / sum(len(b) * lengths[b].max().item() for b in cut(order))
        return (bucketed, order, lengths, B, pool, share), {}
    return args


def _pack(fits=lambda used, n, L: used + n <= L, together=False):
    def pack(seqs, row_len, pad_id):
        rows, segs = [[]], [[]]
        for n, s in enumerate(seqs):
            if not fits(len(rows[-1]), len(s), row_len):
                rows.append([])
                segs.append([])
            rows[-1] += s
            segs[-1] += [n] * len(s)
        ids = torch.full((len(rows), row_len), pad_id)
        seg = torch.full((len(rows), row_len), -1)
        for r, (row, sg) in enumerate(zip(rows, segs)):
            ids[r, :len(row)] = torch.tensor(row)
            seg[r, :len(sg)] = torch.tensor(sg)
        allow = (seg[:, :, None] == seg[:, None, :]) & (seg[:, None, :] >= 0)
        if together:
            allow = (seg[:, None, :] >= 0).expand_as(allow).clone()
        return ids, allow
    return pack


WRONG = {
    "check_collate": [
        Wrong("the mask inverted", (_collate("inverted"),), word="True means padding"),
        Wrong("not truncated", (_collate("untruncated"),), word="not truncated"),
        Wrong("padded to max_len", (_collate("to max_len"),), word="not to max_len"),
        Wrong("the last max_len ids kept", (_collate("last ids"),), word="first max_len"),
        Wrong("padded with 0, not pad_id", (_collate("zero pad"),), word="what fills the rest"),
    ],
    "check_nan_rows": [
        Wrong("only the first row", ([0], ALLOWED), word="no key at all"),
        Wrong("a row with a key", ([0, 1, 2], ALLOWED), word="may attend"),
        Wrong("the causal mask's last row", ([4], ALLOWED), word="may attend"),
        Wrong("no row", ([], ALLOWED), word="no key at all"),
    ],
    "check_mean_pool": [
        Wrong("the mean over every cell", (_pool("naive"),), word="averaged in too"),
        Wrong("divided by T", (_pool("divided by T"),), word="what you divide by"),
        Wrong("L2-normalised, as mean_pool's default", (_pool("normalised"),), word="length 1"),
    ],
    "check_bucketed": [
        Wrong("the whole order sorted", _bucketed("sorted whole"), word="different pools"),
        Wrong("pools not sorted", _bucketed("not sorted"), word="mix long and short"),
        Wrong("the last batch lost", _bucketed("last lost"), word="in none"),
    ],
    "check_pack": [
        Wrong("one sentence a row", (_pack(fits=lambda used, n, L: used == 0),), word="padding, not packing"),
        Wrong("a full row refused", (_pack(fits=lambda used, n, L: used + n < L),), word="exactly fills"),
        Wrong("the row's sentences read each other", (_pack(together=True),), word="read each other"),
    ],
    "check_masked_weight": [
        Wrong("padded keys counted", (math.exp(2) / (math.exp(2) + 4),), word="padded keys were counted"),
        Wrong("equal shares", (1 / 3,), word="equal"),
        Wrong("spread over five", (0.2,), word="all five"),
        Wrong("the argmax", (1.0,), word="argmax"),
    ],
    "check_ignored_loss": [
        Wrong("divided by every cell", (2.0,), word="leave the count"),
        Wrong("the mean of the sentences' means", (4.0,), word="means"),
        Wrong("the sum", (12.0,), word="sum"),
    ],
}
