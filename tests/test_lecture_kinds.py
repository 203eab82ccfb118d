"""Defects of the lectures caught by kind, not by name (issue 51, item 3; STYLE.md, Notebooks 10).

Each test reads the stored notebooks (no kernel, no execution but the practice checks' own calls) and
finds every defect of one kind:

* **a number in prose is a number in an output**: every decimal number of 2 significant digits or more
  in a markdown cell (LaTeX and alt text included; code, links and section numbers left out) is printed
  by a stored output of its section (``##`` heading to the next), to the digits the prose gives, or is
  listed in the cell's metadata ``constants`` with its source: ``{"0.1": "Vaswani et al. 2017, 5.4"}``;
* **no answer above its item**: the spoiler test of ``tests/test_practice.py`` also reads the check's own
  stored "not done" line, every hint (a markdown line starting ``Hint``) and the comments of the
  exercise cell; and a write's solution, line for line, appears nowhere above its check;
* **no stored output depends on the machine's load**: a cell that reads a clock prints, for each thing
  it times, the spread of its rounds as ``spread x1.23`` (slowest over fastest round), and every spread
  it stored is at most :data:`MAX_SPREAD`; cells that read what it measured are held to the same rule.
  Cost models (counted FLOPs, bytes) read no clock and pass;
* **every check rejects wrong answers and names their cause**: ``tests/practice_wrong/lectureNN.py``
  holds, for every check of ``course_lib.practice.lectureNN``, at least :data:`WRONG_PER_CHECK` plausible
  wrong answers with the word that names each one's cause; each must print one ``✗`` line holding it;
* **no lecture solution computes what a graded part computes**: every lecture solution is compared with
  the exercise's model solution (the source notebook's solution cells), two ways: by what each graded
  part computes (:data:`SIGNATURES`, each first shown to find its own part in the model solution) and by
  the order of its operations (the model function's calls and operators found, in order, in the lecture's).

``LECTURES`` lists every lecture; the tests of a lecture another engineer owns fail until they fix it.
"""

from __future__ import annotations

import ast
import copy
import importlib
import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib.practice import FAIL
from test_practice import FENCE, exercises, gives_away, output_text, spoilers

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
LECTURES = [NOTEBOOKS / name for name in (
    "01_seq2seq_and_the_transformer.ipynb",
    "02_attention.ipynb",
    "03_feed_forward.ipynb",
    "04_embeddings_and_softmax.ipynb",
    "05_positional_encodings.ipynb",
    "06_batches_and_padding.ipynb",
    "08_the_encoder_at_work.ipynb",
    "09_the_encoder_learns.ipynb",
)]
EXERCISE = NOTEBOOKS / "07_exercise" / "encoder_from_scratch.ipynb"
IDS = [p.stem[:2] for p in LECTURES]
MAX_SPREAD = 1.5            # slowest round over fastest: above this the machine's load shows in the times
WRONG_PER_CHECK = 3
MIN_OPS = 5                 # a model function with fewer calls and operators than this is too generic to compare
OPS_SHARE = 0.75            # a lecture solution holding this share of a model function's operations, in order


def read(path: Path):
    return nbformat.read(path, as_version=4)


def test_every_lecture_is_listed():
    found = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    assert found == sorted(p.name for p in LECTURES)


# --- a number in prose is a number in an output ------------------------------------------------------------

DECIMAL = re.compile(r"(?<![\w.§])[-−]?\d+\.\d+(?!\d|\.\d)")
NOT_A_QUANTITY = re.compile(r"(?:§|\bsections?|\btables?|\bfigures?|\bfig\.|\beq\.|\bequations?|\bchapters?"
                            r"|\bversions?|\bv|\bpython|\btorch|\bpytorch|\brelease|\bissue)"
                            r"\s*(?:\d+(?:\.\d+)*\s*(?:,|and|to|-|–)\s*)*$", re.I)
OUTPUT_NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def significant(token: str) -> int:
    """Significant digits of a decimal token: ``0.1`` 1, ``4.4`` 2, ``1.0`` 1, ``30.55`` 4."""
    digits = re.sub(r"\D", "", token.rstrip("0") if "." in token else token).lstrip("0")
    return len(digits)


