"""course_lib: the reference Transformer encoder, masks, plots and checks of the course.

The six parts of the exercise (see the exercise contract) are exported at the top level::

    from course_lib import (sinusoidal_positional_encoding, scaled_dot_product_attention,
                            MultiHeadAttention, PositionwiseFeedForward, EncoderLayer, Encoder)
"""

from .attention import MultiHeadAttention, scaled_dot_product_attention
from .encoder import Encoder, EncoderLayer
from .errors import CourseTypeError, CourseValueError
from .feed_forward import PositionwiseFeedForward
from .heads import OutputHead
from .interop import copy_attention_to_torch, copy_layer_to_torch
from .masks import (causal_mask, hf_to_key_padding_mask, key_padding_to_attn_mask, key_padding_to_hf,
                    padding_mask_from_lengths)
from .norms import RMSNorm
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding, sinusoidal_positional_encoding
from .rope import RotaryEmbedding, apply_rotary, rotary_tables
from .tokenizer import PAD, PAD_ID, UNK, UNK_ID, Vocab, WordTokenizer, detokenize, tokenize
from .utils import count_parameters, get_device, seed_everything, show_source

__version__ = "0.1.0"

__all__ = [
    "sinusoidal_positional_encoding", "scaled_dot_product_attention", "MultiHeadAttention",
    "PositionwiseFeedForward", "EncoderLayer", "Encoder",
    "SinusoidalPositionalEncoding", "LearnedPositionalEmbedding",
    "padding_mask_from_lengths", "causal_mask", "key_padding_to_attn_mask", "hf_to_key_padding_mask",
    "key_padding_to_hf",
    "copy_attention_to_torch", "copy_layer_to_torch",
    "OutputHead", "RMSNorm", "RotaryEmbedding", "apply_rotary", "rotary_tables",
    "Vocab", "WordTokenizer", "tokenize", "detokenize", "PAD", "UNK", "PAD_ID", "UNK_ID",
    "get_device", "seed_everything", "count_parameters", "show_source",
    "CourseValueError", "CourseTypeError",
]

# Plot and widget helpers live in course_lib.plots and course_lib.widgets. They are also reachable
# as course_lib.<name>, imported on first use so that `import course_lib` does not load matplotlib.
_LAZY = {
    "plots": ("plot_attention", "plot_heatmap", "plot_positional_encoding", "plot_pe_curves", "plot_mask",
              "plot_masks", "plot_batch", "plot_curves", "plot_probabilities", "draw_encoder_diagram", "course_style"),
    "widgets": ("InteractiveFigure", "interactive_figure", "attention_explorer", "pe_explorer",
                "temperature_explorer"),
}


def __getattr__(name):
    import importlib

    for module, names in _LAZY.items():
        if name in names:
            return getattr(importlib.import_module(f".{module}", __name__), name)
    raise AttributeError(f"module 'course_lib' has no attribute {name!r}")
