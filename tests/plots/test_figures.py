"""res/: the course's figures exist, are what the code draws (byte for byte), look right, and every
image a notebook shows is there and local."""

import json
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from course_lib.plots import figures

ROOT = Path(__file__).resolve().parents[2]
RES = ROOT / "res"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks" / "07_exercise").glob("*.ipynb"))

# the names fixed in the team plan: lectures reference them as ![...](../res/NAME.svg)
EXPECTED = ["seq2seq", "transformer", "encoder_layer", "recurrence_vs_attention", "qkv", "attention_matrix",
            "multi_head", "feed_forward", "add_norm", "embedding_output", "embedding_plus_position",
            "positional_waves", "padded_batch", "encoder_classifier",
            "permutation_blind", "rope_rotation"]                                   # lecture05.py

IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_IMAGE = re.compile(r"<img[^>]*\bsrc\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)


def _markdown_images():
    """(notebook, cell index, target) of every image a markdown cell shows."""
    found = []
    for nb in NOTEBOOKS:
        for i, cell in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "markdown":
                source = "".join(cell["source"])
                found += [(nb, i, target) for target in IMAGE.findall(source) + HTML_IMAGE.findall(source)]
    return found


def test_every_figure_of_the_plan_is_drawn_and_committed():
    assert list(figures.FIGURES) == EXPECTED
    missing = [name for name in EXPECTED if not (RES / f"{name}.svg").is_file()]
    assert not missing, f"run `make figures`: missing {missing}"


@pytest.mark.slow
def test_regenerating_gives_the_committed_bytes(tmp_path):
    assert figures.main([str(tmp_path)]) == 0
    changed = [name for name in EXPECTED
               if (tmp_path / f"{name}.svg").read_bytes() != (RES / f"{name}.svg").read_bytes()]
    assert not changed, f"res/ is stale (run `make figures`): {changed}"


def test_writing_twice_gives_the_same_bytes():
    fig = figures.draw("qkv")
    try:
        assert figures.svg_bytes(fig) == figures.svg_bytes(fig)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name", EXPECTED)
def test_svg_has_no_paths_dates_or_fonts_of_this_machine(name):
    text = (RES / f"{name}.svg").read_text(encoding="utf-8")
    assert not re.search(r"/home/|/tmp/|/work/|/Users/|[A-Za-z]:\\\\", text)
    assert not re.search(r"<dc:date>|\b20\d\d-\d\d-\d\d", text)
    assert "<text" not in text and "font-family" not in text     # text is stored as paths


@pytest.mark.parametrize("name", EXPECTED)
def test_figure_reads_well(name):
    fig = figures.draw(name)
    try:
        assert figures.layout_problems(fig) == []
        assert fig.get_figwidth() <= figures.MAX_WIDTH_IN
    finally:
        plt.close(fig)


def test_layout_problems_sees_overlaps_and_overflow():
    fig = plt.figure(figsize=(10, 2))
    fig.text(0.5, 0.5, "one label", fontsize=12)
    fig.text(0.51, 0.5, "another label", fontsize=12)
    fig.text(0.99, 0.1, "falls off the edge", fontsize=12)
    problems = figures.layout_problems(fig)
    plt.close(fig)
    assert any(p.startswith("overlapping") for p in problems)
    assert any(p.startswith("outside the figure") for p in problems)
    assert any("wide" in p for p in problems)


def test_every_image_a_notebook_shows_exists():
    missing = [f"{nb.name} cell {i}: {target}" for nb, i, target in _markdown_images()
               if not re.match(r"[a-z]+:", target) and not (nb.parent / target).resolve().is_file()]
    assert not missing


def test_the_exercise_shows_copies_of_res_from_its_own_folder():
    """nbgrader releases only notebooks/07_exercise/: its figures live there, as copies of res/."""
    exercise = ROOT / "notebooks" / "07_exercise"
    targets = [t for nb, _, t in _markdown_images() if nb.parent == exercise]
    assert targets and all(t.startswith("figures/") for t in targets), targets
    stale = [t for t in targets if (exercise / t).read_bytes() != (RES / Path(t).name).read_bytes()]
    assert not stale, f"run `make figures`: {stale}"


def test_no_notebook_points_at_a_remote_image():
    remote = [f"{nb.name} cell {i}: {target}" for nb, i, target in _markdown_images()
              if re.match(r"(https?:)?//", target)]
    assert not remote


def test_layout_problems_sees_text_leaving_its_box():
    from course_lib.plots.diagrams.canvas import Canvas

    c = Canvas(6, 1)
    c.box(2.0, 0.3, 0.6, 0.4, "a label far too long for its box")
    c.box(4.6, 0.3, 1.0, 0.4, "fits")
    problems = figures.layout_problems(c.fig)
    plt.close(c.fig)
    assert problems == ["text leaves its box: 'a label far too long for its box'"]
