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


UNLUCKY = 0xa640522877e41007          # issue 40: the model solution's first start stays at the ceiling


def test_an_unlucky_start_is_tried_again():
    """A correct loop stays on a plateau from about one start in 120 (8 of 1,000 seeds of new-seeds failed the
    model solution with a single start): the harness starts again from the case's next seed, and the model
    solution and two honest styles (one building its head before its encoder: another initialisation) pass."""
    import nbformat
    import torch

    from attack_kit import SOURCE
    from course_lib.grading.cases import make_cases
    from course_lib.grading.checks import reference_dependencies
    from course_lib.grading.harness import run_case
    from course_lib.grading.judging import judge
    from exercise_corpus.honest import notebook
    from exercise_corpus.submissions import apply, define
    source = nbformat.read(SOURCE, as_version=4)
    head_first = apply(notebook(source, "honest_a"), [(
        "sub", "reverse_task",
        "        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)\n"
        "        self.head = nn.Linear(d_model, vocab_size)\n",
        "        self.head = nn.Linear(d_model, vocab_size)\n"
        "        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)\n")])
    styles = {"model": source, "honest_b": notebook(source, "honest_b"), "head_first": head_first}
    case = make_cases("reverse_task", UNLUCKY)[0]
    assert len(case.kwargs["retry_seeds"]) == 2 and case.kwargs["pass_accuracy"] > 0.5
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tries = {}
        for name, nb in styles.items():
            reverser = define(nb, "reverse_task", "Reverser")
            with reference_dependencies("reverse_task", reverser):
                outputs = run_case(case, reverser)
            assert judge(case, outputs) is None, name
            tries[name] = int(outputs["tries"])
    finally:
        torch.set_num_threads(threads)
    assert tries["model"] == 2, tries                   # its first start failed: the retry is what passes it
    print("starts needed:", tries)
