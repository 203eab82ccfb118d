"""Lecture 09's experiment: the cleaning, the hidden-position score, the baselines, the schedule, and the
stored runs, which must be what the code makes (their first steps are made again here)."""

from __future__ import annotations

import math

import pytest
import torch

from course_lib.mlm_runs import (
    ARMS,
    CONFIG,
    MLMData,
    copy_rule_scores,
    frequency_scores,
    frequent_words,
    hidden_scores,
    hide,
    lr_factor,
    make_mlm,
    mlm_data,
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
    assert s["distinct_bodies"] < s["articles"] and s["train_articles"] + s["test_articles"] == s["distinct_bodies"]
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
    """The first 100 steps of seed 0 of every arm, and of the first arm's three seeds, made again."""
    runs = stored_runs()
    assert runs["config"] == CONFIG and runs["stats"] == data.stats and set(runs["arms"]) == set(ARMS)
    heldout, frequent = hide(data.test), frequent_words(data.train)
    assert runs["baselines"]["word frequencies"] == list(frequency_scores(data.train, heldout[1], len(data.tokenizer),
                                                                          frequent).as_row())
    torch.set_num_threads(1)
    cases = [(arm, "0") for arm in ARMS] + [("pre-LN, warm-up", seed) for seed in ("1", "2")]
    for arm, seed in cases:
        change = ARMS[arm]
        model = make_mlm(len(data.tokenizer), int(seed), **{k: v for k, v in change.items() if k != "warmup"})
        run = train_arm(model, data, int(seed), heldout, frequent, warmup=change.get("warmup"), steps=100)
        assert math.isclose(run["curve"][0], runs["arms"][arm][seed]["curve"][0], abs_tol=1e-6), (arm, seed)


def test_the_stored_model_is_the_first_arms_seed_0_at_its_end(data):
    model = stored_model(len(data.tokenizer))
    heldout, frequent = hide(data.test), frequent_words(data.train)
    loss = hidden_scores(model, *heldout, frequent).loss
    assert loss == pytest.approx(stored_runs()["arms"]["pre-LN, warm-up"]["0"]["scores"][0], abs=1e-9)


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
