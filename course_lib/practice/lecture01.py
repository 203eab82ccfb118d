"""The checks of lecture 01's practice exercises (sequence to sequence, recurrence against attention).

Each check prints one line, ``✓ ...`` or ``✗ what is wrong (where to look)``, and never raises.
"""

from __future__ import annotations

import math
import numbers

import torch
from torch import nn

from . import attempt, check, failed, number, passed, todo, unanswered

__all__ = ["check_additive_attention", "check_decoder_scores", "check_rnn_loop", "check_truncated_rnn",
           "check_dependency_map", "check_attention_traffic", "check_pipeline_steps", "check_attention_crossover"]


def _reference_additive(s, H, W_a, U_a, v_a, squash=True):
    """Bahdanau's step: e_j = tanh(s W_a + h_j U_a) v_a, alpha = softmax(e), c = sum_j alpha_j h_j.
    The matrices are nn.Linear weights, (out, in)."""
    pre = (s @ W_a.T)[:, None, :] + H @ U_a.T                      # (B, T, d_attn)
    e = ((torch.tanh(pre) if squash else pre) @ v_a.T).squeeze(-1)  # (B, T)
    alpha = torch.softmax(e, dim=-1)                                # (B, T)
    return (alpha[:, :, None] * H).sum(dim=1), alpha                # (B, d_enc), (B, T)


@check
def check_additive_attention(AdditiveAttention) -> bool:
    """Write: the module ``AdditiveAttention(d_dec, d_enc, d_attn)``, ``forward(s, H) -> (context, weights)``."""
    where = "your AdditiveAttention"
    B, T, d_dec, d_enc, d_attn = 2, 7, 5, 6, 4
    ok, module = attempt(AdditiveAttention, d_dec, d_enc, d_attn, where=where)
    if not ok:
        return False
    shapes = {"W_a": (d_attn, d_dec), "U_a": (d_attn, d_enc), "v_a": (1, d_attn)}
    if not any(hasattr(module, name) for name in shapes):
        return todo("not done yet: the module has no W_a, U_a or v_a", "__init__")
    for name, shape in shapes.items():
        layer = getattr(module, name, None)
        if not isinstance(layer, nn.Linear):
            return failed(f"the module has no nn.Linear called {name}", "the three maps in __init__")
        if tuple(layer.weight.shape) != shape:
            return failed(f"{name} maps {layer.in_features} features to {layer.out_features}; for d_dec = {d_dec}, "
                          f"d_enc = {d_enc}, d_attn = {d_attn} it should map {shape[1]} to {shape[0]}",
                          "the sizes of the three maps")
        if layer.bias is not None:
            return failed(f"{name} has a bias, which the formula has not", "the three maps in __init__")
    g = torch.Generator().manual_seed(3)
    weights = {name: torch.randn(*shape, generator=g, dtype=torch.float64) for name, shape in shapes.items()}
    module = module.double()
    with torch.no_grad():
        for name, w in weights.items():
            getattr(module, name).weight.copy_(w)
    s = torch.randn(B, d_dec, generator=g, dtype=torch.float64)
    H = torch.randn(B, T, d_enc, generator=g, dtype=torch.float64)
    ok, got = attempt(module, s.clone(), H.clone(), where=where)
    if not ok:
        return False
    if isinstance(got, (tuple, list)) and any(unanswered(t) for t in got):
        return todo("not done yet: forward returns a placeholder", where)
    if not (isinstance(got, (tuple, list)) and len(got) == 2 and all(isinstance(t, torch.Tensor) for t in got)):
        return failed("forward should return two tensors, the context and the weights", "the return line")
    context, alpha = (t.detach().to(torch.float64) for t in got)
    c_ref, a_ref = _reference_additive(s, H, weights["W_a"], weights["U_a"], weights["v_a"])
    if tuple(alpha.shape) != (B, T):
        return failed(f"the weights have shape {tuple(alpha.shape)}, expected one per encoder state, (B, T) = "
                      f"{(B, T)}", "the shape of the scores")
    if not torch.allclose(alpha.sum(dim=-1), torch.ones(B, dtype=torch.float64), atol=1e-8):
        return failed("the weights of a sentence do not sum to 1 over its encoder states", "the axis of the softmax")
    if not torch.allclose(alpha, a_ref, atol=1e-8):
        _, linear = _reference_additive(s, H, weights["W_a"], weights["U_a"], weights["v_a"], squash=False)
        if torch.allclose(alpha, linear, atol=1e-8):
            return failed("your scores are linear in s and h_j, the formula's are not", "the scores e_j")
        return failed("the weights sum to 1 but have other values than the formula's", "the scores e_j")
    if tuple(context.shape) != (B, d_enc):
        return failed(f"the context has shape {tuple(context.shape)}, expected {(B, d_enc)}", "the context")
    if not torch.allclose(context, c_ref, atol=1e-8):
        return failed("the weights are right, the context is not", "how the weights combine the encoder states")
    return passed(f"the same weights and contexts as the reference for {B} decoder states and {T} encoder states")


