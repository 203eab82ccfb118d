"""Checks for the practice exercises of lecture 09 (the encoder learns)."""

from __future__ import annotations

import math

import torch

from ..mlm_runs import lr_factor
from ..tokenizer import PAD_ID, UNK_ID
from ..training import IGNORE, MASK_ID
from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_mask_tokens", "check_count_neighbours", "check_lr_factor", "check_first_loss",
           "check_why_keep_some", "check_no_positions_accuracy", "check_my_change", "check_shuffled_without_positions"]


def _mask_case(vocab_size: int, rows: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(3, vocab_size, (rows, 50), generator=generator)        # (B, T)
    lengths = torch.randint(10, 51, (rows,), generator=generator)
    tokens[torch.arange(50) >= lengths[:, None]] = PAD_ID                          # padding at the end
    tokens[:, 3] = UNK_ID                                                          # an unknown word per row
    return tokens


def _masked_pair(got, tokens: torch.Tensor) -> str | None:
    """What is wrong with the form of mask_tokens' result, or None."""
    if not isinstance(got, tuple) or len(got) != 2:
        return f"expected a pair (inputs, labels), got {type(got).__name__}"
    if not all(isinstance(t, torch.Tensor) and t.shape == tokens.shape for t in got):
        return f"inputs and labels should be tensors of the tokens' shape {tuple(tokens.shape)}"
    return None


@check
def check_mask_tokens(mask_tokens) -> bool:
    """Write: BERT's masking, 15 % of the real tokens picked, then 80 % ``<mask>``, 10 % random, 10 % kept.
    Each message says what the result shows; section 2 holds the recipe."""
    where = "section 2"
    vocab_size = 500
    tokens = _mask_case(vocab_size, 400, 0)
    ok, got = attempt(mask_tokens, tokens.clone(), vocab_size, torch.Generator().manual_seed(1), where=where)
    if not ok:
        return False
    if (wrong := _masked_pair(got, tokens)) is not None:
        return failed(wrong, where)
    inputs, labels = got
    picked = labels != IGNORE
    real = (tokens != PAD_ID) & (tokens != UNK_ID)
    if picked[real].double().mean() > 0.5:
        return failed(f"labels carry a word at {100 * picked[real].double().mean():.0f} % of the real positions: "
                      "the loss would be taken where nothing is hidden", "which positions should keep IGNORE?")
    if (picked & (tokens == PAD_ID)).any():
        return failed("a padding position was picked as a target", "print tokens and labels of one short row")
    if (picked & (tokens == UNK_ID)).any():
        return failed("an <unk> was picked as a target: the model cannot learn to say <unk>'s word",
                      "print labels where tokens == UNK_ID")
    if not picked.any():
        return failed("no position was picked: every label is IGNORE", where)
    if not torch.equal(labels[picked], tokens[picked]):
        return failed("at a picked position the label is not the original token", "compare labels and tokens there")
    if not torch.equal(inputs[~picked], tokens[~picked]):
        return failed("a token that was not picked was changed in inputs", "compare inputs and tokens where "
                      "labels == IGNORE")
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
                      "word, expected about 10 % each", where)
    changed = inputs[picked & (inputs != tokens) & (inputs != MASK_ID)]
    if (changed >= vocab_size).any():
        return failed("a random replacement is outside the vocabulary", "print the largest id in inputs")
    # a vocabulary of one real word: any other replacement is a special token
    few = _mask_case(4, 1000, 2)
    ok, got = attempt(mask_tokens, few.clone(), 4, torch.Generator().manual_seed(3), where=where)
    if not ok:
        return False
    if (wrong := _masked_pair(got, few)) is not None:
        return failed(wrong, where)
    shown, hidden = got[0][got[1] != IGNORE], got[1] != IGNORE
    if (shown < MASK_ID).any():
        return failed("with vocab_size = 4 a random replacement was <pad> or <unk>: replacements should be "
                      "real words", "print torch.unique(inputs[labels != IGNORE])")
    if (shown == MASK_ID).double().mean() > 0.83:
        return failed(f"with vocab_size = 4, {100 * float((shown == MASK_ID).double().mean()):.0f} % of the picked "
                      "tokens are <mask> (expected 80 %): some random replacements are <mask> itself",
                      "print torch.unique(inputs[labels != IGNORE])")
    return passed(f"{picked.sum().item()} of {real.sum().item()} real tokens picked ({100 * share:.1f} %): "
                  f"{100 * masked:.0f} % <mask>, {100 * other:.0f} % random real words, {100 * kept:.0f} % "
                  f"unchanged; with a one-word vocabulary, {int(hidden.sum())} picked and no special token drawn")


