"""Throughput of course_lib's encoder layers against torch.nn.TransformerEncoder.

Both stacks get the same configuration and the same weights (copied by the contract's names,
``in_proj = cat(w_q, w_k, w_v)``) and run on the same embeddings (B, T, d_model), without padding.
For each sequence length the two are timed alternately in one run (several rounds, each a few
steps of one then of the other) and the median per step is printed, with the speed-up over torch.nn
as the median over rounds of each round's ratio (the two timings of a round are seconds apart, so a
machine whose load drifts shifts both):

* train: forward + backward (``out.backward(grad)``; no optimizer step), in training mode;
* infer: forward under ``torch.inference_mode()`` in eval mode (torch.nn may take its fast path).

course_lib runs its fused path (``need_weights=False``: ``F.scaled_dot_product_attention``); the
explicit path (``return_attention=True``) is measured for memory only.

FLOPs are counted analytically, matrix products only (2 per multiply-add), per layer and forward:

    projections  2*B*T*d*(3d)  +  2*B*T*d*d       = 8*B*T*d^2
    feed-forward 2*B*T*d*d_ff  +  2*B*T*d_ff*d    = 4*B*T*d*d_ff
    attention    2*B*T*T*d (Q K^T) + 2*B*T*T*d (weights V) = 4*B*T^2*d

times ``num_layers``; a training step counts 3x the forward (the backward does two products per
forward product; flash attention's recomputation is not counted). TFLOP/s = FLOPs / median time.

Usage:
    python benchmarks/encoder_throughput.py --device cpu        # d_model 256, 4 heads, d_ff 1024, 2 layers, B 8, T 128
    python benchmarks/encoder_throughput.py --device cuda       # d_model 512, 8 heads, d_ff 2048, 6 layers, B 16,
                                                                # T 512/2048/8192, bf16 autocast
    add --compile to also time course_lib's stack under torch.compile (printed as its own line).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))            # run from a checkout, installed or not

from course_lib import EncoderLayer  # noqa: E402
from course_lib.interop import copy_layer_to_torch  # noqa: E402

CONFIGS = {
    "cpu": dict(d_model=256, num_heads=4, d_ff=1024, num_layers=2, batch=8, lengths=[128]),
    "cuda": dict(d_model=512, num_heads=8, d_ff=2048, num_layers=6, batch=16, lengths=[512, 2048, 8192]),
}


class LayerStack(nn.Module):
    """course_lib's EncoderLayers in a row: what nn.TransformerEncoder is (the embedding aside)."""

    def __init__(self, d_model, num_heads, d_ff, num_layers, dropout):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))

    def forward(self, x, return_attention=False):
        for layer in self.layers:
            x = layer(x, return_attention=return_attention)
            if return_attention:
                x = x[0]
        return x


def torch_copy(stack: LayerStack, d_model, num_heads, d_ff, dropout) -> nn.TransformerEncoder:
    ref_layer = nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout, batch_first=True)
    ref = nn.TransformerEncoder(ref_layer, len(stack.layers))
    for ours, theirs in zip(stack.layers, ref.layers):
        copy_layer_to_torch(ours, theirs)
    return ref


def flops_forward(b, t, d, d_ff, num_layers):
    return num_layers * (8 * b * t * d * d + 4 * b * t * d * d_ff + 4 * b * t * t * d)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def make_steps(model, x, grad, autocast):
    def train():
        model.train()
        for p in model.parameters():
            p.grad = None
        with autocast():
            out = model(x)
        out.backward(grad)

    def infer():
        model.eval()
        with torch.inference_mode(), autocast():
            model(x)

    return train, infer


def time_alternating(steps: dict, device, rounds, iters, clock=time.perf_counter):
    """Seconds per call of each step in every round (a list per step), the steps interleaved round by round."""
    for step in steps.values():                                         # warm-up (and compilation)
        for _ in range(2):
            step()
    sync(device)
    samples = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            sync(device)
            start = clock()
            for _ in range(iters):
                step()
            sync(device)
            samples[name].append((clock() - start) / iters)
    return samples


def saved_activation_bytes(model, x, autocast, return_attention):
    """Bytes of the tensors autograd keeps for the backward of one training forward (each storage once)."""
    seen = {}

    def pack(t):
        storage = t.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
        return t

    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), autocast():
        out = model(x, return_attention=return_attention)
    del out
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    return sum(n for ptr, n in seen.items() if ptr not in params)


