"""The checks of lecture 02's practice exercises (attention).

Each check prints one line, ``✓ ...`` or ``✗ what is wrong (where to look)``, returns None (a bare call
in a cell shows only that line) and never raises.
"""

from __future__ import annotations

import math

import torch

from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_prediction", "check_additive_scores", "check_split_merge", "check_head_follows_meaning",
           "check_masked_softmax", "check_score_spread", "check_unconverted_mask", "check_flop_ratio"]


@check
def check_prediction(prediction, q: torch.Tensor, keys: dict) -> bool:
    """Predict-then-run: which key gets the most attention from ``q``? ``prediction`` is its name."""
    names = list(keys)
    if unanswered(prediction):
        return todo("not done yet: set prediction to the name of one key", "the exercise cell")
    if prediction not in keys:
        return failed(f"{prediction!r} is not one of the keys {names}", "the exercise cell")
    dots = {name: float(q @ k) for name, k in keys.items()}
    best = max(dots, key=dots.get)
    table = ", ".join(f"{name} {dot:.2f}" for name, dot in dots.items())
    if prediction != best:
        cosine = {name: float(torch.nn.functional.cosine_similarity(q, k, dim=0)) for name, k in keys.items()}
        hint = (f"{prediction!r} points most nearly the same way as q, but the score is a dot product: "
                "it grows with the key's length too" if prediction == max(cosine, key=cosine.get)
                else f"{prediction!r} does not have the largest score")
        return failed(hint, "compute q · k for each key, as in section 2")
    return passed(f"{best!r}: the scores q · k are {table}; the largest score gets the most weight, "
                  "and a long key can beat a better-aligned short one")


def _reference_additive(q, K, W_a, U_a, v_a):
    return torch.tanh(q @ W_a + K @ U_a) @ v_a                  # (T_k,)


@check
def check_additive_scores(additive_scores) -> bool:
    """Write: Bahdanau's additive score ``e_j = tanh(q W_a + k_j U_a) · v_a`` for every key row."""
    where = "your additive_scores, against the formula above"
    try:
        g = torch.Generator().manual_seed(7)
        d_q, d_k, d_a, t_k = 5, 4, 6, 7
        q = torch.randn(d_q, generator=g, dtype=torch.float64)
        K = torch.randn(t_k, d_k, generator=g, dtype=torch.float64)
        W_a = torch.randn(d_q, d_a, generator=g, dtype=torch.float64)
        U_a = torch.randn(d_k, d_a, generator=g, dtype=torch.float64)
        v_a = torch.randn(d_a, generator=g, dtype=torch.float64)
        ok, got = attempt(additive_scores, q, K, W_a, U_a, v_a, where=where)
        if not ok:
            return False
        if not isinstance(got, torch.Tensor):
            return failed(f"the scores should be a tensor, got {type(got).__name__}", where)
        expected = _reference_additive(q, K, W_a, U_a, v_a)
        if tuple(got.shape) != (t_k,):
            return failed(f"the scores have shape {tuple(got.shape)}; expected one score per key, ({t_k},)", where)
        got = got.to(torch.float64)
        if torch.allclose(got, expected, atol=1e-6):
            return passed(f"one score per key, {t_k} keys; a small network scores each (query, key) pair, "
                          "where dot-product attention needs one product")
        if torch.allclose(got, torch.softmax(expected, dim=0), atol=1e-6):
            return failed("these are the weights (they sum to 1); the exercise asks for the scores, "
                          "before any softmax", where)
        if torch.allclose(got, (q @ W_a + K @ U_a) @ v_a, atol=1e-6):
            return failed("your scores are linear in q and k: the nonlinearity between the sum and v_a "
                          "is missing", where)
        if torch.allclose(got, torch.tanh(q @ W_a) @ v_a + torch.tanh(K @ U_a) @ v_a, atol=1e-6):
            return failed("the query and the key each go through tanh on their own; tanh must act on "
                          "their sum, so that they interact", where)
        return failed("the scores have the right shape but wrong values", where)
    except Exception as exc:
        return failed(f"the check could not run your function ({type(exc).__name__}: {exc})", where)


