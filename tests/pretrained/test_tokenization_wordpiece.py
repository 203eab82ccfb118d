"""course_lib.pretrained.tokenization_wordpiece: the same ids, masks and word pieces as transformers' tokenizer."""

import pytest
import torch

from course_lib import CourseTypeError, CourseValueError


def test_tokenizer_matches_reference(batch, hf, sentences):
    ref = hf[0](sentences, padding=True, return_tensors="pt")
    assert batch["input_ids"].dtype == torch.long
    assert batch["key_padding_mask"].dtype == torch.bool
    assert torch.equal(batch["input_ids"], ref["input_ids"])
    assert torch.equal(batch["key_padding_mask"], ref["attention_mask"] == 0)   # True = padding
    assert torch.equal(batch["attention_mask"], ref["attention_mask"])
    assert torch.equal(batch["token_type_ids"], ref["token_type_ids"])
    for tokens, ids, n in zip(batch["tokens"], ref["input_ids"], batch["lengths"]):
        assert tokens == hf[0].convert_ids_to_tokens(ids[:n].tolist())
    assert batch["tokens"][0][:4] == ["[CLS]", "the", "animal", "didn"]


def test_truncation_matches_reference(minilm, hf, sentences):
    ours = minilm[1](sentences, max_length=8)
    ref = hf[0](sentences, padding=True, truncation=True, max_length=8, return_tensors="pt")
    assert torch.equal(ours["input_ids"], ref["input_ids"])
    assert ours["tokens"][0][-1] == "[SEP]"


@pytest.mark.parametrize("call,error,match", [
    (lambda t: t(42), CourseTypeError, r"^sentences: expected a str or a list of str, got int"),
    (lambda t: t(["hello", 3]), CourseTypeError, r"^sentences\[1\]: expected a str, got int"),
    (lambda t: t([]), CourseValueError, r"^sentences: expected at least one sentence, got an empty list"),
    (lambda t: t("hello", max_length=1), CourseValueError,
     r"^max_length: expected an int >= 2 \(room for \[CLS\] and \[SEP\]\), got 1"),
    (lambda t: t("hello", max_length=2.0), CourseTypeError, r"^max_length: expected an int >= 2 .*got float 2.0"),
])
def test_bad_input_raises(minilm, call, error, match):
    with pytest.raises(error, match=match):
        call(minilm[1])
