"""The reverse task is passed by learning (issues 21 and 30): the grader predicts before and after the
student's training loop with the same computation, ``head(encoder(tokens))`` made from the model's own
parts, so a Reverser whose forward writes the answer, from the start or once it has been called before,
scores nothing."""

from __future__ import annotations

from attack_kit import GOOD, run_part, zygote  # noqa: F401

# the source's cell (Reverser, train_reverser, reverse_accuracy), then a Reverser that replaces it
COUNTS_ITS_CALLS = GOOD["reverse_task"] + """

class Reverser(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers, max_len=64):
        super().__init__()
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
        self.calls = 0

    def forward(self, tokens):
        self.calls += 1
        honest = self.head(self.encoder(tokens))
        if self.calls == 1:                      # uniform while untrained, the one-hot answer afterwards
            return honest
        return honest * 0 + F.one_hot(tokens.flip(1), honest.shape[-1]).float() * 20
"""
WRITES_THE_ANSWER = GOOD["reverse_task"] + """

class Reverser(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers, max_len=64):
        super().__init__()
        self.vocab_size = vocab_size
        self.head = nn.Linear(d_model, vocab_size)
        self.embedding = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens):
        return self.head(self.embedding(tokens)) * 0 + F.one_hot(tokens.flip(1), self.vocab_size).float() * 20
"""
ENCODER_OF_ITS_OWN = GOOD["reverse_task"] + """

class Counting(nn.Module):
    def __init__(self, vocab_size, d_model, *args, **kwargs):
        super().__init__()
        self.embedding, self.calls = nn.Embedding(vocab_size, d_model), 0

    def forward(self, tokens):
        self.calls += 1
        return self.embedding(tokens)


class Reverser(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers, max_len=64):
        super().__init__()
        self.encoder = Counting(vocab_size, d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        return self.head(self.encoder(tokens))
"""


def test_the_reference_solution_learns(zygote):  # noqa: F811
    result, _ = run_part(zygote, "reverse_task", GOOD["reverse_task"])
    assert result.passed, result.message


def test_a_reverser_that_counts_its_calls_is_not_learning(zygote):  # noqa: F811
    result, _ = run_part(zygote, "reverse_task", COUNTS_ITS_CALLS)
    assert result.status == "failed" and "does not beat the position-blind ceiling" in result.message, result.message


def test_writing_the_answer_is_not_learning(zygote):  # noqa: F811
    for source in (WRITES_THE_ANSWER, ENCODER_OF_ITS_OWN):
        result, _ = run_part(zygote, "reverse_task", source)
        assert result.status == "failed", result.message


def test_float_of_a_loss_with_its_graph_passes_validate_quietly():
    """``losses.append(float(loss))`` is correct code, and torch 2.13 warns about it on stderr; nbgrader's
    Validate fails a test cell that writes to stderr, so the visible check must not let the warning out."""
    import warnings

    import torch
    import torch.nn.functional as F
    from torch import nn

    import course_lib
    from course_lib.checks import check_reverser

    source = GOOD["reverse_task"].replace("loss.item()", "float(loss)")
    assert "float(loss)" in source
    namespace = {"torch": torch, "nn": nn, "F": F, "Encoder": course_lib.Encoder, "__name__": "__student__"}
    exec(compile(source, "<cell>", "exec"), namespace)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_reverser(namespace["Reverser"])
    assert not [w for w in caught if "requires_grad=True to a scalar" in str(w.message)], caught
