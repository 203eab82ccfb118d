"""course_lib.plots.describe: every helper says what its figure shows, and in a kernel that text stands
under the image as a caption (JupyterLab reads no alt text from output metadata)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.display import display  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from course_lib import plots  # noqa: E402
from course_lib.plots.describe import description, enable_captions  # noqa: E402

TOKENS = ["the", "cat", "sat"]
WEIGHTS = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.05, 0.9, 0.05]])

HELPERS = {
    "attention": (lambda: plots.plot_attention(WEIGHTS, TOKENS), ["the: the 0.70", "sat: cat 0.90"]),
    "heads": (lambda: plots.plot_attention(torch.stack([WEIGHTS, WEIGHTS.T]), TOKENS), ["head 1", "cat: cat 0.80"]),
    "heatmap": (lambda: plots.plot_heatmap(WEIGHTS - 0.5, TOKENS, TOKENS, title="scores"),
                ["scores: 3 rows by 3 columns", "from -0.45 to 0.40", "row sat, column cat"]),
    "pe": (lambda: plots.plot_positional_encoding(torch.zeros(4, 6)), ["4 positions (down) by 6 features"]),
    "pe curves": (lambda: plots.plot_pe_curves(torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0]]), dims=[0, 1]),
                  ["dim 0 from 0.00 at position 0 to 0.00 at 2", "crossing 0 1 times"]),
    "mask": (lambda: plots.plot_mask(torch.tril(torch.ones(3, 3, dtype=torch.bool)), "attend", TOKENS, TOKENS),
             ["6 of 9 cells open", "the: 1, cat: 2, sat: 3"]),
    "masks": (lambda: plots.plot_masks([torch.ones(2, 2, dtype=torch.bool)] * 2, "attend", ["a", "b"]),
              ["a: a grid", "b: a grid"]),
    "batch": (lambda: plots.plot_batch([["a", "b"], ["c"]]), ["example 1: c (1 tokens, 1 padding)"]),
    "curves": (lambda: plots.plot_curves([1, 2, 4], {"time": [1, 2, 3]}, "T", "ms"),
               ["ms against T from 1 to 4, one line per series: time"]),
    "probabilities": (lambda: plots.plot_probabilities(torch.tensor([0.0, 1.0]), ["x", "y"]), ["y 0.73, x 0.27"]),
}


@pytest.fixture
def shell():
    """An IPython shell with the captions registered (as importing course_lib.plots in a kernel does)."""
    shell = InteractiveShell.instance()
    enable_captions(shell)
    yield shell
    plt.close("all")
    InteractiveShell.clear_instance()


@pytest.mark.parametrize("name", list(HELPERS))
def test_every_helper_describes_its_figure_with_its_numbers(name):
    draw, said = HELPERS[name]
    fig, _ = draw()
    text = description(fig)
    plt.close(fig)
    assert text and all(s in text for s in said), text
    assert "·" not in text and "→" not in text          # read out as "middle dot", "rightwards arrow"


def test_a_described_figure_shows_its_caption_under_the_image(shell):
    fig, _ = plots.plot_attention(WEIGHTS, TOKENS)
    with capture_output() as cap:
        display(fig)
    image, caption = cap.outputs
    assert image.data["text/plain"].startswith("<Figure size")            # the figure, as IPython shows it
    assert caption.data["text/plain"].startswith("Figure: Attention map, 3 queries by 3 keys; each query's")
    assert '<p role="note" aria-label="figure description"' in caption.data["text/html"]


def test_a_figure_no_helper_drew_shows_as_before(shell):
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    with capture_output() as cap:
        display(fig)
    (image,) = cap.outputs
    assert image.data["text/plain"].startswith("<Figure size")            # the figure, as IPython shows it
