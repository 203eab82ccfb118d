"""The reverse task is passed by learning (issue 21): a model that writes the reversed input into its
output scores nothing, whether it does so from the start or only once training has begun."""

from __future__ import annotations

from attack_kit import GOOD, run_part, zygote  # noqa: F401

HEAD = """
class Reverser(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers, max_len=64):
        super().__init__()
        self.vocab_size, self.calls = vocab_size, 0
        self.head = nn.Linear(d_model, vocab_size)
        self.embedding = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens):
        self.calls += 1
        honest = self.head(self.embedding(tokens))
"""
WRITES_THE_ANSWER = HEAD + """        return honest * 0 + F.one_hot(tokens.flip(1), self.vocab_size).float() * 20
"""
CHEATS_ONCE_TRAINING = HEAD + """        if self.calls == 1:
            return honest
        return honest * 0 + F.one_hot(tokens.flip(1), self.vocab_size).float() * 20
"""


def test_the_reference_solution_learns(zygote):  # noqa: F811
    result, _ = run_part(zygote, "reverse_task", GOOD["reverse_task"])
    assert result.passed, result.message


def test_writing_the_answer_is_not_learning(zygote):  # noqa: F811
    result, _ = run_part(zygote, "reverse_task", WRITES_THE_ANSWER)
    assert result.status == "failed" and "before any training" in result.message, result.message


def test_writing_the_answer_once_training_starts_is_not_learning(zygote):  # noqa: F811
    result, _ = run_part(zygote, "reverse_task", CHEATS_ONCE_TRAINING)
    assert result.status == "failed" and "loss does not fall" in result.message, result.message
