"""The lectures before the exercise do not give the graded parts away.

For each graded part, course_lib's reference (the function, or the class's ``forward``, ``__init__``
and the helper methods they call) is cut into its *substantive* lines: code only, without the
docstring, comments, blank lines, argument checks (``check_*``/``_check_*`` calls, ``raise`` and
the ``if`` around it) and lines too short to tell anything (``return x``). Lectures 01-06 (code
cells, code blocks in markdown, stored outputs) may hold at most half of them, per method and per
part, and call ``show_source`` on none. So a student who copies from the lectures still writes most
of every part, and above all parts 3, 5 and 6 (multi-head attention, the layer, the encoder), whose
structure the lectures build only step by step on tensors.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import textwrap
from pathlib import Path

import pytest

from course_lib import (
    Encoder,
    EncoderLayer,
    MultiHeadAttention,
    PositionwiseFeedForward,
    scaled_dot_product_attention,
    sinusoidal_positional_encoding,
)

REPO = Path(__file__).resolve().parents[1]
LECTURES = sorted(p for p in (REPO / "notebooks").glob("0[1-6]_*.ipynb"))
MAX_SHARE = 0.5

#: each graded part's reference code: the function, or the methods of the class that hold its logic
REFERENCES = {
    "positional_encoding": [sinusoidal_positional_encoding],
    "attention": [scaled_dot_product_attention],
    "multi_head_attention": [MultiHeadAttention.__init__, MultiHeadAttention.forward,
                             MultiHeadAttention.split_heads, MultiHeadAttention.merge_heads],
    "feed_forward": [PositionwiseFeedForward.__init__, PositionwiseFeedForward.forward],
    "encoder_layer": [EncoderLayer.__init__, EncoderLayer.forward, EncoderLayer.attend],
    "encoder": [Encoder.__init__, Encoder.forward, Encoder.embed, Encoder.run_layers, Encoder.prepare_inputs],
}
#: names whose source a lecture may not print with show_source (a class, or any of its methods)
SHOWN_NAMES = ("sinusoidal_positional_encoding", "scaled_dot_product_attention", "MultiHeadAttention",
               "PositionwiseFeedForward", "EncoderLayer", r"Encoder(?!Layer)")
TRIVIAL = 12                                          # a normalised line shorter than this tells nothing


def normalise(line: str) -> str:
    """A line of code without its comment, with every run of whitespace made one space (and none
    around brackets, dots, commas), so that reformatting does not hide a copy."""
    line = re.sub(r"\s+#.*$", "", line.rstrip()) if "#" in line else line
    line = re.sub(r"\s+", " ", line.strip())
    return re.sub(r"\s*([()\[\]{},.:=+\-*/@<>])\s*", r"\1", line)


def _is_check(node: ast.stmt) -> bool:
    """An argument check: a call of check_*/_check_*, a raise, or an if whose body only raises."""
    if isinstance(node, ast.Raise):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        f = node.value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name.startswith(("check_", "_check_"))
    if isinstance(node, ast.If) and not node.orelse:
        return all(_is_check(n) for n in node.body)
    return False


def substantive_lines(fn) -> list[str]:
    """The normalised substantive lines of ``fn`` (see the module's docstring)."""
    source = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(source)
    (func,) = tree.body
    drop: set[int] = set(range(func.lineno, func.body[0].lineno))                # the signature
    for node in ast.walk(func):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            drop |= set(range(body[0].lineno, body[0].end_lineno + 1))            # a docstring
        if isinstance(node, ast.stmt) and _is_check(node):
            drop |= set(range(node.lineno, node.end_lineno + 1))
    lines = source.splitlines()
    out = []
    for number, line in enumerate(lines, start=1):
        text = normalise(line)
        if number in drop or not text or text.startswith("#") or text == "super().__init__()" or len(text) < TRIVIAL:
            continue
        out.append(text)
    return out


def _code_blocks(markdown: str) -> list[str]:
    return re.findall(r"```[^\n]*\n(.*?)```", markdown, flags=re.S)


def lecture_text(path: Path) -> list[str]:
    """Every normalised line of a lecture's code cells, markdown code blocks and stored text outputs."""
    nb = json.loads(path.read_text())
    chunks = []
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code":
            chunks.append(source)
            for output in cell.get("outputs", []):
                chunks.append("".join(output.get("text", "")))
                for kind, data in output.get("data", {}).items():
                    if kind.startswith("text/"):
                        chunks.append(data if isinstance(data, str) else "".join(data))
        elif cell["cell_type"] == "markdown":
            chunks.extend(_code_blocks(source))
    return [n for chunk in chunks for n in (normalise(line) for line in chunk.splitlines()) if n]


def shared(lines: list[str], corpus: list[str]) -> list[str]:
    """The lines of ``lines`` that the corpus holds (inside one of its lines)."""
    return [line for line in lines if any(line in text for text in corpus)]


def show_source_calls(path: Path) -> list[str]:
    nb = json.loads(path.read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    code += "\n".join(b for c in nb["cells"] if c["cell_type"] == "markdown"
                       for b in _code_blocks("".join(c["source"])))
    return re.findall(r"(?:show_source|getsource)\(([^)]*)\)", code)


def test_the_lines_are_substantive():
    """The cut keeps the maths and drops what is not code (a check of the test itself)."""
    mha = substantive_lines(MultiHeadAttention.forward)
    assert any("split_heads(self.w_q(query))" in line for line in mha)
    assert not any("_check_forward_args" in line or '"""' in line for line in mha)
    pe = substantive_lines(sinusoidal_positional_encoding)
    assert pe and not any(line.startswith(("check_", "raise")) for line in pe)
    assert all(len(substantive_lines(fn)) >= 1 for fns in REFERENCES.values() for fn in fns
               if fn.__name__ != "__init__" or fns[0] is fn)


def _too_much(lectures) -> list[str]:
    found = []
    for name, corpus in lectures.items():
        for part, fns in REFERENCES.items():
            union: list[str] = []
            for fn in fns:
                lines = substantive_lines(fn)
                union += lines
                copied = shared(lines, corpus)
                if lines and len(copied) > MAX_SHARE * len(lines):
                    found.append(f"{name} holds {len(copied)} of the {len(lines)} substantive lines of "
                                 f"{fn.__qualname__}: {copied}")
            copied = shared(union, corpus)
            if union and len(copied) > MAX_SHARE * len(union):
                found.append(f"{name} holds {len(copied)} of the {len(union)} substantive lines of part {part}")
    return found


def _shown(path: Path) -> list[str]:
    return [arg for arg in show_source_calls(path)
            if any(re.search(rf"\b{name}\b", arg) for name in SHOWN_NAMES)]


@pytest.mark.parametrize("path", LECTURES, ids=[p.stem for p in LECTURES])
def test_no_lecture_holds_more_than_half_of_a_graded_part(path):
    found = _too_much({path.name: lecture_text(path)})
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", LECTURES, ids=[p.stem for p in LECTURES])
def test_no_lecture_shows_the_source_of_a_graded_part(path):
    assert not _shown(path), f"{path.name} calls show_source on {_shown(path)}"


def test_the_lectures_are_found():
    assert [p.name[:2] for p in LECTURES] == ["01", "02", "03", "04", "05", "06"]


def test_a_lecture_that_copied_a_part_is_caught(tmp_path):
    """The detector finds a copy even when it is reformatted and commented, and not a mere mention."""
    lines = substantive_lines(MultiHeadAttention.forward)
    copy = "\n".join("    " + line.replace(",", " ,") + "   # mine" for line in lines)
    nb = {"cells": [{"cell_type": "markdown", "source": f"```python\n{copy}\n```", "metadata": {}},
                    {"cell_type": "code", "source": "show_source(course_lib.MultiHeadAttention.forward)",
                     "metadata": {}, "outputs": []}]}
    path = tmp_path / "99_copy.ipynb"
    path.write_text(json.dumps(nb))
    assert len(shared(lines, lecture_text(path))) == len(lines)
    assert _shown(path) == ["course_lib.MultiHeadAttention.forward"]
    mention = tmp_path / "98_mention.ipynb"
    mention.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                              "source": "mha = MultiHeadAttention(16, 4)\nout, w = mha(x, x, x)"}]}))
    assert shared(lines, lecture_text(mention)) == [] and _shown(mention) == []
