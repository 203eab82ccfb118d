"""The checks of lecture 02's practice exercises (attention).

Each check prints one line, ``✓ ...`` or ``✗ what is wrong (where to look)``, returns None (a bare call
in a cell shows only that line) and never raises.
"""

from __future__ import annotations

import math

import torch

from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_prediction", "check_additive_scores", "check_split_merge", "check_head_follows_meaning",
           "check_masked_attention", "check_score_divisor", "check_unconverted_mask", "check_flop_ratio"]


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
    return passed(f"{best!r}: the scores q · k are {table}")


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
            return passed(f"the same {t_k} scores as the formula's")
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
    return passed(f"({B}, {T}, {d_model}) -> ({B}, {h}, {T}, {d_k}) -> ({B}, {T}, {d_model}), every number "
                  "where the loop's slices put it, and back")


def _masked_reference(q, k, v, key_padding_mask=None, causal=False, pad_rows=False, causal_upper=False,
                      fill=float("-inf"), scale=True, after=False):
    """One head's attention with both masks, and the usual ways of getting it wrong."""
    B, T_q, T_k = q.shape[0], q.shape[-2], k.shape[-2]
    allow = torch.ones(B, T_q, T_k, dtype=torch.bool)
    if key_padding_mask is not None:
        allow = allow & (~key_padding_mask[:, :, None] if pad_rows else ~key_padding_mask[:, None, :])
    if causal:
        tri = torch.ones(T_q, T_k, dtype=torch.bool)
        allow = allow & (tri.triu() if causal_upper else tri.tril())
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale else 1.0)
    if after:
        weights = torch.softmax(scores, dim=-1) * allow
    else:
        weights = torch.softmax(scores.masked_fill(~allow, fill), dim=-1)
    return weights @ v, weights, allow


@check
def check_masked_attention(masked_attention) -> bool:
    """Write: ``masked_attention(q, k, v, key_padding_mask=None, causal=False) -> (out, weights)``, one head,
    a padding mask (True = padding) and a causal mask together."""
    where = "your masked_attention"
    g = torch.Generator().manual_seed(4)
    B, T, d_k = 2, 5, 4
    q, k, v = (2 * torch.randn(B, T, d_k, generator=g, dtype=torch.float64) for _ in range(3))
    pad = torch.tensor([[False] * T, [False] * 3 + [True] * 2])                          # (B, T), True = padding
    cases = (("no mask", None, False), ("the padding mask", pad, False), ("the causal mask", None, True),
             ("both masks", pad, True))
    for name, kpm, causal in cases:
        ok, got = attempt(masked_attention, q.clone(), k.clone(), v.clone(),
                          key_padding_mask=None if kpm is None else kpm.clone(), causal=causal, where=where)
        if not ok:
            return False
        if isinstance(got, (tuple, list)) and any(unanswered(t) for t in got):
            return todo("not done yet: masked_attention returns a placeholder", where)
        if not (isinstance(got, (tuple, list)) and len(got) == 2 and all(isinstance(t, torch.Tensor) for t in got)):
            return failed("masked_attention should return two tensors, the output and the weights", "the return line")
        out, weights = (t.detach().to(torch.float64) for t in got)
        if tuple(weights.shape) != (B, T, T) or tuple(out.shape) != (B, T, d_k):
            return failed(f"with {name}: output {tuple(out.shape)} and weights {tuple(weights.shape)}, expected "
                          f"{(B, T, d_k)} and {(B, T, T)}", where)
        ref_out, ref_w, allow = _masked_reference(q, k, v, kpm, causal)
        if torch.allclose(weights, ref_w, atol=1e-9):
            if not torch.allclose(out, ref_out, atol=1e-9):
                return failed(f"with {name} the weights are right, the output is not", "what the weights multiply")
            continue
        if torch.isnan(weights).any():
            nan_rows = torch.isnan(weights).any(dim=-1)                                       # (B, T)
            if kpm is not None and torch.equal(nan_rows, kpm):
                return failed(f"with {name} the rows of the padded queries are NaN: every key is blocked for them",
                              "which axis of the scores the padding mask blocks")
            return failed(f"with {name} some weights are NaN", "which entries you block")
        blocked = weights[~allow].abs().max().item() if (~allow).any() else 0.0
        if blocked > 1e-9:
            if kpm is not None and torch.allclose(weights, _masked_reference(q, k, v, kpm, causal, pad_rows=True)[1],
                                                  atol=1e-9):
                return failed(f"with {name} a padded key still gets weight, and the padded queries get none",
                              "which axis of the scores the padding mask blocks")
            if causal and torch.allclose(weights, _masked_reference(q, k, v, kpm, causal, causal_upper=True)[1],
                                         atol=1e-9):
                return failed(f"with {name} a query attends to the keys after it", "which triangle you keep")
            if torch.allclose(weights, _masked_reference(q, k, v, kpm, causal, fill=0.0)[1], atol=1e-9):
                return failed(f"with {name} blocked keys still get weight: a score of 0 is an ordinary score",
                              "the value a blocked score gets")
            if kpm is not None and (weights[1, :, 3:] > 1e-9).all() and (weights[1, :, :3] < 1e-12).all():
                return failed(f"with {name} the padded keys get all the weight and the real ones none",
                              "what True means in key_padding_mask")
            return failed(f"with {name} blocked keys still get weight (up to {blocked:.2f})", "how you build the mask")
        sums = weights.sum(dim=-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-9):
            return failed(f"with {name} the blocked weights are 0 but the rows sum to {sums.min().item():.2f}.."
                          f"{sums.max().item():.2f}, not 1", "when the mask acts")
        if torch.allclose(weights, _masked_reference(q, k, v, kpm, causal, scale=False)[1], atol=1e-9):
            return failed(f"with {name} the zeros are right, the other weights are too sharp", "the scores")
        return failed(f"with {name} the zeros are right and the rows sum to 1, but the values differ", "the scores")
    return passed("the same outputs and weights as the reference with no mask, each mask, and both")


