"""The checks of lecture 01's practice exercises (sequence to sequence, recurrence against attention).

Each check prints one line, ``✓ ...`` or ``✗ what is wrong (where to look)``, and never raises.
"""

from __future__ import annotations

import numbers

from . import attempt, check, failed, passed, todo, unanswered

__all__ = ["check_shift_right", "check_decoder_passes", "check_longer_sentence", "check_crossover"]

BOS = "<bos>"


@check
def check_shift_right(shift_right) -> bool:
    """Write: ``shift_right(target)`` returns the decoder's inputs under teacher forcing."""
    where = "your my_shift_right"
    try:
        for target in (["down", "sat", "cat", "the", "<eos>"], ["ja", "<eos>"], ["<eos>"]):
            ok, got = attempt(shift_right, list(target), where=where)
            if not ok:
                return False
            expected = [BOS] + target[:-1]
            if not isinstance(got, (list, tuple)):
                return failed(f"expected a list of tokens, got {type(got).__name__}", where)
            got = list(got)
            if len(got) != len(target):
                return failed(f"{len(got)} inputs for a target of {len(target)} tokens: the decoder reads "
                              "one input per target token it is scored on", "what would the last input predict?")
            if got[0] != BOS:
                return failed(f"the first input is {got[0]!r}: the first step has "
                              "nothing produced yet", "what does the decoder read at step 1?")
            if got != expected:
                return failed(f"for {target} you give {got}: input t must be the true token just before "
                              "target t", "compare with the 'inputs' line printed above")
        return passed("the inputs are the target shifted right by one: <bos> first, the last target "
                      "token (the end token) never read")
    except Exception as exc:  # a check never raises
        return failed(f"the check could not read your answer ({type(exc).__name__}: {exc})", where)


@check
def check_decoder_passes(at_inference, in_training, target_length: int = 5) -> bool:
    """Predict: decoder passes to generate a target at inference, and to score it with teacher forcing."""
    where = "the two numbers in the exercise cell"
    try:
        if unanswered(at_inference) or unanswered(in_training):
            return todo("not done yet: set both numbers", where)
        if not all(isinstance(v, numbers.Integral) for v in (at_inference, in_training)):
            return failed(f"expected two whole numbers, got {at_inference!r} and {in_training!r}", where)
        if at_inference != target_length:
            return failed(f"at inference: {at_inference} passes for {target_length} tokens? each pass "
                          "emits exactly one token", "the decoding loop and its frames")
        if in_training != 1:
            return failed(f"in training: {in_training} passes, but with teacher forcing every input is "
                          "known before the first prediction", "the 'teacher forcing' paragraph")
        return passed(f"{target_length} passes to generate, one to score all {target_length} positions: "
                      "teacher forcing is what makes training parallel")
    except Exception as exc:  # a check never raises
        return failed(f"the check could not read your answer ({type(exc).__name__}: {exc})", where)


@check
def check_longer_sentence(T_long, rnn_reach, attention_reach, T_before: int = 12) -> bool:
    """Change and observe: on a longer sentence the RNN's last output feels its first input even less."""
    where = "the first line of the exercise cell"
    if unanswered(T_long) or not isinstance(T_long, numbers.Integral):
        return failed(f"T_long should be a whole number, got {T_long!r}", where)
    if T_long == T_before:
        return failed(f"T_long is still {T_before}: make the sentence longer first, then run the cell", where)
    if T_long < T_before:
        return failed(f"T_long = {T_long} is shorter than the {T_before} above: the question is what "
                      "happens to a longer sentence", where)
    if T_long < 2 * T_before:
        return failed(f"T_long = {T_long} is too close to {T_before} to see much: try 4 times as long", where)
    rnn, attn = float(rnn_reach), float(attention_reach)
    return passed(f"at T = {T_long} the last output's reach back to the first input is {rnn:.0e} for "
                  f"the RNN and {attn:.2f} for causal attention: the loop forgets, attention does not")


@check
def check_crossover(crossover_T, cheaper_at_100, d: int = 128) -> bool:
    """Predict: where the FLOP counts 4 T d² (RNN) and 4 T² d (attention) cross, for a width ``d``."""
    where = "the exercise cell"
    try:
        if unanswered(crossover_T) or unanswered(cheaper_at_100):
            return todo("not done yet: set both answers", where)
        if not isinstance(crossover_T, numbers.Real):
            return failed(f"crossover_T should be a number, got {crossover_T!r}", where)
        if crossover_T == 64:
            return failed(f"64 is the crossover for d = 64, measured above; here d = {d}",
                          "write both counts for this d and set them equal")
        if crossover_T != d:
            rnn, attn = 4 * crossover_T * d * d, 4 * crossover_T ** 2 * d
            return failed(f"at T = {crossover_T:g} the counts are {rnn:,.0f} (RNN) and {attn:,.0f} "
                          "(attention), not equal", "write both counts for this d and set them equal")
        if cheaper_at_100 not in ("RNN", "attention"):
            return failed(f"cheaper_at_100 should be 'RNN' or 'attention', got {cheaper_at_100!r}", where)
        if cheaper_at_100 != "attention":
            return failed(f"at T = 100 < d = {d}, compare 4·T·d² = {4 * 100 * d * d:,} with "
                          f"4·T²·d = {4 * 100 ** 2 * d:,}", "which count is smaller?")
        return passed(f"the counts cross at T = d = {d}; below it (T = 100: {4 * 100 ** 2 * d:,} against "
                      f"{4 * 100 * d * d:,} FLOPs) attention is the cheaper layer")
    except Exception as exc:  # a check never raises
        return failed(f"the check could not read your answer ({type(exc).__name__}: {exc})", where)
