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

__all__ = ["CONFIG", "ARMS", "MLMData", "Scores", "mlm_data", "hide", "hidden_scores", "frequency_scores",
           "copy_rule_scores", "lr_factor", "make_mlm", "train_arm", "run_arms", "stored_runs", "stored_model",
           "summary"]

#: the run every arm shares: a 2-layer pre-LN encoder, d_model 32, words cut to 16 tokens, 1,500 steps
CONFIG = dict(vocab=3000, max_len=16, sentences_per_article=6, d_model=32, num_heads=4, d_ff=64, num_layers=2,
              steps=1500, batch_size=64, lr=1e-2, warmup=100, mask_p=0.15, eval_every=100, frequent=100)

#: each arm changes one thing of the first (the encoder's options, or the warm-up)
ARMS = {
    "pre-LN, warm-up": dict(),
    "pre-LN, no warm-up": dict(warmup=0),
    "post-LN, warm-up": dict(norm_first=False),
    "post-LN, no warm-up": dict(norm_first=False, warmup=0),
    "no positions": dict(positional="none"),
    "no residuals": dict(residuals=False),
}

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
    """A :class:`~course_lib.training.MaskedLM` in float64, its first weights drawn from ``seed``."""
    torch.manual_seed(seed)
    options = {"positional": positional} if encoder_class is Encoder else {}
    encoder = encoder_class(vocab_size, config["d_model"], config["num_heads"], config["d_ff"],
                            config["num_layers"], max_len=config["max_len"], norm_first=norm_first, **options)
    if not residuals:
        without_residuals(encoder)
    return MaskedLM(encoder, vocab_size).double()


def train_arm(model: MaskedLM, data: MLMData, seed: int, heldout: tuple, frequent: torch.Tensor,
              config: dict = CONFIG, warmup: int | None = None, steps: int | None = None,
              device: torch.device | str = "cpu") -> dict:
    """Train ``model`` with Adam (betas 0.9, 0.98) on masked words (BERT's 80/10/10 at ``mask_p``) of
    ``data.train``; the batches and masks come from a generator seeded with ``seed``.

    Every ``eval_every`` steps the held-out loss at the hidden positions of ``heldout = (inputs, labels)``
    is recorded. ``steps`` stops early (the schedule is still that of ``config['steps']``, so a short run
    is the start of the long one). Returns ``{"curve": [...], "scores": Scores.as_row(), "seconds": ...}``.
    """
    total = config["steps"]
    steps = total if steps is None else steps
    warmup = config["warmup"] if warmup is None else warmup
    generator = torch.Generator().manual_seed(seed)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"], betas=(0.9, 0.98), eps=1e-9)
    curve, start = [], time.process_time()
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
        if (step + 1) % config["eval_every"] == 0:
            curve.append(hidden_scores(model, *heldout, frequent).loss)
    model.eval()
    scores = hidden_scores(model, *heldout, frequent)
    return {"curve": curve, "scores": scores.as_row(), "seconds": time.process_time() - start}


def run_arms(arms: dict = ARMS, seeds=(0, 1, 2), split_seed: int = 0, config: dict = CONFIG,
             data: MLMData | None = None, log=print, save_model: Path | None = None) -> dict:
    """Every arm with every seed: ``{"config", "split_seed", "baselines", "arms": {arm: {seed: run}}}``."""
    data = mlm_data(split_seed, config["vocab"], config["max_len"], config["sentences_per_article"]) \
        if data is None else data
    heldout = hide(data.test)
    frequent = frequent_words(data.train, config["frequent"])
    V = len(data.tokenizer)
    out = {"config": config, "split_seed": split_seed, "stats": data.stats,
           "baselines": {"word frequencies": frequency_scores(data.train, heldout[1], V, frequent).as_row(),
                         "frequencies by position": frequency_scores(data.train, heldout[1], V, frequent,
                                                                     by_position=True).as_row()},
           "arms": {}}
    for arm, change in arms.items():
        options = {k: v for k, v in change.items() if k != "warmup"}
        out["arms"][arm] = {}
        for seed in seeds:
            model = make_mlm(V, seed, config=config, **options)
            run = train_arm(model, data, seed, heldout, frequent, config, warmup=change.get("warmup"))
            out["arms"][arm][str(seed)] = run
            log(f"{arm:22s} seed {seed}: loss {run['scores'][0]:.3f}, right {run['scores'][1]}, "
                f"rare right {run['scores'][3]} ({run['seconds']:.0f} s)")
            if save_model is not None and arm == next(iter(arms)):
                from safetensors.torch import save_file
                save_file({k: v.float() for k, v in model.state_dict().items()},
                          str(save_model / MODEL_FILE.format(seed=seed)))
    return out


def summary(runs: dict, arm: str, what: int = 0) -> tuple[float, float, float, float]:
    """An arm's final score ``what`` (0 loss, 1 right, 3 rare right) over its seeds: ``(mean, std, min, max)``."""
    values = [run["scores"][what] for run in runs["arms"][arm].values()]
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1))
    return mean, std, min(values), max(values)


def _runs_dir():
    return resources.files("course_lib") / "runs"


def stored_runs() -> dict:
    """The runs of ``python -m course_lib.mlm_runs`` shipped with course_lib (see the module doc)."""
    return json.loads((_runs_dir() / RUNS_FILE).read_text(encoding="utf-8"))


def stored_model(vocab_size: int, seed: int = 0, device: torch.device | str = "cpu") -> MaskedLM:
    """The first arm's model of ``seed`` (0, 1 or 2) at the end of its stored run. Its weights are stored in
    float32 (to keep the files small) and come back in float64, so the scores it gives match the stored ones
    to about 1e-6, not to the last digit."""
    from safetensors.torch import load_file

    model = make_mlm(vocab_size, seed)
    with resources.as_file(_runs_dir() / MODEL_FILE.format(seed=seed)) as path:
        model.load_state_dict({k: v.double() for k, v in load_file(str(path)).items()})
    return model.to(device).eval()


def main(argv=None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Re-make lecture 09's runs (float64, one thread).")
    parser.add_argument("--seeds", default="0,1,2", help="training seeds, comma-separated")
    parser.add_argument("--split-seed", type=int, default=0, help="the held-out split (08's is 0)")
    parser.add_argument("--arms", default=";".join(ARMS), help="arms, separated by semicolons")
    parser.add_argument("--out", type=Path, help="a JSON file to write (default: print a summary only)")
    parser.add_argument("--models", type=Path, help="a folder where to save the first arm's models (float32)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
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
