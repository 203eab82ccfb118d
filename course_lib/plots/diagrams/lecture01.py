"""Lecture 01's pictures: the Transformer family tree, and decoding one token at a time.

Decoding is drawn as frames: :func:`draw_decoding_step` is one step (the slider of the lecture
redraws it), :func:`draw_decoding_steps` puts every step in one strip (``res/decoding_steps.svg``,
the static version a page without a front end shows).
"""

from __future__ import annotations

from ...errors import check_int
from ..style import ATTEND_COLOR, BLOCKED_COLOR, COLORS
from .canvas import Canvas

NOTE = COLORS["note"]
SOURCE = ("the", "cat", "sat", "down")                   # the lecture's toy "translation": reverse the source
TARGET = ("down", "sat", "cat", "the", "<eos>")
EMITTED = "#fbe7b5"                                      # the token a step emits
COURSE = "#2b6cb0"                                       # where this course sits


def decoding_prefix(step: int) -> tuple[list[str], str]:
    """What the decoder reads at ``step`` (1-based) and the token it emits there."""
    check_int("step", step, 1, len(TARGET))
    return ["<bos>", *TARGET[: step - 1]], TARGET[step - 1]


def _token(c: Canvas, x, y, s, fill="white", w=0.62, h=0.34, edge="0.3", **kw):
    c.box(x, y, w, h, s, fill=fill, edge=edge, fontsize=10, **kw)


def _decoding_row(c: Canvas, y, step, x0=1.05, w=0.62, gap=0.08, dec_x=5.25):
    """One step as a row: the prefix read, the decoder, the token emitted; returns the emitted box's x."""
    prefix, new = decoding_prefix(step)
    c.text(0.1, y + 0.17, f"step {step}", fontsize=10, ha="left", color=NOTE)
    for i, tok in enumerate(prefix):
        _token(c, x0 + i * (w + gap), y, tok, fill=COLORS["decoder"] if i else COLORS["out"], w=w)
    end = x0 + len(prefix) * (w + gap) - gap
    c.arrow((end + 0.06, y + 0.17), (dec_x - 0.06, y + 0.17))
    c.box(dec_x, y, 0.95, 0.34, "decoder", fill=COLORS["decoder"], edge="0.25")
    out_x = dec_x + 1.45
    c.arrow((dec_x + 1.01, y + 0.17), (out_x - 0.06, y + 0.17))
    _token(c, out_x, y, new, fill=EMITTED, w=w, edge="0.1", lw=1.5)
    return out_x


def draw_decoding_steps():
    """Every step of decoding in one strip: each row reads one token more, the one the row above emitted."""
    steps = len(TARGET)
    row = 0.62
    c = Canvas(8.6, 0.78 + steps * row)
    c.title("Decoding: one token per step, each fed back as the next step's input")
    top = c.height - 0.8
    w, gap, x0 = 0.62, 0.08, 1.05
    for step in range(1, steps + 1):
        y = top - (step - 1) * row
        out_x = _decoding_row(c, y, step)
        if step < steps:                                  # the emitted token becomes the last input below
            nx = x0 + step * (w + gap) + w / 2
            c.arrow((out_x + w / 2, y), (out_x + w / 2, y - 0.1), (nx, y - 0.1), (nx, y - row + 0.34),
                    color=NOTE, lw=1.0, linestyle=(0, (3, 2)), head=7)
    c.text(8.5, 0.18, "source: “the cat sat down”; the stand-in decoder reverses it",
           fontsize=10, ha="right", color=NOTE)
    return c.fig


