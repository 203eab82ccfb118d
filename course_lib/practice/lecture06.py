"""Checks of lecture 06's practice (batches and padding): each prints one line, never raises."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from . import attempt, check, failed, number, passed, todo, unanswered

__all__ = ["check_collate", "check_nan_rows", "check_mean_pool", "check_bucketed", "check_pack",
           "check_masked_weight", "check_ignored_loss"]


def _collate_reference(seqs, pad_id: int, max_len: int):
    seqs = [list(s)[:max_len] for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs])
    ids = torch.full((len(seqs), int(lengths.max())), pad_id, dtype=torch.long)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = torch.tensor(s, dtype=torch.long)
    return ids, torch.arange(ids.shape[1])[None, :] >= lengths[:, None]


@check
def check_collate(fn) -> bool:
    """The student's ``collate(seqs, pad_id, max_len)``: lists of ids -> a padded ``(B, T)`` long tensor,
    each list truncated to its first ``max_len`` ids, ``T`` the longest length after truncation, and the
    bool ``key_padding_mask`` (True = padding)."""
    where = "collate"
    cases = (([[5, 6, 7], [8], [9, 10, 11, 12, 13, 14]], 0, 4),      # one sentence longer than max_len
             ([[5, 6], [7, 8, 9]], 3, 8))                            # all shorter: T = 3, not max_len; pad id 3
    for seqs, pad_id, max_len in cases:
        ok, got = attempt(fn, [list(s) for s in seqs], pad_id, max_len, where=where)
        if not ok:
            return False
        if not isinstance(got, tuple) or len(got) != 2:
            return failed(f"collate should return two tensors, (ids, key_padding_mask), got {type(got).__name__}",
                          where)
        ids, mask = got
        want_ids, want_mask = _collate_reference(seqs, pad_id, max_len)
        if not isinstance(ids, torch.Tensor) or not isinstance(mask, torch.Tensor):
            return failed("collate should return torch tensors (ids, key_padding_mask)", where)
        if tuple(ids.shape) != tuple(want_ids.shape):
            T = ids.shape[-1] if ids.dim() else None
            if T == max_len and want_ids.shape[1] < max_len:
                return failed(f"lengths {[len(s) for s in seqs]} with max_len = {max_len} give T = {T}: pad to the "
                              "longest sentence, not to max_len (look at how T is chosen)", where)
            if T == max(len(s) for s in seqs) > max_len:
                return failed(f"a sentence of {T} ids with max_len = {max_len} was not truncated (look at what you "
                              "do before padding)", where)
            return failed(f"ids has shape {tuple(ids.shape)}, expected (B, T) = {tuple(want_ids.shape)}", where)
        if ids.dtype != torch.long:
            return failed(f"ids holds {ids.dtype}: an embedding needs integer ids, torch.long (look at how the "
                          "tensor is made)", where)
        if not torch.equal(ids, want_ids):
            if torch.equal(ids[:, -1], want_ids[:, 0]) or (ids == pad_id).sum() != (want_ids == pad_id).sum():
                return failed(f"ids {ids.tolist()}, expected {want_ids.tolist()} (look at where the words go and "
                              "what fills the rest)", where)
            return failed(f"ids {ids.tolist()}, expected {want_ids.tolist()}: truncation keeps the first max_len "
                          "ids (look at the slice)", where)
        if mask.dtype != torch.bool or tuple(mask.shape) != tuple(want_mask.shape):
            return failed(f"key_padding_mask should be bool of shape {tuple(want_mask.shape)}, got {mask.dtype} of "
                          f"shape {tuple(mask.shape)} (a comparison gives bools)", where)
        if torch.equal(mask, ~want_mask):
            return failed("key_padding_mask is True at the real tokens: in a key_padding_mask True means padding "
                          "(section 2, the convention)", where)
        if not torch.equal(mask, want_mask):
            b, t = (mask != want_mask).nonzero()[0].tolist()
            return failed(f"key_padding_mask is wrong at sentence {b}, position {t} (compare each position with "
                          "the sentence's length after truncation)", where)
    return passed("truncated to max_len, padded to the longest, the pad id after the words, and a mask that is True "
                  "exactly there: the same as the tokenizer's batch")


@check
def check_nan_rows(nan_rows, allowed: torch.Tensor) -> bool:
    """Predict which query rows of a ``-inf``-filled softmax are NaN under the mask ``allowed``."""
    if unanswered(nan_rows):
        return todo("not done yet: set nan_rows to a list of query positions")
    try:
        predicted = sorted({int(r) for r in nan_rows})
    except TypeError:
        return failed(f"nan_rows should be a list of query positions, got {nan_rows!r}")
    truth = (~allowed.any(dim=-1)).nonzero().flatten().tolist()
    missed, extra = sorted(set(truth) - set(predicted)), sorted(set(predicted) - set(truth))
    if extra:
        return failed(f"row {extra[0]} is not NaN: it may attend to at least one key", "its row of the combined mask")
    if missed:
        row = missed[0]
        cells = " ".join("T" if a else "F" for a in allowed[row].tolist())
        more = f" (and {len(missed) - 1} more)" if len(missed) > 1 else ""
        return failed(f"row {row} is NaN too{more}: its combined mask is [{cells}], no key at all",
                      "causal & not padding, that row")
    return passed(f"rows {truth}: the queries that may attend to no key at all")


@check
def check_mean_pool(fn) -> bool:
    """Write ``my_mean_pool(h, key_padding_mask)``: the mean over the real tokens of each sentence."""
    where = "my_mean_pool"
    g = torch.Generator().manual_seed(6)
    h = torch.randn(3, 5, 4, generator=g, dtype=torch.float64)                    # (B, T, d_model)
    pad = torch.arange(5)[None, :] >= torch.tensor([5, 2, 3])[:, None]               # (B, T), True = padding
    ok, got = attempt(fn, h.clone(), pad.clone(), where=where)
    if not ok:
        return False
    keep = (~pad).unsqueeze(-1).double()                                               # (B, T, 1)
    expected = (h * keep).sum(1) / keep.sum(1)
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (3, 4):
        shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        return failed(f"the result should be (B, d_model) = (3, 4), one vector per sentence, got {shape}",
                      "which axis you reduce")
    got = got.double()
    if torch.allclose(got, expected, atol=1e-6):
        return passed("the mean over each sentence's real tokens only: the same vector alone or in any batch")
    if torch.allclose(got, h.mean(1), atol=1e-6):
        return failed("the padded positions are averaged in too: sentence 1 (2 real tokens of 5) differs from "
                      "its mean alone", "what you sum")
    if torch.allclose(got, (h * keep).sum(1) / h.shape[1], atol=1e-6):
        return failed("the padding is left out of the sum but still counted in the division: sentence 1's "
                      "vector is 2/5 of what it should be", "what you divide by")
    if torch.allclose(got, F.normalize(expected, dim=-1), atol=1e-6):
        return failed("every vector has length 1: the masked mean was scaled to unit length afterwards, which the "
                      "task does not ask (look at the last step: the mean itself is returned)", where)
    inv = (h * (1 - keep)).sum(1) / (1 - keep).sum(1).clamp(min=1)
    if torch.allclose(got, inv, atol=1e-6):
        return failed("this is the mean of the padded positions: True in a key_padding_mask means padding",
                      "which cells you keep")
    b = int((got - expected).abs().amax(1).argmax())
    return failed(f"sentence {b}'s vector differs from the mean of its real tokens", where)


@check
def check_bucketed(fn, order: torch.Tensor, lengths: torch.Tensor, batch_size: int, pool: int,
                   random_share: float) -> bool:
    """Write ``bucketed(order)``: cut the shuffled ``order`` into pools of ``pool`` sentences, sort each pool
    by length, cut it into batches of ``batch_size``; then measure its padded share."""
    where = "bucketed"
    ok, batches = attempt(fn, order.clone(), where=where)
    if not ok:
        return False
    try:
        batches = [torch.as_tensor(b).flatten().long() for b in batches]
    except Exception:
        return failed(f"bucketed should return a list of index tensors, got {type(batches).__name__}", where)
    if not batches:
        return todo("not done yet: bucketed returned no batches", where)
    seen = torch.cat(batches)
    counts = torch.bincount(seen, minlength=len(lengths))
    if (counts != 1).any():
        missing, twice = int((counts == 0).sum()), int((counts > 1).sum())
        return failed(f"every sentence should be in exactly one batch: {missing} are in none, {twice} in more "
                      "than one", "how you cut the pools and the batches")
    if any(len(b) > batch_size for b in batches):
        return failed(f"a batch holds {max(len(b) for b in batches)} sentences, more than {batch_size}",
                      "the cut into batches")
    pool_of = torch.empty(len(order), dtype=torch.long)
    pool_of[order] = torch.arange(len(order)) // pool                             # the pool of each sentence
    mixed = sum(int(pool_of[b].unique().numel() > 1) for b in batches)
    real = sum(int(lengths[b].sum()) for b in batches)
    cells = sum(len(b) * int(lengths[b].max()) for b in batches)
    share = 1 - real / cells
    if mixed:
        return failed(f"{mixed} batches mix sentences of different pools: that sorts (nearly) the whole set, "
                      "so every epoch gets the same batches", "sort within each pool, not across")
    if share > 0.5 * random_share:
        return failed(f"{share:.1%} padding, against {random_share:.1%} in random batches: the batches still "
                      "mix long and short sentences", "the sort inside each pool")
    return passed(f"{share:.1%} padding instead of {random_share:.1%}, and the batches still change with the shuffle")


def _pack_reference(seqs, row_len: int, pad_id: int):
    """Pack ``seqs`` in order into rows of ``row_len`` (a new row when the next one does not fit); returns
    ``(ids, allow, segment)``: ids ``(R, row_len)``, allow ``(R, row_len, row_len)`` True where query and key
    are in one sentence and the key is real, segment ``(R, row_len)``: the sentence of each cell, -1 for padding."""
    rows, segments = [[]], [[]]
    for n, s in enumerate(seqs):
        if len(rows[-1]) + len(s) > row_len:
            rows.append([])
            segments.append([])
        rows[-1] += list(s)
        segments[-1] += [n] * len(s)
    ids = torch.full((len(rows), row_len), pad_id, dtype=torch.long)
    segment = torch.full((len(rows), row_len), -1, dtype=torch.long)
    for r, (row, seg) in enumerate(zip(rows, segments)):
        ids[r, :len(row)] = torch.tensor(row, dtype=torch.long)
        segment[r, :len(seg)] = torch.tensor(seg, dtype=torch.long)
    allow = (segment[:, :, None] == segment[:, None, :]) & (segment[:, None, :] >= 0)
    return ids, allow, segment


@check
def check_pack(fn) -> bool:
    """Write ``pack(seqs, row_len, pad_id)``: sentences packed in order into rows of ``row_len`` ids, and a
    block-diagonal ``allow`` mask (True = may attend) that keeps each sentence to itself. Padded query rows are
    not checked."""
    where = "pack"
    seqs = [[5, 6, 7, 8, 9], [10, 11, 12], [13, 14, 15, 16, 17, 18, 19], [20], [21, 22, 23, 24]]
    ok, got = attempt(fn, [list(s) for s in seqs], 8, 0, where=where)
    if not ok:
        return False
    if not isinstance(got, tuple) or len(got) != 2:
        return failed("pack should return two things, (ids, allow)", where)
    ids, allow = got
    want_ids, want_allow, segment = _pack_reference(seqs, 8, 0)
    if not isinstance(ids, torch.Tensor) or not isinstance(allow, torch.Tensor):
        return failed("ids and allow should be tensors", where)
    if ids.dim() != 2 or ids.shape[1] != 8:
        return failed(f"ids should be (rows, row_len) = (rows, 8), got {tuple(ids.shape)}", where)
    if ids.shape[0] == len(seqs):
        return failed(f"{len(seqs)} rows for {len(seqs)} sentences: one sentence a row is padding, not packing; a "
                      "row takes the next sentence while it fits (look at when a new row starts)", where)
    if ids.shape[0] > want_ids.shape[0]:
        return failed(f"{ids.shape[0]} rows where {want_ids.shape[0]} suffice: a sentence that exactly fills what "
                      "is left of a row still fits (look at the comparison that starts a new row)", where)
    if ids.shape[0] != want_ids.shape[0] or not torch.equal(ids.long(), want_ids):
        return failed(f"ids {ids.tolist()}, expected {want_ids.tolist()}: sentences in their order, a new row when "
                      "the next one does not fit, pad_id after the last (look at how rows are filled)", where)
    if allow.dtype != torch.bool or tuple(allow.shape) != tuple(want_allow.shape):
        return failed(f"allow should be bool of shape (rows, row_len, row_len) = {tuple(want_allow.shape)}, got "
                      f"{allow.dtype} of shape {tuple(allow.shape)}", where)
    real = segment >= 0                                                             # (R, L): real query rows
    if torch.equal(allow[real], want_allow[real]):
        return passed(f"{len(seqs)} sentences in {want_ids.shape[0]} rows of 8 instead of {len(seqs)} rows of 7, and "
                      "each query attends only to its own sentence")
    non_pad = real[:, None, :].expand_as(allow)
    if torch.equal(allow[real], non_pad[real]):
        return failed("every query may attend to every real key of its row: the sentences packed together read "
                      "each other (look at what the mask compares: the sentence of query and key)", where)
    return failed("the mask differs from one block per sentence (look at which query may attend which key)", where)


@check
def check_masked_weight(answer) -> bool:
    """Retrieval quiz (lecture 04, softmax): scores 2, 0, 0 on three words and two padded keys masked out; the
    weight of the first word?"""
    value = math.exp(2) / (math.exp(2) + 2)
    causes = {math.exp(2) / (math.exp(2) + 4): "the two padded keys were counted in the sum: masked keys get weight "
                                               "exactly 0, so they leave the denominator (section 3)",
              1 / 3: "the three words share the weight equally only when their scores are equal; the first scores 2 "
                     "(lecture 04, softmax)",
              0.2: "0.2 spreads the weight over all five keys, padding included, and ignores the scores (section 3)",
              1.0: "1.0 is the argmax: a softmax gives every unmasked key some weight (lecture 04, softmax)"}
    return number(answer, value, f"e^2 / (e^2 + 2) = {value:.3f}: the padded keys leave the sum, the three words share "
                  "it by their scores", rel_tol=0.0, abs_tol=3e-3,
                  low="too small: only the three words enter the sum (section 3)",
                  high="too large: the other two words keep e^0 each (lecture 04, softmax)", where="section 3",
                  name="weight", wrong=causes)


@check
def check_ignored_loss(answer) -> bool:
    """Quiz: per-token losses 1, 2, 3 (sentence 0, 3 words) and 6 (sentence 1, 1 word, padded to 3); the loss of
    F.cross_entropy(..., ignore_index=pad_id) with its default mean?"""
    value = (1 + 2 + 3 + 6) / 4
    causes = {2.0: "2 divides by all 6 cells: the padded cells are ignored, so they leave the count too (look at "
                   "what the mean runs over)",
              4.0: "4 is the mean of the two sentences' means: the default reduction averages over the real tokens, "
                   "each token once",
              12.0: "12 is the sum: the default reduction is the mean over the real tokens"}
    return number(answer, value, "(1 + 2 + 3 + 6) / 4 = 3: ignored cells leave both the sum and the count, so a "
                  "sentence's padding never dilutes the loss", rel_tol=0.0, abs_tol=1e-3,
                  low="too small: the mean runs over the 4 real tokens", high="too large: the mean runs over the 4 "
                  "real tokens", where="the loss with ignore_index", name="loss", wrong=causes)