def peak_training_memory(model, x, grad, autocast, return_attention):
    """Peak CUDA memory (bytes) of one training step, or None when it runs out of memory."""
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    try:
        for p in model.parameters():
            p.grad = None
        model.train()
        with autocast():
            out = model(x, return_attention=return_attention)
        out.backward(grad)
        del out
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base
    except torch.OutOfMemoryError:
        return None
    finally:
        for p in model.parameters():
            p.grad = None
        torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--lengths", type=int, nargs="*", help="override the sequence lengths")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iters", type=int, default=3, help="steps per timed sample")
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--compile", action="store_true", help="also time course_lib's stack under torch.compile")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads on CPU")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="cpu: this process's CPU time (all threads summed), steadier on a busy CPU machine")
    args = parser.parse_args()

    device = torch.device(args.device)
    config = dict(CONFIGS[device.type])
    lengths = args.lengths or config.pop("lengths")
    config.pop("lengths", None)
    d, h, d_ff, n_layers, b = (config[k] for k in ("d_model", "num_heads", "d_ff", "num_layers", "batch"))
    if args.threads:
        torch.set_num_threads(args.threads)
    if device.type == "cuda":
        def autocast():
            return torch.autocast("cuda", dtype=torch.bfloat16)
        precision = "bf16 autocast"
        name = torch.cuda.get_device_name()
    else:
        autocast = contextlib.nullcontext
        precision = "float32"
        name = f"CPU, {torch.get_num_threads()} threads"

    torch.manual_seed(0)
    ours = LayerStack(d, h, d_ff, n_layers, args.dropout).to(device)
    theirs = torch_copy(ours, d, h, d_ff, args.dropout).to(device)
    compiled = torch.compile(ours) if args.compile else None

    print(f"# encoder throughput, {datetime.date.today()}, torch {torch.__version__}, {name}")
    print(f"# d_model={d} num_heads={h} d_ff={d_ff} num_layers={n_layers} batch={b} dropout={args.dropout} "
          f"{precision}; no padding; median of {args.rounds} rounds x {args.iters} steps, alternating; "
          f"{'process CPU time, threads summed' if args.clock == 'cpu' else 'wall-clock time'}")
    print("# FLOPs/forward = layers*(8BTd^2 + 4BTd*d_ff + 4BT^2d); a training step = 3x forward")
    print(f"{'T':>6} {'step':>6} {'implementation':<34} {'ms':>9} {'TFLOP/s':>8} {'vs torch.nn':>11}")
    for t in lengths:
        x = torch.randn(b, t, d, device=device)
        grad = torch.randn(b, t, d, device=device)
        steps = {}
        for label, model in (("course_lib (fused SDPA path)", ours), ("torch.nn.TransformerEncoder", theirs),
                             ("course_lib + torch.compile", compiled)):
            if model is None:
                continue
            train, infer = make_steps(model, x, grad, autocast)
            if model is compiled:
                try:                                                        # compile now, not in the timing
                    train(), infer()
                except Exception as error:                                  # noqa: BLE001 - report and go on
                    print(f"# torch.compile failed ({type(error).__name__}: {str(error)[:200]}); compiled line skipped")
                    compiled = None
                    continue
            steps[("train", label)] = train
            steps[("infer", label)] = infer
        clock = time.process_time if args.clock == "cpu" else time.perf_counter
        samples = time_alternating(steps, device, args.rounds, args.iters, clock)
        fwd = flops_forward(b, t, d, d_ff, n_layers)
        for kind, mult in (("train", 3), ("infer", 1)):
            ref = samples[(kind, "torch.nn.TransformerEncoder")]
            for (k, label), times in samples.items():
                if k != kind:
                    continue
                seconds = statistics.median(times)
                speedup = statistics.median(r / s for r, s in zip(ref, times))     # round by round
                print(f"{t:>6} {kind:>6} {label:<34} {seconds * 1e3:>9.2f} {mult * fwd / seconds / 1e12:>8.3g} "
                      f"{speedup:>10.2f}x")

        # memory: the explicit path (return_attention=True) against the fused path
        fused_saved = saved_activation_bytes(ours, x, autocast, False)
        weights_bytes = n_layers * b * h * t * t * (2 if device.type == "cuda" else 4)
        line = (f"{t:>6} memory: saved for backward, fused path {fused_saved / 2**20:,.0f} MiB")
        if weights_bytes < 8 * 2**30:                                       # the explicit path fits comfortably
            explicit_saved = saved_activation_bytes(ours, x, autocast, True)
            line += f"; explicit path {explicit_saved / 2**20:,.0f} MiB ({explicit_saved / fused_saved:.1f}x)"
        else:
            line += f"; explicit path > {weights_bytes / 2**30:,.0f} GiB (the (B, H, T, T) weights alone; not run)"
        print(line)
        if device.type == "cuda":
            fused_peak = peak_training_memory(ours, x, grad, autocast, False)
            explicit_peak = peak_training_memory(ours, x, grad, autocast, True)
            fmt = lambda v: "out of memory" if v is None else f"{v / 2**30:.2f} GiB"  # noqa: E731
            print(f"{t:>6} memory: peak CUDA memory of a training step, fused {fmt(fused_peak)}, "
                  f"explicit {fmt(explicit_peak)}")
        del x, grad


if __name__ == "__main__":
    main()
