"""The checks of lecture 02's practice exercises (attention).

Each check prints one line, ``✓ ...`` or ``✗ what is wrong (where to look)``, returns None (a bare call
in a cell shows only that line) and never raises.
"""

from __future__ import annotations

import math

import torch

from . import attempt, check, choice, failed, number, passed, todo, unanswered

__all__ = ["check_prediction", "check_offset_profile", "check_window_reach", "check_kv_cache", "check_score_divisor",
           "check_unconverted_mask", "check_projection_share"]


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
    """Quiz: course_lib's causal mask (True = may attend) passed unchanged to nn.MultiheadAttention: which keys
    does the last query read? The cause (the mask read the other way round), not the symptom (NaN or 0)."""
    return choice(answer, "no key",
                  {"only the future": "the last query has no future: look at its row of the mask, read as True = "
                                      "blocked (the mask is inverted, not shifted)",
                   "every key": "torch reads True as blocked, so the inverted mask still blocks: look at the last "
                                "row, read as True = blocked",
                   "only itself": "the diagonal is True in the causal mask, so the inverted mask blocks it too: look "
                                  "at the last row, read as True = blocked",
                   "NaN": "NaN is what nn.MultiheadAttention then returns with need_weights=True (SDPA and course_lib "
                          "return 0): the symptom; name the keys the inverted mask leaves"},
                  "every key of the last row is True, so the inverted mask blocks all of them: the query reads no "
                  "key, and the output is NaN or 0 depending on the implementation (section 7)",
                  where="the last row of the mask, read as True = blocked", name="last_output")


def _profile(attentions, max_offset: int, drop_special: bool = True, sign: int = 1, reduce=torch.mean):
    """(layers, heads, 2 max_offset + 1): each head's weight at key s = t + offset, averaged over queries t."""
    out = []
    for a in attentions:
        w = a[0, :, 1:-1, 1:-1] if drop_special else a[0]
        out.append(torch.stack([reduce(torch.diagonal(w, offset=sign * o, dim1=1, dim2=2), dim=-1)
                                for o in range(-max_offset, max_offset + 1)], dim=-1))
    return torch.stack(out)


def _random_maps(layers: int = 2, heads: int = 3, T: int = 9, seed: int = 5) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.softmax(torch.randn(1, heads, T, T, generator=g, dtype=torch.float64) * 2, dim=-1)
            for _ in range(layers)]


@check
def check_offset_profile(offset_profile) -> bool:
    """Write: ``offset_profile(attentions, max_offset)``, the mean weight of each head at each offset s - t,
    over the words of the sentence (without [CLS] and [SEP])."""
    where = "your offset_profile"
    maps, m = _random_maps(), 3
    ok, got = attempt(offset_profile, [a.clone() for a in maps], m, where=where)
    if not ok:
        return False
    want = _profile(maps, m)
    if not isinstance(got, torch.Tensor):
        return failed(f"offset_profile should return a tensor, got {type(got).__name__}", "the return line")
    if tuple(got.shape) != tuple(want.shape):
        return failed(f"the profile has shape {tuple(got.shape)}, expected (layers, heads, 2 max_offset + 1) = "
                      f"{tuple(want.shape)}", "one column per offset, -max_offset first")
    got = got.detach().to(torch.float64)
    if torch.allclose(got, want, atol=1e-9):
        return passed(f"the same profile as the reference for {len(maps)} layers of {maps[0].shape[1]} heads, "
                      f"offsets -{m} .. {m}")
    if torch.allclose(got, _profile(maps, m, sign=-1), atol=1e-9) or torch.allclose(got, want.flip(-1), atol=1e-9):
        return failed("your offsets run the other way: column 0 should be the key max_offset tokens before the "
                      "query (s - t = -max_offset)", "the sign of the offset, s - t")
    if torch.allclose(got, _profile(maps, m, drop_special=False), atol=1e-9):
        return failed("your profile counts the special tokens [CLS] and [SEP], where most heads park their weight",
                      "the first and last rows and columns")
    if torch.allclose(got, _profile(maps, m, reduce=torch.sum), atol=1e-9):
        return failed("your profile sums the weights along each diagonal; a sum grows with the number of queries "
                      "that have a key at that offset, so take the mean", "sum against mean")
    return failed("the profile has the right shape but other values than the reference", "which entries each "
                  "diagonal holds")


