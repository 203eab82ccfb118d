"""Lecture 09's experiment: the cleaning, the hidden-position score, the baselines, the schedule, and the
stored runs, which must be what the code makes (their first steps are made again here)."""

from __future__ import annotations

import math

import pytest
import torch

from course_lib.mlm_runs import (
    ARMS,
    CONFIG,
    SEEDS,
    MLMData,
    attention_stats,
    copy_rule_scores,
    frequency_scores,
    frequent_words,
    hidden_scores,
    hide,
    lr_factor,
    make_mlm,
    mlm_data,
    neighbour_counts,
    neighbour_log_probs,
    neighbour_scores,
    paired,
    stored_model,
    stored_runs,
    summary,
    train_arm,
)
from course_lib.tokenizer import PAD_ID, UNK_ID
from course_lib.training import IGNORE, MASK_ID


@pytest.fixture(scope="module")
def data():
    return mlm_data()


def test_the_cleaning_leaves_no_held_out_sentence_in_training(data):
    """No sentence is in both; once cut to 16 tokens a few rows read alike (a short dateline, a name list)."""
    train = {tuple(r) for r in data.train.tolist()}
    same = sum(tuple(r) in train for r in data.test.tolist())                    # alike once cut and <unk>-ed
    assert same / len(data.test) < 0.005
    s = data.stats
    assert s["distinct_stories"] < s["articles"] and s["train_articles"] + s["test_articles"] == s["distinct_stories"]
    assert 0 < s["unk_share_test"] < 0.2


def test_hide_hides_every_picked_word_and_only_known_words():
    tokens = torch.randint(3, 50, (200, 10))
    tokens[:, 7:] = PAD_ID
    tokens[:, 2] = UNK_ID
    inputs, labels = hide(tokens, seed=1)
    picked = labels != IGNORE
    assert picked.any()
    assert (inputs[picked] == MASK_ID).all() and torch.equal(labels[picked], tokens[picked])
    assert torch.equal(inputs[~picked], tokens[~picked])
    assert not picked[:, 2].any() and not picked[:, 7:].any()
    assert abs(picked.sum().item() / (200 * 6) - 0.15) < 0.03


def test_the_baselines_count_by_column_or_over_all():
    train = torch.tensor([[5, 6, 7], [5, 8, 7], [9, 8, 0], [5, 6, 7]])
    labels = torch.tensor([[5, IGNORE, 7], [IGNORE, 6, IGNORE]])
    frequent = torch.tensor([5, 7])
    flat = frequency_scores(train, labels, 10, frequent)
    assert (flat.right, flat.total, flat.rare_right) == (1, 3, 0)                # 5 (tied with 7, lower id) everywhere
    by_position = frequency_scores(train, labels, 10, frequent, by_position=True)
    assert (by_position.right, by_position.rare_right, by_position.rare_total) == (3, 1, 1)   # 5, 6, 7 by column
    assert by_position.loss < flat.loss                                         # the columns tell more


def test_the_copy_rule_is_right_wherever_the_word_is_visible():
    labels = torch.tensor([[4, IGNORE, 6, 7]])
    inputs = torch.tensor([[4, 9, MASK_ID, 8]])                                  # kept, not picked, masked, random
    assert copy_rule_scores(inputs, labels, guess=6) == (2, 3)


def test_lr_factor_ramps_then_decays_the_same_with_or_without_warm_up():
    assert lr_factor(0, 100, 1500) == pytest.approx(0.01)
    assert lr_factor(99, 100, 1500) == pytest.approx(1 - 99 / 1500)
    assert lr_factor(700, 100, 1500) == lr_factor(700, 0, 1500) == pytest.approx(1 - 700 / 1500)
    assert lr_factor(0, 0, 1500) == 1.0 and lr_factor(1499, 0, 1500) == pytest.approx(1 / 1500)
    with pytest.raises(ValueError, match="total"):
        lr_factor(0, 0, 0)


def test_summary_is_the_mean_and_sample_spread_over_seeds():
    runs = {"arms": {"a": {"0": {"scores": [1.0]}, "1": {"scores": [2.0]}, "2": {"scores": [3.0]}}}}
    assert summary(runs, "a") == (2.0, 1.0, 1.0, 3.0)


def test_the_stored_runs_are_what_the_code_makes(data):
    """Every arm has every seed; the baselines are what the code gives; the first block of steps of seed 0 of
    the main arm and of one changed arm, and of the main arm's seed 1, made again."""
    runs = stored_runs()
    assert runs["config"] == CONFIG and runs["stats"] == data.stats and set(runs["arms"]) == set(ARMS)
    assert all(sorted(runs["arms"][arm], key=int) == [str(s) for s in SEEDS] for arm in ARMS)
    inputs, labels = hide(data.test)
    frequent = frequent_words(data.train)
    V = len(data.tokenizer)
    base = runs["baselines"]
    assert base["word frequencies"] == list(frequency_scores(data.train, labels, V, frequent).as_row())
    assert base["neighbour counts"] == list(neighbour_scores(data.train, inputs, labels, V, frequent,
                                                             base["neighbour alpha"]).as_row())
    torch.set_num_threads(1)
    for arm, seed in (("pre-LN, warm-up", "0"), ("no positions", "0"), ("pre-LN, warm-up", "1")):
        change = ARMS[arm]
        model = make_mlm(V, int(seed), **{k: v for k, v in change.items() if k != "warmup"})
        run = train_arm(model, data, int(seed), (inputs, labels), frequent, warmup=change.get("warmup"),
                        steps=CONFIG["eval_every"])
        stored = runs["arms"][arm][seed]
        assert math.isclose(run["curve"][0], stored["curve"][0], abs_tol=1e-4), (arm, seed)
        assert math.isclose(run["train_curve"][0], stored["train_curve"][0], abs_tol=1e-4), (arm, seed)


