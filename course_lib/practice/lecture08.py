"""Checks for the practice exercises of lecture 08 (the encoder at work)."""

from __future__ import annotations

import numpy as np

from . import attempt, check, choice, failed, passed, todo, unanswered

__all__ = ["check_word_order", "check_train_probe", "check_cross_validate", "check_paired_bootstrap",
           "check_unpaired_interval", "check_rows_past_training", "check_label_curve",
           "bootstrap_intervals"]


@check
def check_word_order(same_for_baseline, same_for_probe, baseline_probabilities, probe_probabilities,
                sentences) -> bool:
    """Predict: do the two models give the same probabilities to two sentences with the same words?"""
    where = "what does each model keep of a sentence?"
    if unanswered(same_for_baseline) or unanswered(same_for_probe):
        return todo("not done yet: set both predictions to True or False", where)
    if not isinstance(same_for_baseline, bool) or not isinstance(same_for_probe, bool):
        return failed("each prediction should be True or False", where)
    base = np.asarray(baseline_probabilities(sentences), dtype=np.float64)   # (2, topics)
    probe = np.asarray(probe_probabilities(sentences), dtype=np.float64)
    truth_base, truth_probe = bool(np.array_equal(base[0], base[1])), bool(np.array_equal(probe[0], probe[1]))
    gap_base, gap_probe = np.abs(base[0] - base[1]).max(), np.abs(probe[0] - probe[1]).max()
    if same_for_baseline != truth_base:
        return failed("the baseline gives " + ("exactly the same probabilities to both" if truth_base else
                                               f"probabilities up to {gap_base:.3f} apart"),
                      "a bag of words counts words and forgets their order")
    if same_for_probe != truth_probe:
        return failed("the probe gives " + ("exactly the same probabilities to both" if truth_probe else
                                            f"probabilities up to {gap_probe:.3f} apart"),
                      "the encoder adds a position to every token before attention")
    return passed(f"the baseline's probabilities are equal, the probe's up to {gap_probe:.3f} apart: "
                  "the bag of words cannot see the order, the encoder can")