def prose(markdown: str) -> str:
    """A markdown cell's prose: without fenced code, inline code, links' targets and HTML tags."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "] ", text)
    text = re.sub(r"https?://\S+", " ", text)
    return re.sub(r"<[^>]+>", " ", text)


def prose_numbers(markdown: str) -> list[str]:
    """The decimal numbers of 2 significant digits or more that a markdown cell states."""
    text = prose(markdown)
    found = []
    for match in DECIMAL.finditer(text):
        token = match.group(0).replace("−", "-")
        if significant(token) < 2 or NOT_A_QUANTITY.search(text[max(0, match.start() - 40):match.start()]):
            continue
        found.append(token)
    return found


def sections(nb) -> list[list[int]]:
    """The cells of each section: a markdown cell with a ``#`` or ``##`` heading starts one."""
    out: list[list[int]] = [[]]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and re.search(r"^#{1,2} ", cell.source, re.M) and out[-1]:
            out.append([])
        out[-1].append(i)
    return out


def printed(value: str, outputs: str) -> bool:
    """Whether ``outputs`` print ``value``: a number that, rounded to the prose's decimals, is it."""
    target = float(value)
    places = len(value.split(".")[1])
    for token in OUTPUT_NUMBER.findall(outputs):
        got = float(token.replace("−", "-"))
        if round(got, places) == round(target, places) or round(-got, places) == round(target, places):
            return True
    return False


def unprinted_numbers(nb) -> list[str]:
    found = []
    for cells in sections(nb):
        outputs = "\n".join(output_text(nb.cells[i]) for i in cells if nb.cells[i].cell_type == "code")
        for i in cells:
            cell = nb.cells[i]
            if cell.cell_type != "markdown":
                continue
            constants = cell.metadata.get("constants", {})
            for token in prose_numbers(cell.source):
                source = constants.get(token) or constants.get(token.lstrip("-"))
                if source and isinstance(source, str) and source.strip():
                    continue
                if not printed(token, outputs):
                    found.append(f"cell {i}: {token} is printed by no output of its section, and its metadata "
                                 f"'constants' does not give its source")
    return found


@pytest.mark.parametrize("path", LECTURES, ids=IDS)
def test_a_number_in_prose_is_a_number_in_an_output(path):
    assert not (found := unprinted_numbers(read(path))), f"{path.name}:\n" + "\n".join(found)


