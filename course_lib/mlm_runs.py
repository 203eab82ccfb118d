"""Lecture 09's experiment: a masked language model trained on BBC News sentences, several seeds per arm,
scored only where the input hides the word, against baselines that learn nothing.

* :func:`mlm_data`: the articles deduplicated by body *before* the split, 08's test articles held out,
  repeated sentences dropped (and every held-out sentence that also stands in training), a word vocabulary;
* :func:`hide`: a fixed test masking in which every picked word is replaced by ``<mask>`` (hidden);
* :func:`frequency_scores`, :func:`copy_rule_scores`: the baselines that learn nothing;
* :func:`hidden_scores`: a model's loss and words right at the hidden positions, and among the rarer words;
* :func:`lr_factor`: a linear warm-up times a linear decay to zero (every arm shares the decay);
* :data:`ARMS`, :func:`train_arm`, :func:`run_arms`: the arms, one run, all runs;
* :func:`stored_runs`, :func:`stored_model`: the runs made by ``python -m course_lib.mlm_runs --out
  course_lib/runs/mlm_runs.json --models course_lib/runs`` (float64, one thread: 18 runs of about a minute of
  CPU each), shipped in ``course_lib/runs/`` so that the notebook shows them without training for 18 minutes;
  tests/test_mlm_runs.py makes their first steps again, and the notebook seed 0's first 300 steps.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from .capstone import article_groups, article_sentences, balanced_split, load_articles
from .encoder import Encoder
from .errors import CourseValueError, check_int
from .tokenizer import PAD_ID, UNK_ID, WordTokenizer
from .training import IGNORE, MASK_ID, MaskedLM, encode_texts, mask_tokens, mlm_vocab, without_residuals

__all__ = ["CONFIG", "ARMS", "SEEDS", "STORED_MODELS", "MLMData", "Scores", "mlm_data", "hide", "hidden_scores",
           "frequency_scores", "neighbour_counts", "neighbour_log_probs", "neighbour_scores", "tune_neighbour",
           "copy_rule_scores", "lr_factor", "make_mlm", "train_arm", "baselines", "run_arms", "stored_runs",
           "stored_model", "summary", "paired", "attention_stats"]

#: the run every arm shares: a 2-layer pre-LN encoder, d_model 128, words cut to 16 tokens, 3,000 steps in
#: float32; training hides 45 % of the words (Wettig et al. 2023: more than BERT's 15 % trains faster), the
#: test hides 15 % (:func:`hide`)
CONFIG = dict(vocab=3000, max_len=16, sentences_per_article=6, d_model=128, num_heads=4, d_ff=256, num_layers=2,
              dropout=0.1, steps=3000, batch_size=64, lr=2e-3, warmup=200, mask_p=0.45, eval_every=250,
              frequent=100)

#: each arm changes one thing of the first (the encoder's options, or the warm-up)
ARMS = {
    "pre-LN, warm-up": dict(),
    "pre-LN, no warm-up": dict(warmup=0),
    "post-LN, warm-up": dict(norm_first=False),
    "no positions": dict(positional="none"),
    "no residuals": dict(residuals=False),
}

#: the seeds of every arm, and the models stored (the first arm's, float16)
SEEDS = (0, 1, 2, 3, 4)
STORED_MODELS = (0, 1, 2)

RUNS_FILE = "mlm_runs.json"
MODEL_FILE = "mlm_seed{seed}.safetensors"


@dataclass
class MLMData:
    """The tokenizer, the training and held-out ids ``(N, T)``, and what the cleaning removed."""

    tokenizer: WordTokenizer
    train: torch.Tensor
    test: torch.Tensor
    stats: dict = field(default_factory=dict)


def mlm_data(split_seed: int = 0, vocab: int = CONFIG["vocab"], max_len: int = CONFIG["max_len"],
             sentences_per_article: int = CONFIG["sentences_per_article"]) -> MLMData:
    """The BBC News sentences, cleaned before they are split.

    1. Articles that tell one story (:func:`~course_lib.capstone.article_groups`: the same headline, the same
       body, or bodies that share half their 8-word runs) are one article: the first of them.
    2. The held-out articles are those of lecture 08's test split (``balanced_split(..., 60, 60, split_seed)``,
       which draws only first articles); the first article of every other story is for training.
    3. The first ``sentences_per_article`` sentences of each article; a sentence that repeats is kept once,
       and a held-out sentence that also stands among the training sentences is dropped.
    4. A vocabulary of the ``vocab`` most frequent training words (with ``<pad>``, ``<unk>``, ``<mask>``);
       sentences are cut to ``max_len`` tokens.
    """
    data = load_articles()
    group = article_groups(data)
    _, held_out = balanced_split(data, train_per_topic=60, test_per_topic=60, seed=split_seed)
    test_groups = {group[i] for i in held_out}
    train_index = [i for i, g in enumerate(group) if g == i and g not in test_groups]

    def sentences(index):
        return [s for i in index for s in article_sentences(data, [i])[:sentences_per_article]]

    train_all, test_all = sentences(train_index), sentences(held_out)
    train_text = list(dict.fromkeys(train_all))                               # each sentence once
    seen = set(train_text)
    test_text = [s for s in dict.fromkeys(test_all) if s not in seen]
    tokenizer = mlm_vocab(train_text, min_freq=1, max_size=vocab)
    train, test = encode_texts(tokenizer, train_text, max_len), encode_texts(tokenizer, test_text, max_len)
    real = test != PAD_ID
    stats = dict(articles=len(data), distinct_stories=len(set(group)), train_articles=len(train_index),
                 test_articles=len(held_out), train_sentences=len(train_text),
                 repeated_train_sentences=len(train_all) - len(train_text), test_sentences=len(test_text),
                 test_sentences_seen_in_training=len(dict.fromkeys(test_all)) - len(test_text),
                 unk_share_test=float((test == UNK_ID).sum() / real.sum()))
    return MLMData(tokenizer, train, test, stats)


def hide(tokens: torch.Tensor, seed: int = 0, p: float = 0.15) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed test masking: each known word (not ``<pad>``, not ``<unk>``) is picked with probability ``p``
    and replaced by ``<mask>``: ``(inputs, labels)``, ``labels`` the hidden word there, :data:`IGNORE` elsewhere.
    No picked word stays visible, so a score on these positions says what the model infers from the context."""
    generator = torch.Generator().manual_seed(seed)
    picked = (torch.rand(tokens.shape, generator=generator) < p) & (tokens != PAD_ID) & (tokens != UNK_ID)
    labels = torch.where(picked, tokens, torch.full_like(tokens, IGNORE))
    return torch.where(picked, torch.full_like(tokens, MASK_ID), tokens), labels


