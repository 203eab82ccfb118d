"""Lecture 08's comparison on many splits: the MiniLM probe against three baselines tuned on the training
split alone, with 300 and with about 1,750 labelled headlines.

* :data:`MODELS`: the four models, each a scikit-learn pipeline from headlines to topics with one setting
  chosen by cross-validation (:func:`course_lib.capstone.cross_validate`, 3 folds, the training rows only):
  word counts + logistic regression (``C``), word counts + complement naive Bayes (``alpha``), TF-IDF of
  word 1-2-grams and character 2-5-grams + logistic regression (``C``), and the linear probe on MiniLM's
  mean-pooled embeddings (``C``);
* :func:`split_sets`: one split's training headlines at both sizes and its 300 test headlines;
* :func:`score_split`: every model at every size on one split: its chosen setting and which test headlines it
  gets right;
* :func:`paired_bootstrap`: a paired difference of right answers on the same test headlines, with an interval;
* :func:`stored_comparison`: the runs of ``python -m course_lib.topic_runs --out
  course_lib/runs/topic_runs.json`` (splits 0-9, a few minutes of CPU), shipped so that lecture 08 reads them
  without refitting; the notebook refits split 0 with 300 labels and checks it against them.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import ComplementNB
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import FunctionTransformer

from .capstone import TOPICS, Articles, article_groups, balanced_split, cross_validate
from .errors import CourseValueError, check_int

RUNS_FILE = "topic_runs.json"
C_GRID = (1, 10, 100, 1000)
ALPHA_GRID = (0.01, 0.03, 0.1, 0.3, 1, 3)
PER_TOPIC = 60                                  # training and test headlines per topic in the small setting

__all__ = ["RUNS_FILE", "C_GRID", "ALPHA_GRID", "MODELS", "split_sets", "score_split", "right", "paired_bootstrap",
           "stored_comparison"]


def _logistic(C, tol=1e-4):
    return LogisticRegression(C=C, solver="newton-cg", tol=tol, max_iter=1_000)


def word_counts_lr(C, tol=1e-4):
    """Counts of the lower-cased words, then a logistic regression with penalty ``C``."""
    return make_pipeline(CountVectorizer(), _logistic(C, tol))


def word_counts_nb(alpha, tol=None):
    """Counts of the lower-cased words, then complement naive Bayes (Rennie et al. 2003) with smoothing ``alpha``."""
    return make_pipeline(CountVectorizer(), ComplementNB(alpha=alpha))


def tfidf_lr(C, tol=1e-4):
    """TF-IDF (sublinear term frequency) of word 1-2-grams and of character 2-5-grams inside word
    boundaries, each row scaled to length 1 per part, then a logistic regression with penalty ``C``."""
    features = make_union(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
                          TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True))
    return make_pipeline(features, _logistic(C, tol))


def probe_lr(embedding: dict):
    """The linear probe: a logistic regression on the MiniLM embedding of each headline (``embedding`` maps a
    headline to its 384 numbers)."""
    def make(C, tol=1e-4):
        lookup = FunctionTransformer(lambda texts: np.stack([embedding[t] for t in texts]))
        return make_pipeline(lookup, _logistic(C, tol))
    return make


MODELS = {"bag of words + LR": (word_counts_lr, C_GRID), "bag of words + CNB": (word_counts_nb, ALPHA_GRID),
          "TF-IDF words and characters + LR": (tfidf_lr, C_GRID), "MiniLM probe": (None, C_GRID)}


def split_sets(data: Articles, seed: int) -> dict:
    """Split ``seed``'s headlines and topics (labels 0-4): ``"test"`` (60 per topic), ``"300"`` (60 others per
    topic) and ``"all"`` (the first article of every story outside the test split, about six times as many).
    No story (:func:`course_lib.capstone.article_groups`) stands on both sides."""
    train, test = balanced_split(data, PER_TOPIC, PER_TOPIC, seed=seed)
    groups = article_groups(data)
    held_out = {groups[i] for i in test}
    every = [i for i, g in enumerate(groups) if g == i and g not in held_out]
    def part(index):
        return np.array([data.headline[i] for i in index], dtype=object), np.array(
            [TOPICS.index(data.topic[i]) for i in index])
    return {"test": part(test), "300": part(train), "all": part(every)}


def score_split(data: Articles, embedding: dict, seed: int, sizes=("300", "all"), models=tuple(MODELS)) -> dict:
    """For each size and model: the setting 3-fold cross-validation picks on the training headlines, then the
    model refitted with it (to a tight tolerance) and its predictions: ``predicted`` is one digit per test
    headline, the index of its topic in :data:`~course_lib.capstone.TOPICS`, in the split's order; ``"truth"``
    holds the true topics the same way."""
    sets = split_sets(data, seed)
    x_test, y_test = sets["test"]
    out = {"n": {size: len(sets[size][1]) for size in sizes}, "truth": "".join(str(k) for k in y_test)}
    for size in sizes:
        x, y = sets[size]
        out[size] = {}
        for name in models:
            make, grid = MODELS[name]
            make = probe_lr(embedding) if make is None else make
            best, _ = cross_validate(lambda a, b, v, make=make: make(v).fit(a, b), grid, x, y, folds=3)
            model = make(best, tol=1e-10).fit(x, y)
            predicted = "".join(str(k) for k in model.predict(x_test))
            out[size][name] = {"setting": best, "predicted": predicted}
    return out


def paired_bootstrap(right_a, right_b, resamples: int = 10_000, seed: int = 0, level: float = 0.95):
    """The difference in accuracy of model a over model b on the same test items, in points (100 = every item),
    and its ``level`` interval from ``resamples`` paired bootstrap draws of the items: ``(mean, low, high)``.
    ``right_a``, ``right_b``: one bool (or 0/1) per item, in the same order."""
    check_int("resamples", resamples, low=1)
    a, b = np.asarray(right_a, dtype=np.float64), np.asarray(right_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise CourseValueError(f"right_a, right_b: expected two 1-D arrays of the same length, got shapes "
                               f"{a.shape} and {b.shape}")
    d = (a - b) * 100                                                       # (items,): points per item
    rng = np.random.default_rng(seed)
    draws = d[rng.integers(0, len(d), size=(resamples, len(d)))].mean(axis=1)    # (resamples,)
    low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return float(d.mean()), float(low), float(high)


def right(predicted: str, truth: str) -> np.ndarray:
    """Which test headlines a stored run gets right: a bool per headline, from two strings of topic digits."""
    return np.array([p == t for p, t in zip(predicted, truth, strict=True)])


def _runs_dir():
    return resources.files("course_lib") / "runs"


def stored_comparison() -> dict:
    """The runs of ``python -m course_lib.topic_runs`` shipped with course_lib (see the module doc)."""
    return json.loads((_runs_dir() / RUNS_FILE).read_text(encoding="utf-8"))


def main(argv=None) -> None:
    import argparse

    import torch

    from .capstone import load_articles, sentence_features
    from .pretrained import load_minilm

    parser = argparse.ArgumentParser(description="Re-make lecture 08's comparison on many splits.")
    parser.add_argument("--seeds", default="0,1,2,3,4,5,6,7,8,9", help="split seeds, comma-separated")
    parser.add_argument("--out", type=Path, help="a JSON file, written after every split; the splits it already "
                        "holds are kept (default: print only)")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    data = load_articles()
    groups = article_groups(data)
    minilm, tokenizer = load_minilm()
    headlines = sorted({data.headline[i] for i, g in enumerate(groups) if g == i})
    vectors = sentence_features(minilm, tokenizer, headlines).double().numpy()       # (headlines, 384)
    embedding = dict(zip(headlines, vectors))
    runs = json.loads(args.out.read_text(encoding="utf-8")) if args.out is not None and args.out.exists() else {}
    for seed in (int(s) for s in args.seeds.split(",")):
        if str(seed) in runs:                                               # kept from an interrupted run
            continue
        runs[str(seed)] = score_split(data, embedding, seed)
        if args.out is not None:                                            # after every split
            args.out.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
        truth = runs[str(seed)]["truth"]
        print(seed, {size: {name: (r["setting"], int(right(r["predicted"], truth).sum()))
                            for name, r in runs[str(seed)][size].items()} for size in ("300", "all")}, flush=True)


if __name__ == "__main__":
    main()