def _nb(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def _code(source, text="", metadata=None):
    cell = nbformat.v4.new_code_cell(source, metadata=metadata or {})
    cell.outputs = [nbformat.v4.new_output("stream", text=text)] if text else []
    return cell


def test_a_number_only_prose_states_is_found():
    """Planted: a ratio the prose states that no output of its section prints (01 c65/c72's 4.4x kind)."""
    md = nbformat.v4.new_markdown_cell
    clean = _nb(md("## 1. Time\nThe loop took 12.5 ms, $e^{-30.55}$; section 3.2 says so; 0.1 is one digit."),
                _code("print(t)", "t = 12.512 ms, gap 30.55\n"),
                md("## 2. Next\n`x = 4.4` is code, ![a bar of 0.48](../res/x.svg) is alt text"),
                _code("print(0.48)", "0.48\n"))
    assert unprinted_numbers(clean) == []
    planted = _nb(*clean.cells[:2], md("## 2. Next\nThe two times differ 4.4x, and a bar of 0.48."),
                  _code("print(1)", "1\n"))
    assert [f.split(":")[1].split()[0] for f in unprinted_numbers(planted)] == ["4.4", "0.48"]
    planted.cells[2].metadata["constants"] = {"4.4": "Vaswani et al. 2017, 5.4", "0.48": ""}
    assert len(unprinted_numbers(planted)) == 1                     # a constant needs its source


# --- every stored figure speaks -----------------------------------------------------------------------------
# JupyterLab reads no alt text from an output's metadata (issue 50): a figure a cell draws says something to a
# screen reader only through the caption displayed right after it (course_lib.announce.caption_bundle, a
# plot helper's description, or the cell's own caption(...) call).

def silent_figures(nb) -> list[str]:
    """``"cell N"`` for every stored image output not followed at once by a ``Figure: ...`` caption."""
    found = []
    for i, cell in enumerate(nb.cells):
        outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
        for k, out in enumerate(outputs):
            if "image/png" not in out.get("data", {}) and "image/svg+xml" not in out.get("data", {}):
                continue
            if not str(cell.metadata.get("alt", "")).strip():
                found.append(f"cell {i}: a figure with no `alt` in its cell's metadata (the site's alt text)")
            after = outputs[k + 1] if k + 1 < len(outputs) else {}
            said = "".join(after.get("data", {}).get("text/plain", "")) if after.get("output_type") == \
                "display_data" else ""
            if not said.startswith("Figure: ") or "role=\"note\"" not in "".join(after["data"].get("text/html", "")):
                found.append(f"cell {i}: a figure with no caption after it")
        found += [f"cell {i}: a caption holds LaTeX, spelled letter by letter once typeset" for out in outputs
                  if out.get("output_type") == "display_data"
                  and "".join(out.get("data", {}).get("text/plain", "")).startswith("Figure: ")
                  and re.search(r"\$[^$]+\$|\\[A-Za-z|]", "".join(out["data"]["text/plain"]))]
        found += [f"cell {i}: a caption echoed as the cell's result (read twice)" for out in outputs
                  if out.get("output_type") == "execute_result"
                  and "".join(out.get("data", {}).get("text/plain", "")).lstrip("'\"").startswith("Figure: ")]
    return found


@pytest.mark.parametrize("path", LECTURES + [EXERCISE], ids=IDS + ["07"])
def test_every_stored_figure_speaks(path):
    assert not (found := silent_figures(read(path))), f"{path.name}:\n" + "\n".join(found)


def test_a_figure_without_its_caption_is_found():
    """Planted: a figure whose caption is missing, or printed instead of displayed (no role for a reader)."""
    from course_lib.announce import caption_bundle

    figure = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0K", "text/plain": "<Figure>"})
    said = nbformat.v4.new_output("display_data", data=caption_bundle("a map of 2 queries by 2 keys"))
    printed = nbformat.v4.new_output("stream", text="Figure: a map of 2 queries by 2 keys\n")
    cell = nbformat.v4.new_code_cell("plt.show()", metadata={"alt": "a map of 2 queries by 2 keys"})
    cell.outputs = [figure, said]
    assert silent_figures(_nb(cell)) == []
    del cell.metadata["alt"]
    assert silent_figures(_nb(cell)) == ["cell 0: a figure with no `alt` in its cell's metadata (the site's alt text)"]
    cell.metadata["alt"] = "a map of 2 queries by 2 keys"
    for outputs in ([figure], [figure, printed], [said, figure]):
        cell.outputs = outputs
        assert silent_figures(_nb(cell)) == ["cell 0: a figure with no caption after it"]
    latex = nbformat.v4.new_output("display_data", data=caption_bundle("variance against $d_k$"))
    cell.outputs = [figure, latex]
    assert silent_figures(_nb(cell)) == ["cell 0: a caption holds LaTeX, spelled letter by letter once typeset"]
    echoed = nbformat.v4.new_output("execute_result", data={"text/plain": "'Figure: a map'"}, execution_count=1)
    cell.outputs = [figure, said, echoed]
    assert silent_figures(_nb(cell)) == ["cell 0: a caption echoed as the cell's result (read twice)"]


# --- no answer above its item -------------------------------------------------------------------------------

HINT = re.compile(r"^\s*(?:\*\*|_)?hint\b.*$", re.I | re.M)


def _comments(source: str) -> str:
    return "\n".join(m.group(1) for m in re.finditer(r"#(.*)$", source, re.M))


def _unquoted(text: str) -> str:
    return re.sub(r"'[^'\n]*'|\"[^\"\n]*\"", " ", text)


def _solution_lines(solution: str, stub: str) -> list[str]:
    """A write's solution lines that say something (30 characters or more, not in its stub): each, found
    above the check, is the answer written out before the student writes it."""
    def norm(line):
        line = re.sub(r"\s+#.*$", "", line).strip()
        return re.sub(r"\s+", " ", line)
    given = {norm(line) for line in stub.splitlines()}
    return [n for n in (norm(line) for line in solution.splitlines())
            if len(n) >= 30 and n not in given and not n.startswith(("def ", "class ", "return ", "#"))]


def leaks(nb, folder: Path) -> list[str]:
    """Spoilers (tests/test_practice.py), plus: the check's own stored line, hints and the exercise cell's
    comments, read for every item whose metadata gives ``answer``; and a write's solution lines above it."""
    found = spoilers(nb, folder)
    for i, check, solution in exercises(nb):
        practice = nb.cells[i].metadata["practice"]
        answers = practice.get("answer")
        if answers and all(isinstance(a, str) and a.strip() for a in answers):
            # quoted options ("one of 'NaN', 'no key', ...") list every choice alike and give none away
            places = {f"its check's stored line (cell {check})": _unquoted(output_text(nb.cells[check])),
                      f"the comments of its exercise cell {i}": _unquoted(_comments(nb.cells[i].source))}
            for j, cell in enumerate(nb.cells[:check]):
                if cell.cell_type == "markdown":
                    places[f"a hint in cell {j}"] = "\n".join(HINT.findall(cell.source))
            for where, text in places.items():
                for piece in dict.fromkeys(gives_away(text, answers)):
                    found.append(f"cell {i}: its answer shows in {where}: {piece!r}")
        if practice["kind"] in ("write", "change"):
            lines = _solution_lines(solution, nb.cells[i].source)
            above = "\n".join((c.source if c.cell_type == "code" and j < i else "")
                              + "\n" + (output_text(c) if c.cell_type == "code" else "")
                              + "\n" + (c.source if c.cell_type == "markdown" and "solution" not in
                                         c.metadata.get("tags", []) else "")
                              for j, c in enumerate(nb.cells[:check + 1]) if j != i)
            squashed = re.sub(r"\s+", " ", above)
            for line in lines:
                if line in squashed:
                    found.append(f"cell {i}: its solution's line {line!r} stands above its check")
    return found


@pytest.mark.parametrize("path", LECTURES, ids=IDS)
def test_no_answer_above_its_item(path):
    assert not (found := leaks(read(path), path.parent)), f"{path.name}:\n" + "\n".join(found)


def _item(kind, stub, answer=None):
    meta = {"tags": ["exercise"], "practice": {"kind": kind, "mistake": "x", "says": "y"}}
    if answer:
        meta["practice"]["answer"] = answer
    return _code(stub, metadata=meta)


def _check(text):
    return _code("check()", text, metadata={"tags": ["check"]})


def _solution(code):
    return nbformat.v4.new_markdown_cell(f"<details>\n\n```python\n{code}\n```\n</details>",
                                         metadata={"tags": ["solution"]})


def test_an_answer_above_its_item_is_found(tmp_path):
    """Planted, one at a time: the answer in the check's stored "not done" line (05 c23's kind), in a hint
    (05 c29's), in the exercise cell's comment, and a write's solution line printed above it (06 c57's)."""
    md = nbformat.v4.new_markdown_cell

    def page(not_done="○ not done yet: set answer to one of 'inverse is its transpose', 'x'\n",
             hint="Hint: think of lengths.",
             comment="# one of the keys", printed_above=""):
        return _nb(md("Which key wins?\n\n" + hint), _code("x = 1", printed_above),
                   _item("quiz", f"answer = ...  {comment}", ["inverse is its transpose"]), _check(not_done),
                   _solution('answer = "east"'),
                   _item("write", "def f(q, k):\n    scores = ...\n    return scores"), _check("○ not done\n"),
                   _solution("def f(q, k):\n    scores = torch.softmax(q @ k.T, dim=-1)\n    return scores"))

    assert leaks(page(), tmp_path) == []
    assert leaks(page(not_done="○ not done yet (the inverse is its transpose)\n"), tmp_path)
    assert leaks(page(hint="Hint: the inverse is its transpose."), tmp_path)
    assert leaks(page(comment="# the inverse is its transpose"), tmp_path)
    assert leaks(page(printed_above="scores = torch.softmax(q @ k.T, dim=-1)\n"), tmp_path)


# --- no stored output depends on the machine's load --------------------------------------------------------

CLOCK = re.compile(r"\b(?:perf_counter|perf_counter_ns|process_time|monotonic|timeit|Timer)\b|\btime\.time\(")
SPREAD = re.compile(r"spread x(\d+(?:\.\d+)?)")


def _name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _timed(node, tainted: set[str]) -> bool:
    """Whether an expression reads a clock or a value measured by one."""
    return any((isinstance(n, ast.Call) and CLOCK.search(_name(n) or "")) or
               (isinstance(n, ast.Attribute) and n.attr == "time" and isinstance(n.value, ast.Name)
                and n.value.id == "time") or (isinstance(n, ast.Name) and n.id in tainted) for n in ast.walk(node))


def _stored(target) -> list[str]:
    """The names an assignment target binds: ``a, b`` both, ``runs[r, i]`` and ``x.y`` only their base."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for t in target.elts for name in _stored(t)]
    if isinstance(target, ast.Starred):
        return _stored(target.value)
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return [target.id] if isinstance(target, ast.Name) else []


def taint(source: str, tainted: set[str]) -> tuple[bool, set[str]]:
    """Follow a clock's readings through a cell: the names (and functions) whose values come from one.
    Returns whether the cell reads any, and the names tainted after it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False, tainted
    tainted = set(tainted)
    for _ in range(3):                                   # a value passes through a few assignments
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _timed(node, tainted):
                tainted.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None \
                    and _timed(node.value, tainted):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                tainted |= {name for target in targets for name in _stored(target)}
            elif isinstance(node, (ast.For, ast.comprehension)) and _timed(node.iter, tainted):
                tainted |= set(_stored(node.target))
    return _timed(tree, tainted), tainted


def _spreads(cell) -> list[float]:
    return [float(s) for s in SPREAD.findall(output_text(cell))]


def load_dependent(nb) -> list[str]:
    """Cells whose stored outputs come from a clock without the stability the module's docstring asks."""
    found, tainted, stable = [], set(), True
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        reads, tainted = taint(cell.source, tainted)
        if not reads or not cell.get("outputs"):
            continue
        spreads = _spreads(cell)
        picture = any("image/png" in o.get("data", {}) for o in cell.outputs)
        if spreads:
            stable = stable and max(spreads) <= MAX_SPREAD
            if max(spreads) > MAX_SPREAD:
                found.append(f"cell {i}: stored timings whose rounds spread up to x{max(spreads)} (the machine's "
                             f"load; at most x{MAX_SPREAD})")
        elif picture:
            if not stable or not any(_spreads(c) for c in nb.cells[:i] if c.cell_type == "code"):
                found.append(f"cell {i}: plots what a clock measured, from runs not shown stable")
        elif output_text(cell).strip():
            found.append(f"cell {i}: prints what a clock measured without the spread of its rounds "
                         f"('spread x1.23'): summarise stable runs, or count the cost instead")
    return found


@pytest.mark.parametrize("path", LECTURES, ids=IDS)
def test_no_stored_output_depends_on_the_load(path):
    assert not (found := load_dependent(read(path))), f"{path.name}:\n" + "\n".join(found)


def test_a_timing_of_one_loaded_run_is_found():
    """Planted: 01 c65's kind (rounds from 0.678 to 22.054 ms) and c66's (a plot of them); a cost model and
    stable rounds pass."""
    timing = "import time\nstart = time.perf_counter()\nf()\nruns = time.perf_counter() - start\nprint(runs)"
    plot = _code("plt.plot(runs)")
    plot.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<Figure>"})]
    cost = _code("flops = 4 * T * T * d\nprint(flops)", "8388608\n")
    assert load_dependent(_nb(cost, _code(timing, "1.701 ms (spread x1.20)\n"), plot)) == []
    assert load_dependent(_nb(_code(timing, "1.701 ms (0.678 ms to 22.054 ms)\n")))
    assert load_dependent(_nb(_code(timing, "1.701 ms (spread x32.53)\n"), plot))


# --- every check rejects wrong answers and names their cause -----------------------------------------------

def practice_module(path: Path):
    return importlib.import_module(f"course_lib.practice.lecture{path.stem[:2]}")


def corpus_module(path: Path):
    try:
        return importlib.import_module(f"practice_wrong.lecture{path.stem[:2]}")
    except ModuleNotFoundError:
        return None


def checks_of(module) -> list[str]:
    return [name for name in getattr(module, "__all__", []) if name.startswith("check_")]


def run_wrong(check, wrong, capsys) -> str:
    """Hand one wrong answer to its check; the one line it printed."""
    capsys.readouterr()
    args, kwargs = wrong.args() if callable(wrong.args) else (wrong.args, wrong.kwargs)
    check(*args, **kwargs)
    return capsys.readouterr().out.strip()


def misjudged(practice, corpus, capsys) -> list[str]:
    found = []
    for name in checks_of(practice):
        wrongs = corpus.WRONG.get(name, [])
        if len(wrongs) < WRONG_PER_CHECK:
            found.append(f"{name}: {len(wrongs)} wrong answers in the corpus, at least {WRONG_PER_CHECK} needed")
        for wrong in wrongs:
            said = run_wrong(getattr(practice, name), wrong, capsys)
            if len(said.splitlines()) != 1 or not said.startswith(FAIL):
                found.append(f"{name}: {wrong.label!r} is not rejected in one ✗ line: {said!r}")
            elif wrong.word.lower() not in said.lower():
                found.append(f"{name}: {wrong.label!r} is rejected without its cause {wrong.word!r}: {said!r}")
    return found


@pytest.mark.parametrize("path", LECTURES, ids=IDS)
def test_every_check_rejects_wrong_answers_and_names_their_cause(path, capsys):
    corpus = corpus_module(path)
    assert corpus is not None, f"{path.name}: no corpus of wrong answers tests/practice_wrong/lecture{path.stem[:2]}.py"
    assert not (found := misjudged(practice_module(path), corpus, capsys)), f"{path.name}:\n" + "\n".join(found)


def test_a_check_that_accepts_or_misnames_a_wrong_answer_is_found(capsys):
    """Planted: a check that passes a wrong answer (04 check_tied_head's kind), one that names the symptom,
    not the cause (02 c74's), and a check with too few wrong answers."""
    from types import SimpleNamespace

    from course_lib.practice import check, failed, passed
    from practice_wrong import Wrong

    @check
    def check_mib(x):
        return passed("right") if x in (4, 4.19) else failed("you counted in MB, not MiB" if x == 4.19 else "no")

    @check
    def check_mask(x):
        return failed("some weights are NaN")

    practice = SimpleNamespace(__all__=["check_mib", "check_mask"], check_mib=check_mib, check_mask=check_mask)
    corpus = SimpleNamespace(WRONG={"check_mib": [Wrong("MB for MiB", (4.19,), word="MiB"),
                                                  Wrong("bits", (32,), word="no"), Wrong("KiB", (4096,), word="no")],
                                    "check_mask": [Wrong("mask inverted", (1,), word="inverted")]})
    found = misjudged(practice, corpus, capsys)
    assert any("'MB for MiB' is not rejected" in f for f in found)
    assert any("without its cause 'inverted'" in f for f in found)
    assert any("check_mask: 1 wrong answers" in f for f in found)


# --- no lecture solution computes what a graded part computes ----------------------------------------------

def _calls(node) -> list[str]:
    names = []
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            names.append(f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "")
    return names


def _has(node, *names) -> bool:
    calls = set(_calls(node))
    return all(any(re.fullmatch(name, c) for c in calls) for name in names)


def _chain(node, first: str, then: str) -> bool:
    """``x.first(...).then(...)`` (``.contiguous()`` in between allowed): a reshape of heads."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and re.fullmatch(then, n.func.attr):
            inner = n.func.value
            while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                    and inner.func.attr == "contiguous":
                inner = inner.func.value
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                    and re.fullmatch(first, inner.func.attr):
                return True
    return False


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
           {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _residual_norm(node) -> bool:
    """``x + f(norm(x))`` (pre-LN) or ``norm(x + f(x))`` (post-LN): a sublayer with its residual and norm."""
    def normish(call):
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return "norm" in name.lower()
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            for side, other in ((n.left, n.right), (n.right, n.left)):
                if isinstance(side, ast.Name) and isinstance(other, ast.Call) and any(
                        isinstance(c, ast.Call) and normish(c) and any(
                            isinstance(a, ast.Name) and a.id == side.id for a in c.args)
                        for c in ast.walk(other)):
                    return True
        if isinstance(n, ast.Call) and normish(n) and n.args and isinstance(n.args[0], ast.BinOp) \
                and isinstance(n.args[0].op, ast.Add) and any(isinstance(s, ast.Call) for s in
                                                               (n.args[0].left, n.args[0].right)):
            return True
    return False


def _embed_scaled(node) -> bool:
    """``embedding(tokens) * sqrt(d_model) + pe[...]``: the encoder's input."""
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add) and isinstance(n.left, ast.BinOp) \
                and isinstance(n.left.op, ast.Mult) and _has(n.left, "sqrt") and isinstance(n.right, ast.Subscript):
            return True
    return False