@check
def check_decoder_scores(generating, teacher_forcing, target_length: int = 5) -> bool:
    """Predict: the query-key scores one causal self-attention layer of a decoder computes to generate a
    target of ``target_length`` tokens (each pass recomputing every position it reads), and to score it
    with teacher forcing (one pass); only the pairs the causal mask allows count."""
    where = "the two numbers in the exercise cell"
    n = target_length
    passes = n * (n + 1) // 2                           # pass t reads t tokens, t(t+1)/2 allowed pairs: summed
    want_generating, want_forced = n * (n + 1) * (n + 2) // 6, n * (n + 1) // 2
    try:
        if unanswered(generating) or unanswered(teacher_forcing):
            return todo("not done yet: set both numbers", where)
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (generating, teacher_forcing)):
            return failed(f"expected two whole numbers, got {generating!r} and {teacher_forcing!r}", where)
        if (generating, teacher_forcing) == (n, 1):
            return failed(f"{n} and 1 count passes, not scores: in each pass every query meets the keys before it",
                          "what one pass computes")
        if generating == sum(t * t for t in range(1, n + 1)) or teacher_forcing == n * n:
            return failed("that counts the pairs the causal mask hides too: query t scores only the keys s ≤ t",
                          "the causal mask")
        if generating == passes:
            return failed(f"{generating} scores only the newest query of each pass; without a cache a pass "
                          "recomputes the queries of all the tokens it reads", "what pass t recomputes")
        if generating != want_generating:
            return failed(f"{generating} scores to generate: pass t reads t tokens, and query i of them scores "
                          "i + 1 keys", "sum over the passes")
        if teacher_forcing == n:
            return failed(f"{n} is one score per position; query t scores every key up to its own",
                          "the causal mask")
        if teacher_forcing != want_forced:
            return failed(f"{teacher_forcing} scores in training: one pass over the {n} shifted inputs, query t "
                          "scoring the keys up to t", "the 'teacher forcing' paragraph")
        return passed(f"{want_generating} to generate, {want_forced} with teacher forcing: generating recomputes "
                      "every earlier query in each pass")
    except Exception as exc:  # a check never raises
        return failed(f"the check could not read your answer ({type(exc).__name__}: {exc})", where)


def _loop(x, W_xh, W_hh, transpose_xh=False, transpose_hh=False, recurrent=True, squash=True):
    """The RNN loop h_t = tanh(x_t W_xh + h_{t-1} W_hh), and the usual ways of getting it wrong."""
    W_xh = W_xh.T if transpose_xh else W_xh
    W_hh = W_hh.T if transpose_hh else W_hh
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    states = []
    for t in range(x.shape[1]):
        pre = x[:, t] @ W_xh + (h @ W_hh if recurrent else 0)
        h = torch.tanh(pre) if squash else pre
        states.append(h)
    return torch.stack(states, dim=1)


