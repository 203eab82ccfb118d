"""The exercise's checks (kept here because released notebooks import ``course_lib.checks``).

Everything lives in ``course_lib.grading``: the parts (``parts.py``), the cases (``cases.py``),
running a part (``harness.py``), judging it against the reference (``judging.py``) and the
notebook-facing ``check_*`` functions (``checks.py``).
"""

from .grading.cases import hidden_seeds, make_cases
from .grading.checks import (
                             REFERENCES,
                             PartFailed,
                             check,
                             check_attention,
                             check_encoder,
                             check_encoder_layer,
                             check_feed_forward,
                             check_multi_head_attention,
                             check_parameter_count,
                             check_positional_encoding,
                             check_reverser,
                             hint,
                             reference_dependencies,
)
from .grading.harness import Case, ResultError, run_case
from .grading.judging import Verdict, expected, judge, judge_case, position_blind_ceiling
from .grading.parts import CONTRACT_PARTS as PARTS
from .grading.parts import DEPENDENCIES, NAMES

__all__ = ["check_positional_encoding", "check_attention", "check_multi_head_attention", "check_feed_forward",
           "check_encoder_layer", "check_encoder", "check_parameter_count", "check_reverser", "check", "hint",
           "PartFailed", "reference_dependencies", "make_cases", "hidden_seeds", "Case", "ResultError",
           "run_case", "expected", "judge", "judge_case", "Verdict", "position_blind_ceiling", "PARTS", "NAMES",
           "DEPENDENCIES", "REFERENCES"]
