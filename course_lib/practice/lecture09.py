"""Checks for the practice exercises of lecture 09 (the encoder learns)."""

from __future__ import annotations

import math

import torch

from ..tokenizer import PAD_ID, UNK_ID
from ..training import IGNORE, MASK_ID, warmup_factor
from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_mask_tokens", "check_warmup", "check_first_loss", "check_why_keep_some",
           "check_shuffled_without_positions"]


@check
def check_mask_tokens(mask_tokens) -> bool:
    """Write: BERT's masking, 15 % of the real tokens picked, then 80 % ``<mask>``, 10 % random, 10 % kept."""
    where = "pick 15 % of the real tokens; of those 80 % <mask>, 10 % a random word, 10 % unchanged"
    vocab_size = 500
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(3, vocab_size, (400, 50), generator=generator)          # (B, T)
    lengths = torch.randint(10, 51, (400,), generator=generator)
    tokens[torch.arange(50) >= lengths[:, None]] = PAD_ID                          # padding at the end
    tokens[:, 3] = UNK_ID                                                          # an unknown word per row
    ok, got = attempt(mask_tokens, tokens.clone(), vocab_size, torch.Generator().manual_seed(1), where=where)
    if not ok:
        return False
    if not isinstance(got, tuple) or len(got) != 2:
        return failed(f"expected a pair (inputs, labels), got {type(got).__name__}", where)
    inputs, labels = got
    if not all(isinstance(t, torch.Tensor) and t.shape == tokens.shape for t in got):
        return failed(f"inputs and labels should be tensors of the tokens' shape {tuple(tokens.shape)}", where)
    picked = labels != IGNORE
    real = (tokens != PAD_ID) & (tokens != UNK_ID)
    if (picked & (tokens == PAD_ID)).any():
        return failed("a padding position was picked as a target", "pick only where tokens != PAD_ID")
    if (picked & (tokens == UNK_ID)).any():
        return failed("an <unk> was picked as a target: the model cannot learn to say <unk>'s word",
                      "pick only known words")
    if not picked.any():
        return failed("no position was picked: every label is IGNORE", where)
    if not torch.equal(labels[picked], tokens[picked]):
        return failed("at a picked position the label should be the original token", "labels")
    if not torch.equal(inputs[~picked], tokens[~picked]):
        return failed("a token that was not picked was changed in inputs", "only picked tokens change")
    share = picked.sum().item() / real.sum().item()
    if abs(share - 0.15) > 0.02:
        return failed(f"{100 * share:.0f} % of the real tokens were picked, expected about 15 %", where)
    masked = (inputs[picked] == MASK_ID).double().mean().item()
    kept = (inputs[picked] == tokens[picked]).double().mean().item()
    other = 1 - masked - kept
    if abs(masked - 0.8) > 0.05:
        return failed(f"{100 * masked:.0f} % of the picked tokens became <mask>, expected about 80 %", where)
    if abs(kept - 0.1) > 0.04 or abs(other - 0.1) > 0.04:
        return failed(f"of the picked tokens {100 * kept:.0f} % stayed and {100 * other:.0f} % became another "
                      "word, expected about 10 % each", "the 80/10/10 rule")
    changed = inputs[picked & (inputs != tokens) & (inputs != MASK_ID)]
    if (changed < 3).any() or (changed >= vocab_size).any():
        return failed("a random replacement is a special token or outside the vocabulary",
                      "draw random words from [3, vocab_size)")
    return passed(f"{picked.sum().item()} of {real.sum().item()} real tokens picked ({100 * share:.1f} %): "
                  f"{100 * masked:.0f} % <mask>, {100 * other:.0f} % random, {100 * kept:.0f} % unchanged")


@check
def check_warmup(my_warmup_factor) -> bool:
    """Write: the learning rate's factor, a linear warm-up to 1 then the inverse square root."""
    where = "(step + 1) / warmup while warming up, then sqrt(warmup / (step + 1)); 1 when warmup is 0"
    cases = [(s, w) for w in (100, 4000) for s in (0, 1, 49, w - 2, w - 1, w, 4 * w - 1, 10 * w)]
    for step, warmup in cases:
        ok, got = attempt(my_warmup_factor, step, warmup, where=where)
        if not ok:
            return False
        expected = warmup_factor(step, warmup)
        if not isinstance(got, (int, float)) or not math.isclose(got, expected, rel_tol=1e-9):
            if step == 0 and got == 0:
                return failed("the first step (step 0) gets a learning rate of 0: it learns nothing",
                              "count steps from 1: step + 1")
            if step >= warmup and isinstance(got, (int, float)) and math.isclose(got, 1.0):
                return failed(f"after the warm-up the factor stays 1 (step {step}, warmup {warmup}), "
                              f"expected {expected:.4f}", "the paper decays it as 1/sqrt(step)")
            return failed(f"step {step}, warmup {warmup}: got {got!r}, expected {expected:.6g}", where)
    ok, got = attempt(my_warmup_factor, 10, 0, where="warmup = 0 means no warm-up: a factor of 1")
    if not ok:
        return False
    if got != 1:
        return failed(f"with warmup = 0 the factor should be 1 at every step, got {got!r}", "no warm-up")
    return passed(f"the factor climbs to 1 at step warmup - 1, then falls as 1/sqrt(step): "
                  f"{warmup_factor(399, 100):.2f} at 4 x the warm-up")


@check
def check_first_loss(prediction, measured: float, vocab_size: int) -> bool:
    """Predict: the untrained model's masked-word loss, before its first step."""
    return number(prediction, measured, f"the untrained loss is {measured:.2f}, close to ln V = "
                  f"ln {vocab_size} = {math.log(vocab_size):.2f}: a uniform guess over the vocabulary",
                  rel_tol=0.05, low="too small: an untrained model is far from sure of the right word",
                  high="too large: what loss does a uniform guess over V words get?",
                  where="the cross-entropy of a uniform guess over V words", name="first_loss")


@check
def check_why_keep_some(answer) -> bool:
    """Quiz: why BERT leaves 10 % of the picked tokens unchanged (and puts a random word in 10 %)."""
    if unanswered(answer):                                  # the options in order, not the right one first
        return todo('not done yet: set answer to "a", "b" or "c"', "Devlin et al. 2019, section 3.1")
    return choice(answer, "b", {
        "a": "it would not be cheaper: the loss is computed at every picked position anyway",
        "c": "the rule is about the input the model sees, not about the learning rate",
    }, "<mask> never appears when the model is used: it must also predict words it can see, so it "
       "keeps a useful vector for every token", where="Devlin et al. 2019, section 3.1")


@check
def check_shuffled_without_positions(answer) -> bool:
    """Retrieval (lecture 05): an encoder without positions, given a shuffled sentence."""
    if unanswered(answer):
        return todo('not done yet: set answer to "a", "b" or "c"', "lecture 05, section 1")
    return choice(answer, "c", {
        "a": "every token's vector does depend on its neighbours: attention mixes the whole sentence",
        "b": "without positions nothing tells the encoder the order, so the order cannot change a vector",
    }, "each word gets the same vector as before, in the shuffled order: the encoder is permutation "
       "equivariant, so a masked word is predicted from a bag of words", where="lecture 05, section 1")