class _Recorder:
    """Stand-in data and model for :func:`check_label_curve`: a row's only feature is its id (training rows
    0 to n - 1, test rows from 1000), so ``fit`` records which rows each model trained on, and a model trained
    on ``n`` rows answers the first ``n // 2`` test rows right: its accuracy follows from its size alone."""

    TEST = 1000

    def __init__(self, topics: int = 3, per: int = 8, tests: int = 12, seed: int = 7):
        rng = np.random.default_rng(seed)
        self.train_y = rng.permutation(np.repeat(np.arange(topics), per))    # shuffled, each topic `per` times
        self.train_x = np.arange(len(self.train_y), dtype=np.float64)[:, None]
        self.test_y = np.arange(tests) % topics
        self.test_x = (self.TEST + np.arange(tests, dtype=np.float64))[:, None]
        self.fits: list[tuple[np.ndarray, np.ndarray]] = []
        self.scored_training_rows = False

    def fit(self, x, y):
        ids = np.asarray(x, dtype=np.float64)[:, 0].astype(int)
        self.fits.append((ids, np.asarray(y)))
        recorder = self

        class Model:
            def predict(self, rows):
                ids_asked = np.asarray(rows, dtype=np.float64)[:, 0].astype(int)
                if (ids_asked < recorder.TEST).any():
                    recorder.scored_training_rows = True
                right = (ids_asked - recorder.TEST) < len(ids) // 2
                truth = recorder.test_y[np.clip(ids_asked - recorder.TEST, 0, len(recorder.test_y) - 1)]
                return np.where(right, truth, (truth + 1) % 3)
        return Model()

    def accuracy(self, n: int) -> float:
        return min(n // 2, len(self.test_y)) / len(self.test_y)


@check
def check_label_curve(label_curve) -> bool:
    """Write: ``label_curve(fit, train_x, train_y, test_x, test_y, per_topic, seeds)``, the test accuracy of a
    model trained on ``m`` headlines of every topic, drawn without replacement, for each ``m`` and seed."""
    where = "for each seed and m: m rows of every topic, drawn without replacement; fit; accuracy on the test rows"
    data = _Recorder()
    per_topic, seeds = (1, 2, 4), (0, 1, 2)
    topics = len(np.unique(data.train_y))
    ok, got = attempt(label_curve, data.fit, data.train_x, data.train_y, data.test_x, data.test_y, per_topic, seeds,
                      where=where)
    if not ok:
        return False
    got = np.asarray(got, dtype=np.float64)
    if got.shape != (len(per_topic), len(seeds)):
        return failed(f"expected one accuracy per size and seed, shape {(len(per_topic), len(seeds))}, got {got.shape}",
                      "rows: sizes, columns: seeds")
    if len(data.fits) != len(per_topic) * len(seeds):
        return failed(f"fit was called {len(data.fits)} times, not once per size and seed "
                      f"({len(per_topic) * len(seeds)})", where)
    for ids, labels in data.fits:
        if len(set(ids.tolist())) < len(ids):
            return failed("a draw holds the same headline twice: rows drawn with replacement", "replace=False")
        if not np.array_equal(labels, data.train_y[ids]):
            return failed("the labels given to fit are not those of the rows drawn", "index features and labels alike")
        counts = np.bincount(data.train_y[ids], minlength=topics)
        if len(ids) in per_topic and len(ids) not in [m * topics for m in per_topic]:
            return failed(f"a draw of {len(ids)} rows in all: m is the number per topic, not in all",
                          "m rows of every topic")
        if counts.min() != counts.max():
            return failed(f"a draw of {len(ids)} rows holds the topics {counts.tolist()} times: not the same number "
                          "of each topic", "m rows of every topic")
    sizes = {}
    for ids, _ in data.fits:
        sizes.setdefault(len(ids), []).append(tuple(sorted(ids.tolist())))
    if any(len(draws) > 1 and len(set(draws)) == 1 for draws in sizes.values()):
        return failed("every seed draws the same headlines, so the spread over seeds is 0",
                      "a generator made from each seed")
    if data.scored_training_rows:
        return failed("the models were scored on training rows; the curve is the accuracy on the test rows",
                      "predict on test_x")
    want = np.array([[data.accuracy(m * topics)] * len(seeds) for m in per_topic])
    if np.allclose(got, want):
        return passed(f"{len(data.fits)} draws of m rows of every topic, without replacement, each seed its own, "
                      "scored on the test rows")
    if np.allclose(got, want * len(data.test_y)):
        return failed("these are counts of right answers, not a fraction of the test rows", "accuracy = right / rows")
    if np.allclose(got, want.T):
        return failed("rows and columns are swapped: one row per size, one column per seed", "rows: sizes")
    return failed("the draws are right but the accuracies are not", "accuracy = the mean of predict(test_x) == test_y")


def _softmax(score, axis):
    e = np.exp(score - score.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _train_probe(features, labels, steps, lr, average=True, bias=True, axis=1, sign=1.0):
    """The reference: full-batch gradient descent on the mean cross-entropy of softmax(e W + b), from zeros;
    the keyword arguments make the usual mistakes, for the check to recognise."""
    n, topics = len(labels), int(labels.max()) + 1
    w, b = np.zeros((features.shape[1], topics)), np.zeros(topics)
    onehot = np.eye(topics)[labels]                                        # (n, topics)
    for _ in range(steps):
        p = _softmax(features @ w + b, axis=axis)                          # (n, topics)
        grad = (p - onehot) / (n if average else 1)                        # d loss / d scores
        w = w - sign * lr * features.T @ grad
        if bias:
            b = b - sign * lr * grad.sum(axis=0)
    return w, b


@check
def check_train_probe(train_probe, features, labels, steps: int = 100, lr: float = 2.0) -> bool:
    """Write: the probe fitted by gradient descent on the mean cross-entropy, from zeros."""
    where = "from W = 0 and b = 0, each step: the softmax of every row, (P - Y) / n, then W and b move against it"
    features, labels = np.asarray(features, dtype=np.float64), np.asarray(labels)
    ok, got = attempt(train_probe, features.copy(), labels.copy(), steps, lr, where=where)
    if not ok:
        return False
    if not isinstance(got, tuple) or len(got) != 2:
        return failed(f"expected a pair (W, b), got {type(got).__name__}", where)
    w, b = (np.asarray(x, dtype=np.float64) for x in got)
    w_ref, b_ref = _train_probe(features, labels, steps, lr)
    if w.shape != w_ref.shape or b.shape != b_ref.shape:
        return failed(f"expected W of shape {w_ref.shape} and b of shape {b_ref.shape}, got {w.shape} and {b.shape}",
                      "one weight per feature and topic, one bias per topic")
    def close(ref):
        return np.allclose(w, ref[0], atol=1e-8) and np.allclose(b, ref[1], atol=1e-8)

    if close((w_ref, b_ref)):
        right = int(((features @ w + b).argmax(axis=1) == labels).sum())
        return passed(f"your W and b equal the reference's after {steps} steps; they get {right} of the "
                      f"{len(labels)} training headlines right")
    with np.errstate(all="ignore"):
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            return failed("W or b holds NaN or inf: the steps are far too large",
                          "is the gradient averaged over the rows?")
        if np.allclose(b, 0) and close(_train_probe(features, labels, steps, lr, bias=False)):
            return failed("b never moves", "the bias gets a gradient too: the sum of (P - Y) over the rows")
        if close(_train_probe(features, labels, steps, lr, average=False)):
            return failed("the gradient is summed over the headlines, not averaged", "the loss is a mean over the rows")
        if close(_train_probe(features, labels, steps, lr, axis=0)):
            return failed("the softmax runs down the columns", "each ROW (one headline) is a distribution over topics")
        if close(_train_probe(features, labels, steps, lr, sign=-1.0)):
            return failed("the steps go up the loss, not down", "move W and b against the gradient")
    return failed("W and b differ from the reference's", where)


def _cross_validate(fit, grid, features, labels, folds, kind="right"):
    """The reference (``kind="right"``) and the usual mistakes, for the check to recognise: ``"contiguous"``
    folds (blocks of rows), ``"swapped"`` (trained on fold k, counted on the others), ``"leaky"`` (trained on
    every row), ``"one fold"`` (fold 0 counted only), ``"mean"`` (the folds' counts averaged)."""
    n = len(labels)
    fold = np.arange(n) * folds // n if kind == "contiguous" else np.arange(n) % folds
    right = []
    for value in grid:
        counts = []
        for k in range(1 if kind == "one fold" else folds):
            held = fold == k
            trained = {"swapped": held, "leaky": np.ones(n, dtype=bool)}.get(kind, ~held)
            scored = ~held if kind == "swapped" else held
            model = fit(features[trained], labels[trained], value)
            counts.append(int((model.predict(features[scored]) == labels[scored]).sum()))
        right.append(sum(counts) / folds if kind == "mean" else sum(counts))
    return right


_CV_MISTAKES = {
    "leaky": ("the held-out rows were in the training data: every count is too high",
              "train on the rows NOT in fold k"),
    "swapped": ("trained on fold k and counted on the other folds: the roles are swapped",
                "train on the rows NOT in fold k, count on fold k"),
    "contiguous": ("your folds are contiguous blocks: the rows come sorted by topic, so a block holds out whole "
                   "topics the model never trained on", "fold k holds the rows i with i % folds == k"),
    "one fold": ("only one fold is counted: every row must be held out once", "sum the counts over all the folds"),
    "mean": ("the counts are averaged over the folds, not summed", "sum the counts over all the folds"),
}


@check
def check_cross_validate(my_cross_validate, fit, grid, features, labels, folds: int = 3) -> bool:
    """Write: k-fold cross-validation that chooses one value of ``grid`` on the training data alone."""
    where = "fold k holds the rows i with i % folds == k; train on the others, count the right answers on fold k"
    ok, got = attempt(my_cross_validate, fit, grid, features, labels, folds, where=where)
    if not ok:
        return False
    if not isinstance(got, tuple) or len(got) != 2:
        return failed(f"expected a pair (best, right), got {type(got).__name__}", where)
    best, right = got
    right_ref = _cross_validate(fit, grid, features, labels, folds)
    best_ref = grid[int(np.argmax(right_ref))]
    right = [float(r) for r in right] if isinstance(right, list | tuple | np.ndarray) else right
    if not isinstance(right, list) or len(right) != len(grid):
        return failed(f"right: expected one count per value of the grid ({len(grid)}), got {right!r}", where)
    if right == right_ref and best == best_ref:
        return passed(f"your counts {[int(r) for r in right]} (of {len(labels)} held-out rows) and your choice "
                      f"{best!r} equal the reference's")
    if right == right_ref:
        return failed(f"the right counts, but best = {best!r}", "the value with the MOST held-out right answers")
    for kind, (what, look) in _CV_MISTAKES.items():
        if np.allclose(right, _cross_validate(fit, grid, features, labels, folds, kind)):
            return failed(what, look)
    return failed(f"your counts {right} differ from the reference's {right_ref}", where)


def _bootstrap(right_a, right_b, resamples, seed, kind="paired", level=0.95):
    """The reference draws of :func:`course_lib.topic_runs.paired_bootstrap` and the usual mistakes:
    ``"unpaired"`` (a's and b's items drawn separately)."""
    a, b = np.asarray(right_a, dtype=np.float64), np.asarray(right_b, dtype=np.float64)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(a), size=(resamples, len(a)))
    other = rng.integers(0, len(a), size=(resamples, len(a))) if kind == "unpaired" else pick
    draws = (a[pick].mean(axis=1) - b[other].mean(axis=1)) * 100               # (resamples,): points
    return draws


@check
def check_paired_bootstrap(my_paired_bootstrap, right_a, right_b, resamples: int = 10_000) -> bool:
    """Write: the paired difference of two models' accuracies on the same items, in points, with a 95 %
    bootstrap interval (the tolerance covers another order of random draws)."""
    from ..topic_runs import paired_bootstrap

    where = ("the difference per headline, then resample the headlines with replacement, the same ones for both "
             "models; the 2.5 % and 97.5 % quantiles of the resampled means")
    a, b = np.asarray(right_a, dtype=bool), np.asarray(right_b, dtype=bool)
    ok, got = attempt(my_paired_bootstrap, a.copy(), b.copy(), resamples, 0, where=where)
    if not ok:
        return False
    try:
        mean, low, high = (float(x) for x in got)
    except (TypeError, ValueError):
        return failed(f"expected three numbers (mean, low, high), got {got!r}", where)
    ref_mean, ref_low, ref_high = paired_bootstrap(a, b, resamples=resamples)
    width, ref_width = high - low, ref_high - ref_low
    if abs(mean - ref_mean / 100) < 1e-9 and ref_mean != 0:
        return failed(f"mean {mean:.4f} is a fraction, not points of accuracy", "100 points = every headline")
    if abs(mean + ref_mean) < 1e-9 and ref_mean != 0:
        return failed(f"mean {mean:+.2f}: the sign is reversed, b minus a", "model a minus model b")
    if abs(mean - ref_mean) > 1e-9:
        return failed(f"mean {mean:+.2f} points, expected {ref_mean:+.2f}", "the mean of the per-headline differences")
    if not low <= mean <= high:
        return failed(f"the interval [{low:.2f}, {high:.2f}] does not hold the mean {mean:+.2f}",
                      "quantiles of the resampled means")
    ok, same = attempt(my_paired_bootstrap, a.copy(), a.copy(), resamples, 0, where=where)   # b = a: paired, width 0
    if not ok:
        return False
    same_width = float(same[2]) - float(same[1])
    if same_width > 1e-9:
        return failed(f"unpaired: two models right on the very same headlines get an interval {same_width:.1f} points "
                      "wide, not 0; a and b resampled separately lose what they share",
                      "draw the same headlines for both models")
    tol = 0.1 * ref_width + 0.2
    if abs(low - ref_low) <= tol and abs(high - ref_high) <= tol:
        return passed(f"{mean:+.1f} points, 95 % interval [{low:+.1f}, {high:+.1f}] (reference "
                      f"[{ref_low:+.1f}, {ref_high:+.1f}]): the interval is {'above' if low > 0 else 'not above'} 0")
    unpaired = _bootstrap(a, b, resamples, 0, "unpaired")
    unpaired_width = np.subtract(*np.quantile(unpaired, [0.975, 0.025]))
    if width > ref_width * 1.15 and abs(width - unpaired_width) < 0.15 * unpaired_width:
        return failed(f"interval {width:.1f} points wide, unpaired: a and b resampled separately lose what they "
                      f"share (the paired one is {ref_width:.1f})", "draw the same headlines for both models")
    draws = _bootstrap(a, b, resamples, 0)
    if abs(width - 2 * draws.std()) < 0.15 * width:
        return failed(f"interval {width:.1f} points wide: mean ± one standard deviation covers about 68 %, not 95 %",
                      "the 2.5 % and 97.5 % quantiles")
    if width < ref_width * 0.9:
        return failed(f"interval {width:.1f} points wide, too narrow for 95 % (about {ref_width:.1f})",
                      "the 2.5 % and 97.5 % quantiles of the resampled means")
    if width > ref_width * 5:
        return failed(f"interval {width:.1f} points wide: quantiles of single headlines (each -100, 0 or +100), "
                      "not of resampled means", where)
    return failed(f"interval [{low:.2f}, {high:.2f}], expected about [{ref_low:.2f}, {ref_high:.2f}]", where)


def bootstrap_intervals(right_a, right_b, resamples: int = 10_000, seed: int = 0) -> dict:
    """The 95 % bootstrap interval of a's accuracy minus b's, in points, two ways: ``"paired"`` (the same items
    for both models in every draw, :func:`course_lib.topic_runs.paired_bootstrap`) and ``"unpaired"`` (each
    model's items drawn separately). Returns ``{"paired": (low, high), "unpaired": (low, high)}``."""
    from ..topic_runs import paired_bootstrap

    _, low, high = paired_bootstrap(right_a, right_b, resamples=resamples, seed=seed)
    unpaired = np.quantile(_bootstrap(right_a, right_b, resamples, seed, "unpaired"), [0.025, 0.975])
    return {"paired": (low, high), "unpaired": (float(unpaired[0]), float(unpaired[1]))}


@check
def check_unpaired_interval(prediction, right_a, right_b) -> bool:
    """Predict (section 6): drawn unpaired (each model's headlines separately), is the 95 % interval of the
    difference wider, narrower, the same, or moved? Decided on the two models' own answers."""
    paired, unpaired = (high - low for low, high in bootstrap_intervals(right_a, right_b).values())
    a, b = np.asarray(right_a, dtype=np.float64), np.asarray(right_b, dtype=np.float64)
    share = float((a == b).mean())
    truth = "wider" if unpaired > 1.02 * paired else "narrower" if unpaired < paired / 1.02 else "the same"
    wrong = {
        "wider": "the two models disagree on most headlines here, so pairing keeps little that they share",
        "narrower": f"the two models give the same verdict on {share:.0%} of the headlines: their answers are "
                    "correlated, and a draw that keeps a headline's two answers together cancels what they share",
        "the same": "the spread of a difference is Var a + Var b - 2 Cov(a, b); unpaired draws lose the covariance "
                    "term, so the width changes, not only the bookkeeping",
        "moved": "both ways of drawing centre on the same observed difference (a's accuracy minus b's); only the "
                 "spread of the draws changes",
    }
    wrong.pop(truth)
    return choice(prediction, truth, wrong,
                  f"unpaired, the interval is {unpaired:.1f} points wide, paired {paired:.1f}: the two models give "
                  f"the same verdict on {share:.0%} of the headlines, and only paired draws let that shared part "
                  "cancel", where="section 6's paired bootstrap", name="prediction")


@check
def check_rows_past_training(answer) -> bool:
    """Retrieval (lecture 05): a learned position table read past the longest training sentence."""
    return choice(answer, "a", {
        "b": "a learned table is not a formula: no rotation links its rows, each row is its own trained vector",
        "c": "nothing ties a row to its neighbours: row t gets a gradient only from tokens at position t, and no "
             "training sentence reached these positions",
    }, "rows no training sentence reached never received a gradient: they are as they started, and mean nothing "
       "to the layers above (a formula, sinusoids or RoPE, goes on past the training length)",
       where="lecture 05, section 5")
