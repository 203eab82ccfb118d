"""Checks for the practice exercises of lecture 09 (the encoder learns)."""

from __future__ import annotations

import math

import torch

from ..mlm_runs import lr_factor
from ..tokenizer import PAD_ID, UNK_ID
from ..training import IGNORE, MASK_ID
from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_mask_tokens", "check_guess_by_position", "check_lr_factor", "check_first_loss",
           "check_why_keep_some", "check_no_positions_accuracy", "check_my_change", "check_shuffled_without_positions"]


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
def check_lr_factor(my_lr_factor) -> bool:
    """Write: the learning rate's factor, a linear warm-up times a linear decay to zero."""
    where = "a ramp min(1, (step + 1) / warmup), 1 when warmup is 0, times the decay 1 - step / total"
    cases = [(s, w, n) for w, n in ((100, 1500), (10, 40)) for s in (0, 1, w // 2, w - 2, w - 1, w, n // 2, n - 1)]
    cases += [(s, 0, n) for n in (1500, 40) for s in (0, 1, n // 2, n - 1)]
    for step, warmup, total in cases:
        ok, got = attempt(my_lr_factor, step, warmup, total, where=where)
        if not ok:
            return False
        expected = lr_factor(step, warmup, total)
        if isinstance(got, (int, float)) and math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12):
            continue
        if not isinstance(got, (int, float)):
            return failed(f"expected a number, got {type(got).__name__}", "return a float")
        if step == 0 and warmup > 0 and got == 0:
            return failed("the first step (step 0) gets a learning rate of 0: it learns nothing",
                          "count steps from 1 in the ramp: step + 1")
        if warmup == 0 and got != expected:
            return failed(f"with warmup = 0, step {step} of {total}: got {got!r}, expected {expected:.6g}",
                          "no warm-up means no ramp, but the same decay")
        if math.isclose(got, min(1.0, (step + 1) / warmup), rel_tol=1e-9):
            return failed(f"step {step} of {total}: the factor is the ramp alone, {got:.4g}, expected {expected:.4g}",
                          "every arm decays towards 0 at the last step, warm-up or not")
        return failed(f"step {step}, warmup {warmup}, total {total}: got {got!r}, expected {expected:.6g}", where)
    return passed(f"the factor climbs to {lr_factor(99, 100, 1500):.3f} at step 99 of 1,500, then falls in a "
                  "straight line; without warm-up it starts at 1 and falls the same way")


@check
def check_first_loss(prediction, measured: float, vocab_size: int) -> bool:
    """Predict: the untrained model's masked-word loss, before its first step."""
    return number(prediction, measured, f"the untrained loss is {measured:.2f}, close to ln V = "
                  f"ln {vocab_size} = {math.log(vocab_size):.2f}: a uniform guess over the vocabulary",
                  rel_tol=0.05, low="too small: an untrained model is far from sure of the right word",
                  high="too large: what loss does a uniform guess over V words get?",
                  where="section 4: what does an untrained head say about each word?", name="first_loss")


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


def _guess_by_position(train: torch.Tensor) -> torch.Tensor:
    """The reference: at each position, the most frequent known word (lowest id on a tie)."""
    out = []
    for t in range(train.shape[1]):
        column = train[:, t]
        out.append(torch.bincount(column[column > UNK_ID]).argmax())
    return torch.stack(out)


@check
def check_guess_by_position(guess_by_position) -> bool:
    """Write: the baseline that learns nothing but counts, the most frequent known word at each position."""
    where = "for each position: count the known words (not <pad>, not <unk>) in that column, take the most frequent"
    generator = torch.Generator().manual_seed(0)
    train = torch.randint(3, 40, (300, 7), generator=generator)                   # (N, T) ids
    train[:, 0] = torch.where(torch.rand(300, generator=generator) < 0.6, 5, train[:, 0])      # "the" starts most
    train[torch.rand(train.shape, generator=generator) < 0.5] = UNK_ID           # <unk> is the commonest id
    lengths = torch.randint(2, 8, (300,), generator=generator)
    train[torch.arange(7) >= lengths[:, None]] = PAD_ID                           # padding in the late columns
    ok, got = attempt(guess_by_position, train.clone(), where=where)
    if not ok:
        return False
    expected = _guess_by_position(train)
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        return failed(f"expected one guess per position, a tensor of shape {tuple(expected.shape)}, got {shape}",
                      "one column of train per position")
    if torch.equal(got.long(), expected):
        return passed(f"one guess per position: word {int(expected[0])} at the first, where the sentences "
                      "start alike; the columns differ, and your guess follows them")
    if (got == PAD_ID).any() or (got == UNK_ID).any():
        return failed("a guess is <pad> or <unk>: those are counted but never a hidden word", where)
    if (got == got[0]).all() and not (expected == expected[0]).all():
        return failed("every position gets the same guess: the counts were taken over all positions at once",
                      "count each column on its own")
    bad = int((got.long() != expected).nonzero()[0, 0])
    return failed(f"at position {bad} the guess is {int(got[bad])}, expected {int(expected[bad])}", where)


@check
def check_no_positions_accuracy(prediction) -> bool:
    """Predict: the held-out accuracy of the word-order classifier that has no positions."""
    return number(prediction, 0.5, "exactly one half: without positions a headline and its shuffle give the "
                  "encoder the same bag of vectors, so the classifier says the same of both, right for one of them",
                  abs_tol=0.005, low="below one half: could it be wrong on both the headline and its shuffle?",
                  high="above one half: what differs between a headline and its shuffle, for a model without "
                  "positions?", where="lecture 05, section 1", name="no_positions_accuracy")


RUN_KEYS = ("d_model", "num_heads", "d_ff", "num_layers", "lr", "warmup", "batch_size", "mask_p")
MODEL_KEYS = ("norm_first", "positional", "residuals")


@check
def check_my_change(my_change, runs: dict, data, heldout, frequent, device="cpu") -> bool:
    """Change: one change of the run or the model, trained with seed 0 and drawn against the stored bands."""
    import matplotlib.pyplot as plt

    from ..mlm_runs import CONFIG, make_mlm, summary, train_arm

    where = "one of " + ", ".join(RUN_KEYS + MODEL_KEYS)
    if unanswered(my_change):
        return todo("not done yet: set my_change to dict(name=value), one change", where)
    if not isinstance(my_change, dict) or len(my_change) != 1:
        return failed("change one thing at a time: my_change should be a dict with one entry, got "
                      f"{my_change!r}", "one change, so that the curve says what it did")
    (name, value), = my_change.items()
    if name not in RUN_KEYS + MODEL_KEYS:
        return failed(f"{name!r} is not a setting of this run", where)
    config = dict(CONFIG, **{name: value}) if name in RUN_KEYS else CONFIG
    options = {name: value} if name in MODEL_KEYS else {}
    try:
        model = make_mlm(len(data.tokenizer), 0, config=config, **options)
        run = train_arm(model, data, 0, heldout, frequent, config, device=device)
    except Exception as exc:                                     # a value the model cannot take: one line
        return failed(f"{name}={value!r} does not make a model that trains ({type(exc).__name__}: {exc})", where)
    main = runs["arms"]["pre-LN, warm-up"]
    curves = torch.tensor([r["curve"] for r in main.values()])
    steps = [CONFIG["eval_every"] * (i + 1) for i in range(curves.shape[1])]
    fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
    ax.fill_between(steps, curves.min(0).values, curves.max(0).values, alpha=0.3, label="the stored runs (3 seeds)")
    mine = [config["eval_every"] * (i + 1) for i in range(len(run["curve"]))]
    ax.plot(mine, run["curve"], "k-", linewidth=2, label=f"{name} = {value!r}, seed 0")
    ax.set(xlabel="training step", ylabel="held-out loss at the hidden words")
    ax.legend()
    plt.show()
    mean, spread, low, high = summary(runs, "pre-LN, warm-up", 0)
    loss = run["scores"][0]
    if not math.isfinite(loss):
        return passed(f"{name} = {value!r}: the loss is not finite, the run diverged")
    gap = loss - mean
    verdict = ("better than the stored runs by more than twice their spread" if gap < -2 * spread else
               "worse than the stored runs by more than twice their spread" if gap > 2 * spread else
               "within twice the seeds' spread: not visible with one seed")
    return passed(f"{name} = {value!r}: held-out loss {loss:.2f} against {mean:.2f} ± {spread:.2f} (3 seeds): "
                  f"{verdict}")
