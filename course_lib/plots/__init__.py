"""Figures for the course: attention maps, positional encodings, masks, curves, diagrams.

One module per topic:

- ``style``: the palette (queries/keys/values blue/orange/green, one colour per position),
  :func:`course_style` and the figure-size arithmetic;
- ``attention``: :func:`plot_attention`; ``heatmaps``: :func:`plot_heatmap` (:func:`shared_colorbar`
  for a row of maps on one scale);
- ``positional``: :func:`plot_positional_encoding`, :func:`plot_pe_curves`;
- ``masks``: :func:`plot_mask`, :func:`plot_masks`, :func:`plot_batch`;
- ``curves``: :func:`plot_curves`, :func:`plot_probabilities`;
- ``describe``: what a figure shows, in words: each helper records it, and in a notebook it stands
  under the image as a caption a screen reader reads (JupyterLab reads no alt text);
- ``diagrams``: :func:`draw_encoder_diagram` and the course's conceptual figures in ``res/``
  (``python -m course_lib.plots.figures res`` or ``make figures`` writes them).

Every helper is pure: it takes tensors (CPU or CUDA, any float dtype; NumPy arrays work too) and
token labels, draws a new figure (or into ``ax=`` when given) and returns ``(fig, axes)``. It
prints nothing, never calls ``plt.show()`` and leaves matplotlib's global settings alone (the
course style is set by :func:`course_style` and restored afterwards). In a notebook the figure
appears when the cell ends; end the cell with ``plt.show()`` or an assignment (``fig, ax = ...``)
so that no ``<Figure size ...>`` text is printed.

Masks follow torch's conventions (see ``course_lib.masks``): a ``key_padding_mask`` is bool with
True = padding (ignored), as in ``nn.MultiheadAttention``; an ``attn_mask`` is bool with True = may
attend, as in ``F.scaled_dot_product_attention``; Hugging Face's ``attention_mask`` uses 1 = keep.
"""

from .attention import plot_attention
from .curves import plot_curves, plot_probabilities
from .describe import enable_captions
from .diagrams import draw_encoder_diagram
from .heatmaps import plot_heatmap, shared_colorbar
from .masks import plot_batch, plot_mask, plot_masks
from .positional import plot_pe_curves, plot_positional_encoding
from .style import course_style

enable_captions()          # in a kernel: each figure a helper drew gets its description as a caption

__all__ = [
    "course_style",
    "plot_attention",
    "plot_heatmap",
    "shared_colorbar",
    "plot_positional_encoding",
    "plot_pe_curves",
    "plot_mask",
    "plot_masks",
    "plot_batch",
    "plot_curves",
    "plot_probabilities",
    "draw_encoder_diagram",
]
