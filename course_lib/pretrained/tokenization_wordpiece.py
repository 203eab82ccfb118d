"""The WordPiece tokenizer of all-MiniLM-L6-v2: text to padded ids and masks, by Hugging Face ``tokenizers``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from ..errors import CourseValueError, check_int, check_str_list
from ..masks import key_padding_to_hf, padding_mask_from_lengths


class WordPieceTokenizer:
    """The packaged WordPiece tokenizer (``tokenizer.json``, run by Hugging Face ``tokenizers``).

    ``tokenizer(sentences)`` lowercases, splits into word pieces (``"didn't"`` ->
    ``didn ' t``), adds ``[CLS]`` ... ``[SEP]``, truncates to ``max_length`` and pads the batch
    to its longest sentence with ``[PAD]`` (id 0). It returns a dict:

    - ``input_ids``: LongTensor ``(B, T)``
    - ``key_padding_mask``: BoolTensor ``(B, T)``, True = padding (torch's convention)
    - ``attention_mask``: LongTensor ``(B, T)``, 1 = keep, 0 = padding (Hugging Face's)
    - ``token_type_ids``: LongTensor ``(B, T)``, all 0 (one segment)
    - ``tokens``: per sentence, the list of its word pieces without padding (plot labels)
    - ``lengths``: LongTensor ``(B,)``, real tokens per sentence
    """

    def __init__(self, tokenizer_file: str | Path, max_length: int = 512):
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(tokenizer_file))
        self._tok.no_padding()  # the file pads to a fixed 128; we pad per batch below
        self._tok.no_truncation()
        self.max_length = max_length
        self.pad_id = self._tok.token_to_id("[PAD]")
        self.vocab_size = self._tok.get_vocab_size()

    def __call__(self, sentences: str | Sequence[str], max_length: int | None = None) -> dict:
        sentences = [sentences] if isinstance(sentences, str) else sentences
        sentences = check_str_list("sentences", sentences, what="a str or a list of str")
        if len(sentences) == 0:
            raise CourseValueError("sentences: expected at least one sentence, got an empty list")
        max_length = self.max_length if max_length is None else max_length
        check_int("max_length", max_length, low=2, what="an int >= 2 (room for [CLS] and [SEP])")
        # truncation keeps room for [CLS] and [SEP], as Hugging Face's tokenizers do
        self._tok.enable_truncation(max_length)
        encodings = self._tok.encode_batch(sentences)
        tokens = [list(enc.tokens) for enc in encodings]
        lengths = torch.tensor([len(enc.ids) for enc in encodings], dtype=torch.long)  # (B,)
        key_padding_mask = padding_mask_from_lengths(lengths)                           # (B, T), True = pad
        input_ids = torch.full(key_padding_mask.shape, self.pad_id, dtype=torch.long)  # (B, T)
        for row, enc in enumerate(encodings):
            input_ids[row, : len(enc.ids)] = torch.tensor(enc.ids, dtype=torch.long)
        return {
            "input_ids": input_ids,
            "key_padding_mask": key_padding_mask,
            "attention_mask": key_padding_to_hf(key_padding_mask),
            "token_type_ids": torch.zeros_like(input_ids),
            "tokens": tokens,
            "lengths": lengths,
        }

    def tokenize(self, sentence: str) -> list[str]:
        """The word pieces of one sentence, with ``[CLS]`` and ``[SEP]``."""
        return self(sentence)["tokens"][0]

    def decode(self, ids) -> str:
        """Text from ids (special tokens dropped, word pieces joined)."""
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        return self._tok.decode(list(ids), skip_special_tokens=True)