@check
def check_lr_factor(my_lr_factor) -> bool:
    """Write: the learning rate's factor, a linear warm-up times a linear decay to zero."""
    where = "section 5's f(s): print yours for a few steps beside the printed expectation"
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
                          "print yours at steps 0, 1 and warmup - 1")
        if warmup == 0 and got != expected:
            return failed(f"with warmup = 0, step {step} of {total}: got {got!r}, expected {expected:.6g}",
                          "print yours for warmup = 0 at steps 0 and total // 2")
        if math.isclose(got, min(1.0, (step + 1) / warmup), rel_tol=1e-9):
            return failed(f"step {step} of {total}: got {got:.4g}, the ramp's value, expected {expected:.4g}: "
                          "after the warm-up yours stays at 1", "print yours at steps total // 2 and total - 1")
        return failed(f"step {step}, warmup {warmup}, total {total}: got {got!r}, expected {expected:.6g}", where)
    return passed(f"the factor climbs to {lr_factor(99, 100, 1500):.3f} at step 99 of 1,500, then falls in a "
                  "straight line; without warm-up it starts at 1 and falls the same way")


@check
def check_first_loss(prediction, measured: float, vocab_size: int) -> bool:
    """Predict: the untrained model's masked-word loss, before its first step."""
    where = "section 4: what does an untrained head say about each word?"
    if not unanswered(prediction):
        try:
            got = float(prediction)
        except (TypeError, ValueError):
            got = None
        causes = [(math.log2(vocab_size), "that is log2 V, a loss in bits: PyTorch's cross-entropy takes the "
                   "natural log"), (math.log10(vocab_size), "that is log10 V: PyTorch's cross-entropy takes the "
                   "natural log"), (1 / vocab_size, "that is the probability of one word, not the loss, which "
                   "is minus its log"), (float(vocab_size), "that is the number of words, not the loss, which "
                   "is the log of it")]
        for value, cause in causes:
            if got is not None and math.isclose(got, value, rel_tol=0.02) and \
                    not math.isclose(value, measured, rel_tol=0.05):
                return failed(cause, where)
    return number(prediction, measured, f"the untrained loss is {measured:.2f}, close to ln V = "
                  f"ln {vocab_size} = {math.log(vocab_size):.2f}: a uniform guess over the vocabulary",
                  rel_tol=0.05, low="too small: an untrained model is far from sure of the right word",
                  high="too large: what loss does a uniform guess over V words get?",
                  where=where, name="first_loss")


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