@check
def check_rnn_loop(my_rnn) -> bool:
    """Write: ``my_rnn(x, W_xh, W_hh)``, every state of the loop, against ``nn.RNN`` with the same weights."""
    where = "your my_rnn"
    g = torch.Generator().manual_seed(5)
    B, T, d = 2, 5, 4
    x = torch.randn(B, T, d, generator=g, dtype=torch.float64)
    W_xh, W_hh = (torch.randn(d, d, generator=g, dtype=torch.float64) / 2 for _ in range(2))
    ok, got = attempt(my_rnn, x.clone(), W_xh.clone(), W_hh.clone(), where=where)
    if not ok:
        return False
    if not isinstance(got, torch.Tensor):
        return failed(f"my_rnn should return a tensor, got {type(got).__name__}", where)
    if tuple(got.shape) == (B, d):
        return failed(f"you return one state per sentence, shape {(B, d)}; the layer outputs y_t = h_t at "
                      f"every step, ({B}, {T}, {d})", "what your loop keeps")
    if tuple(got.shape) != (B, T, d):
        return failed(f"the states have shape {tuple(got.shape)}, expected (B, T, d) = {(B, T, d)}", where)
    rnn = nn.RNN(d, d, bias=False, batch_first=True).double()
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(W_xh.T)                   # nn.Linear-style (out, in) storage
        rnn.weight_hh_l0.copy_(W_hh.T)
        expected = rnn(x)[0]
    got = got.detach().to(torch.float64)
    if torch.allclose(got, expected, atol=1e-8):
        return passed(f"the same {T} states as nn.RNN given weight_ih = W_xhᵀ and weight_hh = W_hhᵀ")
    if torch.allclose(got, _loop(x, W_xh, W_hh, recurrent=False), atol=1e-8):
        return failed("each state ignores the one before: h_t depends on x_t only, so nothing is carried "
                      "along the sentence", "what your loop passes from one step to the next")
    if not torch.allclose(got[:, 0], expected[:, 0], atol=1e-8):
        if torch.allclose(got[:, 0], _loop(x, W_xh, W_hh, squash=False)[:, 0], atol=1e-8):
            return failed("h_1 is not squashed: its entries can leave (−1, 1)", "the nonlinearity")
        if torch.allclose(got[:, 0], _loop(x, W_xh, W_hh, transpose_xh=True)[:, 0], atol=1e-8):
            return failed("h_1 is wrong: x_t W_xh is a row times a matrix, and yours multiplies by its "
                          "transpose", "the order of the product with W_xh")
        return failed("already the first state h_1 is wrong, where h_0 = 0 leaves tanh(x_1 W_xh)",
                      "your first step and the starting state")
    if torch.allclose(got, _loop(x, W_xh, W_hh, transpose_hh=True), atol=1e-8):
        return failed("h_1 is right, the later states are not: h_{t−1} W_hh is a row times a matrix, and "
                      "yours multiplies by its transpose", "the order of the product with W_hh")
    return failed("h_1 is right, the later states are not", "how h_{t−1} enters step t")


def _truncated(x, W_xh, W_hh, k):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    states = []
    for t in range(x.shape[1]):
        if t % k == 0:
            h = h.detach()
        h = torch.tanh(x[:, t] @ W_xh + h @ W_hh)
        states.append(h)
    return torch.stack(states, dim=1)


def _reach_back(states_fn, x, *args):
    """The gradient of the last state's sum with respect to each input position, (T,), and the full gradient."""
    x = x.clone().requires_grad_(True)
    states = states_fn(x, *args)
    if not isinstance(states, torch.Tensor) or not states.requires_grad:
        return None, None
    (grad,) = torch.autograd.grad(states[:, -1].sum(), x, allow_unused=True)
    if grad is None:
        return None, None
    return grad.norm(dim=(0, 2)), grad


@check
def check_truncated_rnn(truncated_rnn) -> bool:
    """Write: ``truncated_rnn(x, W_xh, W_hh, k)``: the states of the loop, the graph cut every k steps."""
    where = "your truncated_rnn"
    g = torch.Generator().manual_seed(7)
    for T, k in ((10, 4), (9, 3)):
        x = torch.randn(2, T, 4, generator=g, dtype=torch.float64)
        W_xh, W_hh = (torch.randn(4, 4, generator=g, dtype=torch.float64) / 2 for _ in range(2))
        ok, got = attempt(truncated_rnn, x.clone(), W_xh, W_hh, k, where=where)
        if not ok:
            return False
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != (2, T, 4):
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            return failed(f"expected every state, (B, T, d) = {(2, T, 4)}, got {shape}", where)
        if not torch.allclose(got.detach(), _loop(x, W_xh, W_hh), atol=1e-8):
            return failed("the states differ from the full loop's: cutting the graph changes no value",
                          "what your loop computes, apart from the cut")
        reach, grad = _reach_back(truncated_rnn, x, W_xh, W_hh, k)
        if reach is None:
            return failed("no gradient reaches x from the last state", "what you detach")
        expected, expected_grad = _reach_back(_truncated, x, W_xh, W_hh, k)
        got_steps, want_steps = int((reach > 0).sum()), int((expected > 0).sum())
        if got_steps == T:
            return failed(f"for T = {T}, k = {k} the last state's gradient still reaches x_1", "where your loop cuts")
        if got_steps != want_steps:
            return failed(f"for T = {T}, k = {k} the last state's gradient reaches {got_steps} inputs back, "
                          f"expected the {want_steps} of its own chunk (chunks start at t = 0, k, 2k, ...)",
                          "where your loop cuts")
        if not torch.allclose(grad, expected_grad, atol=1e-8):
            return failed("the gradient reaches the right inputs with other values", "what you detach")
    return passed("the states of nn.RNN, and a gradient that stops at the start of its chunk, for two T and k")


