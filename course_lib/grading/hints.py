"""Hints that climb: ``hint("attention")`` in the exercise notebook, one rung further at each call.

A failed visible check already says rung 1: what looks wrong and where to look (which case, which
tensor, which line), never the fix. Asking for a hint about a part climbs its ladder, one rung a call:

1. what to print or compare to see the symptom of the part's last failed check for yourself, made from that
   failure: the failing case's call and shapes, where the outputs differ (which head, query row, positions,
   rows and columns), then what to print for that symptom (:mod:`.probes`);
2. the lecture section that teaches it ("02 §4 Why divide by √d_k?", the title read from the notebook);
3. the formula or the invariant ("softmax (q kᵀ / √d_k) v ...").

No rung is solution code. A new mistake in the same part starts its own ladder at rung 1.

The climb is recorded per part in ``.hints.json`` next to the notebook (the kernel's working
directory), which the submission carries, so the class report can count how far students climbed.
The record is a record only: no grade reads it, so editing or deleting it costs nothing but the
record. :func:`read_record` reads one back, whatever a student left in it (standard library only).
"""

from __future__ import annotations

import json
import os

from ..announce import verdict
from .parts import NUMBERS, PARTS
from .sections import Titles

HINTS_FILE = ".hints.json"
RUNGS = 3
_MAX_FILE = 64 << 10

#: a part's own section (its key in :data:`.sections.PLACES`; the title is read from the notebook), rule and
#: probe: rungs 2, 3 and 1 when its last failure names no mistake of its own
PART_SECTIONS = Titles({
    "positional_encoding": "table",
    "attention": "sdpa",
    "multi_head_attention": "heads",
    "feed_forward": "ffn",
    "encoder_layer": "pre_post",
    "encoder": "encoder_stack",
    "parameter_count": "cost",
    "reverse_task": "training_loop",
})
#: rung 1: what to print or compare, beyond what the failed check said
PART_PROBES = {
    "positional_encoding": "print your table for max_len=3, d_model=4 next to the formula worked by hand for pos = 1, "
                           "column by column",
    "attention": "run it on a q, k, v of shape (2, 3) you can work by hand (k = q, v = torch.eye(2)); print the "
                 "scores, the weights and weights.sum(-1), and compare each with your hand-worked numbers",
    "multi_head_attention": "build it with d_model=4, num_heads=2, feed it torch.arange(12.).view(1, 3, 4) and print "
                            "the shape and the values of each tensor in your forward (after the split, the scores, the "
                            "weights, before w_o): which features of which position does each head hold?",
    "feed_forward": "give linear1 and linear2 weights you can work by hand (an identity, a negative bias), then print "
                    "the hidden layer and the output for a small x next to the formula",
    "encoder_layer": "print, at each step of your forward, the mean and the standard deviation over the features of "
                     "one position: which tensors must be normalized in post-LN, which in pre-LN?",
    "encoder": "in eval mode, print the first layer's input at two positions that hold the same token, and the "
               "output of a short sequence alone against the same sequence padded inside a batch",
    "parameter_count": "print course_lib.count_parameters(Encoder(...)) next to your formula for num_layers = 0, 1 "
                       "and 2, norm_first False and True: which term does the difference follow?",
    "reverse_task": "print the first and the last losses your loop returns (chance is ln(vocab_size)) and, for one "
                    "batch, the shapes of the logits and of the target your loss compares",
}
PART_RULES = {
    "positional_encoding": "PE[pos, 2i] = sin (pos / 10000^(2i/d_model)), "
                           "PE[pos, 2i+1] = cos (pos / 10000^(2i/d_model))",
    "attention": "softmax (q kᵀ / √d_k) v over the last two axes; masked keys get weight 0; rows sum to 1",
    "multi_head_attention": "head i = Attention(Q W^Q_i, K W^K_i, V W^V_i) on features [i·d_k, (i+1)·d_k); "
                            "MultiHead = Concat(heads) W^O",
    "feed_forward": "FFN(x) = max(0, x W1 + b1) W2 + b2, dropout on the hidden layer in training",
    "encoder_layer": "post-LN: x ← norm(x + dropout(f(x))); pre-LN: x ← x + dropout(f(norm(x)))",
    "encoder": "x = dropout(embedding(tokens) · √d_model + PE[:T]); the layers; final_norm (pre-LN only)",
    "parameter_count": "a module's parameters are its submodules': nn.Linear(n_in, n_out) holds an n_out × n_in "
                       "weight and n_out biases, nn.LayerNorm(d) a weight and a bias of d each, nn.Embedding(n, d) an "
                       "n × d table; a buffer is not a parameter",
    "reverse_task": "loss = cross_entropy over every position of logits (B·T, vocab) against the reversed tokens; "
                    "zero_grad, backward, step; accuracy = share of positions whose argmax is the reversed token",
}