def _ffn_count(node) -> bool:
    """A count that multiplies the model width by the feed-forward width: the parameter count's term."""
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            names = {x.lower() for x in _names(n)}
            if any("d_model" in x or x == "d" for x in names) and any("d_ff" in x or "ff" == x for x in names):
                return True
    return False


#: what each graded part computes, as a test on a solution's syntax tree
SIGNATURES = {
    "positional_encoding": lambda t: _has(t, "sin", "cos") and any(
        isinstance(n, ast.Constant) and n.value in (10000, 10000.0) for n in ast.walk(t)),
    "attention": lambda t: _has(t, "softmax", "sqrt") and any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult) for n in ast.walk(t)) and (
        _has(t, "transpose") or "mT" in _names(t) or "T" in _names(t)),
    "multi_head_attention": lambda t: _chain(t, "view|reshape", "transpose") or _chain(t, "transpose", "view|reshape"),
    "feed_forward": lambda t: _has(t, "relu|ReLU") and _calls(t).count("Linear") >= 2,
    "encoder_layer": _residual_norm,
    "encoder": _embed_scaled,
    "parameter_count": _ffn_count,
    "reverse_task": lambda t: _has(t, "flip", "cross_entropy|CrossEntropyLoss", "backward"),
}
GENERIC = {"super", "__init__", "item", "float", "int", "len", "range", "print", "append", "tolist", "size", ""}
OPERATORS = {ast.MatMult: "@", ast.Div: "/", ast.Pow: "**", ast.Invert: "~"}


