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
    "check_decoder_passes": [
        Wrong("one pass per token in training too", (5, 5), word="in training"),
        Wrong("one pass at inference", (1, 1), word="one token"),
        Wrong("the passes swapped", (1, 5), word="pass"),
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
    "check_attention_memory": [
        Wrong("MB for MiB", (4.19,), word="MB"),
        Wrong("bytes", (4 * 1024 * 1024,), word="bytes"),
        Wrong("no bytes per float32", (1.0,), word="4 bytes"),
        Wrong("one row only", (1024 * 4 / 2**20,), word="one row"),
    ],
}