def _window(T: int, window: int, future: bool = False, extra: int = 0) -> torch.Tensor:
    t = torch.arange(T)
    offset = t[:, None] - t[None, :]                              # t - s
    if future:
        return offset.abs() < window + extra
    return (offset >= 0) & (offset < window + extra)


def _reach(mask: torch.Tensor, layers: int) -> torch.Tensor:
    total = torch.eye(mask.shape[0], dtype=torch.long)
    for _ in range(layers):
        total = (total @ mask.long()).clamp(max=1)
    return total.bool()


@check
def check_window_reach(window_mask, reach) -> bool:
    """Write: ``window_mask(T, window)`` (True = may attend: itself and the window - 1 keys before it) and
    ``reach(mask, layers)`` (which keys can have influenced each query after that many layers)."""
    T, window = 12, 3
    ok, mask = attempt(window_mask, T, window, where="your window_mask")
    if not ok:
        return False
    if not (isinstance(mask, torch.Tensor) and mask.dtype == torch.bool and tuple(mask.shape) == (T, T)):
        return failed(f"window_mask({T}, {window}) should be a bool tensor of shape {(T, T)}, got "
                      f"{getattr(mask, 'dtype', type(mask).__name__)} of shape {tuple(getattr(mask, 'shape', ()))}",
                      "the mask's type and shape")
    want = _window(T, window)
    if not torch.equal(mask, want):
        if torch.equal(mask, _window(T, window, future=True)):
            return failed("your mask lets a query read keys after it: the future", "the sign of t - s")
        if torch.equal(mask, want.T):
            return failed("your mask is transposed: row t is the query, column s the key", "rows and columns")
        if torch.equal(mask, _window(T, window, extra=1)) or torch.equal(mask, _window(T, window, extra=-1)):
            return failed(f"each query should read {window} keys (itself and {window - 1} before it); yours reads "
                          f"{int(mask[-1].sum())}: off by one", "the bounds of the window")
        return failed("the mask has other True entries than a causal window", "which (query, key) pairs it allows")
    for layers in (1, 2, 4):
        ok, got = attempt(reach, want.clone(), layers, where="your reach")
        if not ok:
            return False
        if not (isinstance(got, torch.Tensor) and tuple(got.shape) == (T, T)):
            return failed(f"reach should return a ({T}, {T}) tensor", "the return line of reach")
        expected = _reach(want, layers)
        if not torch.equal(got.bool(), expected):
            if torch.equal(got.bool(), want):
                return failed(f"after {layers} layers your reach is still one window: each layer lets a query read "
                              "what its keys read one layer down", "how the layers compose")
            if torch.equal(got.bool(), _reach(want, layers + 1)) or torch.equal(got.bool(), _reach(want, layers - 1)):
                return failed(f"your reach after {layers} layers is that of another number of layers",
                              "how many times the mask is applied")
            return failed(f"after {layers} layers your reach differs from the reference", "how the layers compose")
    return passed(f"a causal window of {window} keys, and its reach after 1, 2 and 4 layers: {window - 1} more keys "
                  "back with every layer")


def _causal_outputs(xs, w_q, w_k, w_v, include_self: bool = True, keep: bool = True, future: bool = False):
    T = xs.shape[0]
    q, k, v = xs @ w_q, xs @ w_k, xs @ w_v
    scores = q @ k.T / math.sqrt(k.shape[-1])
    t = torch.arange(T)
    allow = (t[None, :] <= t[:, None]) if include_self else (t[None, :] < t[:, None])
    if not keep:
        allow = t[None, :] == t[:, None]
    if future:
        allow = torch.ones(T, T, dtype=torch.bool)
    weights = torch.softmax(scores.masked_fill(~allow, float("-inf")), dim=-1).nan_to_num(0.0)
    return weights @ v