def operations(node) -> list[str]:
    """A function's calls and matrix/division operators, in the order they run (inner first)."""
    out = []

    class Visit(ast.NodeVisitor):
        def visit_Call(self, n):
            self.generic_visit(n)
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name not in GENERIC:
                out.append(name)

        def visit_BinOp(self, n):
            self.generic_visit(n)
            if type(n.op) in OPERATORS:
                out.append(OPERATORS[type(n.op)])

        def visit_UnaryOp(self, n):
            self.generic_visit(n)
            if type(n.op) in OPERATORS:
                out.append(OPERATORS[type(n.op)])

    Visit().visit(node)
    return out


def _in_order(needle: list[str], hay: list[str]) -> int:
    """The length of the longest common subsequence."""
    row = [0] * (len(hay) + 1)
    for a in needle:
        prev = 0
        for j, b in enumerate(hay):
            keep = row[j + 1]
            row[j + 1] = prev + 1 if a == b else max(row[j + 1], row[j])
            prev = keep
    return row[-1]


def _functions(tree) -> list:
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return found or [tree]


def model_solution() -> dict[str, ast.AST]:
    """The exercise's model solution: each graded part's solution cell (its source notebook), parsed."""
    nb = json.loads(EXERCISE.read_text(encoding="utf-8"))
    parts = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("solution") and meta.get("grade_id") in SIGNATURES:
            source = "".join(cell["source"])
            source = "\n".join(line for line in source.splitlines()
                               if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
            parts[meta["grade_id"]] = ast.parse(source)
    return parts


def lecture_solutions(nb) -> list[tuple[int, ast.AST]]:
    """Every solution of a lecture, parsed: its code blocks, and the inline code of its prose that is an
    expression (``norm(x + dropout(sublayer(x)))``, a line the solution gives in words)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and "solution" in cell.metadata.get("tags", []):
            blocks = FENCE.findall(cell.source)
            spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", " ", cell.source, flags=re.S))
            for code in blocks + spans:
                try:
                    found.append((i, ast.parse(code)))
                except SyntaxError:
                    pass
    return found


class _Inline(ast.NodeTransformer):
    def __init__(self, env):
        self.env = env

    def visit_Name(self, node):
        return self.env.get(node.id, node) if isinstance(node.ctx, ast.Load) else node


def inlined(tree) -> ast.AST:
    """``tree`` with each function's temporaries put back into the lines that read them (``h = norm(x)``;
    ``return x + sublayer(h)`` reads ``x + sublayer(norm(x))``), so that a computation spread over
    several lines is seen whole. The inlined return values are added to the tree's module body."""
    extra = []
    for fn in _functions(tree):
        env: dict[str, ast.AST] = {}
        body = fn.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) else []
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                env[stmt.targets[0].id] = _Inline(env).visit(copy.deepcopy(stmt.value))
            elif isinstance(stmt, ast.Return) and stmt.value is not None:
                extra.append(ast.Expr(_Inline(env).visit(copy.deepcopy(stmt.value))))
    return ast.Module(body=[*tree.body, *extra], type_ignores=[])