@check
def check_head_follows_meaning(sentence, follows_meaning, to_animal, to_street, model, tokenizer,
                               layer: int = 3, head: int = 1) -> bool:
    """Change and read: end the sentence in 'wide', read the weights of ``layer``, ``head`` from 'it' to
    'animal' and to 'street' (``to_animal``, ``to_street``), and say whether the head now prefers 'street'."""
    where = "the sentence in the exercise cell"
    words = str(sentence).rstrip(" .").split()
    if words and words[-1] == "tired":
        return todo("not done yet: change the last word of the sentence to 'wide' and run the cell", where)
    if not words or words[-1] != "wide":
        return failed(f"the sentence ends in {words[-1] if words else ''!r}: end it in 'wide', so that 'it' "
                      "means the street", where)
    if unanswered(to_animal) or unanswered(to_street):
        return todo("not done yet: set to_animal and to_street to the head's two weights", "the exercise cell")
    batch = tokenizer([sentence])
    tokens = batch["tokens"][0]
    device = next(model.parameters()).device
    with torch.no_grad():
        _, attentions = model(batch["input_ids"].to(device), key_padding_mask=batch["key_padding_mask"].to(device),
                              return_attention=True)
    row = attentions[layer][0, head, tokens.index("it")].cpu()
    want = {"to_animal": row[tokens.index("animal")].item(), "to_street": row[tokens.index("street")].item()}
    for name, got in (("to_animal", to_animal), ("to_street", to_street)):
        try:
            got = float(got)
        except (TypeError, ValueError):
            return failed(f"{name} should be a number, got {type(got).__name__}", "the exercise cell")
        if abs(got - want[name]) > 5e-3:
            where_row = f"layer {layer}, head {head}, the row of the query 'it'"
            return failed(f"{name} is {got:.3f}, not the weight that head gives", where_row)
    if unanswered(follows_meaning):
        return todo("not done yet: set follows_meaning to True or False", "the last line of the exercise")
    if not isinstance(follows_meaning, bool):
        return failed(f"follows_meaning should be True or False, got {follows_meaning!r}", "the last line")
    if follows_meaning != (want["to_street"] > want["to_animal"]):
        return failed("your two weights do not say that", "compare the head's weight on 'animal' with its weight "
                      "on 'street'")
    return passed("the two weights of that head, and an answer that matches them")


@check
def check_score_divisor(answer, var_q: float = 4.0, var_k: float = 1.0, d_k: int = 64) -> bool:
    """Quiz: the number that brings the variance of q · k back to 1 when q's entries have variance
    ``var_q`` and k's ``var_k`` (independent, mean 0)."""
    value = math.sqrt(var_q * var_k * d_k)
    if not unanswered(answer) and isinstance(answer, (int, float)):
        if math.isclose(answer, math.sqrt(d_k)):
            return failed(f"dividing by √d_k = {math.sqrt(d_k):g} leaves a variance of {var_q * var_k:g}",
                          "the variance of one product q_i k_i")
        if math.isclose(answer, var_q * var_k * d_k):
            return failed(f"dividing by {answer:g} leaves a variance of {1 / answer:.2g}",
                          "what dividing by c does to a variance")
    return number(answer, value, f"divided by {value:g}, the scores have variance 1 again",
                  rel_tol=1e-6, low="too small: the scores keep a variance above 1",
                  high="too large: the scores end with a variance below 1",
                  where="section 4's variance", name="score_divisor")


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
