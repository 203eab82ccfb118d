"""Checks of lecture 06's practice (batches and padding): each prints one line, never raises."""

from __future__ import annotations

import torch

from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_collate", "check_padded_cells", "check_nan_rows", "check_layer_norm_axis",
           "check_junk_padding", "check_mean_pool", "check_one_long_sentence", "check_bucketed"]


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
def check_padded_cells(answer, lengths=(3, 6, 5)) -> bool:
    """Quiz: the number of padded cells in a batch with these lengths."""
    T = max(lengths)
    value = sum(T - n for n in lengths)
    return number(answer, value,
                  f"T = {T}, so {len(lengths)} × {T} = {len(lengths) * T} cells for {sum(lengths)} tokens: "
                  f"{value} of them are padding", abs_tol=0.0, rel_tol=0.0,
                  low="too few: every sentence is padded up to the longest one",
                  high="too many: T is the longest length, not a fixed max_len", where="section 2, T = max L_b")


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
def check_layer_norm_axis(answer) -> bool:
    """Retrieval (lecture 03): over which axis of (B, T, d_model) does LayerNorm take its statistics?"""
    return choice(answer, "d_model",
                  {"T": "statistics over the tokens would mix the padded positions into every real one (look at "
                        "lecture 03: one mean and variance per token)",
                   "B": "that is BatchNorm's idea: a sentence would then depend on its batch (lecture 03)",
                   "all": "one mean for the whole batch would let padding and other sentences in (lecture 03)"},
                  "one mean and one variance per token, over its own features: a padded position cannot "
                  "reach a real one through LayerNorm, only through attention, which the mask closes",
                  where="lecture 03, LayerNorm")


@check
def check_junk_padding(filler, out_junk, reference: torch.Tensor, mask: torch.Tensor, pad_id: int) -> bool:
    """Change the id in the padded cells to a word's id and keep the real positions' outputs."""
    if unanswered(filler) or unanswered(out_junk):
        return todo("not done yet: set filler and compute out_junk")
    if int(filler) == pad_id:
        return todo(f"not done yet: the padded cells still hold the pad id {pad_id}: put a word's id there", "filler")
    if not isinstance(out_junk, torch.Tensor) or out_junk.shape != reference.shape:
        return failed(f"out_junk should be the encoder's output, shape {tuple(reference.shape)}")
    real = ~mask
    change = (out_junk[real] - reference[real]).abs().max().item()
    if change > 1e-4:
        return failed(f"the outputs at the real positions changed (by up to {change:.2f}): with a word in the "
                      "padded cells the encoder no longer finds the padding by itself", "what Encoder needs to know")
    return passed(f"filler {int(filler)} in every padded cell, and the real positions' outputs did not move")


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
    inv = (h * (1 - keep)).sum(1) / (1 - keep).sum(1).clamp(min=1)
    if torch.allclose(got, inv, atol=1e-6):
        return failed("this is the mean of the padded positions: True in a key_padding_mask means padding",
                      "which cells you keep")
    b = int((got - expected).abs().amax(1).argmax())
    return failed(f"sentence {b}'s vector differs from the mean of its real tokens", where)


@check
def check_one_long_sentence(answer, B: int = 32, short: int = 10, long: int = 128) -> bool:
    """Quiz: the padded share of a batch of B sentences, one of ``long`` tokens and the rest ``short``."""
    value = 1 - (long + (B - 1) * short) / (B * long)
    return number(answer, value,
                  f"{B} × {long} = {B * long:,} cells hold {long + (B - 1) * short} tokens: {value:.1%} is padding, "
                  "paid for by every sentence in the batch", rel_tol=0.01, abs_tol=0.005,
                  low="too small: the whole batch is padded to the one long sentence",
                  high="too large: the long sentence and the short ones' real tokens are not padding",
                  where="padding = 1 − real tokens / (B × T)")


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