def dictated(solutions, model) -> list[str]:
    """Lecture solutions that compute what a graded part computes (see the module's docstring)."""
    model_functions = [(part, fn.name, ops) for part, tree in model.items() for fn in _functions(tree)
                       if isinstance(fn, ast.FunctionDef) and len(ops := operations(fn)) >= MIN_OPS]
    found = []
    for i, tree in solutions:
        whole = inlined(tree)
        for part, signature in SIGNATURES.items():
            if signature(whole):
                found.append(f"cell {i}: the solution computes what part {part} computes")
        for fn in _functions(tree):
            mine = operations(fn)
            for part, name, ops in model_functions:
                share = _in_order(ops, mine) / len(ops)
                if share >= OPS_SHARE:
                    found.append(f"cell {i}: the solution runs {share:.0%} of the operations of {part}'s {name}, "
                                 f"in order")
    return sorted(set(found))


def test_each_signature_finds_its_part_in_the_model_solution():
    model = model_solution()
    assert set(model) == set(SIGNATURES), sorted(model)
    for part, tree in model.items():
        assert SIGNATURES[part](tree), f"the signature of {part} does not find it in the model solution"


@pytest.mark.parametrize("path", LECTURES, ids=IDS)
def test_no_lecture_solution_computes_a_graded_part(path):
    found = dictated(lecture_solutions(read(path)), model_solution())
    assert not found, f"{path.name}:\n" + "\n".join(found)