#: {part: (mistake id, the check's message, rung 1)} of the last failed check in this kernel (checks.py fills
#: it; rung 1 is made from that failure by :func:`.probes.probe`: the case, where it differs, what to print)
LAST_FAILURE: dict[str, tuple[str, str, str]] = {}


def record_failure(part: str, mistake: str, message: str, probe: str = "") -> None:
    LAST_FAILURE[part] = (mistake, message, probe)


def forget_failure(part: str) -> None:
    LAST_FAILURE.pop(part, None)


def _empty() -> dict:
    return {"version": 1, "parts": {}}


def read_record(path: str) -> dict:
    """``{part: {"rung": 0..3, "asked": int, "mistakes": {id: rung}}}`` from a ``.hints.json`` (missing,
    unreadable, too large or malformed: what is valid of it, else nothing). Never raises."""
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(_MAX_FILE + 1)[:_MAX_FILE].decode("utf-8"))
    except (OSError, ValueError):
        return {}
    parts = data.get("parts") if isinstance(data, dict) else None
    out = {}
    for part, entry in (parts.items() if isinstance(parts, dict) else ()):
        if part not in PARTS or not isinstance(entry, dict):
            continue
        mistakes = entry.get("mistakes") if isinstance(entry.get("mistakes"), dict) else {}
        out[part] = {"rung": _rung(entry.get("rung")), "asked": max(0, _int(entry.get("asked"))),
                     "mistakes": {str(k)[:64]: _rung(v) for k, v in list(mistakes.items())[:50]
                                  if isinstance(k, str) and k.isidentifier()}}
    return out


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _rung(value) -> int:
    return min(RUNGS, max(0, _int(value)))


def _path() -> str:
    return os.path.join(os.getcwd(), HINTS_FILE)


def _write(record: dict) -> None:
    path = _path()
    data = {"version": 1, "parts": record}
    try:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass                                          # a read-only folder: the hint is still given


def next_rung(part: str) -> tuple[int, str]:
    """Climb ``part``'s ladder one rung (recorded); (the rung, its text)."""
    from .mistakes import probe_of, rule_of, section_of

    if part not in PARTS:
        raise ValueError(f"part: expected one of {', '.join(PARTS)}, got {part!r}")
    failure = LAST_FAILURE.get(part)
    if failure is None:
        return 0, (f"Part {NUMBERS[part]}: run its test cell first; a hint follows a failed check (and a part "
                   "whose check passes needs none).")
    mistake, _, probe = failure
    record = read_record(_path())
    entry = record.setdefault(part, {"rung": 0, "asked": 0, "mistakes": {}})
    rung = min(RUNGS, entry["mistakes"].get(mistake, 0) + 1)
    entry["mistakes"][mistake] = rung
    entry["rung"] = max(entry["rung"], rung)
    entry["asked"] += 1
    _write(record)
    if rung == 1:
        first = probe or probe_of(mistake, part) or PART_PROBES[part]
        text = f"{first} (ask again for the lecture section that teaches it)"
    elif rung == 2:
        text = (f"read {section_of(mistake, part) or PART_SECTIONS[part]} again (ask once more for the formula or the "
                "invariant)")
    else:
        text = f"the rule: {rule_of(mistake, part) or PART_RULES[part]}"
    return rung, f"Part {NUMBERS[part]}, hint {rung} of {RUNGS}: {text}"


def hint(part: str) -> None:
    """Show the next hint about ``part`` (a name such as "attention", or its number): the symptom, then
    the lecture section, then the formula. Each call climbs one rung; the climb is recorded in
    .hints.json next to the notebook (it never changes a grade). The hint is one line that starts with
    the word "hint:", in a status region a screen reader announces (``course_lib.announce.verdict``)."""
    if isinstance(part, int) and not isinstance(part, bool) and 1 <= part <= len(PARTS):
        part = PARTS[part - 1]
    verdict("hint", next_rung(part)[1])
