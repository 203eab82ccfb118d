"""Tests of course_lib.tokenizer: tokenize rules, vocabulary order, encode/decode, batching."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.errors import CourseTypeError, CourseValueError
from course_lib.tokenizer import PAD, PAD_ID, UNK, UNK_ID, Vocab, WordTokenizer, detokenize, tokenize

TEXTS = [
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide!",
    "A cat sat on the mat.",
]


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("Hello, World!", ["hello", ",", "world", "!"]),
        ("The animal didn't cross.", ["the", "animal", "didn't", "cross", "."]),
        ("It\u2019s fine", ["it's", "fine"]),
        ("the students' books", ["the", "students", "'", "books"]),
        ("pi is 3.14", ["pi", "is", "3", ".", "14"]),
        ("(a) <PAD> <unk>", ["(", "a", ")", PAD, UNK]),
        ("  \n\t ", []),
        ("snake_case", ["snake", "_", "case"]),
    ],
)
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens


def test_specials_and_constants():
    vocab = Vocab(["the", "cat"])
    assert (PAD, UNK, PAD_ID, UNK_ID) == ("<pad>", "<unk>", 0, 1)
    assert vocab.itos == [PAD, UNK, "the", "cat"]
    assert vocab[PAD] == PAD_ID and vocab[UNK] == UNK_ID
    assert vocab["dog"] == UNK_ID and "dog" not in vocab and "cat" in vocab
    assert len(vocab) == 4 and vocab.lookup_token(3) == "cat"


def test_build_order_frequency_then_alphabetical():
    vocab = Vocab.build(["b a c b", "a b d"])
    # b x3, a x2, then c, d (x1) alphabetically
    assert vocab.itos == [PAD, UNK, "b", "a", "c", "d"]
    assert Vocab.build(["a b d", "b a c b"]).itos == vocab.itos  # order of texts does not matter


@pytest.mark.parametrize("min_freq, max_size, expected", [(2, None, ["b", "a"]), (1, 4, ["b", "a"]), (1, 2, [])])
def test_build_min_freq_max_size(min_freq, max_size, expected):
    vocab = Vocab.build(["b a c b", "a b d"], min_freq=min_freq, max_size=max_size)
    assert vocab.itos == [PAD, UNK, *expected]


def test_encode_decode():
    tok = WordTokenizer.from_texts(TEXTS)
    ids = tok.encode("The zebra didn't cross the street.")
    assert ids[1] == UNK_ID and tok.vocab.lookup_token(ids[2]) == "didn't"
    assert tok.decode(ids) == "the <unk> didn't cross the street."
    assert tok.decode(torch.tensor([PAD_ID, *ids, PAD_ID])) == tok.decode(ids)
    assert tok.decode([PAD_ID, ids[0]], skip_pad=False) == "<pad> the"
    assert tok.tokenize("Zebra!") == ["zebra", "!"]
    assert len(tok) == len(tok.vocab)


def test_batch():
    tok = WordTokenizer.from_texts(TEXTS)
    out = tok.batch(["a cat sat", "the mat", ""])
    assert set(out) == {"input_ids", "key_padding_mask", "lengths", "tokens"}
    assert out["input_ids"].dtype == torch.long and out["input_ids"].shape == (3, 3)
    assert out["key_padding_mask"].dtype == torch.bool
    assert out["lengths"].tolist() == [3, 2, 0]
    assert out["key_padding_mask"].tolist() == [[False] * 3, [False, False, True], [True] * 3]
    assert (out["input_ids"][out["key_padding_mask"]] == PAD_ID).all()
    assert out["tokens"] == [["a", "cat", "sat"], ["the", "mat", PAD], [PAD] * 3]
    assert tok(["a cat sat"])["input_ids"].tolist() == tok.batch(["a cat sat"])["input_ids"].tolist()


@pytest.mark.parametrize("max_len, pad_to, T, lengths", [(2, None, 2, [2, 2]), (None, 6, 6, [3, 2]), (1, 4, 4, [1, 1])])
def test_batch_truncation_and_pad_to(max_len, pad_to, T, lengths):
    tok = WordTokenizer.from_texts(TEXTS)
    out = tok.batch(["a cat sat", "zebra mat"], max_len=max_len, pad_to=pad_to)
    assert out["input_ids"].shape == (2, T) and out["lengths"].tolist() == lengths
    assert out["tokens"][1][: lengths[1]] == [UNK, "mat"][: lengths[1]]
    assert (~out["key_padding_mask"]).sum(1).tolist() == lengths


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda t: t.batch("a cat"), CourseTypeError, r"texts: expected a list of str, got a single str"),
        (lambda t: t.batch([]), CourseValueError, r"texts: expected at least one text"),
        (lambda t: t.batch(["a", 3]), CourseTypeError, r"texts\[1\]: expected a str, got int"),
        (lambda t: t.batch(["a"], max_len=0), CourseValueError, r"max_len: expected a positive int or None, got 0"),
        (lambda t: t.batch(["a"], max_len=2.0), CourseTypeError,
         r"max_len: expected a positive int or None, got float 2.0"),
        (lambda t: t.batch(["a cat sat"], pad_to=2), CourseValueError, r"pad_to: expected at least .* 3 tokens, got 2"),
        (lambda t: t.encode(None), CourseTypeError, r"text: expected a str, got NoneType"),
        (lambda t: t.decode([0, 99]), CourseValueError, r"index: expected a token id in \[0, \d+\), got 99"),
        (lambda t: t.decode(torch.zeros(2, 2, dtype=torch.long)), CourseValueError, r"ids: expected a 1-D integer"),
        (lambda t: t.decode(torch.zeros(2)), CourseValueError,
         r"ids: expected a 1-D integer tensor, got torch.float32"),
        (lambda t: Vocab.build(["a"], min_freq=0), CourseValueError, r"min_freq: expected a positive int, got 0"),
        (lambda t: Vocab.build(["a"], max_size=1), CourseValueError, r"max_size: expected an int >= 2 or None, got 1"),
        (lambda t: Vocab(["a", "a"]), CourseValueError, r"tokens: expected distinct tokens, got 'a' twice"),
        (lambda t: Vocab([1]), CourseTypeError, r"tokens\[0\]: expected a str, got int"),
        (lambda t: WordTokenizer(["a"]), CourseTypeError, r"vocab: expected a Vocab, got list"),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(WordTokenizer.from_texts(TEXTS))


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=60))
def test_detokenize_round_trip_any_text(text):
    tokens = tokenize(text)
    assert tokenize(detokenize(tokens)) == tokens


_WORDS = st.lists(
    st.one_of(st.from_regex(r"[a-z]{1,6}('[a-z]{1,2})?", fullmatch=True), st.sampled_from(list(".,!?;:()'\"-"))),
    max_size=20,
)


@settings(max_examples=50, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=4), st.lists(st.integers(1, 40), max_size=15))
def test_encode_decode_round_trip(word_lists, raw_ids):
    texts = [" ".join(words) for words in word_lists]
    tok = WordTokenizer.from_texts(texts)
    for text in texts:  # every word is known, so decoding gives the text back up to spacing
        assert tokenize(tok.decode(tok.encode(text))) == tokenize(text)
    ids = [i % len(tok) for i in raw_ids if i % len(tok) != PAD_ID]  # any ids, "<unk>" included
    assert tok.encode(tok.decode(ids)) == ids