@check
def check_split_merge(split_heads, merge_heads) -> bool:
    """Write: ``split_heads(x, num_heads)`` (B, T, d_model) -> (B, h, T, d_k) and ``merge_heads`` back."""
    B, T, d_model, h = 2, 3, 8, 2
    d_k = d_model // h
    x = torch.arange(B * T * d_model, dtype=torch.float32).reshape(B, T, d_model)   # entry = its own index
    where = "your split_heads"
    ok, got = attempt(split_heads, x.clone(), h, where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor):
        return failed(f"split_heads should return a tensor, got {type(got).__name__}", where)
    if tuple(got.shape) != (B, h, T, d_k):
        return failed(f"split_heads gives shape {tuple(got.shape)}, expected (B, h, T, d_k) = {(B, h, T, d_k)}", where)
    expected = torch.stack([x[..., i * d_k:(i + 1) * d_k] for i in range(h)], dim=1)   # the loop's slices
    if not torch.equal(got, expected):
        token_of = (got[0, 0] // d_model).long().flatten().unique().tolist()
        if len(token_of) > 1 and torch.equal(got, x.reshape(B, h, T, d_k)):
            return failed(f"head 0 of sentence 0 holds features of tokens {token_of} in one row: a reshape straight "
                          "to (B, h, T, d_k) cuts the sentence's numbers in memory order, across tokens",
                          "which axis must be split before the head axis moves")
        return failed(f"head 0 should hold features 0..{d_k - 1} of every token, as the loop's slice does; "
                      f"its first row is {got[0, 0, 0].tolist()}", where)
    where = "your merge_heads"
    ok, merged = attempt(merge_heads, expected.clone(), where=where)
    if not ok:
        return False
    if not isinstance(merged, torch.Tensor) or tuple(merged.shape) != (B, T, d_model):
        shape = tuple(merged.shape) if isinstance(merged, torch.Tensor) else type(merged).__name__
        return failed(f"merge_heads gives {shape}, expected (B, T, d_model) = {(B, T, d_model)}", where)
    if not torch.equal(merged, x):
        return failed(f"merge_heads does not give the input back: token 0 of sentence 0 is "
                      f"{merged[0, 0].long().tolist()}, expected {x[0, 0].long().tolist()}",
                      "the order of the axes before the last reshape")
    return passed(f"({B}, {T}, {d_model}) -> ({B}, {h}, {T}, {d_k}) -> ({B}, {T}, {d_model}), each head the "
                  "slice the loop took: one batched product now attends in every head at once")


@check
def check_masked_softmax(masked_softmax) -> bool:
    """Write: ``masked_softmax(scores, allow)``, bool ``allow`` True = may attend, broadcast to scores."""
    where = "your masked_softmax"
    g = torch.Generator().manual_seed(4)
    T = 5
    scores = 3 * torch.randn(2, T, T, generator=g, dtype=torch.float64)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    padding = torch.tensor([[True] * T, [True] * 3 + [False] * 2]).unsqueeze(1)      # (2, 1, T)
    for name, allow in (("the causal mask", causal), ("a padding mask", padding)):
        ok, got = attempt(masked_softmax, scores.clone(), allow.clone(), where=where)
        if not ok:
            return False
        if not isinstance(got, torch.Tensor):
            return failed(f"masked_softmax should return a tensor, got {type(got).__name__}", where)
        if tuple(got.shape) != tuple(scores.shape):
            return failed(f"with {name} the weights have shape {tuple(got.shape)}, expected the scores' "
                          f"{tuple(scores.shape)}", where)
        got = got.to(torch.float64)
        expected = torch.softmax(scores.masked_fill(~allow, float("-inf")), dim=-1)
        if torch.allclose(got, expected, atol=1e-9):
            continue
        full = allow.expand_as(scores)
        if torch.isnan(got).any():
            return failed(f"with {name} some weights are NaN: a row whose every score is -inf has nothing "
                          "to normalise", "which entries you set to -inf")
        forbidden = got[~full].abs().max().item() if (~full).any() else 0.0
        if forbidden > 1e-9 and torch.allclose(got, torch.softmax(scores.masked_fill(~allow, 0.0), dim=-1), atol=1e-9):
            return failed(f"with {name} forbidden keys still get weight (up to {forbidden:.2f}): a score of 0 "
                          "is an ordinary score, e^0 = 1", "the value a forbidden score gets")
        if forbidden > 1e-9 and (got[full] < 1e-12).any():
            return failed(f"with {name} keys the mask forbids get weight and keys it allows get none",
                          "what True means in allow")
        if forbidden > 1e-9:
            return failed(f"with {name} forbidden keys still get weight (up to {forbidden:.2f})", where)
        sums = got.sum(dim=-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-9):
            return failed(f"with {name} the forbidden weights are 0 but the rows sum to "
                          f"{sums.min().item():.2f}..{sums.max().item():.2f}, not 1", "when the mask acts")
        return failed(f"with {name} the weights have the right zeros and rows of 1, but wrong values", where)
    return passed("a forbidden key's score is -inf before the softmax: its weight is exactly 0 and the "
                  "allowed ones still sum to 1, for a causal and a padding mask alike")


@check
def check_head_follows_meaning(sentence, follows_meaning, to_animal, to_street) -> bool:
    """Change: end the sentence in 'wide'; does layer 3, head 1 now send 'it' to 'street'?"""
    where = "the sentence in the exercise cell"
    words = str(sentence).rstrip(" .").split()
    if words and words[-1] == "tired":
        return todo("not done yet: change the last word of the sentence to 'wide' and run the cell", where)
    if not words or words[-1] != "wide":
        return failed(f"the sentence ends in {words[-1] if words else ''!r}: end it in 'wide', so that 'it' "
                      "means the street", where)
    if unanswered(follows_meaning):
        return todo("not done yet: set follows_meaning to True or False", "the last line of the exercise")
    if not isinstance(follows_meaning, bool):
        return failed(f"follows_meaning should be True or False, got {follows_meaning!r}", "the last line")
    to_animal, to_street = float(to_animal), float(to_street)
    if follows_meaning != (to_street > to_animal):
        return failed("the printed weights do not say that", "compare the head's weight on 'animal' with "
                      "its weight on 'street'")
    if follows_meaning:
        return passed(f"'it' -> 'street' {to_street:.2f} against 'animal' {to_animal:.2f}")
    return passed(f"it still prefers 'animal' ({to_animal:.2f}) to 'street' ({to_street:.2f}): the head "
                  "does not follow what 'it' refers to; in the first sentence it was right by chance")


@check
def check_score_spread(answer, d_k: int = 2500) -> bool:
    """Quiz: the standard deviation of q · k for unit-variance entries, without the scaling."""
    return number(answer, math.sqrt(d_k),
                  f"Var(q · k) = d_k = {d_k}, so its standard deviation is √{d_k} = {math.sqrt(d_k):g}: "
                  "scores that far apart make the softmax one-hot",
                  low="too small: that is the spread after the division by √d_k, or of one term",
                  high="too large: the variance is d_k; the question asks for its square root",
                  where="section 4's variance", name="std_unscaled")


@check
def check_unconverted_mask(answer) -> bool:
    """Quiz: course_lib's causal mask (True = may attend) passed unchanged to nn.MultiheadAttention."""
    return choice(answer, "NaN",
                  {"only the future": "that is what every other query gets; the last query has no future "
                                      "(look at its row of the mask, read as True = blocked)",
                   "every position": "torch reads True as blocked, so the mask still blocks something "
                                     "(look at the last row)",
                   "only itself": "the diagonal is True in the causal mask, so torch blocks it "
                                  "(look at the last row, read as True = blocked)"},
                  "every key of the last query is blocked: the softmax of a row of -inf divides 0 by 0, "
                  "and its output is NaN (lecture 06 meets it again)", where="the last row of the mask",
                  name="last_output")


@check
def check_flop_ratio(answer, T: int = 1000, d: int = 256) -> bool:
    """Retrieval (lecture 01): attention's FLOPs over the RNN's for one layer, T tokens of width d."""
    return number(answer, T / d,
                  f"4·T²·d / (4·T·d²) = T / d = {T}/{d} ≈ {T / d:.2f}: the counts cross at T = d, and beyond "
                  "it attention costs T/d times as much",
                  low="too small: past T = d attention's count is the larger one",
                  high="too large: both counts are linear in one of T, d and quadratic in the other",
                  where="lecture 01, section 3", name="flop_ratio")
