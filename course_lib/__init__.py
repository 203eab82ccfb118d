"""course_lib: the reference Transformer encoder, masks, plots and checks of the course.

The six parts of the exercise (see the exercise contract) are exported at the top level::

    from course_lib import (sinusoidal_positional_encoding, scaled_dot_product_attention,
                            MultiHeadAttention, PositionwiseFeedForward, EncoderLayer, Encoder)
"""

# Every public name, by the module that defines it. They are imported on first use (PEP 562), so
# `import course_lib` itself costs nothing: the autograder starts its sandbox before torch loads, and
# `from course_lib import Encoder` or `course_lib.Encoder` work as usual.
_EXPORTS = {
    "attention": ("MultiHeadAttention", "scaled_dot_product_attention"),
    "encoder": ("Encoder", "EncoderLayer"),
    "errors": ("CourseTypeError", "CourseValueError"),
    "feed_forward": ("PositionwiseFeedForward",),
    "heads": ("OutputHead",),
    "interop": ("copy_attention_to_torch", "copy_layer_to_torch"),
    "masks": ("allow_to_torch_attn_mask", "causal_mask", "hf_to_key_padding_mask", "key_padding_to_attn_mask",
              "key_padding_to_hf", "padding_mask_from_lengths", "torch_attn_mask_to_allow"),
    "norms": ("RMSNorm",),
    "positional": ("LearnedPositionalEmbedding", "SinusoidalPositionalEncoding", "sinusoidal_positional_encoding"),
    "rope": ("RotaryEmbedding", "apply_rotary", "rotary_tables"),
    "tokenizer": ("PAD", "PAD_ID", "UNK", "UNK_ID", "Vocab", "WordTokenizer", "detokenize", "tokenize"),
    "utils": ("count_parameters", "get_device", "seed_everything", "show_source"),
    # plot and widget helpers (they load matplotlib and ipywidgets)
    "plots": ("plot_attention", "plot_heatmap", "plot_positional_encoding", "plot_pe_curves", "plot_mask",
              "plot_masks", "plot_batch", "plot_curves", "plot_probabilities", "draw_encoder_diagram", "course_style"),
    "widgets": ("InteractiveFigure", "interactive_figure", "attention_explorer", "pe_explorer",
                "temperature_explorer"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__version__ = "0.7.1"

__all__ = [
    "sinusoidal_positional_encoding", "scaled_dot_product_attention", "MultiHeadAttention",
    "PositionwiseFeedForward", "EncoderLayer", "Encoder",
    "SinusoidalPositionalEncoding", "LearnedPositionalEmbedding",
    "padding_mask_from_lengths", "causal_mask", "key_padding_to_attn_mask", "hf_to_key_padding_mask",
    "key_padding_to_hf", "allow_to_torch_attn_mask", "torch_attn_mask_to_allow",
    "copy_attention_to_torch", "copy_layer_to_torch",
    "OutputHead", "RMSNorm", "RotaryEmbedding", "apply_rotary", "rotary_tables",
    "Vocab", "WordTokenizer", "tokenize", "detokenize", "PAD", "UNK", "PAD_ID", "UNK_ID",
    "get_device", "seed_everything", "count_parameters", "show_source",
    "CourseValueError", "CourseTypeError",
]


def __getattr__(name):
    import importlib.util

    module = _MODULE_OF.get(name)
    if module is None:                           # a submodule (course_lib.masks, ...), as after an import
        if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'course_lib' has no attribute {name!r}")
        return importlib.import_module(f".{name}", __name__)
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value                      # found once; later lookups do not come here
    return value


def __dir__():
    return sorted(set(globals()) | set(_MODULE_OF))
