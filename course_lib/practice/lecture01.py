"""The checks of lecture 01's practice exercises (sequence to sequence, recurrence against attention).

Each check prints one line, ``✓ ...`` or ``✗ what is wrong (where to look)``, and never raises.
"""

from __future__ import annotations

import numbers

import torch
from torch import nn

from . import attempt, check, failed, number, passed, todo, unanswered

__all__ = ["check_shift_right", "check_decoder_passes", "check_rnn_loop", "check_dependency_map",
           "check_crossover", "check_pipeline_steps", "check_attention_memory"]

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
        return passed(f"the same {T} states as nn.RNN given weight_ih = W_xhᵀ and weight_hh = W_hhᵀ: "
                      "step t cannot start before step t − 1 has ended")
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
    return passed("D[t, s] for every output t and input s, the same as one call of "
                  "torch.autograd.functional.jacobian: T · d backward passes, one per output feature")



@check
def check_pipeline_steps(answer, layers: int = 6, tokens: int = 100) -> bool:
    """Quiz: steps one after another for a stack of RNN layers, each step waiting for the step before in
    its own layer and for the same position in the layer below."""
    return number(answer, layers + tokens - 1,
                  f"{layers + tokens - 1} = {tokens} steps of layer 1, then one more for each of the {layers - 1} "
                  f"layers above, which run a step behind like a pipeline; {layers} attention layers need {layers}",
                  rel_tol=0.0, abs_tol=0.5,
                  low=f"too few: layer 1 alone takes {tokens} steps one after another",
                  high="too many: layer 2 need not wait for all of layer 1, only for the position it reads",
                  where="which step of which layer can start when", name="steps_one_after_another")


@check
def check_attention_memory(answer, T: int = 1024) -> bool:
    """Quiz: MiB of one head's attention weights for one sentence of T tokens in float32."""
    mib = T * T * 4 / 2**20
    return number(answer, mib, f"{T} × {T} weights × 4 bytes = {mib:g} MiB, for one head of one layer and one "
                  "sentence: double T and it is four times as much",
                  low="too small: one float32 weight per (query, key) pair",
                  high="too large: count one head of one layer, in MiB (2^20 bytes)",
                  where="how many (query, key) pairs", name="weights_mib")
