"""Wrong answers to lecture 09's checks, each with the word of its message that names the cause."""

from __future__ import annotations

import math

import torch

from course_lib.tokenizer import PAD_ID
from course_lib.training import IGNORE, MASK_ID
from practice_wrong import Wrong


def _masking(kind):
    def mask_tokens(tokens, vocab_size, generator):
        picked = (torch.rand(tokens.shape, generator=generator) < 0.15) & (tokens > 1)
        which = torch.rand(tokens.shape, generator=generator)
        low = {"random from all ids": 0, "random may be <mask>": 2}.get(kind, 3)
        random_words = torch.randint(low, vocab_size, tokens.shape, generator=generator)
        if kind == "padding picked":
            picked = torch.rand(tokens.shape, generator=generator) < 0.15
        labels = torch.where(picked, tokens, torch.full_like(tokens, IGNORE))
        if kind == "labels everywhere":
            labels = tokens.clone()
        inputs = torch.where(picked & ((which < 0.8) | (kind == "all masked")), torch.full_like(tokens, MASK_ID),
                             tokens)
        if kind != "all masked":
            inputs = torch.where(picked & (which >= 0.8) & (which < 0.9), random_words, inputs)
        return inputs, labels
    return mask_tokens


def _counts(kind):
    def count_neighbours(train, vocab_size):
        left = torch.zeros(vocab_size + 1, vocab_size)
        right = torch.zeros(vocab_size + 1, vocab_size)
        for row in train.tolist():
            words = [w for w in row if w != PAD_ID]
            for i, w in enumerate(words):
                if w <= MASK_ID and kind != "specials counted":
                    continue
                edge = None if kind == "edges skipped" else vocab_size
                before = words[i - 1] if i > 0 else edge
                after = words[i + 1] if i + 1 < len(words) else edge
                if before is not None:
                    left[before, w] += 1
                if after is not None:
                    right[after, w] += 1
        return (right, left) if kind == "swapped" else (left, right)
    return count_neighbours


def _lr(kind):
    def my_lr_factor(step, warmup, total):
        if kind == "ramp alone":
            return min(1.0, (step + 1) / warmup) if warmup else 1.0
        if kind == "ramp from 0":
            return (min(1.0, step / warmup) if warmup else 1.0) * (1 - step / total)
        if kind == "divides by zero":
            return min(1.0, (step + 1) / warmup) * (1 - step / total)
        return "1.0"
    return my_lr_factor


WRONG = {
    "check_mask_tokens": [
        Wrong("every picked token becomes <mask>", (_masking("all masked"),), word="became <mask>"),
        Wrong("labels left at every position", (_masking("labels everywhere"),), word="labels carry a word"),
        Wrong("padding picked", (_masking("padding picked"),), word="padding position"),
        Wrong("random words from every id", (_masking("random from all ids"),), word="<pad> or <unk>"),
        Wrong("random words may be <mask>", (_masking("random may be <mask>"),), word="<mask> itself"),
    ],
    "check_count_neighbours": [
        Wrong("the tables swapped", (_counts("swapped"),), word="swapped"),
        Wrong("special tokens counted as words", (_counts("specials counted"),), word="<pad>, <unk> or <mask>"),
        Wrong("no edge row", (lambda train, v: (torch.zeros(v, v), torch.zeros(v, v)),), word="edge"),
        Wrong("first and last words not counted", (_counts("edges skipped"),), word="edge row"),
    ],
    "check_lr_factor": [
        Wrong("the ramp alone", (_lr("ramp alone"),), word="stays at 1"),
        Wrong("the ramp from step 0", (_lr("ramp from 0"),), word="learning rate of 0"),
        Wrong("no case for warmup = 0", (_lr("divides by zero"),), word="ZeroDivisionError"),
        Wrong("a string", (_lr("string"),), word="expected a number"),
    ],
    "check_first_loss": [
        Wrong("log2 V", (math.log2(3000), math.log(3000), 3000), word="bits"),
        Wrong("log10 V", (math.log10(3000), math.log(3000), 3000), word="natural log"),
        Wrong("1 / V", (1 / 3000, math.log(3000), 3000), word="probability of one word"),
        Wrong("V itself", (3000, math.log(3000), 3000), word="number of words"),
    ],
    "check_why_keep_some": [
        Wrong("cheaper", ("a",), word="cheaper"),
        Wrong("learning rate", ("c",), word="learning rate"),
        Wrong("not an option", ("d",), word="should be one of"),
    ],
    "check_no_positions_accuracy": [
        Wrong("it learns the order anyway", (0.8,), word="same bag"),
        Wrong("wrong on both", (0,), word="right on one of them"),
        Wrong("perfect", (1,), word="same bag"),
    ],
    "check_my_change": [
        Wrong("two changes", (dict(num_layers=1, d_model=16), None, None, None, None), word="one thing at a time"),
        Wrong("a name that is no setting", (dict(colour="red"), None, None, None, None), word="not a setting"),
        Wrong("a number, not a dict", (16, None, None, None, None), word="one thing at a time"),
    ],
    "check_shuffled_without_positions": [
        Wrong("own token only", ("a",), word="neighbours"),
        Wrong("the order changes the vectors", ("b",), word="nothing tells the encoder the order"),
        Wrong("not an option", ("d",), word="should be one of"),
    ],
}
