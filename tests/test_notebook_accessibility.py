"""Links and folded answers as a screen reader lists them, read from the stored notebooks (no browser).

A screen reader's list of links says each link's name: one named by its URL is spelled out character
by character, one named "here" or "how" says nothing out of its sentence. Its list of folded blocks says
each <summary>: eleven "Solution"s and four "Answer"s cannot be told apart. So every link of every
notebook's markdown (``[text](url)``, ``<https://...>``, ``<a>``, and a URL written in the prose, which
the site turns into a link named by itself) must have a name that is neither, and every <summary> must
be unique in its notebook. The rules and the rewrite that mends what they find are
tools/name_links.py's (``python tools/name_links.py NOTEBOOK...``). Run alone:
``python -m pytest -m notebook_text`` (or this file).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.notebook_text

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + [
    ROOT / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"]


def _tool():
    spec = importlib.util.spec_from_file_location("name_links", ROOT / "tools" / "name_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tool = _tool()


def notebook(*markdown: str) -> dict:
    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": text} for text in markdown]}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_link_and_every_folded_block_has_a_name_of_its_own(path):
    problems = tool.problems(tool.read(path))
    assert not problems, (f"{path.relative_to(ROOT)}: {len(problems)} problems "
                          f"(python tools/name_links.py {path.relative_to(ROOT)} mends most):\n"
                          + "\n".join(problems))


@pytest.mark.parametrize("text,found", [
    ("See https://arxiv.org/abs/1706.03762 for more.", "a URL in the prose"),
    ("* Vaswani et al. (2017): www.example.org/paper", "a URL in the prose"),
    ("The paper: <https://arxiv.org/abs/1706.03762>", "autolink"),
    ("[https://arxiv.org/abs/1706.03762](https://arxiv.org/abs/1706.03762)", "a bare URL"),
    ("[arxiv.org/abs/1706.03762](https://arxiv.org/abs/1706.03762)", "a bare URL"),
    ("Read it [here](https://arxiv.org/abs/1706.03762).", "the word 'here'"),
    ("Open it ([how](open.html)).", "the word 'how'"),
    ("A [*link*](https://example.org).", "the word 'link'"),
    ('Read <a href="https://example.org">here</a>.', "an <a> named by the word 'here'"),
])
def test_each_kind_of_unnamed_link_is_found(text, found):
    assert any(found in line for line in tool.problems(notebook(text))), tool.problems(notebook(text))


@pytest.mark.parametrize("text", [
    "Vaswani et al. (2017), [*Attention Is All You Need*](https://arxiv.org/abs/1706.03762)",
    "![An encoder layer, its shapes](../res/encoder_layer.svg)",           # an image: its alt is checked elsewhere
    "Run `pip install https://example.org/pkg.whl` in a terminal.",       # code, not prose
    "```\nhttps://example.org/in/a/code/block\n```",
    '<a href="open.html">how to open a notebook</a>',
])
def test_named_links_images_and_code_pass(text):
    assert tool.problems(notebook(text)) == []


def test_a_repeated_summary_is_found_and_numbered_ones_pass():
    repeated = notebook("<details><summary>Answer</summary>\n\nA.\n</details>",
                        "1. Why?\n   <details><summary> Answer </summary>\n\n   B.\n   </details>",
                        "<details><summary>Answers</summary>\n\nC.\n</details>")
    assert tool.problems(repeated) == [
        "<summary>Answer</summary> 2 times: number them or say what each folds"]
    assert tool.rewrite(repeated) == (0, 2)
    assert tool.summaries(repeated) == ["Answer 1", "Answer 2", "Answers"]
    assert tool.problems(repeated) == []


def test_the_rewrite_names_a_reference_by_its_title_and_keeps_every_word():
    nb = notebook(
        "## References\n\n"
        "* Vaswani et al. (2017), *Attention Is All You Need*: https://arxiv.org/abs/1706.03762 (section 3.5)\n"
        "* Greene and Cunningham (2006), *Practical Solutions to the Problem of Diagonal Dominance in Kernel\n"
        "  Document Clustering*, ICML: https://doi.org/10.1145/1143844.1143892; the data set: "
        "http://mlg.ucd.ie/datasets/bbc.html (articles © BBC)\n"
        "* Karpathy, *nanoGPT* and *Let's build GPT*: <https://github.com/karpathy/nanoGPT>\n"
        "* PyTorch, `nn.MultiheadAttention` (True = not allowed): https://pytorch.org/docs/mha.html\n")
    assert tool.rewrite(nb) == (5, 0)
    assert "".join(nb["cells"][0]["source"]) == (
        "## References\n\n"
        "* Vaswani et al. (2017), [*Attention Is All You Need*](https://arxiv.org/abs/1706.03762) (section 3.5)\n"
        "* Greene and Cunningham (2006), [*Practical Solutions to the Problem of Diagonal Dominance in Kernel\n"
        "  Document Clustering*](https://doi.org/10.1145/1143844.1143892), ICML; "
        "[the data set](http://mlg.ucd.ie/datasets/bbc.html) (articles © BBC)\n"
        "* Karpathy, [*nanoGPT*](https://github.com/karpathy/nanoGPT) and *Let's build GPT*\n"
        "* [PyTorch, `nn.MultiheadAttention`](https://pytorch.org/docs/mha.html) (True = not allowed)\n")


def test_a_url_nothing_names_is_left_for_a_person():
    nb = notebook("Some prose. It goes on for a sentence or two.\n\nhttps://example.org/bare")
    assert tool.rewrite(nb) == (0, 0)
    assert tool.problems(nb) == ["cell 0: a URL in the prose, read as its characters: 'https://example.org/bare'"]


def _words(text: str) -> list[str]:
    """The words a reader sees, without link targets, URLs and numbers."""
    text = re.sub(r"\]\([^)\s]*\)", "]", text)
    text = tool.RAW_URL.sub(" ", text)
    return re.findall(r"[^\W\d_]+", text)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_rewrite_mends_each_stored_notebook_and_changes_only_links_and_summaries(path):
    """tools/name_links.py on the stored notebook (in memory): nothing is left to find, no code cell and
    no output changes, and every markdown cell keeps its words in order (only URLs become targets and
    repeated summaries gain a number)."""
    before = tool.read(path)
    after = json.loads(json.dumps(before))
    tool.rewrite(after)
    assert tool.problems(after) == []
    assert len(after["cells"]) == len(before["cells"])
    for old, new in zip(before["cells"], after["cells"], strict=True):
        if old["cell_type"] != "markdown":
            assert new == old
        else:
            assert _words("".join(new["source"])) == _words("".join(old["source"]))