@dataclass
class Scores:
    """At the hidden positions: the mean cross-entropy, the words right (top guess), and among the
    *rarer* words (those outside the ``frequent`` most common training words) the words right."""

    loss: float
    right: int
    total: int
    rare_right: int
    rare_total: int

    def as_row(self) -> tuple:
        return self.loss, self.right, self.total, self.rare_right, self.rare_total


def _score(log_p: torch.Tensor, y: torch.Tensor, frequent: torch.Tensor) -> Scores:
    """``log_p (n, V)`` log-probabilities at the ``n`` hidden positions whose words are ``y (n,)``."""
    log_p = log_p.double().clone()
    loss = F.cross_entropy(log_p, y).item()
    log_p[:, :MASK_ID + 1] = -math.inf                                          # never answer a special
    top = log_p.argmax(-1)
    rare = ~torch.isin(y, frequent)
    return Scores(loss, int((top == y).sum()), len(y), int((top == y)[rare].sum()), int(rare.sum()))


def frequent_words(train: torch.Tensor, n: int = CONFIG["frequent"]) -> torch.Tensor:
    """The ids of the ``n`` most frequent known words of ``train`` (ties: lowest id first)."""
    ids = train[(train != PAD_ID) & (train != UNK_ID)]
    counts = torch.bincount(ids)
    return torch.tensor(sorted(range(len(counts)), key=lambda i: (-int(counts[i]), i))[:n])


