"""A hidden case's error tells the kind of case and one fixed text per kind of failure, never the error's
text or its type (issues 21 and 30): an error that formats its inputs would show the hidden case's shape and
values, and the choice among exception types could encode them too."""

from __future__ import annotations

from attack_kit import CASES, GOOD, WANTS, run_part, zygote  # noqa: F401
from course_grader import runner
from course_lib.grading.judging import HIDDEN_MESSAGES, judge_case

VISIBLE = sorted({tuple(c.inputs["x"].shape) for c in CASES["feed_forward"] if not c.hidden})
assert any(c.hidden for c in CASES["feed_forward"])

# the correct feed-forward network, which raises with its input's shape and values on any case it has
# not seen in the notebook, that is on the hidden ones
LEAKY = GOOD["feed_forward"] + f"""
_forward = PositionwiseFeedForward.forward
def _leaky(self, x):
    if tuple(x.shape) not in {VISIBLE!r}:
        raise ValueError(f"LEAK shape={{tuple(x.shape)}} first={{x.flatten()[0].item():.6f}}")
    return _forward(self, x)
PositionwiseFeedForward.forward = _leaky
"""


def test_a_hidden_case_error_shows_its_type_only(zygote):  # noqa: F811
    result, _ = run_part(zygote, "feed_forward", LEAKY)
    assert result.status == "failed"
    assert "a hidden case" in result.message and result.message.endswith(HIDDEN_MESSAGES["raised"]), result.message
    assert "LEAK" not in result.message and "ValueError" not in result.message, result.message


def test_the_judge_trusts_no_text_from_the_part():
    """The part process may forge its reply: the judge keeps Python's own exception names only."""
    hidden = next(c for c in CASES["feed_forward"] if c.hidden)
    want = WANTS["feed_forward"][CASES["feed_forward"].index(hidden)]
    for forged, kind in (("raised ValueError: (1, 3, 10) 0.123456", "raised"),
                         ("raised E_1_3_10: values 0.123456", "raised"),
                         ("raised KeyboardInterrupt", "raised"),
                         ("expected a tuple (out, weights), got T_1_3_10", "wrong_result")):
        message = judge_case(hidden, None, forged, want=want)
        assert message == f"{hidden.label}: {HIDDEN_MESSAGES[kind]}", message
    assert runner.judge("feed_forward", [], [], runner.sandbox.Outcome("student", failure="x")).status == "failed"
