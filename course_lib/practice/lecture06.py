"""Checks of lecture 06's practice (batches and padding): each prints one line, never raises."""

from __future__ import annotations


import torch

from . import check, failed, passed, todo, unanswered

__all__ = ["check_padding_mask", "check_nan_rows", "check_junk_padding"]


@check
def check_padding_mask(mask, lengths) -> bool:
    """Write the key_padding_mask of a batch with these lengths, by hand."""
    if unanswered(mask):
        return todo("not done yet: my_mask is still ...")
    if not isinstance(mask, torch.Tensor):
        return failed(f"my_mask should be a tensor, got {type(mask).__name__}")
    expected = torch.arange(max(lengths))[None, :] >= torch.as_tensor(lengths)[:, None]      # (B, T)
    if tuple(mask.shape) != tuple(expected.shape):
        return failed(f"my_mask has shape {tuple(mask.shape)}, expected (B, T) = {tuple(expected.shape)}",
                      "one row per sentence, T = the longest length")
    if mask.dtype != torch.bool:
        return failed(f"my_mask holds {mask.dtype}, expected torch.bool", "a comparison gives bools")
    if torch.equal(mask, ~expected):
        return failed("my_mask is True at the real tokens: in a key_padding_mask True means padding",
                      "section 2, the convention")
    if not torch.equal(mask, expected):
        wrong = (mask != expected).nonzero()[0].tolist()
        return failed(f"my_mask is wrong at sentence {wrong[0]}, position {wrong[1]}",
                      "compare each position with the sentence's length")
    return passed("True exactly at the padded cells: the same as padding_mask_from_lengths")


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
        return failed(f"you missed {len(missed)} row(s)", "the combined mask, one row at a time")
    return passed(f"rows {truth}: the queries that may attend to no key at all")


@check
def check_junk_padding(filler, out_junk, reference: torch.Tensor, mask: torch.Tensor, pad_id: int) -> bool:
    """Change the id in the padded cells to a word's id and keep the real positions' outputs."""
    if unanswered(filler) or unanswered(out_junk):
        return todo("not done yet: set filler and compute out_junk")
    if int(filler) == pad_id:
        return failed(f"the padded cells still hold the pad id {pad_id}: put a word's id there", "filler")
    if not isinstance(out_junk, torch.Tensor) or out_junk.shape != reference.shape:
        return failed(f"out_junk should be the encoder's output, shape {tuple(reference.shape)}")
    real = ~mask
    change = (out_junk[real] - reference[real]).abs().max().item()
    if change > 1e-4:
        return failed(f"the outputs at the real positions changed (by up to {change:.2f}): with a word in the "
                      "padded cells the encoder no longer finds the padding by itself", "what Encoder needs to know")
    return passed(f"filler {int(filler)} in every padded cell, and the real positions' outputs did not move")
