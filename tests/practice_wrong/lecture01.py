"""Wrong answers to lecture 01's checks, each with the word of its message that names the cause."""

from __future__ import annotations

from practice_wrong import Wrong
from test_practice_lecture01 import LAYERS, D, additive_module, by_hand, rnn_loop, traffic, truncated

WRONG = {
    "check_additive_attention": [
        Wrong("scores linear in s and h", (additive_module(squash=False),), word="linear"),
        Wrong("maps with biases", (additive_module(bias=True),), word="bias"),
        Wrong("softmax over the batch", (additive_module(sum_axis=0),), word="sum to 1"),
        Wrong("a plain mean as context", (additive_module(context_ok=False),), word="context"),
    ],
    "check_decoder_scores": [
        Wrong("counted passes, not scores", (5, 1), word="passes"),
        Wrong("the newest query only, as with a cache", (15, 15), word="recomputes"),
        Wrong("the masked pairs counted too", (55, 25), word="mask"),
        Wrong("one score per position in training", (35, 5), word="position"),
        Wrong("one pass's scores summed wrongly", (20, 15), word="sum over the passes"),
    ],
    "check_rnn_loop": [
        Wrong("no recurrence", (lambda x, a, b: rnn_loop(x, a, b, recurrent=False),), word="ignores the one before"),
        Wrong("W_hh transposed", (lambda x, a, b: rnn_loop(x, a, b, transpose_hh=True),), word="transpose"),
        Wrong("no tanh", (lambda x, a, b: rnn_loop(x, a, b, squash=False),), word="not squashed"),
        Wrong("the last state only", (lambda x, a, b: rnn_loop(x, a, b, last_only=True),), word="one state per"),
    ],
    "check_truncated_rnn": [
        Wrong("never cut", (lambda x, a, b, k: truncated(x, a, b, k, cut=False),), word="still reaches"),
        Wrong("cut every step", (lambda x, a, b, k: truncated(x, a, b, k, every=1),), word="expected the"),
        Wrong("cut one step late", (lambda x, a, b, k: truncated(x, a, b, k, offset=1),), word="expected the"),
        Wrong("the input detached", (lambda x, a, b, k: truncated(x.detach(), a, b, k),), word="no gradient"),
    ],
    "check_dependency_map": [
        Wrong("transposed", (lambda f, x: by_hand(f, x, transpose=True), LAYERS), {"d": D}, word="transpose"),
        Wrong("squared norms", (lambda f, x: by_hand(f, x, square=True), LAYERS), {"d": D}, word="square"),
        Wrong("gradient of the sum", (lambda f, x: by_hand(f, x, summed=True), LAYERS), {"d": D}, word="sum of y_t"),
    ],
    "check_attention_traffic": [
        Wrong("numbers, not bytes", (lambda T, d, b=4: traffic(T, d, 1),), word="not bytes"),
        Wrong("writes only", (lambda T, d, b=4: traffic(T, d, reads=False),), word="not what it reads"),
        Wrong("a fused kernel's traffic", (lambda T, d, b=4: 16 * T * d,), word="fused kernel"),
    ],
    "check_pipeline_steps": [
        Wrong("off by one", (106,), word="off by one"),
        Wrong("each layer waits for the whole layer below", (600,), word="waits only"),
        Wrong("the attention stack's count", (6,), word="attention"),
        Wrong("layer 1 alone", (100,), word="layer 1 alone"),
    ],
    "check_attention_crossover": [
        Wrong("one T x T matrix, not one per head", (384,), word="per head"),
        Wrong("multiplied by the heads", (384 * 12,), word="multiplies by the heads"),
        Wrong("X taken as d_model numbers", (384 ** 0.5,), word="grows with T"),
        Wrong("T^2 = d_k", (32 ** 0.5,), word="grows with T"),
    ],
}