def test_the_stored_model_is_the_first_arms_seed_0_at_its_end(data):
    model = stored_model(len(data.tokenizer))
    heldout, frequent = hide(data.test), frequent_words(data.train)
    loss = hidden_scores(model, *heldout, frequent).loss
    assert loss == pytest.approx(stored_runs()["arms"]["pre-LN, warm-up"]["0"]["scores"][0], abs=5e-3)


def test_the_neighbour_rule_counts_both_sides_and_skips_a_hidden_neighbour():
    V = 6                                                                        # 3, 4, 5 are words
    train = torch.tensor([[3, 4, 5, PAD_ID], [3, 4, 4, 5], [5, 3, PAD_ID, PAD_ID]])
    left, right = neighbour_counts(train, V)
    assert left[V, 3] == 2 and left[V, 5] == 1 and left[3, 4] == 2 and left[4, 4] == 1 and left.sum() == 9
    assert right[V, 5] == 2 and right[V, 3] == 1 and right[4, 3] == 2 and right.sum() == 9
    assert left[:, :MASK_ID + 1].sum() == 0
    inputs = torch.tensor([[3, MASK_ID, 5, PAD_ID], [3, MASK_ID, MASK_ID, PAD_ID]])
    labels = torch.tensor([[IGNORE, 4, IGNORE, IGNORE], [IGNORE, 4, 4, IGNORE]])
    log_p = neighbour_log_probs(train, inputs, labels, V, alpha=0.5)
    assert log_p.shape == (3, V) and torch.allclose(log_p.exp().sum(1), torch.ones(3, dtype=torch.float64))
    assert (log_p[:, :MASK_ID + 1] == -math.inf).all()
    assert log_p[0].argmax() == 4                                                # 3 _ 5: only 4 ever stands there
    # the third hidden word has a hidden word on its left: only its right neighbour, the edge, tells anything
    unigram = torch.tensor([0, 0, 0, 4.0, 4.0, 4.0])                            # 3 each, add-one
    unigram /= unigram.sum()
    after_edge = (right[V] + 0.5 * unigram) / (right[V].sum() + 0.5)
    assert torch.allclose(log_p[2][MASK_ID + 1:], after_edge[MASK_ID + 1:].log().log_softmax(-1))


def test_paired_differences_give_an_interval_and_a_verdict():
    runs = {"arms": {"a": {str(k): {"scores": [1.0 + 0.1 * k]} for k in range(5)},
                     "b": {str(k): {"scores": [1.2 + 0.1 * k + 0.01 * (-1) ** k]} for k in range(5)},
                     "c": {str(k): {"scores": [1.0 + 0.1 * k + 0.05 * (-1) ** k]} for k in range(5)}}}
    worse = paired(runs, "b", "a")
    assert worse["verdict"] == "worse" and worse["low"] > 0 and worse["mean"] == pytest.approx(0.202)
    unclear = paired(runs, "c", "a")
    assert unclear["verdict"] == "not visible here" and unclear["low"] < 0 < unclear["high"]


def test_attention_stats_average_over_every_hidden_word(data):
    model = make_mlm(len(data.tokenizer), 0)
    inputs, labels = hide(data.test[:64])
    stats = attention_stats(model, inputs, labels)
    L, H = CONFIG["num_layers"], CONFIG["num_heads"]
    assert all(stats[k].shape == (L, H) for k in ("to_left", "left_top", "near_top", "mask_to_masks"))
    assert stats["n_masks"] == int(((labels != IGNORE)[:, 1:]).sum())
    assert ((stats["to_left"] > 0) & (stats["to_left"] < 1)).all()


def test_training_learns_what_only_the_context_tells():
    """A tiny corpus with a rule only the context tells (the word after 3 is always 4): a few hundred steps
    learn it, and the held-out loss at hidden words falls well below the frequencies'."""
    g = torch.Generator().manual_seed(0)
    X = torch.randint(5, 12, (400, 8), generator=g)
    X[:, 2], X[:, 3] = 3, 4
    config = dict(CONFIG, d_model=16, num_heads=2, d_ff=32, num_layers=1, max_len=8, steps=150, batch_size=32,
                  lr=3e-3, warmup=10, mask_p=0.3, eval_every=50)
    data = MLMData(tokenizer=range(12), train=X[:300], test=X[300:])
    heldout, frequent = hide(data.test, p=0.3), frequent_words(data.train, 2)
    run = train_arm(make_mlm(12, 0, config=config), data, 0, heldout, frequent, config)
    base = frequency_scores(data.train, heldout[1], 12, frequent)
    assert run["curve"][0] - run["curve"][-1] > 0.2
    assert run["scores"][0] < base.loss - 0.3 and run["scores"][1] > base.right
