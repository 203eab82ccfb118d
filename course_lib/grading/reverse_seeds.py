"""Hidden seeds of the reverse task that correct code passes: checked before ``new-seeds`` writes one.

The reverse task's hidden case is a training run (:func:`.cases._reverse`): from a few seeds a correct
loop stays on a plateau, and the harness starts again from the case's next seed, three starts at most.
Whether all three can fall short is a property of the seed, so ``python -m course_grader new-seeds``
trains the model solution (the source notebook's own cell) and two honest loops of other styles on each
seed it draws for the part, and draws again while one of them fails (benchmarks/reverse_seeds.py
measures how often that happens over 1,000 seeds).

``python -m course_lib.grading.reverse_seeds NOTEBOOK SEED`` prints ``{"failed": [styles]}`` as JSON:
the grader's own process never imports torch, so it asks a child process.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .cases import make_cases
from .checks import reference_dependencies
from .harness import run_case
from .judging import judge

#: two honest training loops, each written over the model solution's cell (a later definition wins)
HONEST_LOOPS = {
    # zero_grad at the top keeping zero tensors, gradient clipping, cross_entropy on flattened logits
    "clipped": '''

def train_reverser(model, optimizer, batches):
    model.train()
    history = []
    for tokens in batches:
        optimizer.zero_grad(set_to_none=False)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens.flip(1).reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        history.append(loss.item())
    return history
''',
    # the head built before the encoder (another initialisation), nn.CrossEntropyLoss on (B, vocab, T)
    "transposed": '''

class Reverser(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers, max_len):
        super().__init__()
        self.head = nn.Linear(d_model, vocab_size)
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)

    def forward(self, tokens):
        return self.head(self.encoder(tokens))


def train_reverser(model, optimizer, batches):
    criterion = nn.CrossEntropyLoss()
    losses = []
    for batch in batches:
        model.zero_grad()
        scores = model(batch).transpose(1, 2)
        loss = criterion(scores, torch.flip(batch, dims=[1]))
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses
''',
}


def model_solution(nb) -> str:
    """The source notebook's solution cell of the reverse task (its ``### BEGIN SOLUTION`` blocks kept)."""
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("solution") and meta.get("grade_id") == "reverse_task":
            source = cell.get("source", "")
            return "".join(source) if isinstance(source, list) else str(source)
    raise ValueError("the notebook has no solution cell with grade_id 'reverse_task'")


def styles(solution: str) -> dict[str, str]:
    """``{style: cell}``: the model solution, and the model solution with each honest loop written over it."""
    return {"model": solution, **{name: solution + loop for name, loop in HONEST_LOOPS.items()}}


def _reverser(cell: str):
    namespace = {"__name__": "__submission__", "math": math, "np": np, "torch": torch, "nn": nn, "F": F}
    exec(compile(cell, "<reverse_task>", "exec"), namespace)
    return namespace["Reverser"]


def outcomes(seed: int, cells: dict[str, str]) -> dict[str, tuple[str | None, int]]:
    """``{style: (mistake id or None, starts)}`` for the hidden case of ``seed``."""
    case = make_cases("reverse_task", seed)[0]
    out = {}
    for name, cell in cells.items():
        reverser = _reverser(cell)
        with reference_dependencies("reverse_task", reverser):
            outputs = run_case(case, reverser)
        verdict = judge(case, outputs)
        out[name] = (None if verdict is None else verdict.mistake, int(outputs["tries"]))
    return out


def failures(seed: int, cells: dict[str, str]) -> list[str]:
    """The styles that fail the hidden check drawn from ``seed``."""
    return [name for name, (mistake, _) in outcomes(seed, cells).items() if mistake is not None]


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2:
        print("usage: python -m course_lib.grading.reverse_seeds NOTEBOOK SEED", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        nb = json.load(f)
    print(json.dumps({"failed": failures(int(argv[1], 0), styles(model_solution(nb)))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
