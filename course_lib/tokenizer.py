"""A small word-level tokenizer and vocabulary for lecture examples.

Real models use sub-word tokenizers (WordPiece, BPE); this one is deliberately simple so a
lecture can show every step: lowercase, split into words and punctuation, look each token up
in a vocabulary, pad a batch to a rectangle and say where the padding is.

Tokenization rules (:func:`.tokenize`):

* the text is lowercased and the typographic apostrophe ``’`` becomes ``'``;
* a *word* is a run of letters and digits; words joined by apostrophes stay **one token**,
  so ``"didn't"`` -> ``["didn't"]`` and ``"it's"`` -> ``["it's"]`` (a contraction is one
  unit of meaning, and splitting it would make ``"t"`` and ``"s"`` frequent nonsense tokens);
* every other non-space character (punctuation, symbols, ``_``) is a token of its own,
  so ``"students'"`` -> ``["students", "'"]`` and ``"3.14"`` -> ``["3", ".", "14"]``;
* the special tokens ``"<pad>"`` and ``"<unk>"`` written in a text are kept whole, so that
  ``encode(decode(ids)) == ids`` for ids without padding.

Specials: ``"<pad>"`` has id 0 and ``"<unk>"`` id 1 (:data:`.PAD`, :data:`.UNK`,
:data:`.PAD_ID`, :data:`.UNK_ID`). The padding mask follows torch's convention, True = padding
(``nn.MultiheadAttention``'s ``key_padding_mask``); Hugging Face's ``attention_mask`` is the
opposite (1 = keep): convert with ``course_lib.key_padding_to_hf``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

import torch

from .errors import CourseValueError, check_int, check_str_list, check_type, describe

#: the padding token, id 0 in every vocabulary
PAD = "<pad>"
#: the token of every word a vocabulary does not hold, id 1
UNK = "<unk>"
#: the id of :data:`PAD`
PAD_ID = 0
#: the id of :data:`UNK`
UNK_ID = 1
SPECIALS = (PAD, UNK)

_TOKEN_RE = re.compile(r"<pad>|<unk>|[^\W_]+(?:'[^\W_]+)*|\S")
# decode() writes no space before these and none after the openers
_CLOSERS = frozenset(".,!?;:)]}%")
_OPENERS = frozenset("([{")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into lowercase word and punctuation tokens (rules in the module docstring).

    >>> tokenize("The animal didn't cross the street.")
    ['the', 'animal', "didn't", 'cross', 'the', 'street', '.']
    """
    check_type("text", text, str, "a str")
    return _TOKEN_RE.findall(text.lower().replace("\u2019", "'"))


def detokenize(tokens: Iterable[str]) -> str:
    """Join tokens with single spaces, without a space before ``.,!?;:)]}%`` or after ``([{``.

    ``tokenize(detokenize(tokenize(text))) == tokenize(text)`` for every text.
    """
    out: list[str] = []
    for tok in tokens:
        if out and tok not in _CLOSERS and out[-1] not in _OPENERS:
            out.append(" ")
        out.append(tok)
    return "".join(out)