def _jacobian_map(f, x):
    J = torch.autograd.functional.jacobian(f, x)                   # (T, d, T, d)
    return J.pow(2).sum(dim=(1, 3)).sqrt()                         # (T, T)


def _summed_map(f, x):
    """The map of the common shortcut: the gradient of the SUM of y_t's features."""
    rows = []
    for t in range(x.shape[0]):
        xx = x.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(f(xx)[t].sum(), xx)
        rows.append(g.norm(dim=1))
    return torch.stack(rows)


@check
def check_dependency_map(my_dependency_map, layers: dict, d: int) -> bool:
    """Write: ``my_dependency_map(f, x)``, D[t, s] = ||dy_t / dx_s||_F, for T = 3; ``layers`` maps a name
    to a function (T, d) -> (T, d) of float64."""
    where = "your my_dependency_map"
    g = torch.Generator().manual_seed(11)
    for name, f in layers.items():
        x = torch.randn(3, d, generator=g, dtype=torch.float64)
        ok, got = attempt(my_dependency_map, f, x.clone(), where=where)
        if not ok:
            return False
        if not isinstance(got, torch.Tensor):
            return failed(f"the map should be a tensor, got {type(got).__name__}", where)
        if tuple(got.shape) != (3, 3):
            return failed(f"the map for T = 3 has shape {tuple(got.shape)}, expected (T, T) = (3, 3): one row per "
                          "output y_t, one column per input x_s", where)
        got = got.detach().to(torch.float64)
        expected = _jacobian_map(f, x)
        if torch.allclose(got, expected, rtol=1e-5, atol=1e-10):
            continue
        if torch.allclose(got, expected.T, rtol=1e-5, atol=1e-10):
            return failed(f"for {name} your map is the transpose of D: row t should be output y_t, column s "
                          "input x_s", "which of the two you differentiate")
        if torch.allclose(got, expected.pow(2), rtol=1e-5, atol=1e-10):
            return failed(f"for {name} each entry is the square of the expected one", "the last step")
        if torch.allclose(got, _summed_map(f, x), rtol=1e-5, atol=1e-10):
            return failed(f"for {name} you differentiate the sum of y_t's {d} features: their gradients add up "
                          "and partly cancel, where D counts each feature's gradient on its own",
                          "what you call grad on")
        ahead = bool((got.triu(diagonal=1).abs() > 1e-12).any())
        if ahead and not bool((expected.triu(diagonal=1) > 0).any()):
            return failed(f"for {name} an output depends on a later input (an entry above the diagonal), which "
                          "this layer cannot do", "which output and which input each entry belongs to")
        return failed(f"for {name} the map has the right shape but wrong values", where)
    return passed("the same map as torch.autograd.functional.jacobian gives, for both layers")



def _traffic(T, d, reads=True, writes=True, scaled=True, bytes_per_number=4):
    """Numbers attention_forward moves if each step reads its inputs from memory and writes its output."""
    steps = [(2 * T * d, T * T),                                    # x @ x^T: x twice in, T x T out
             (T * T, T * T) if scaled else (0, 0),                  # / sqrt(d)
             (T * T, T * T),                                        # softmax
             (T * T + T * d, T * d)]                                # weights @ x
    return bytes_per_number * sum(r * reads + w * writes for r, w in steps)