@check
def check_kv_cache(decode_with_cache) -> bool:
    """Write: ``decode_with_cache(xs, w_q, w_k, w_v) -> (outputs, cache_k, cache_v)``: tokens arrive one at a
    time; each step computes its own query, key and value, appends the key and value to the cache and reads
    the cache with course_lib's attention."""
    where = "your decode_with_cache"
    g = torch.Generator().manual_seed(11)
    T, d, d_k = 6, 8, 4
    xs = torch.randn(T, d, generator=g, dtype=torch.float64)
    w_q, w_k, w_v = (torch.randn(d, d_k, generator=g, dtype=torch.float64) for _ in range(3))
    ok, got = attempt(decode_with_cache, xs.clone(), w_q, w_k, w_v, where=where)
    if not ok:
        return False
    if isinstance(got, (tuple, list)) and any(unanswered(t) for t in got):
        return todo("not done yet: decode_with_cache returns a placeholder", where)
    if not (isinstance(got, (tuple, list)) and len(got) == 3 and all(isinstance(t, torch.Tensor) for t in got)):
        return failed("decode_with_cache should return three tensors: the outputs, the cached keys and values",
                      "the return line")
    outputs, cache_k, cache_v = (t.detach().to(torch.float64) for t in got)
    if tuple(outputs.shape) != (T, d_k):
        return failed(f"the outputs have shape {tuple(outputs.shape)}, expected one row per step, {(T, d_k)}",
                      "what each step appends to the outputs")
    if tuple(cache_k.shape) != (T, d_k) or tuple(cache_v.shape) != (T, d_k):
        return failed(f"after {T} steps the cache should hold {T} keys and {T} values of width {d_k}; yours holds "
                      f"{tuple(cache_k.shape)} and {tuple(cache_v.shape)}", "what each step appends to the cache")
    if not (torch.allclose(cache_k, xs @ w_k) and torch.allclose(cache_v, xs @ w_v)):
        if torch.allclose(cache_k, xs @ w_v) and torch.allclose(cache_v, xs @ w_k):
            return failed("your cache holds the values as keys and the keys as values", "which projection goes where")
        return failed("the cache does not hold x_t W^K and x_t W^V of every step, in order", "what is appended")
    want = _causal_outputs(xs, w_q, w_k, w_v)
    if torch.allclose(outputs, want, atol=1e-8):
        return passed(f"the same outputs as causal attention over the whole sequence, for {T} steps, each step "
                      "projecting only its own token")
    if torch.allclose(outputs, _causal_outputs(xs, w_q, w_k, w_v, include_self=False), atol=1e-8):
        return failed("each step reads the cache before appending its own key and value, so a token never "
                      "reads itself", "the order of append and attend")
    if torch.allclose(outputs, _causal_outputs(xs, w_q, w_k, w_v, keep=False), atol=1e-8):
        return failed("each step reads only its own key and value: the cache of the earlier steps is not read",
                      "what the attention reads")
    if torch.allclose(outputs, _causal_outputs(xs, w_q, w_k, w_v, future=True), atol=1e-8):
        return failed("each step reads every token, the future included; a decoder has only the ones so far",
                      "what the cache holds when a step attends")
    return failed("the cache is right, the outputs are not", "the query of each step and the attention call")


@check
def check_projection_share(answer, T: int = 1000, d: int = 256) -> bool:
    """Retrieval (lecture 01): the share of one self-attention layer's FLOPs spent in its four projections
    (W^Q, W^K, W^V, W^O: 8 T d²) against the scores and the mixing (4 T² d), for T tokens of width d."""
    projections, mixing = 8 * T * d * d, 4 * T * T * d
    value = projections / (projections + mixing)
    if not unanswered(answer) and isinstance(answer, (int, float)) and not isinstance(answer, bool):
        if math.isclose(answer, 6 * T * d * d / (6 * T * d * d + mixing), rel_tol=1e-3):
            return failed("you counted three projections; W^O is the fourth", "the projections of section 5")
        if math.isclose(answer, mixing / (projections + mixing), rel_tol=1e-3):
            return failed("that is the share of the scores and the mixing, not of the projections",
                          "which part of the count is asked")
        if math.isclose(answer, 4 * T * d * d / (4 * T * d * d + mixing), rel_tol=1e-3):
            return failed("you counted a product of T x d by d x d as T·d² FLOPs; a multiply-add is 2 FLOPs",
                          "lecture 01's FLOP count")
    return number(answer, value, f"8·T·d² / (8·T·d² + 4·T²·d) = 2d / (2d + T) = {value:.3f}: at T = {T} > 2d the "
                  "T x T part already costs more than the four projections",
                  rel_tol=0.01, low="too small: count the four projections, 2·T·d² FLOPs each",
                  high="too large: the scores and the mixing cost 4·T²·d",
                  where="lecture 01, section 3, and the projections of section 5", name="projection_share")