class Vocab:
    """A fixed list of tokens and the id of each: ``"<pad>"`` is 0, ``"<unk>"`` is 1.

    Build one from texts with :meth:`.Vocab.build`, or give the tokens yourself:
    ``Vocab(["the", "cat"])`` has ids ``<pad>=0, <unk>=1, the=2, cat=3``.

    Looking up a token that is not in the vocabulary gives :data:`.UNK_ID`.
    """

    def __init__(self, tokens: Iterable[str]) -> None:
        self.itos: list[str] = list(SPECIALS)
        for i, tok in enumerate(tokens):
            check_type(f"tokens[{i}]", tok, str, "a str")
            if tok in SPECIALS:
                continue
            if tok in self.itos:
                raise CourseValueError(f"tokens: expected distinct tokens, got {tok!r} twice")
            self.itos.append(tok)
        self.stoi: dict[str, int] = {tok: i for i, tok in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Iterable[str], min_freq: int = 1, max_size: int | None = None) -> Vocab:
        """Count the tokens of ``texts`` and keep the frequent ones.

        Order (deterministic): the specials, then by frequency, most frequent first, ties in
        alphabetical order. Tokens seen fewer than ``min_freq`` times are left out;
        ``max_size`` caps the total size, the two specials included.
        """
        texts = check_str_list("texts", texts)
        check_int("min_freq", min_freq, low=1)
        check_int("max_size", max_size, low=len(SPECIALS), optional=True)
        counts = Counter(tok for text in texts for tok in tokenize(text) if tok not in SPECIALS)
        kept = sorted((tok for tok, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
        if max_size is not None:
            kept = kept[: max_size - len(SPECIALS)]
        return cls(kept)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __getitem__(self, token: str) -> int:
        """The id of ``token``, :data:`.UNK_ID` if it is unknown."""
        return self.stoi.get(token, UNK_ID)

    def lookup_token(self, index: int) -> str:
        """The token with id ``index``."""
        check_int("index", index, 0, len(self.itos) - 1, what=f"a token id in [0, {len(self.itos)})")
        return self.itos[index]

    def __repr__(self) -> str:
        head = ", ".join(self.itos[:6])
        return f"Vocab(size={len(self)}: {head}{', ...' if len(self) > 6 else ''})"


class WordTokenizer:
    """Text -> token ids -> padded batch, with a :class:`.Vocab`.

    >>> tok = WordTokenizer.from_texts(["the cat sat.", "the dog ran!"])
    >>> tok.encode("The cat ran.")
    [2, 5, 7, 4]
    >>> tok.decode([2, 5, 7, 4])
    'the cat ran.'

    Calling the tokenizer on a list of texts is :meth:`.WordTokenizer.batch` (as with Hugging Face's).
    """

    pad_id = PAD_ID
    unk_id = UNK_ID

    def __init__(self, vocab: Vocab) -> None:
        check_type("vocab", vocab, Vocab)
        self.vocab = vocab

    @classmethod
    def from_texts(cls, texts: Iterable[str], min_freq: int = 1, max_size: int | None = None) -> WordTokenizer:
        """A tokenizer whose vocabulary is ``Vocab.build(texts, min_freq, max_size)``."""
        return cls(Vocab.build(texts, min_freq=min_freq, max_size=max_size))

    def __len__(self) -> int:
        return len(self.vocab)

    def tokenize(self, text: str) -> list[str]:
        """See :func:`.tokenize` (the vocabulary plays no part: unknown words stay as they are)."""
        return tokenize(text)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; words not in the vocabulary get :data:`.UNK_ID`."""
        return [self.vocab[tok] for tok in tokenize(text)]

    def decode(self, ids, skip_pad: bool = True) -> str:
        """Text of a sequence of ids (a list of ints or a 1-D integer tensor).

        Padding is left out unless ``skip_pad=False``; unknown words come back as ``"<unk>"``.

        Shape:
            ids: ``(T,)``.
        """
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1 or ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
                raise CourseValueError(f"ids: expected a 1-D integer tensor, got {describe(ids)}")
            ids = ids.tolist()
        tokens = [self.vocab.lookup_token(i) for i in ids]
        if skip_pad:
            tokens = [t for t in tokens if t != PAD]
        return detokenize(tokens)

    def batch(self, texts: Sequence[str], max_len: int | None = None, pad_to: int | None = None) -> dict:
        """Encode several texts and pad them to one length ``T``.

        Each text is cut to its first ``max_len`` tokens. ``T`` is the longest (cut) text, or
        ``pad_to`` when given (it must be at least that long: cut with ``max_len``).

        Returns a dict with
            ``input_ids``: LongTensor ``(B, T)``, padding is :data:`.PAD_ID`;
            ``key_padding_mask``: BoolTensor ``(B, T)``, **True = padding** (torch's convention);
            ``lengths``: LongTensor ``(B,)``, the number of real tokens of each text;
            ``tokens``: ``B`` lists of ``T`` strings, the tokens the model sees (unknown words
            as ``"<unk>"``), padded with ``"<pad>"``, for labelling plots.

        Shape:
            texts: ``B`` strings; outputs as listed above.
        """
        texts = check_str_list("texts", texts)
        if not texts:
            raise CourseValueError("texts: expected at least one text, got an empty list")
        check_int("max_len", max_len, low=1, optional=True)
        check_int("pad_to", pad_to, low=0, optional=True)
        rows = [self.encode(t)[:max_len] for t in texts]
        longest = max(len(r) for r in rows)
        if pad_to is not None and pad_to < longest:
            raise CourseValueError(
                f"pad_to: expected at least the longest text's {longest} tokens, got {pad_to} "
                "(use max_len to cut texts)"
            )
        T = longest if pad_to is None else pad_to
        input_ids = torch.full((len(rows), T), PAD_ID, dtype=torch.long)  # (B, T)
        for b, row in enumerate(rows):
            input_ids[b, : len(row)] = torch.tensor(row, dtype=torch.long)
        lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)  # (B,)
        key_padding_mask = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(1)  # (B, T)
        tokens = [[self.vocab.itos[i] for i in row] + [PAD] * (T - len(row)) for row in rows]
        return {
            "input_ids": input_ids,
            "key_padding_mask": key_padding_mask,
            "lengths": lengths,
            "tokens": tokens,
        }

    __call__ = batch

    def __repr__(self) -> str:
        return f"WordTokenizer(vocab_size={len(self)})"