def draw_decoding_step(step: int = 1):
    """One frame of decoding: the encoder's vectors of the source, the prefix the decoder reads at
    ``step`` (1-based), and the token it emits."""
    prefix, new = decoding_prefix(step)
    c = Canvas(8.6, 3.3)
    c.title(f"Decoding, step {step} of {len(TARGET)}: the decoder reads {len(prefix)} token"
            f"{'s' if len(prefix) > 1 else ''} and emits one")
    # encoder: the source, read once, all at the same time
    w, gap = 0.62, 0.08
    for i, tok in enumerate(SOURCE):
        _token(c, 0.2 + i * (w + gap), 0.35, tok, fill=COLORS["encoder"], w=w)
        c.arrow((0.2 + i * (w + gap) + w / 2, 0.75), (0.2 + i * (w + gap) + w / 2, 1.0))
    enc_right = 0.2 + 4 * w + 3 * gap
    c.box(0.2, 1.0, enc_right - 0.2, 0.42, "encoder (runs once)", fill=COLORS["encoder"], edge="0.25")
    # decoder: the prefix so far, and a free slot for the token this step adds
    x0 = 3.45
    for i, tok in enumerate(prefix):
        _token(c, x0 + i * (w + gap), 0.35, tok, fill=COLORS["decoder"] if i else COLORS["out"], w=w)
    if new != "<eos>":
        c.box(x0 + len(prefix) * (w + gap), 0.35, w, 0.34, "", fill="white", edge="0.55", linestyle=(0, (3, 2)))
    dx0, dx1 = x0, x0 + len(TARGET) * (w + gap) - gap
    for i in range(len(prefix)):
        c.arrow((x0 + i * (w + gap) + w / 2, 0.75), (x0 + i * (w + gap) + w / 2, 1.0))
    c.box(dx0, 1.0, dx1 - dx0, 0.42, "decoder (runs once per step)", fill=COLORS["decoder"], edge="0.25")
    c.arrow((enc_right + 0.06, 1.21), (dx0 - 0.06, 1.21), color=COLORS["line"])
    c.text((enc_right + dx0) / 2, 1.45, "z", fontsize=11, style="italic")
    c.text(0.2, 1.72, "z: one vector per source token,\nread by every step of the decoder", fontsize=10,
           ha="left", va="bottom", color=NOTE)
    last = x0 + (len(prefix) - 1) * (w + gap) + w / 2
    c.arrow((last, 1.42), (last, 1.98))
    _token(c, last - w / 2, 2.0, new, fill=EMITTED, w=w, edge="0.1", lw=1.5)
    c.text(last + w / 2 + 0.12, 2.17, "emitted", fontsize=10, ha="left", color=NOTE)
    done = "the end token: decoding stops" if new == "<eos>" else "appended to the input of the next step"
    c.text(c.width / 2, 2.72, f"step {step} emits “{new}”: {done}", fontsize=10)
    return c.fig


def _pattern(c: Canvas, x, y, causal: bool, n=4, cell=0.13):
    """A tiny attention pattern: which key (column) each query (row) may read."""
    for r in range(n):
        for k in range(n):
            color = BLOCKED_COLOR if (causal and k > r) else ATTEND_COLOR
            c.box(x + k * cell, y + (n - 1 - r) * cell, cell, cell, fill=color, edge="white", lw=0.6,
                  rounding=0.0)


def draw_transformer_family():
    """The family tree: the 2017 encoder-decoder, and the three branches that grew from it."""
    c = Canvas(8.6, 4.75)
    c.title("The Transformer family: which half of the 2017 model each branch keeps")
    c.box(2.3, 3.78, 4.0, 0.5, "Transformer (Vaswani et al. 2017)\nencoder + decoder, for translation",
          fill=COLORS["hidden"], edge="0.25")
    columns = [
        (1.45, "encoder-only", "bidirectional: every token\nreads the whole sentence",
         ["BERT (2018)", "RoBERTa (2019)", "all-MiniLM-L6-v2"], "understand a text:\nclassify, tag, search", False),
        (4.3, "encoder-decoder", "encoder bidirectional,\ndecoder causal + cross",
         ["the original (2017)", "T5 (2019)", "BART (2019)"], "map a sequence to another:\ntranslate, summarize", None),
        (7.15, "decoder-only", "causal: a token reads\nonly what comes before",
         ["GPT (2018)", "GPT-2 (2019)", "GPT-3, LLaMA"], "generate text:\ncomplete, chat, code", True),
    ]
    for cx, name, attention, models, use, causal in columns:
        c.arrow((cx, 3.78), (cx, 3.55))
        highlight = name == "encoder-only"
        c.box(cx - 1.3, 3.15, 2.6, 0.38, name + (": this course" if highlight else ""), fill="white",
              edge=COURSE if highlight else "0.25", lw=2.2 if highlight else 1.1, fontweight="bold",
              text_color=COURSE if highlight else "black")
        if causal is None:
            _pattern(c, cx - 0.6, 2.5, False)
            _pattern(c, cx + 0.08, 2.5, True)
        else:
            _pattern(c, cx - 0.26, 2.5, causal)
        c.text(cx, 2.2, attention, fontsize=10, color=NOTE)
        for i, model in enumerate(models):
            c.box(cx - 1.1, 1.4 - i * 0.38, 2.2, 0.3, model,
                  fill=COLORS["encoder"] if causal is False else COLORS["decoder"] if causal else COLORS["hidden"])
        c.text(cx, 0.3, use, fontsize=10, color="0.15")
    return c.fig


FIGURES = {
    "transformer_family": draw_transformer_family,
    "decoding_steps": draw_decoding_steps,
}
