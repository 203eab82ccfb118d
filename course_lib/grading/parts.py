"""The graded parts of the exercise (notebooks/07_exercise): names and dependencies.

Pure constants, importing nothing: the sandboxed part process, the grader and the notebook-facing
checks all read them. A part's solution cell has ``grade_id == <part>``; its test cells are
``test_<part>`` or ``test_<part>_<anything>`` (see docs/exercise-contract.md). Their points are
in the source notebook's nbgrader metadata, what nbgrader grades with (see the grader's
``course_grader.points``).
"""

#: the six parts of the exercise contract, then the two that put them to use
PARTS = ("positional_encoding", "attention", "multi_head_attention", "feed_forward", "encoder_layer",
         "encoder", "parameter_count", "reverse_task")

#: the six parts the contract names (course_lib exports a reference of each under the same name)
CONTRACT_PARTS = PARTS[:6]

#: the public name each part defines
NAMES = {
    "positional_encoding": "sinusoidal_positional_encoding",
    "attention": "scaled_dot_product_attention",
    "multi_head_attention": "MultiHeadAttention",
    "feed_forward": "PositionwiseFeedForward",
    "encoder_layer": "EncoderLayer",
    "encoder": "Encoder",
    "parameter_count": "encoder_parameter_count",
    "reverse_task": "Reverser",
}

#: the parts whose names a part may use; while a part is checked these are course_lib's references
DEPENDENCIES = {
    "positional_encoding": (),
    "attention": (),
    "multi_head_attention": ("attention",),
    "feed_forward": (),
    "encoder_layer": ("multi_head_attention", "feed_forward"),
    "encoder": ("encoder_layer", "positional_encoding"),
    "parameter_count": (),
    "reverse_task": ("encoder",),
}

#: parts graded by one case, the hidden one where the source notebook has a seed (else the visible one):
#: a training run, whose visible case the student already ran in the notebook
ONE_RUN = ("reverse_task",)

#: the number of each part in the notebook ("Part 3: ...")
NUMBERS = {part: i + 1 for i, part in enumerate(PARTS)}


def part_of_test(grade_id: str) -> str | None:
    """``test_<part>`` or ``test_<part>_<anything>`` -> part (the longest part name that fits)."""
    for part in sorted(PARTS, key=len, reverse=True):
        if grade_id == f"test_{part}" or grade_id.startswith(f"test_{part}_"):
            return part
    return None
