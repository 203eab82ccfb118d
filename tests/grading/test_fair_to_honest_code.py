"""Ordinary standard-library use costs nothing in the sandbox (issue 29): type hints (``typing`` reads
``sys._getframe``), a ``namedtuple`` (it compiles and execs its methods) and a ``dataclass`` run inside the
guard, which judges only the solution's own code; the same calls made by the solution still end its part."""

from __future__ import annotations

import pytest

from attack_kit import GOOD, run_part, zygote  # noqa: F401
from course_lib.grading import policy

TYPED = "from typing import Optional, Tuple\n" + GOOD["attention"].replace(
    "def scaled_dot_product_attention(q, k, v, attn_mask=None):",
    "def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,\n"
    "                                 attn_mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:")
NAMED = ("import collections\nAttended = collections.namedtuple('Attended', 'out weights')\n"
         + GOOD["attention"].replace("return weights @ v, weights", "return Attended(weights @ v, weights)"))
DATACLASS = ("from dataclasses import dataclass\n\n\n@dataclass\nclass Sizes:\n    d_model: int\n    d_ff: int\n\n\n"
             + GOOD["feed_forward"].replace("        self.linear1 = nn.Linear(d_model, d_ff)",
                                            "        sizes = Sizes(d_model, d_ff)\n"
                                            "        self.linear1 = nn.Linear(sizes.d_model, sizes.d_ff)"))


@pytest.mark.parametrize("part, source", [("attention", TYPED), ("attention", NAMED), ("feed_forward", DATACLASS)],
                         ids=["type_hints", "namedtuple", "dataclass"])
def test_standard_library_use_costs_nothing(zygote, part, source):  # noqa: F811
    assert TYPED != GOOD["attention"] and NAMED != GOOD["attention"] and DATACLASS != GOOD["feed_forward"]
    assert policy.check_source(source) is None
    result, _ = run_part(zygote, part, source)
    assert result.passed, result.message


def test_the_same_events_from_the_solution_still_end_it(zygote):  # noqa: F811
    frame = ("import typing\nf = getattr(getattr(typing, 'sy' + 's'), '_get' + 'frame')\nf(0)\n"
             + GOOD["attention"])
    result, _ = run_part(zygote, "attention", frame)
    assert result.status == "failed" and "sys._getframe" in result.message, result.message


def test_every_module_the_rule_allows_imports_in_the_sandbox(zygote):  # noqa: F811
    """The notebook's rule, policy.ALLOWED_IMPORTS and the guard agree: a cell importing every allowed
    module passes (test_exercise_parts checks that the notebook names exactly these modules)."""
    imports = "".join(f"import {name}\n" for name in sorted(policy.ALLOWED_IMPORTS - {"__future__"}))
    source = "from __future__ import annotations\n" + imports + GOOD["attention"]
    assert policy.check_source(source) is None
    result, _ = run_part(zygote, "attention", source)
    assert result.passed, result.message