@torch.no_grad()
def hidden_scores(model: nn.Module, inputs: torch.Tensor, labels: torch.Tensor, frequent: torch.Tensor,
                  batch_size: int = 512) -> Scores:
    """A model's :class:`Scores` at the hidden positions of ``labels`` (see :func:`hide`)."""
    model.eval()
    device = next(model.parameters()).device
    logits = []
    for start in range(0, len(inputs), batch_size):
        x, y = inputs[start:start + batch_size], labels[start:start + batch_size]
        logits.append(model(x.to(device), at=(y != IGNORE).to(device)).double().cpu())
    return _score(torch.cat(logits).log_softmax(-1), labels[labels != IGNORE], frequent)


def frequency_scores(train: torch.Tensor, labels: torch.Tensor, vocab_size: int, frequent: torch.Tensor,
                     by_position: bool = False) -> Scores:
    """The baselines that learn nothing: each hidden word guessed from the training words' frequencies
    (add-one smoothed), over all positions or (``by_position``) at the hidden word's own position."""
    known = (train != PAD_ID) & (train != UNK_ID)
    if by_position:
        counts = torch.stack([torch.bincount(train[:, t][known[:, t]], minlength=vocab_size)
                              for t in range(train.shape[1])])                  # (T, V)
    else:
        counts = torch.bincount(train[known], minlength=vocab_size).expand(train.shape[1], vocab_size)
    counts = counts.double() + 1
    counts[:, :MASK_ID + 1] = 0
    log_p = (counts / counts.sum(1, keepdim=True)).log()                        # (T, V)
    rows, cols = (labels != IGNORE).nonzero(as_tuple=True)
    return _score(log_p[cols], labels[rows, cols], frequent)