@check
def check_attention_traffic(attention_traffic) -> bool:
    """Write: ``attention_traffic(T, d, bytes_per_number=4)``, the bytes attention_forward reads and writes."""
    where = "your attention_traffic"
    for T, d in ((10, 4), (100, 16), (1024, 64)):
        ok, got = attempt(attention_traffic, T, d, where=where)
        if not ok:
            return False
        if not isinstance(got, numbers.Real):
            return failed(f"expected a number of bytes, got {type(got).__name__}", where)
        want = _traffic(T, d)
        if got == want:
            continue
        hints = {_traffic(T, d, bytes_per_number=1): ("you count numbers, not bytes", "bytes_per_number"),
                 _traffic(T, d, reads=False): ("you count what each step writes, not what it reads", "the reads"),
                 _traffic(T, d, writes=False): ("you count what each step reads, not what it writes", "the writes"),
                 _traffic(T, d, scaled=False): ("one step of attention_forward is missing", "the division by sqrt(d)"),
                 4 * 4 * T * d: ("that is a fused kernel's traffic, which keeps the T x T matrices on chip",
                                 "what attention_forward stores")}
        if got in hints:
            return failed(f"for T = {T}, d = {d}: " + hints[got][0], hints[got][1])
        return failed(f"for T = {T}, d = {d}: {got:,.0f} bytes, {'more' if got > want else 'fewer'} than its "
                      "steps move",
                      "each step's inputs and output")
    return passed("the same bytes as the reference count for three sizes of T and d")


@check
def check_pipeline_steps(answer, layers: int = 6, tokens: int = 100) -> bool:
    """Quiz: steps one after another for a stack of RNN layers, each step waiting for the step before in
    its own layer and for the same position in the layer below."""
    value = layers + tokens - 1
    if not unanswered(answer) and isinstance(answer, (int, float)) and not isinstance(answer, bool):
        if answer == value + 1:
            return failed(f"off by one: layer {layers} starts its first step at step {layers} and ends {tokens - 1} "
                          f"steps later", "count the first and the last step once")
        if answer == layers * tokens:
            return failed(f"{answer} lets each layer wait for the whole layer below; step t of layer l waits only for "
                          "step t of layer l - 1", "what a step waits for")
        if answer == layers:
            return failed(f"{layers} is the attention stack's count; an RNN layer's steps run one after another",
                          "the steps within one layer")
    return number(answer, value,
                  f"{value} = {tokens} steps of layer 1, then one more for each of the {layers - 1} "
                  f"layers above, which run a step behind like a pipeline; {layers} attention layers need {layers}",
                  rel_tol=0.0, abs_tol=0.5,
                  low=f"too few: layer 1 alone takes {tokens} steps one after another",
                  high="too many: layer 2 need not wait for all of layer 1, only for the position it reads",
                  where="which step of which layer can start when", name="steps_one_after_another")


@check
def check_attention_crossover(answer, d_model: int = 384, heads: int = 12) -> bool:
    """Quiz: the length T at which one layer's attention probabilities, all heads, hold as many numbers
    as the layer's input X (T x d_model): h T^2 = T d_model, so T = d_model / h."""
    value = d_model / heads
    if not unanswered(answer) and isinstance(answer, (int, float)) and not isinstance(answer, bool):
        if math.isclose(answer, d_model):
            return failed(f"{d_model} compares one T × T matrix with X; a layer holds one per head, {heads} of them",
                          "how many T × T matrices")
        if math.isclose(answer, d_model * heads):
            return failed(f"{answer:g} multiplies by the heads: more heads make the probabilities outgrow X sooner, "
                          "at a smaller T", "solve h · T² = T · d_model for T")
        if any(math.isclose(answer, math.sqrt(v), rel_tol=0.01) for v in (d_model, value)):
            return failed("X is not d_model numbers but T rows of d_model: it grows with T too",
                          "how many numbers X holds")
    return number(answer, value,
                  f"h · T² = T · d_model at T = d_model / h = {value:g}, the width of one head: past it the "
                  "probabilities hold more numbers than the layer's input",
                  rel_tol=0.0, abs_tol=0.5,
                  low="too small: at that T the probabilities still hold fewer numbers than X",
                  high="too large: at that T the probabilities already hold more numbers than X",
                  where="count both: h matrices of T × T, and T rows of d_model", name="crossover_T")
