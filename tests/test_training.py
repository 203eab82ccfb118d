"""course_lib.training: BERT's masking, the masked loss, the warm-up, the ablation, the exercise's Encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from course_lib import CourseValueError, Encoder
from course_lib.tokenizer import PAD_ID, UNK_ID
from course_lib.training import (
    IGNORE,
    MASK,
    MASK_ID,
    exercise_encoder,
    mask_tokens,
    masked_lm_loss,
    mlm_vocab,
    without_residuals,
)

EXERCISE = Path(__file__).resolve().parents[1] / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"


def test_mask_tokens_follows_the_80_10_10_rule():
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(3, 1000, (500, 40), generator=g)
    tokens[:, 30:] = PAD_ID
    tokens[:, 0] = UNK_ID
    inputs, labels = mask_tokens(tokens, 1000, torch.Generator().manual_seed(1))
    picked = labels != IGNORE
    real = (tokens != PAD_ID) & (tokens != UNK_ID)
    assert not (picked & ~real).any()                                   # never padding or <unk>
    assert torch.equal(labels[picked], tokens[picked]) and torch.equal(inputs[~picked], tokens[~picked])
    assert abs(picked.sum() / real.sum() - 0.15) < 0.01
    masked = (inputs[picked] == MASK_ID).double().mean()
    kept = (inputs[picked] == tokens[picked]).double().mean()
    assert abs(masked - 0.8) < 0.02 and abs(kept - 0.1) < 0.02 and abs(1 - masked - kept - 0.1) < 0.02
    again = mask_tokens(tokens, 1000, torch.Generator().manual_seed(1))  # seeded
    assert torch.equal(again[0], inputs) and torch.equal(again[1], labels)
    with pytest.raises(CourseValueError, match="p: expected a probability"):
        mask_tokens(tokens, 1000, g, p=1.5)


def test_masked_loss_counts_only_the_picked_positions():
    logits = torch.randn(2, 3, 5, dtype=torch.float64)
    labels = torch.tensor([[IGNORE, 4, IGNORE], [1, IGNORE, IGNORE]])
    expected = -(logits[0, 1].log_softmax(-1)[4] + logits[1, 0].log_softmax(-1)[1]) / 2
    assert torch.allclose(masked_lm_loss(logits, labels), expected)


def test_mlm_vocab_puts_mask_at_its_id():
    tok = mlm_vocab(["the cat sat", "the dog sat", "a bird"], min_freq=2)
    assert tok.vocab.itos[:3] == ["<pad>", "<unk>", MASK] and tok.vocab.stoi[MASK] == MASK_ID
    assert tok.vocab.itos[3:] == ["sat", "the"] and tok.encode("the bird") == [4, UNK_ID]
    small = mlm_vocab(["the cat sat", "the dog sat", "a bird"], min_freq=1, max_size=5)   # specials included
    assert small.vocab.itos == ["<pad>", "<unk>", MASK, "sat", "the"] and len(small) == 5
    with pytest.raises(CourseValueError, match="max_size"):
        mlm_vocab(["the cat"], max_size=3)


def test_without_residuals_changes_the_layers_only():
    torch.manual_seed(0)
    enc = Encoder(20, 8, 2, 16, 2, norm_first=True).eval()
    x = torch.randint(1, 20, (2, 5))
    before = enc(x)
    without_residuals(enc)
    after = enc(x)
    assert not torch.allclose(before, after)
    layer = enc.layers[0]
    h = enc.embed(x)
    a, _ = layer.self_attn(layer.norm1(h), layer.norm1(h), layer.norm1(h))
    assert torch.allclose(layer(h), layer.ffn(layer.norm2(a)))           # no "x +" anywhere


def _notebook(tmp_path, bodies: dict) -> Path:
    """A copy of the exercise notebook whose graded cells get the given sources (part -> source)."""
    nb = json.loads(EXERCISE.read_text())
    for cell in nb["cells"]:
        part = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if part in bodies:
            cell["source"] = bodies[part]
    path = tmp_path / "encoder_from_scratch.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_a_solved_exercise_gives_the_students_encoder(tmp_path):
    cls, message = exercise_encoder(_notebook(tmp_path, {}))        # the source notebook: every part solved
    assert cls is not Encoder and cls.__name__ == "Encoder" and message.startswith("your Encoder")
    torch.manual_seed(0)
    assert cls(10, 8, 2, 16, 1)(torch.randint(1, 10, (1, 4))).shape == (1, 4, 8)


def test_an_unsolved_exercise_falls_back_to_the_reference(tmp_path):
    stub = "class Encoder(nn.Module):\n    def __init__(self, *args, **kwargs):\n        raise NotImplementedError()\n"
    cls, message = exercise_encoder(_notebook(tmp_path, {"encoder": stub}))
    assert cls is Encoder and "NotImplementedError" in message and "reference" in message
    cls, message = exercise_encoder(_notebook(tmp_path, {"attention": "raise NotImplementedError()"}))
    assert cls is Encoder and "'attention' raised NotImplementedError" in message


def test_the_released_exercise_falls_back_to_the_reference(tmp_path):
    """The notebook a student gets before writing anything: nbgrader's own ClearSolutions turns every
    solution into ``raise NotImplementedError()``; 09 then trains the reference and says so."""
    preprocessors = pytest.importorskip("nbgrader.preprocessors")
    import nbformat  # noqa: PLC0415

    released, _ = preprocessors.ClearSolutions().preprocess(nbformat.read(EXERCISE, as_version=4), {})
    path = tmp_path / EXERCISE.name
    nbformat.write(released, path)
    cls, message = exercise_encoder(path)
    assert cls is Encoder and "NotImplementedError" in message
    assert message.endswith("course_lib's reference Encoder is used instead")


def test_a_wrong_encoder_falls_back_to_the_reference(tmp_path):
    wrong = EXERCISE.read_text()                                        # the solution, without the sqrt(d_model)
    nb = json.loads(wrong)
    source = next("".join(c["source"]) for c in nb["cells"]
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "encoder")
    assert "* math.sqrt(self.d_model)" in source
    cls, message = exercise_encoder(_notebook(tmp_path, {"encoder": source.replace("* math.sqrt(self.d_model)", "")}))
    assert cls is Encoder and "differs from the reference" in message
    cls, message = exercise_encoder(tmp_path / "missing.ipynb")
    assert cls is Encoder and message.startswith("could not read")