@check
def check_count_neighbours(count_neighbours) -> bool:
    """Write: the counts behind the neighbour rule, ``(left, right)`` tables of shape ``(V + 1, V)``."""
    from ..mlm_runs import neighbour_counts

    where = "section 3"
    generator = torch.Generator().manual_seed(0)
    vocab_size = 12
    train = torch.randint(3, vocab_size, (200, 7), generator=generator)           # (N, T) ids
    train[torch.rand(train.shape, generator=generator) < 0.2] = UNK_ID
    train[torch.rand(train.shape, generator=generator) < 0.05] = MASK_ID
    lengths = torch.randint(2, 8, (200,), generator=generator)
    train[torch.arange(7) >= lengths[:, None]] = PAD_ID                           # padding at the end
    ok, got = attempt(count_neighbours, train.clone(), vocab_size, where=where)
    if not ok:
        return False
    left, right = neighbour_counts(train, vocab_size)
    if not isinstance(got, tuple) or len(got) != 2 or not all(isinstance(t, torch.Tensor) for t in got):
        return failed(f"expected a pair of tensors (left, right), got {type(got).__name__}", where)
    shapes = [tuple(t.shape) for t in got]
    if shapes != [tuple(left.shape)] * 2:
        return failed(f"the tables have shapes {shapes}, expected {tuple(left.shape)} each: one row per context "
                      "word and one for the sentence's edge, one column per word", "print the shapes")
    mine = [t.double() for t in got]
    if torch.equal(mine[0], left) and torch.equal(mine[1], right):
        return passed(f"{int(left.sum())} words counted with the word before them and the word after them; "
                      f"{int(left[vocab_size].sum())} sentences start at the edge row")
    if torch.equal(mine[0], right) and torch.equal(mine[1], left):
        return failed("the two tables are swapped: yours counts the word after first",
                      "print left[c] for a c you know stands before a word")
    for name, t in (("left", mine[0]), ("right", mine[1])):
        if t[:, :MASK_ID + 1].any():
            return failed(f"{name} counts <pad>, <unk> or <mask> as a word that follows a context: those are "
                          "never a hidden word", f"print {name}[:, :3].sum()")
    if mine[0].sum() != left.sum() and mine[0][vocab_size].sum() == 0 \
            and mine[0].sum() == left.sum() - left[vocab_size].sum():
        return failed(f"left counts {int(mine[0].sum())} words, {int(left[vocab_size].sum())} short: the edge row "
                      f"(index {vocab_size}) is empty, so a sentence's first word is never counted",
                      f"print left[{vocab_size}].sum() and the number of sentences")
    if mine[0].sum() != left.sum():
        return failed(f"left counts {int(mine[0].sum())} words, expected {int(left.sum())} (one per known word)",
                      "print the number of known words in train")
    if not torch.equal(mine[0][vocab_size], left[vocab_size]):
        return failed(f"the edge row (index {vocab_size}) of left is wrong: a sentence's first word follows the "
                      "edge", f"print left[{vocab_size}] and the first column of train")
    if not torch.equal(mine[1][vocab_size], right[vocab_size]):
        return failed("the edge row of right is wrong: a sentence's last word, before its padding, has the edge "
                      "after it", "print right[vocab_size] and the last real word of a short row")
    c, w = (mine[0] != left).nonzero()[0].tolist() if not torch.equal(mine[0], left) else \
        (mine[1] != right).nonzero()[0].tolist()
    return failed(f"the count of word {w} next to context {c} differs from the expected one", where)


@check
def check_no_positions_accuracy(prediction) -> bool:
    """Predict: the held-out accuracy of the word-order classifier that has no positions."""
    where = "lecture 05, section 1"
    if not unanswered(prediction) and isinstance(prediction, (int, float)):
        if prediction == 0:
            return failed("0 would mean it is wrong on both a headline and its shuffle: but it gives both the same "
                          "answer, so it is right on one of them", where)
        if prediction == 1:
            return failed("1 would need the model to tell a headline from its shuffle: without positions both "
                          "reach it as the same bag of vectors", where)
    return number(prediction, 0.5, "exactly one half: without positions a headline and its shuffle give the "
                  "encoder the same bag of vectors, so the classifier says the same of both, right for one of them",
                  abs_tol=0.005, low="below one half: could it be wrong on both the headline and its shuffle?",
                  high="above one half: without positions a headline and its shuffle reach the model as the same "
                  "bag of vectors", where=where, name="no_positions_accuracy")


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
    ax.fill_between(steps, curves.min(0).values, curves.max(0).values, alpha=0.3,
                    label=f"the stored runs ({len(curves)} seeds)")
    ax.plot(steps, main["0"]["curve"], "--", linewidth=1.5, label="stored seed 0 (the same batches and masks)")
    mine = [config["eval_every"] * (i + 1) for i in range(len(run["curve"]))]
    ax.plot(mine, run["curve"], "k-", linewidth=2, label=f"{name} = {value!r}, seed 0")
    ax.set(xlabel="training step", ylabel="held-out loss at the hidden words")
    ax.legend()
    plt.show()
    loss, stored = run["scores"][0], main["0"]["scores"][0]
    if not math.isfinite(loss):
        return passed(f"{name} = {value!r}: the loss is not finite, the run diverged")
    _, spread, _, _ = summary(runs, "pre-LN, warm-up", 0)
    noise = math.sqrt(2) * spread              # how far two runs of one recipe land apart, seed against seed
    diff = loss - stored
    verdict = ("the same as stored seed 0: the change changed nothing this run computes" if abs(diff) < 1e-6 else
               f"better: more than 2 x {noise:.3f} below it" if diff < -2 * noise else
               f"worse: more than 2 x {noise:.3f} above it" if diff > 2 * noise else
               f"within 2 x {noise:.3f} of it, what another seed alone could give: not visible with one run")
    return passed(f"{name} = {value!r}: held-out loss {loss:.3f}, stored seed 0 {stored:.3f} (paired: the same "
                  f"seed, batches and masks), difference {diff:+.3f}: {verdict}")