def test_a_solution_that_dictates_a_graded_part_is_found():
    """Planted: 02's masked_attention and split_heads, 03's pre_ln_block and ffn_cost; neighbours pass."""
    model = model_solution()
    planted = {
        "masked_attention": "def masked_attention(q, k, v, allow):\n"
                            "    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])\n"
                            "    weights = torch.softmax(scores.masked_fill(~allow, float('-inf')), dim=-1)\n"
                            "    return weights @ v, weights",
        "split_heads": "def split_heads(x, h):\n    B, T, d = x.shape\n"
                       "    return x.view(B, T, h, d // h).transpose(1, 2)",
        "pre_ln_block": "def pre_ln_block(x, sublayer, norm, dropout):\n    h = norm(x)\n    h = sublayer(h)\n"
                        "    h = dropout(h)\n    return x + h",
        "post-LN line": "norm(x + dropout(sublayer(x)))",
        "ffn_cost": "def ffn_cost(d_model, d_ff):\n    return 2 * d_model * d_ff + d_model + d_ff",
    }
    for name, code in planted.items():
        assert dictated([(0, ast.parse(code))], model), name
    neighbours = [
        "def additive_scores(q, K, W_a, U_a, v_a):\n    return torch.tanh(q @ W_a + K @ U_a) @ v_a",
        "def rms_norm(x, g, eps=1e-6):\n    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * g",
        "def append_kv(cache_k, cache_v, k, v):\n    return torch.cat([cache_k, k], 1), torch.cat([cache_v, v], 1)",
    ]
    for code in neighbours:
        assert dictated([(0, ast.parse(code))], model) == [], code