def _neighbours(tokens: torch.Tensor, vocab_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The token just before and just after each position, ``(B, T)`` each; padding and the sentence's ends
    read as the edge, id ``vocab_size``."""
    edge = torch.full((len(tokens), 1), vocab_size)
    padded = torch.where(tokens == PAD_ID, vocab_size, tokens)
    return torch.cat([edge, padded[:, :-1]], 1), torch.cat([padded[:, 1:], edge], 1)


def neighbour_counts(train: torch.Tensor, vocab_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """How often each known word (not a special, not ``<unk>``) follows and precedes each token in ``train``:
    ``left[c, w]`` counts ``c`` just before ``w``, ``right[c, w]`` counts ``c`` just after it, both
    ``(vocab_size + 1, vocab_size)`` float64; the last row ``c = vocab_size`` is the edge of the sentence."""
    before, after = _neighbours(train, vocab_size)                             # (N, T) left and right words
    target = train > MASK_ID                                                   # a known word
    left = torch.zeros(vocab_size + 1, vocab_size, dtype=torch.float64)
    right = torch.zeros(vocab_size + 1, vocab_size, dtype=torch.float64)
    ones = torch.ones(int(target.sum()), dtype=torch.float64)
    left.index_put_((before[target], train[target]), ones, accumulate=True)
    right.index_put_((after[target], train[target]), ones, accumulate=True)
    return left, right


def neighbour_log_probs(train: torch.Tensor, inputs: torch.Tensor, labels: torch.Tensor, vocab_size: int,
                        alpha: float, counts: tuple | None = None) -> torch.Tensor:
    """The rule that counts the visible neighbours (Karpathy's first model, read both ways): at each hidden
    position of ``labels``, ``log P(w | left, right)`` over the ``vocab_size`` words, ``(n, V)``, with

        P(w | l, r) ∝ P(w | l) · P(w | r) / P(w),   P(w | c) = (n(c, w) + alpha · P(w)) / (n(c) + alpha),

    ``n`` the counts of :func:`neighbour_counts`, ``P(w)`` the add-one word frequencies. A neighbour that is
    itself hidden (``<mask>``) tells nothing: its factor is ``P(w)``. Nothing is learned by gradient."""
    left, right = neighbour_counts(train, vocab_size) if counts is None else counts
    unigram = left.sum(0) + 1
    unigram[:MASK_ID + 1] = 0
    unigram /= unigram.sum()                                                   # (V,) P(w)
    rows, cols = (labels != IGNORE).nonzero(as_tuple=True)
    before, after = (side[rows, cols] for side in _neighbours(inputs, vocab_size))   # (n,) each

    def given(table, context):                                                 # (n, V) P(w | c)
        n = table[context]
        p = (n + alpha * unigram) / (n.sum(1, keepdim=True) + alpha)
        p[context == MASK_ID] = unigram
        return p

    log_p = given(left, before).log() + given(right, after).log() - unigram.log()
    log_p[:, :MASK_ID + 1] = -math.inf
    return log_p.log_softmax(-1)


def neighbour_scores(train: torch.Tensor, inputs: torch.Tensor, labels: torch.Tensor, vocab_size: int,
                     frequent: torch.Tensor, alpha: float) -> Scores:
    """The :class:`Scores` of :func:`neighbour_log_probs` at the hidden positions of ``labels``."""
    return _score(neighbour_log_probs(train, inputs, labels, vocab_size, alpha), labels[labels != IGNORE],
                  frequent)


def tune_neighbour(train: torch.Tensor, vocab_size: int, grid=(4, 8, 16, 32, 64, 128, 256)) -> float:
    """The rule's ``alpha`` chosen on the training rows alone: counted on the even rows, scored (loss) at the
    hidden words of the odd rows, the first of ``grid`` with the lowest loss."""
    counts = neighbour_counts(train[0::2], vocab_size)
    inputs, labels = hide(train[1::2], seed=1)
    y = labels[labels != IGNORE]
    losses = [F.nll_loss(neighbour_log_probs(train[0::2], inputs, labels, vocab_size, a, counts), y).item()
              for a in grid]
    return grid[losses.index(min(losses))]


def copy_rule_scores(inputs: torch.Tensor, labels: torch.Tensor, guess: int) -> tuple[int, int]:
    """A rule that learns nothing, scored BERT's way (80/10/10 masks, every picked position): answer
    the word the input shows there, or ``guess`` where it shows ``<mask>``. ``(right, total)``."""
    at = labels != IGNORE
    shown = inputs[at]
    answer = torch.where(shown == MASK_ID, torch.full_like(shown, guess), shown)
    return int((answer == labels[at]).sum()), int(at.sum())


def lr_factor(step: int, warmup: int, total: int) -> float:
    """The learning rate's factor at ``step`` (0, 1, ...) of ``total``: a linear warm-up to 1 over
    ``warmup`` steps (none when 0), times a linear decay from 1 at step 0 to 0 at step ``total``. Every arm
    decays the same way, so that arms with and without warm-up differ only in their first steps."""
    check_int("step", step, low=0)
    check_int("warmup", warmup, low=0)
    check_int("total", total, low=1)
    ramp = 1.0 if warmup == 0 else min(1.0, (step + 1) / warmup)
    return ramp * max(0.0, 1.0 - step / total)


def make_mlm(vocab_size: int, seed: int, encoder_class: type = Encoder, norm_first: bool = True,
             positional: str = "sinusoidal", residuals: bool = True, config: dict = CONFIG) -> MaskedLM:
    """A :class:`~course_lib.training.MaskedLM` (float32), its first weights drawn from ``seed``."""
    torch.manual_seed(seed)
    options = {"positional": positional} if encoder_class is Encoder else {}
    encoder = encoder_class(vocab_size, config["d_model"], config["num_heads"], config["d_ff"],
                            config["num_layers"], max_len=config["max_len"], dropout=config["dropout"],
                            norm_first=norm_first, **options)
    if not residuals:
        without_residuals(encoder)
    return MaskedLM(encoder, vocab_size)


def train_arm(model: MaskedLM, data: MLMData, seed: int, heldout: tuple, frequent: torch.Tensor,
              config: dict = CONFIG, warmup: int | None = None, steps: int | None = None,
              device: torch.device | str = "cpu") -> dict:
    """Train ``model`` with Adam (betas 0.9, 0.98) on masked words (BERT's 80/10/10 at ``mask_p``) of
    ``data.train``; the batches and masks come from a generator seeded with ``seed``.

    Every ``eval_every`` steps the held-out loss at the hidden positions of ``heldout = (inputs, labels)``
    is recorded, with the mean training loss of those steps. ``steps`` stops early (the schedule is still that
    of ``config['steps']``, so a short run is the start of the long one). Returns ``{"curve": [...],
    "train_curve": [...], "scores": Scores.as_row(), "seconds": ...}``.
    """
    total = config["steps"]
    steps = total if steps is None else steps
    warmup = config["warmup"] if warmup is None else warmup
    generator = torch.Generator().manual_seed(seed)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"], betas=(0.9, 0.98), eps=1e-9)
    curve, train_curve, block, start = [], [], [], time.process_time()
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = config["lr"] * lr_factor(step, warmup, total)
        model.train()
        rows = torch.randint(0, len(data.train), (config["batch_size"],), generator=generator)
        inputs, labels = mask_tokens(data.train[rows], len(data.tokenizer), generator, p=config["mask_p"])
        at = labels != IGNORE
        loss = F.cross_entropy(model(inputs.to(device), at=at.to(device)), labels[at].to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        block.append(loss.item())
        if (step + 1) % config["eval_every"] == 0:
            curve.append(hidden_scores(model, *heldout, frequent).loss)
            train_curve.append(sum(block) / len(block))
            block = []
    model.eval()
    scores = hidden_scores(model, *heldout, frequent)
    return {"curve": curve, "train_curve": train_curve, "scores": scores.as_row(),
            "seconds": time.process_time() - start}


def baselines(data: MLMData, labels: torch.Tensor, inputs: torch.Tensor, frequent: torch.Tensor) -> dict:
    """The rules that learn nothing, scored at the hidden positions: ``{name: Scores.as_row()}``, and the
    neighbour rule's ``alpha`` (chosen on the training rows, :func:`tune_neighbour`)."""
    V = len(data.tokenizer)
    alpha = tune_neighbour(data.train, V)
    return {"word frequencies": frequency_scores(data.train, labels, V, frequent).as_row(),
            "frequencies by position": frequency_scores(data.train, labels, V, frequent, by_position=True).as_row(),
            "neighbour counts": neighbour_scores(data.train, inputs, labels, V, frequent, alpha).as_row(),
            "neighbour alpha": alpha}


def run_arms(arms: dict = ARMS, seeds=SEEDS, split_seed: int = 0, config: dict = CONFIG,
             data: MLMData | None = None, log=print, save_model: Path | None = None) -> dict:
    """Every arm with every seed: ``{"config", "split_seed", "stats", "baselines", "arms": {arm: {seed: run}}}``.
    With ``save_model``, the first arm's models of :data:`STORED_MODELS` are saved there (float16)."""
    data = mlm_data(split_seed, config["vocab"], config["max_len"], config["sentences_per_article"]) \
        if data is None else data
    heldout = hide(data.test)
    frequent = frequent_words(data.train, config["frequent"])
    V = len(data.tokenizer)
    out = {"config": config, "split_seed": split_seed, "stats": data.stats,
           "baselines": baselines(data, heldout[1], heldout[0], frequent), "arms": {}}
    for arm, change in arms.items():
        options = {k: v for k, v in change.items() if k != "warmup"}
        out["arms"][arm] = {}
        for seed in seeds:
            model = make_mlm(V, seed, config=config, **options)
            run = train_arm(model, data, seed, heldout, frequent, config, warmup=change.get("warmup"))
            out["arms"][arm][str(seed)] = run
            log(f"{arm:22s} seed {seed}: loss {run['scores'][0]:.3f}, right {run['scores'][1]}, "
                f"rare right {run['scores'][3]} ({run['seconds']:.0f} s)")
            if save_model is not None and arm == next(iter(ARMS)) and seed in STORED_MODELS:
                from safetensors.torch import save_file
                save_file({k: v.half() for k, v in model.state_dict().items()},
                          str(save_model / MODEL_FILE.format(seed=seed)))
    return out


def summary(runs: dict, arm: str, what: int = 0) -> tuple[float, float, float, float]:
    """An arm's final score ``what`` (0 loss, 1 right, 3 rare right) over its seeds: ``(mean, std, min, max)``."""
    values = [run["scores"][what] for run in runs["arms"][arm].values()]
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1))
    return mean, std, min(values), max(values)


def paired(runs: dict, arm: str, against: str, what: int = 0, level: float = 0.95) -> dict:
    """``arm`` minus ``against``, seed by seed (the same seed: the same batches and masks, and the same first
    weights where the change allows), on score ``what`` (0 loss, 1 right, 3 rare right): the differences, their
    mean, and a ``level`` t interval for it. ``verdict``: "worse"/"better" (in loss) when the interval leaves
    0 out, "not visible here" when it covers 0."""
    from scipy import stats

    seeds = [k for k in runs["arms"][arm] if k in runs["arms"][against]]
    diffs = [runs["arms"][arm][k]["scores"][what] - runs["arms"][against][k]["scores"][what] for k in seeds]
    n = len(diffs)
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    half = float(stats.t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    verdict = "not visible here" if low <= 0 <= high else ("worse" if low > 0 else "better")
    if what in (1, 3) and verdict != "not visible here":                       # more words right is better
        verdict = "better" if verdict == "worse" else "worse"
    return {"diffs": diffs, "mean": mean, "low": low, "high": high, "verdict": verdict}


@torch.no_grad()
def attention_stats(model: MaskedLM, inputs: torch.Tensor, labels: torch.Tensor, batch_size: int = 512) -> dict:
    """Where a trained model's heads look, over every held-out sentence (not one example): per layer and head,
    ``to_left`` the mean attention a ``<mask>`` gives to the word just before it, ``left_top`` the share of
    ``<mask>`` positions whose strongest key is that word, ``near_top`` the share of all real queries whose
    strongest key is the query itself or a neighbour, and ``mask_to_masks`` the mean attention a ``<mask>``
    gives to the other ``<mask>`` positions of its sentence (sentences with two or more). Each ``(layers,
    heads)``; ``n_masks`` and ``n_queries`` count what was averaged."""
    model.eval()
    sums = dict(to_left=0.0, left_top=0.0, near_top=0.0, mask_to_masks=0.0)
    n_masks = n_queries = n_multi = 0
    for start in range(0, len(inputs), batch_size):
        x, y = inputs[start:start + batch_size], labels[start:start + batch_size]
        _, weights = model.encoder(x, return_attention=True)
        w = torch.stack(weights, 1).double()                                 # (B, L, H, T, T)
        real, hidden = x != PAD_ID, y != IGNORE                              # (B, T)
        b, t = hidden.nonzero(as_tuple=True)
        keep = t > 0                                                         # a word before it
        b, t = b[keep], t[keep]
        rows = w[b, :, :, t, :]                                              # (n, L, H, T)
        sums["to_left"] = sums["to_left"] + rows.gather(-1, (t - 1).view(-1, 1, 1, 1).expand(
            *rows.shape[:-1], 1)).squeeze(-1).sum(0)
        sums["left_top"] = sums["left_top"] + (rows.argmax(-1) == (t - 1).view(-1, 1, 1)).double().sum(0)
        n_masks += len(t)
        qb, qt = real.nonzero(as_tuple=True)
        top = w[qb, :, :, qt, :].argmax(-1)                                  # (q, L, H)
        sums["near_top"] = sums["near_top"] + ((top - qt.view(-1, 1, 1)).abs() <= 1).double().sum(0)
        n_queries += len(qt)
        multi = hidden.sum(1) >= 2                                           # (B,)
        mb, mt = (hidden & multi[:, None]).nonzero(as_tuple=True)
        others = (hidden[mb] & (torch.arange(x.shape[1]) != mt[:, None]))    # (m, T) the other masks
        share = (w[mb, :, :, mt, :] * others[:, None, None, :]).sum(-1)      # (m, L, H)
        sums["mask_to_masks"] = sums["mask_to_masks"] + share.sum(0)
        n_multi += len(mt)
    out = {k: v / (n_queries if k == "near_top" else n_multi if k == "mask_to_masks" else n_masks)
           for k, v in sums.items()}
    return dict(out, n_masks=n_masks, n_queries=n_queries, n_multi=n_multi)


def _runs_dir():
    return resources.files("course_lib") / "runs"


def stored_runs() -> dict:
    """The runs of ``python -m course_lib.mlm_runs`` shipped with course_lib (see the module doc)."""
    return json.loads((_runs_dir() / RUNS_FILE).read_text(encoding="utf-8"))


def stored_model(vocab_size: int, seed: int = 0, device: torch.device | str = "cpu") -> MaskedLM:
    """The first arm's model of ``seed`` (one of :data:`STORED_MODELS`) at the end of its stored run. Its
    weights are stored in float16 (to keep the files small) and come back in float64, so that what a lecture
    prints from it is the same on any CPU; its scores match the stored ones to about 1e-3, not to the last digit."""
    from safetensors.torch import load_file

    model = make_mlm(vocab_size, seed)
    with resources.as_file(_runs_dir() / MODEL_FILE.format(seed=seed)) as path:
        model.load_state_dict({k: v.float() for k, v in load_file(str(path)).items()})
    return model.double().to(device).eval()


def main(argv=None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Re-make lecture 09's runs (float32, one thread).")
    parser.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="training seeds, comma-separated")
    parser.add_argument("--split-seed", type=int, default=0, help="the held-out split (08's is 0)")
    parser.add_argument("--arms", default=";".join(ARMS), help="arms, separated by semicolons")
    parser.add_argument("--out", type=Path, help="a JSON file to write (default: print a summary only)")
    parser.add_argument("--models", type=Path, help="a folder where to save the first arm's models (float16)")
    parser.add_argument("--merge", type=Path, nargs="+", help="instead of training: merge these JSON files "
                        "(the same split, other arms or seeds) into --out")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.merge:
        runs = [json.loads(path.read_text(encoding="utf-8")) for path in args.merge]
        out = runs[0]
        for other in runs[1:]:
            if {k: other[k] for k in ("config", "split_seed", "baselines")} != \
                    {k: out[k] for k in ("config", "split_seed", "baselines")}:
                raise CourseValueError("--merge: the files hold runs of different configurations or splits")
            for arm, by_seed in other["arms"].items():
                out["arms"].setdefault(arm, {}).update(by_seed)
        out["arms"] = {arm: dict(sorted(out["arms"][arm].items(), key=lambda kv: int(kv[0])))
                       for arm in ARMS if arm in out["arms"]}
        args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        return
    names = args.arms.split(";")
    unknown = set(names) - set(ARMS)
    if unknown:
        raise CourseValueError(f"--arms: expected names among {list(ARMS)}, got {sorted(unknown)}")
    arms = {name: ARMS[name] for name in names}
    runs = run_arms(arms, [int(s) for s in args.seeds.split(",")], args.split_seed, save_model=args.models)
    if args.out is not None:
        args.out.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
