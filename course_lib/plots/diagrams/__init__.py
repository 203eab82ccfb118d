"""Block diagrams drawn with course code: the encoder, and the conceptual figures of ``res/``."""

from .stack import draw_encoder_diagram

__all__ = ["draw_encoder_diagram"]
