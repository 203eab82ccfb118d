"""The lectures' practice exercises (course_lib.practice): each is stored unsolved, each has a check
and a solution one click away, and its check answers both the solution and a typical mistake.

One kernel per lecture runs the notebook top to bottom as stored; at each exercise it first runs the
solution, then the mistake (each followed by the exercise's check), then the stored cell as it is, so
the rest of the lecture runs as a student who skipped the exercise would see it.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_lib.practice import FAIL, PASS, TODO

ROOT = Path(__file__).resolve().parents[1]
LECTURES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))     # every lecture; the exercise is 07_exercise/
MINIMUM = 3                  # practice exercises per lecture (self-check quizzes not counted)
KINDS = {"write", "predict", "change", "quiz"}
FENCE = re.compile(r"```python\n(.*?)```", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.svg)\)")
WRITE_LINES = 8              # a long write task's solution: at least this many lines of code (issue 51)
LONG_WRITES = 3              # long writes per lecture 01-06 (issue 51); 08 and 09 need two
SHORTEST_WRITE = 3           # no write shorter than this: shorter is transcription (issue 51)


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def exercises(nb) -> list[tuple[int, int, str]]:
    """(exercise index, check index, solution source) for every exercise of ``nb``; asserts the shape."""
    found = []
    cells = nb.cells
    for i, cell in enumerate(cells):
        if "exercise" not in tags(cell):
            continue
        assert cell.cell_type == "code", f"cell {i}: an exercise is a code cell"
        practice = cell.metadata.get("practice", {})
        assert practice.get("kind") in KINDS, f"cell {i}: metadata practice.kind must be one of {KINDS}"
        assert practice.get("mistake") and practice.get("says"), f"cell {i}: practice.mistake/says missing"
        check = next((j for j in range(i + 1, len(cells)) if "check" in tags(cells[j])), None)
        assert check is not None and cells[check].cell_type == "code", f"cell {i}: no check cell after it"
        assert not any("exercise" in tags(c) for c in cells[i + 1:check]), f"cell {i}: its check comes late"
        sol = next((j for j in range(check + 1, len(cells)) if "solution" in tags(cells[j])), None)
        assert sol is not None and cells[sol].cell_type == "markdown", f"cell {i}: no solution cell"
        text = cells[sol].source
        assert "<details>" in text and "</details>" in text, f"cell {sol}: the solution is not collapsed"
        code = FENCE.search(text)
        assert code, f"cell {sol}: the solution has no ```python block"
        found.append((i, check, code.group(1)))
    return found


def stream_text(cell) -> str:
    """What a cell said: its printed text and the text/plain of what it displayed (a check's verdict is
    displayed, course_lib.announce), one line each."""
    said = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            said.append(o.get("text", ""))
        elif o.get("output_type") == "display_data" and "text/plain" in o.get("data", {}) \
                and "image/png" not in o["data"]:                   # a figure a check draws is not a line
            said.append("".join(o["data"]["text/plain"]).rstrip("\n") + "\n")
    return "".join(said)


def kind(nb, i) -> str:
    return nb.cells[i].metadata["practice"]["kind"]


def code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem[:2])
def test_lecture_has_practice(path):
    nb = nbformat.read(path, as_version=4)
    found = exercises(nb)
    practice = [f for f in found if kind(nb, f[0]) != "quiz"]
    assert len(practice) >= MINIMUM, f"{path.name}: {len(practice)} practice exercises"
    for _, check, _ in found:
        stored = stream_text(nb.cells[check]).strip()
        assert stored.startswith(TODO), f"{path.name} cell {check}: stored solved, or its check printed {stored!r}"
        assert len(stored.splitlines()) == 1, f"{path.name} cell {check}: feedback is not one line"


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem[:2])
def test_the_student_writes_the_central_computation(path):
    """Three write tasks of 8 lines or more (the solution's code) in every lecture 01-06, two in 08 and 09;
    no write shorter than 3 lines (predictions and quizzes are not writes)."""
    nb = nbformat.read(path, as_version=4)
    writes = [(i, code_lines(solution)) for i, _, solution in exercises(nb) if kind(nb, i) == "write"]
    long_enough = [i for i, n in writes if n >= WRITE_LINES]
    wanted = LONG_WRITES if path.stem[:2] <= "06" else 2
    assert len(long_enough) >= wanted, f"{path.name}: write tasks (cell, lines of solution) {writes}"
    short = [(i, n) for i, n in writes if n < SHORTEST_WRITE]
    assert not short, f"{path.name}: writes shorter than {SHORTEST_WRITE} lines (cell, lines) {short}"


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem[:2])
def test_self_checks_are_checked_and_one_is_retrieval(path):
    """Two or more self-check questions are checked quizzes; one re-asks an earlier lecture (not in 01)."""
    nb = nbformat.read(path, as_version=4)
    quizzes = [nb.cells[i].metadata["practice"] for i, _, _ in exercises(nb) if kind(nb, i) == "quiz"]
    assert len(quizzes) >= 2, f"{path.name}: {len(quizzes)} checked self-check questions"
    earlier = [q["retrieval"] for q in quizzes if q.get("retrieval")]
    assert all(re.fullmatch(r"\d\d", r) and r < path.stem[:2] for r in earlier), earlier
    if path.stem[:2] != "01":
        assert earlier, f"{path.name}: no self-check asks again what an earlier lecture taught"


OPEN_SETS = re.compile(r"not done yet: set ([\w, ]+?) to ")


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem[:2])
def test_an_open_line_names_what_the_exercise_cell_sets(path):
    """'○ not done yet: set NAME to ...' names a variable that its exercise cell assigns (a quiz whose
    cell sets weights_mib is not told to 'set answer')."""
    nb = nbformat.read(path, as_version=4)
    wrong = []
    for i, check, _ in exercises(nb):
        said = OPEN_SETS.search(stream_text(nb.cells[check]))
        if not said or said.group(1).startswith("both "):
            continue
        for name in re.split(r",\s*|\s+and\s+", said.group(1)):
            if not re.search(rf"^{re.escape(name)}\s*=", nb.cells[i].source, re.M):
                wrong.append(f"cell {check} says 'set {name}', which cell {i} does not assign")
    assert not wrong, f"{path.name}:\n" + "\n".join(wrong)


def svg_text(markdown: str, folder: Path) -> str:
    """The text of every SVG figure a markdown cell shows (its <text> and <title>/<desc>)."""
    out = []
    for ref in IMAGE.findall(markdown):
        path = (folder / ref).resolve()
        if path.is_file():
            out.append(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))
    return " ".join(out)


def output_text(cell) -> str:
    text = []
    for o in cell.get("outputs", []):
        text.append(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"]))
        for mime, value in (o.get("data") or {}).items():
            if mime.startswith("text/"):
                text.append(value if isinstance(value, str) else "".join(value))
    return "\n".join(text)


NUMBER = re.compile(r"(?<![\w.])[-−]?\d{1,3}(?:[, \u2009\u202f]\d{3})+(?:\.\d+)?(?![\w])"     # 2,099,712
                    r"|(?<![\w.])[-−]?\d+(?:\.\d+)?(?![\w])")                                  # 128, 1.342
BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__|\\mathbf\{([^{}]+)\}|\\textbf\{([^{}]+)\}"
                  r"|<(?:b|strong)>(.+?)</(?:b|strong)>", re.S)
SPECIFIC_DIGITS = 3          # a number of this many digits or more is specific enough to give an answer away


def _digits(token: str) -> str:
    """The significant digits of a number token: without sign, separators, decimal point, leading zeros
    and the zeros that end a decimal fraction (``1.0000`` has one, ``4.00`` one, ``0.893`` three)."""
    if "." in token:
        token = token.rstrip("0")
    return re.sub(r"\D", "", token).lstrip("0")


def _value(token: str) -> float:
    return float(re.sub(r"[, \u2009\u202f]", "", token).replace("−", "-"))


def _squash(text: str) -> str:
    """Lower case, every run of whitespace one space, and no TeX dollars: how texts are compared."""
    return re.sub(r"\s+", " ", text.replace("$", "")).strip().lower()


VALUE = re.compile(r"(?:[A-Za-z_][\w.]*\s*=\s*)?("                       # name = 128, 4.00 MiB, 1,225
                   + NUMBER.pattern.replace(r"(?![\w])", r"(?![\d])") + r")\s*[A-Za-z%]*")


def needles(answers: list[str]) -> tuple[list[str], list[float], list[str]]:
    r"""What gives an answer away, from the strings of ``practice.answer``:

    * each string itself (a phrase: ``"one pass"``, ``"cross at T = 128"``), compared case-insensitively
      with runs of whitespace made one space and TeX's ``$`` dropped;
    * the *value* of a string that is a value: a number, alone or as ``name = number`` or with a unit
      (``105``, ``passes_in_training = 1``, ``4.00 MiB``), not a number inside a formula or a sentence
      (``10000`` in ``λ = 2π · 10000^(6/64)``). A value is found on the page as a number of the same
      value in any writing (``2,099,712``, ``2099712``, ``2 099 712``) when it is *specific*: at least
      ``SPECIFIC_DIGITS`` (3) significant digits (``128``, ``105``, ``1.342``, ``0.893``, ``20,000``).
      A shorter one (``1``, ``5``, ``50``, ``0.5``, ``4.00``, ``1.0000``) stands on every page for other
      reasons, so it counts only in its bold form;
    * the bold form of each string and of each value, specific or not: a bold span (``**x**``,
      ``__x__``, ``\mathbf{x}``, ``\textbf{x}``, ``<b>``/``<strong>``) whose whole content is that string
      or value (``**1**``, ``$\mathbf{T = d}$`` for the phrase ``T = d``).

    Returns ``(phrases, specific numbers, bold contents)``, the last two in comparable form."""
    phrases = [_squash(a) for a in answers]
    numbers, bold = [], list(phrases)
    for answer in answers:
        value = VALUE.fullmatch(answer.strip())
        if value:
            token = value.group(1)
            bold.append(_squash(token))
            if len(_digits(token)) >= SPECIFIC_DIGITS:
                numbers.append(_value(token))
    return phrases, numbers, bold


def gives_away(text: str, answers: list[str]) -> list[str]:
    """The pieces of ``text`` that give one of ``answers`` away (see :func:`needles`)."""
    phrases, numbers, bold = needles(answers)
    found = [p for p in phrases if p in _squash(text)]
    for token in NUMBER.findall(text):
        if len(_digits(token)) >= SPECIFIC_DIGITS and any(
                abs(_value(token) - n) <= 1e-9 * max(1.0, abs(n)) for n in numbers):
            found.append(token)
    for match in BOLD.finditer(text):
        content = _squash(next(g for g in match.groups() if g is not None)).strip(" .,:;")
        if content in bold:
            found.append(match.group(0))
    return found


def spoilers(nb, folder: Path) -> list[str]:
    """Where a prediction's or a quiz's answer shows on the page before its check: a markdown cell (and
    the text of the figures it shows), a code cell's source (code and comments) before the exercise,
    any stored output up to the check. What counts as the answer: :func:`needles`."""
    found = []
    for i, check, _ in exercises(nb):
        practice = nb.cells[i].metadata["practice"]
        if practice["kind"] not in ("predict", "quiz"):
            continue
        answers = practice.get("answer")
        if not answers or not all(isinstance(a, str) and a.strip() for a in answers):
            found.append(f"cell {i}: a {practice['kind']} needs metadata practice.answer (what would give it away)")
            continue
        if nb.cells[i].get("outputs"):
            found.append(f"cell {i}: the exercise cell is stored with an output")
        for j, cell in enumerate(nb.cells[:check]):
            if cell.cell_type == "markdown":
                where = cell.source + " " + svg_text(cell.source, folder)
            else:
                where = (cell.source if j < i else "") + "\n" + output_text(cell)
            for piece in dict.fromkeys(gives_away(where, answers)):
                found.append(f"cell {i}: its answer shows in cell {j}, before the check: {piece!r}")
    return found


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem[:2])
def test_no_answer_on_the_page_before_its_check(path):
    nb = nbformat.read(path, as_version=4)
    assert not (found := spoilers(nb, path.parent)), f"{path.name}:\n" + "\n".join(found)


def test_spoilers_are_found(tmp_path):
    """The spoiler test finds an answer in a caption, in a figure, in an earlier output and in the
    exercise cell's own output; and passes the same page without them."""
    (tmp_path / "fig.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><text>p = 1.0000</text></svg>')
    meta = {"tags": ["exercise"], "practice": {"kind": "predict", "mistake": "x", "says": "y",
                                                "answer": ["1.0000"]}}

    def page(caption, figure, earlier, own):
        md = nbformat.v4.new_markdown_cell(caption + ("\n![a figure](fig.svg)" if figure else ""))
        code = nbformat.v4.new_code_cell("p = 1")
        code.outputs = [nbformat.v4.new_output("stream", text=earlier)]
        ex = nbformat.v4.new_code_cell("prediction = ...", metadata=meta)
        ex.outputs = [nbformat.v4.new_output("stream", text=own)] if own else []
        check = nbformat.v4.new_code_cell("check()", metadata={"tags": ["check"]})
        sol = nbformat.v4.new_markdown_cell("<details>\n\n```python\nprediction = 1\n```\n</details>",
                                            metadata={"tags": ["solution"]})
        return nbformat.v4.new_notebook(cells=[md, code, ex, check, sol])

    assert spoilers(page("What will p be?", False, "", ""), tmp_path) == []
    assert spoilers(page("p will be 1.0000", False, "", ""), tmp_path)
    assert spoilers(page("What will p be?", True, "", ""), tmp_path)
    assert spoilers(page("What will p be?", False, "p = 1.0000\n", ""), tmp_path)
    assert spoilers(page("What will p be?", False, "", "1.0000\n"), tmp_path)


def test_an_answer_is_found_by_its_numbers_and_its_bold_form():
    """The needles of an answer: the phrase in any case and spacing, a specific number in any writing,
    and the bold form even of a short number; a short number in plain text is not a spoiler."""
    answers = ["passes_in_training = 1", "crossover_T = 128", "2,099,712", "T = d", "cross at T = d"]
    assert "cross at t = d" in gives_away("They CROSS  at $T = d$.", answers)
    assert gives_away("T =   128   RNN 2,097,152", answers) == ["128"]
    assert gives_away("it has 2 099 712 parameters", answers) == ["2 099 712"]
    assert gives_away("2099712.0", answers) == ["2099712.0"]
    assert gives_away("one pass, **1**, is enough", answers) == ["**1**"]
    assert gives_away(r"They are equal at $\mathbf{T = d}$", answers)
    assert gives_away("step 1 reads one token; 12.8 or 1280 or 128.5 are other numbers", answers) == []
    assert gives_away("sum 1.00, 4.000 and 1.0000", ["p = 1.0000", "4.00 MiB"]) == []
    assert gives_away("λ = 2π · 10000^(6/64) with 10000", ["λ = 2π · 10000^(6/64) = 14.9"]) == []
    assert gives_away("**Practice 1 (write).** Write the loop", answers) == []


def _write_tasks_tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("write_tasks", ROOT / "tools" / "write_tasks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_teachers_guide_lists_the_notebooks_write_tasks():
    """docs/teachers-guide.md's table of write tasks is the one tools/write_tasks.py reads from the
    notebooks' metadata (after a notebook changes: python tools/write_tasks.py)."""
    tool = _write_tasks_tool()
    assert tool.current(tool.GUIDE.read_text(encoding="utf-8")) == tool.table(), \
        "docs/teachers-guide.md's write tasks are stale: run python tools/write_tasks.py"
    sample = "x = 1\n    # a comment\n\ny = 2\n"
    assert tool.code_lines(sample) == code_lines(sample) == 2          # the same rule as the write-task test


def test_the_write_tasks_table_follows_the_metadata(tmp_path, monkeypatch):
    """A write task the notebook gains shows in the table, named by what its cell defines or leaves open,
    with its solution's lines of code; a predict does not."""
    tool = _write_tasks_tool()
    cells = [nbformat.v4.new_code_cell("def f(x):\n    return ...", metadata={
                 "tags": ["exercise"], "practice": {"kind": "write"}}),
             nbformat.v4.new_markdown_cell("<details>\n\n```python\ndef f(x):\n    # double it\n\n    y = 2 * x\n"
                                           "    return y\n```\n</details>", metadata={"tags": ["solution"]}),
             nbformat.v4.new_code_cell("w = ...  # a matrix",
                                       metadata={"tags": ["exercise"], "practice": {"kind": "write"}}),
             nbformat.v4.new_markdown_cell("```python\nw = torch.eye(3)\n```", metadata={"tags": ["solution"]}),
             nbformat.v4.new_code_cell("guess = ...",
                                       metadata={"tags": ["exercise"], "practice": {"kind": "predict"}}),
             nbformat.v4.new_markdown_cell("```python\nguess = 1\n```", metadata={"tags": ["solution"]})]
    path = tmp_path / "notebooks" / "01_x.ipynb"
    path.parent.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert tool.write_tasks(path) == [("`f`", 3), ("`w`", 1)]
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    assert "| 01 | `f` (3); `w` (1) | 4 |" in tool.table()


def test_practice_mixes_the_kinds():
    kinds = {}
    for path in LECTURES:
        nb = nbformat.read(path, as_version=4)
        for i, _, _ in exercises(nb):
            kinds.setdefault(nb.cells[i].metadata["practice"]["kind"], []).append(path.stem[:2])
    assert set(kinds) == KINDS, kinds


@pytest.mark.slow
@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem[:2])
def test_solution_and_mistake_get_their_feedback(path):
    nb = nbformat.read(path, as_version=4)
    found = {i: (check, solution) for i, check, solution in exercises(nb)}
    client = NotebookClient(nb, timeout=600, kernel_name="python3",      # 09 trains a whole run of the change
                            resources={"metadata": {"path": str(path.parent)}})
    problems = []

    def run(source: str, index: int) -> str:
        cell = nbformat.v4.new_code_cell(source)
        client.execute_cell(cell, index)
        return stream_text(cell).strip()

    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if i in found:
                check, solution = found[i]
                practice = cell.metadata["practice"]
                for label, source in (("solution", solution), ("mistake", practice["mistake"])):
                    run(source, i)
                    said = run(nb.cells[check].source, check)
                    lines = said.splitlines()
                    if len(lines) != 1:
                        problems.append(f"cell {i} {label}: the check printed {len(lines)} lines: {said!r}")
                    elif label == "solution" and not said.startswith(PASS):
                        problems.append(f"cell {i}: the solution gets {said!r}")
                    elif label == "mistake" and not (said.startswith(FAIL) and practice["says"] in said):
                        problems.append(f"cell {i}: the mistake gets {said!r}, expected {practice['says']!r}")
            client.execute_cell(copy.deepcopy(cell), i)
    assert not problems, "\n".join(problems)


def test_a_check_prints_one_line_returns_nothing_and_never_raises(capsys):
    from course_lib.practice import check, passed

    @check
    def fine():
        return passed("right")

    @check
    def broken(answer):
        return answer.shape                          # the student's answer is not what the check expects

    assert fine() is None and capsys.readouterr().out == f"{PASS} correct: right\n"
    assert broken(3) is None
    said = capsys.readouterr().out
    assert said.startswith(f"{FAIL} wrong: the check could not read your answer (AttributeError")
    assert said.count("\n") == 1


def test_an_open_choice_does_not_put_the_right_option_first(capsys):
    """The '○ not done yet' line of a multiple-choice quiz lists the options in a fixed order (sorted),
    so it is stored on the page without giving the answer away."""
    from course_lib.practice import choice

    for right in ("zeta", "alpha", "mid"):
        wrong = {o: "no" for o in ("zeta", "alpha", "mid") if o != right}
        choice(None, right, wrong, "yes")
        line = capsys.readouterr().out
        assert line.startswith(TODO) and line.index("'alpha'") < line.index("'mid'") < line.index("'zeta'"), line
