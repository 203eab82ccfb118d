"""The similarity report (copydetect's winnowed fingerprints, containment in all of course_lib, in the
exercise's model solution and model answers, and in other students' cells): every copy of a public
solution or of a classmate, in four disguises or padded with statements that do nothing, is flagged on
every copied part; a cell shared by 10 to 50 % of a class stays flagged with how many share it; none of
fourteen students who solved the exercise on their own is; and those fourteen are correct solutions."""

from __future__ import annotations

import ast
import io
import itertools
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import nbformat
import pytest

from course_grader import similarity
from course_grader.runner import solution_sources
from course_grader.similarity import (
    compare,
    normalize,
    skeletons,
    summary,
)
from exercise_corpus import honest, styles
from exercise_corpus.honest import notebook
from exercise_corpus.styles import DISGUISES, RUNNABLE, two_edits, with_helpers

SOURCE = Path(__file__).resolve().parents[2] / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"
honest.BODIES.update(styles.BODIES)              # notebook() fills any of the fourteen
HONEST = tuple(honest.BODIES)
COPIED_PEER = "typed"                            # the student whose cells the peer copies take
#: statements with no effect, as a copier inserts them after every statement of a copied cell (issue 40)
PADDING = {"assignment": "pad = 0", "pass": "pass", "bare name": "pad", "constant": "0",
           "docstring": "'a note of my own'", "unused call": "spare = torch.zeros(1)", "self attribute": "self.pad = 0",
           "print of a constant": "print('step')", "if False": "if False:\n    pad = 1"}
#: copies of a public solution: course_lib's definition of the part, alone or with the helpers it calls,
#: and the source notebook's model solution
PUBLIC_COPIES = ("definition", "with_helpers", "model_solution")
#: paddings also inserted by a tool that writes the syntax tree back (comments gone)
TOOL_PADDING = ("assignment", "docstring", "if False")
#: the model solution's parts under SMALL tokens whose comments do not reach COMMENT_EVIDENCE: the
#: feed-forward network, three lines that its contract makes anyone write (test_small_cells_need_comments)
CODE_ALONE = {"feed_forward"}
#: the model solution's parts under SMALL tokens: with their comments gone, what an honest student writes
SMALL_PARTS = {"attention", "positional_encoding", "feed_forward"}


@pytest.fixture(scope="module")
def source():
    return nbformat.read(SOURCE, as_version=4)


#: written answers of three students who answered Part 9 in their own words (the source notebook holds
#: the model answers, which a copier pastes)
HONEST_ANSWERS = {
    "answer_scores_shape": [
        "The scores have shape (B, num_heads, T_q, T_k), here (2, 4, 3, 5), because each head multiplies its "
        "queries by the transposed keys. The weights I return have that shape too. I take the softmax over the "
        "last dimension, the keys, so every query row adds up to one; over dim -2 the columns would sum to one "
        "instead and a row would not be an average.",
        "Inside forward I get a tensor of size B x heads x queries x keys, 2 x 4 x 3 x 5 in the cell, and the "
        "returned attention has exactly the same size. Normalising along the key axis gives each query a "
        "probability distribution over the five keys. Doing it along the query axis would make each key spread "
        "one unit of attention across the queries, which is the wrong meaning.",
        "My q @ k^T product is 4-dimensional: batch, head, query position, key position. The printout shows "
        "torch.Size([2, 4, 3, 5]) for both the scores and the weights. Softmax runs on dim=-1, so what a query "
        "reads is a convex mix of the values; if it ran on dim=-2 the weights of one query would not total 1 and "
        "the output would be scaled wrongly."],
    "answer_finite_min": [
        "For the query whose keys are all forbidden my function gives equal weights of one third and the output "
        "is the average of the three value rows, all finite. I fill with the most negative float of the dtype. "
        "With minus infinity the softmax computes inf minus inf, which is NaN, and the NaN would spread through "
        "the next layer and the gradients even if that row is never scored.",
        "The fully masked row comes out uniform: 0.333 for each key, so the returned vector is just the mean of "
        "v. I used a very large negative number rather than -inf. Using -inf every entry of that row becomes NaN "
        "after the softmax; later layers multiply it by zero weights, but NaN times zero stays NaN, and backprop "
        "would then poison the parameters.",
        "My masked_fill uses finfo(dtype).min, so the row with nothing allowed still has finite scores that are "
        "all equal and the softmax spreads weight evenly. Minus infinity would make the maximum itself infinite, "
        "subtracting it gives NaN, and those NaNs leak into every position in the following layer and into "
        "training, which is why it matters although padded queries are ignored by the grader."],
    "answer_transpose": [
        "Head 0 with a plain view at position 1 gets features 2 and 3, which actually belong to position 0. The "
        "contract wants head 0 to have features 0 and 1 of each position, so 4 and 5 at position 1. Position 0 "
        "looks right either way because the first numbers in memory are its own. I reshape to (B, T, heads, d_k) "
        "and only then swap the head and time axes.",
        "The naive view hands head 0 the pair [2, 3] for position 1, the second half of token 0. What it should "
        "receive is [4, 5], the first d_k features of token 1. Token 0 is unaffected since it sits at the start "
        "of memory. In my code the line splitting heads keeps time before heads in the view and then calls "
        "transpose(1, 2), which keeps each token's features together.",
        "Viewing (T, d_model) directly as (heads, T, d_k) reads memory in order and cuts across tokens, so at "
        "position 1 head 0 sees features 2..3 instead of 4..5. Position zero hides the bug because its block "
        "comes first. My split is view(b, t, h, d_k) followed by a permute that moves the head axis forward; that "
        "way each head gets a slice of every token."],
    "answer_parameters": [
        "My count for the base model is 37,858,304 parameters. The embedding table is 37000 times 512, about "
        "18.9 million, so roughly half. Each layer has about 1.05 million in attention and 2.1 million in the "
        "feed-forward part, so two thirds of a layer is the FFN. Changing num_heads leaves the total unchanged "
        "because the projections are still d_model by d_model.",
        "I get roughly 37.9 million. Half is the vocabulary embedding (18.9 M). In the six layers attention takes "
        "four 512x512 matrices with biases per layer, about a third, and the two linear maps of the feed-forward "
        "network take the other two thirds. The head count does not matter for the count: heads only split the "
        "same projection into pieces.",
        "encoder_parameter_count returns 37858304 for those sizes. Embedding: 18,944,000. Attention per layer "
        "1,050,624 and feed-forward 2,099,712, plus 2048 for the norms. Thus the embedding is about 50 percent, "
        "attention about 17 percent and the FFNs about 33 percent overall. num_heads drops out of my formula "
        "completely since splitting into heads adds no weights."],
    "answer_reverser": [
        "The Reverser reaches 100 percent, far above the 36 percent a position-blind model could get. In the "
        "attention map each query t looks at key T-1-t, the one holding the token it must output, giving an "
        "anti-diagonal. Without the positional table accuracy drops to the ceiling, since identical tokens then "
        "get identical vectors and the model cannot know where it is; the embedding line that adds pe is "
        "responsible.",
        "My model gets every test sequence right after training, versus a ceiling of about one third. The map "
        "shows attention along the anti-diagonal: output position t copies from input position T-1-t. Zeroing "
        "the table sends accuracy down to the ceiling, and the shuffle check confirms the outputs are just "
        "permuted, because without positions self-attention is permutation equivariant. The sum of embedding and "
        "pe in my Encoder gives positions.",
        "Accuracy is 1.0 while the blind ceiling is 0.36. Each query attends to its mirror key, which carries the "
        "symbol to copy into that slot. When I zero the positional encoding the model falls to a chance-like "
        "ceiling: a token looks the same wherever it stands, and shuffling inputs only shuffles outputs. The line "
        "x = emb * sqrt(d) + pe[:T] in forward is the only source of position."]}


def answered(nb, i: int):
    """``nb`` with the written answers of student ``i`` of :data:`HONEST_ANSWERS`."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "markdown" and gid in HONEST_ANSWERS:
            cell.source = HONEST_ANSWERS[gid][i]
    return nb


def padded(code: str, statement: str) -> str:
    """``code`` with ``statement`` typed after every simple statement, at its indentation (a copy padded by
    hand to hide it: its comments stay)."""
    lines = code.split("\n")
    after: dict = {}
    first = None
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.COMMENT):
            continue
        if first is None:
            first = tok
        if tok.type == tokenize.NEWLINE:
            header = lines[tok.start[0] - 1].split("#")[0].rstrip().endswith(":") or first.string == "@"
            if not header and first.type != tokenize.STRING:
                after[tok.start[0]] = " " * first.start[1]
            first = None
    out = []
    for number, line in enumerate(lines, 1):
        out.append(line)
        if number in after:
            out += [after[number] + extra for extra in statement.split("\n")]
    return "\n".join(out)


def padded_by_a_tool(code: str, statement: str) -> str:
    """``code`` with ``statement`` after every statement of every block, written back from its syntax tree
    (comments gone)."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, name, [s for stmt in block for s in (stmt, *ast.parse(statement).body)])
    return ast.unparse(tree)


@pytest.fixture(scope="module")
def submissions(source):
    subs = {s: solution_sources(notebook(source, s)) for s in HONEST}
    definitions = styles._definitions()
    public = {"definition": {p: definitions[name][0] for p, name in styles.GRADED.items()},
              "with_helpers": {p: with_helpers(p) for p in styles.GRADED},
              "model_solution": similarity.solutions(source)}
    for name, disguise in DISGUISES.items():
        # course_lib's graded definitions with the helpers they call, two small edits, then the disguise
        subs[f"lib_{name}"] = {p: disguise(two_edits(with_helpers(p))) for p in styles.GRADED}
        # another student's cells, in the same disguise
        subs[f"peer_{name}"] = {p: disguise(text) for p, text in subs[COPIED_PEER].items()}
    for kind, name in itertools.product(PUBLIC_COPIES, ("verbatim", "renamed")):
        # a public solution as it is, or with every name the grader does not need renamed
        subs[f"public_{kind}_{name}"] = {p: RUNNABLE[name](public[kind][p]) for p in styles.GRADED}
    for kind, (name, statement) in itertools.product(PUBLIC_COPIES, PADDING.items()):
        subs[f"padded_{kind}_{name}"] = {p: padded(public[kind][p], statement) for p in styles.GRADED}
    for kind, name in itertools.product(PUBLIC_COPIES, TOOL_PADDING):
        subs[f"toolpadded_{kind}_{name}"] = {p: padded_by_a_tool(public[kind][p], PADDING[name])
                                             for p in styles.GRADED}
    return subs


@pytest.fixture(scope="module")
def matches(source, submissions):
    return compare(submissions, skeletons(source), similarity.solutions(source))


def _flags(matches, student):
    return {(m.part, m.other) for m in matches if m.student == student and m.flagged}


def test_the_copies_are_valid_python_and_really_disguised(submissions):
    for name in DISGUISES:
        for text in submissions[f"lib_{name}"].values():
            ast.parse(text)
    assert submissions["lib_renamed"]["attention"] != submissions["lib_verbatim"]["attention"]
    assert "my_" in submissions["lib_renamed"]["multi_head_attention"]
    assert "\n\n" in submissions["lib_reformatted"]["encoder"]


@pytest.mark.parametrize("disguise", list(DISGUISES))
def test_a_copy_of_course_lib_with_its_helpers_is_flagged_on_every_part(matches, disguise):
    """Issue 29: a verbatim copy with the helpers and two edits was flagged for no part (19-50 % per part
    against the part's own definition); against all of course_lib it is found on every part."""
    flagged = {p for p, other in _flags(matches, f"lib_{disguise}") if other == "course_lib"}
    assert flagged == set(styles.GRADED)


@pytest.mark.parametrize("disguise", list(DISGUISES))
def test_a_copy_of_another_student_is_flagged_on_every_part_that_can_be(matches, submissions, disguise):
    """Every part with enough code of its own (MIN_TOKENS) is flagged against the student copied, or
    against another copy of the same cells; the others (what is left of the encoder once the contract's
    statements are set aside: 33 tokens) as corroborated by them (issue 52)."""
    copiers = {COPIED_PEER} | {f"peer_{d}" for d in DISGUISES}
    said = {p: similarity.comments(text) for p, text in submissions[COPIED_PEER].items()}
    sized = {m.part for m in matches if m.student == f"peer_{disguise}" and m.other not in similarity.PUBLIC
             and m.size >= similarity.MIN_TOKENS and (m.size >= similarity.SMALL or similarity.shares_comments(
                 similarity.comments(submissions[m.student][m.part]), said[m.part]))}
    flags = [m for m in matches if m.student == f"peer_{disguise}" and m.flagged and m.other in copiers]
    assert sized >= {"multi_head_attention", "encoder_layer"}
    assert {m.part for m in flags if not m.corroborated} <= sized <= {m.part for m in flags}
    assert {m.part for m in flags} >= {"multi_head_attention", "encoder_layer", "encoder"}
    assert all(m.score >= similarity.CORROBORATED and m.size >= similarity.CORROBORATED_TOKENS
               for m in flags if m.corroborated)
    assert any(o.startswith("peer_") for _, o in _flags(matches, COPIED_PEER))   # the copied student too


@pytest.mark.parametrize("kind", PUBLIC_COPIES)
@pytest.mark.parametrize("disguise", ["verbatim", "renamed"])
def test_a_copy_of_a_public_solution_is_flagged_on_all_six_parts(matches, kind, disguise):
    """Issue 40: a verbatim paste of the reference was flagged on 3 of 6 parts (EncoderLayer 79 %, the
    feed-forward network 71 %, Encoder 64 %) and the model solution was in no comparison. Now course_lib's
    definition (alone, or with the helpers it calls) and the source notebook's model solution, as they
    are or with every name renamed that the grader does not need, are flagged on all six parts."""
    flagged = {p for p, other in _flags(matches, f"public_{kind}_{disguise}") if other in similarity.PUBLIC}
    assert flagged == set(styles.GRADED) - (CODE_ALONE if kind == "model_solution" else set())


@pytest.mark.parametrize("kind", PUBLIC_COPIES)
@pytest.mark.parametrize("padding", list(PADDING))
def test_padding_with_dead_statements_does_not_hide_a_copy(matches, submissions, kind, padding):
    """Issue 40: a classmate's cell with ``pad = 0`` after every line was flagged on 0 parts where the
    plain copy was flagged on 3. Statements with no effect are dropped before fingerprinting."""
    student = f"padded_{kind}_{padding}"
    assert PADDING[padding].split("\n")[0] in submissions[student]["multi_head_attention"]
    ast.parse(submissions[student]["multi_head_attention"])
    flagged = {p for p, other in _flags(matches, student) if other in similarity.PUBLIC}
    assert flagged == set(styles.GRADED) - (CODE_ALONE if kind == "model_solution" else set())
    if padding in TOOL_PADDING:     # written back by a tool: the model solution's small cells lose their comments,
        student = f"toolpadded_{kind}_{padding}"    # and are flagged as corroborated by its larger ones (issue 52)
        flagged = {p for p, other in _flags(matches, student) if other in similarity.PUBLIC}
        assert flagged == set(styles.GRADED) - (CODE_ALONE if kind == "model_solution" else set())
        assert all(m.corroborated for m in matches if m.student == student and m.flagged and m.part in SMALL_PARTS
                   and kind == "model_solution")


def test_small_cells_need_comments(source):
    """Issue 40, honest work never flagged: two honest students write the same seven lines of attention
    (and anyone writes the model solution's feed-forward network) token for token. Under SMALL tokens the
    code alone flags nothing against the model solution or a classmate; shared comments do."""
    attention = ("def scaled_dot_product_attention(q, k, v, attn_mask=None):\n    d = q.size(-1)\n"
                 "    s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)\n    if attn_mask is not None:\n"
                 "        s = s.masked_fill(~attn_mask, torch.finfo(s.dtype).min)\n"
                 "    w = torch.softmax(s, dim=-1)\n    return w @ v, w\n")
    model = similarity.solutions(source)
    assert not similarity.shares_comments(similarity.comments(model["feed_forward"]),
                                          similarity.comments(model["feed_forward"]))    # CODE_ALONE
    plain = {"alice": {"attention": attention, "feed_forward": model["feed_forward"]},
             "bob": {"attention": attention, "feed_forward": model["feed_forward"]}}
    matches = compare(plain, skeletons(source), model)
    assert max(m.score for m in matches if m.part == "attention" and m.other == "bob") == 1.0
    assert not [m for m in matches if m.flagged]
    noted = attention.replace("w = torch", "w = torch  # the weights of each query, a row per query\n    w = torch")
    matches = compare({"alice": {"attention": noted}, "bob": {"attention": noted}}, skeletons(source), model)
    assert {(m.student, m.other) for m in matches if m.flagged} == {("alice", "bob"), ("bob", "alice")}


def test_dead_statements_are_dropped_and_live_ones_kept():
    code = ("import os\nimport math\nclass A(nn.Module):\n    def forward(self, x):\n        pad = 0\n"
            "        self.pad = 1\n        'note'\n        pass\n        y = x * 2\n        unused = y + pad\n"
            "        self.norm(y)\n        if False:\n            y = 0\n        if True:\n            y = y + 1\n"
            "        def helper():\n            return 1\n        return math.sqrt(y)\n")
    tokens = " ".join(normalize(code))
    assert "os" not in tokens and "pad" not in tokens and "STR" not in tokens and "pass" not in tokens
    assert "helper" not in tokens and "return 1" not in tokens and "True" not in tokens and "False" not in tokens
    assert tokens.count("=") == 2 and "self . ID ( ID )" in tokens and "math . sqrt" in tokens
    assert normalize(code) == normalize(similarity.without_dead_code(code))
    assert normalize("def f(x):\n    y = x\n    return y\n") == ["def", "ID", "(", "ID", ")", ":", "ID", "=", "ID",
                                                                   "return", "ID"]
    # a cell Python cannot parse is fingerprinted as it is; one with a magic has its magic blanked
    assert similarity.without_dead_code("def f(:\n    pad = 0\n") == "def f(:\n    pad = 0\n"
    assert "pad" not in similarity.without_dead_code("%time x = 1\npad = 0\nprint(x)\n").split("\n")[1]


def test_no_honest_solution_is_flagged(matches):
    """Against course_lib, the model solution or each other. A feed-forward network is mostly fixed by its
    contract: two honest ones reach 0.82 here (0.93 in test_class_report.py), so a cell of fewer than SMALL
    tokens is flagged from 0.95."""
    copiers = {m.student for m in matches if m.student.startswith(("lib_", "peer_", "public_", "padded_"))}
    flagged = {s: {(p, o) for p, o in _flags(matches, s) if o not in copiers} for s in HONEST}
    assert flagged == {s: set() for s in HONEST}
    honest = [m for m in matches if m.student in HONEST and m.other not in copiers]
    assert max(m.score for m in honest if m.size >= similarity.SMALL) < similarity.THRESHOLD
    assert max(m.score for m in honest if m.size >= similarity.MIN_TOKENS) < similarity.SMALL_THRESHOLD


@pytest.mark.parametrize("share", [0.1, 0.3, 0.5])
def test_a_cell_shared_by_part_of_a_class_stays_flagged_with_its_count(source, share):
    """Issue 40: where many shared one solution, the report said "49 of 49 flagged" and called it common
    code. A classmate's cells that 10, 30 or 50 % of a class share (in every disguise) stay flagged for
    each of them, against another of them, with how many share them; no honest student is flagged."""
    honest_cells = {s: solution_sources(notebook(source, s)) for s in HONEST if s != COPIED_PEER}
    n = max(2, round(share * len(honest_cells) / (1 - share)))         # the student whose cells leaked, and copiers
    leaked = solution_sources(notebook(source, COPIED_PEER))
    disguises = itertools.cycle(DISGUISES.values())                   # the first as it is, then disguised
    sharers = {f"sharer{i:02d}": {p: next(disguises)(text) for p, text in leaked.items()} for i in range(n)}
    matches = compare({**honest_cells, **sharers}, skeletons(source), similarity.solutions(source))
    assert abs(n / (n + len(honest_cells)) - share) < 0.05
    for part in ("multi_head_attention", "encoder_layer", "encoder", "attention", "positional_encoding"):
        flags = [m for m in matches if m.part == part and m.flagged]
        if part in SMALL_PARTS:           # only sharers that kept the comments (test_small_cells_need_comments)
            assert {m.student for m in flags} <= set(sharers) and all(m.other in sharers for m in flags), part
            continue
        assert {m.student for m in flags} == set(sharers), part
        assert all(m.other in sharers and m.shared == n for m in flags), (part, [(m.other, m.shared) for m in flags])


def test_written_answers_are_compared_with_the_model_answers(source):
    """Part 9's model answers are public in the source notebook: a pasted one is flagged, one with a word
    in eight changed too; three students who answered in their own words are not, against the model or
    each other."""
    model = similarity.solutions(source)

    def changed(text, every=8):
        return " ".join(w if i % every else "indeed" for i, w in enumerate(text.split(" ")))
    subs = {f"own{i}": similarity.answer_sources(answered(source, i)) for i in range(3)}
    subs["pasted"] = {a: model[a] for a in HONEST_ANSWERS}
    subs["edited"] = {a: changed(model[a]) for a in HONEST_ANSWERS}
    matches = compare(subs, skeletons(source), model)
    assert set(subs["own0"]) == set(HONEST_ANSWERS)
    for student in ("pasted", "edited"):
        assert {m.part for m in matches if m.student == student and m.flagged and m.other == "model answer"} \
            == set(HONEST_ANSWERS), student
    assert not [m for m in matches if m.student.startswith("own") and m.flagged]
    assert max(m.score for m in matches if m.student.startswith("own")) < similarity.PROSE_THRESHOLD / 2


@pytest.mark.slow
@pytest.mark.parametrize("student", list(styles.BODIES))
def test_every_style_is_a_correct_solution(source, student):
    """Each style passes the notebook's visible checks and the hidden ones (the source's seeds), every
    part (the Reverser is trained, as the check does)."""
    from course_lib.grading.cases import hidden_seeds
    from course_lib.grading.checks import check
    from course_lib.grading.parts import NAMES, PARTS
    from exercise_corpus.submissions import define

    nb = notebook(source, student)
    seeds = hidden_seeds(source)
    for part in PARTS:
        candidate = define(nb, part, NAMES[part], as_cell=True)
        check(part, candidate)
        if part in seeds and part != "reverse_task":
            check(part, candidate, hidden_seed=seeds[part])


def test_normalize_ignores_names_comments_docstrings_and_layout():
    a = 'def f(x, y):\n    """Doc."""\n    z = x @ y  # product\n    return torch.softmax(z, dim=-1)\n'
    b = "def g(q,k):\n\n    out=q@k\n    return torch.softmax(out,\n                         dim=-1)\n"
    assert normalize(a) == normalize(b)
    assert "softmax" in normalize(a) and "dim" in normalize(a) and "x" not in normalize(a)
    assert normalize("def f(x):\n    return x.transpose(1, 2)\n") != normalize("def f(x):\n    return x.view(1, 2)\n")


def test_summary_and_command_line(source, tmp_path):
    root = tmp_path / "course"
    for i, s in enumerate(("honest_a", "honest_b", "honest_c", "copy_of_a")):
        folder = root / "submitted" / s / "07_exercise"
        folder.mkdir(parents=True)
        nbformat.write(answered(notebook(source, "honest_a" if s == "copy_of_a" else s), i % 3), folder / SOURCE.name)
    (root / "notebooks" / "07_exercise").mkdir(parents=True)
    nbformat.write(source, root / "notebooks" / "07_exercise" / SOURCE.name)
    text = summary({s: root / "submitted" / s / "07_exercise" / SOURCE.name for s in ("honest_a", "copy_of_a")},
                   source=SOURCE, csv_path=tmp_path / "pair.csv")
    assert "copy_of_a" in text and "multi_head_attention ~ honest_a (100%; 2 students share it)" in text
    assert "2 of 2 submissions have flagged parts" in text
    proc = subprocess.run([sys.executable, "-m", "course_grader.similarity", "07_exercise"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = (root / "similarity_07_exercise.csv").read_text().splitlines()
    assert rows[0] == "student,part,compared_with,score,tokens,flagged,students_sharing"
    flagged = {tuple(r.split(",")[:3]) for r in rows[1:] if r.split(",")[5] == "1"}
    assert ("copy_of_a", "encoder", "honest_a") in flagged and ("honest_a", "encoder", "copy_of_a") in flagged
    assert not {f for f in flagged if "copy_of_a" not in f}
    assert "honest_b" in proc.stdout and similarity.THRESHOLD > 0.5


def test_summary_from_the_autograder(source, tmp_path):
    """autograde calls summary(coursedir, assignment_id) with nbgrader's CourseDirectory."""
    from nbgrader.coursedir import CourseDirectory

    for i, s in enumerate(("honest_a", "honest_b")):
        folder = tmp_path / "submitted" / s / "07_exercise"
        folder.mkdir(parents=True)
        nbformat.write(answered(notebook(source, s), i), folder / SOURCE.name)
    (tmp_path / "notebooks" / "07_exercise").mkdir(parents=True)
    nbformat.write(source, tmp_path / "notebooks" / "07_exercise" / SOURCE.name)
    coursedir = CourseDirectory(root=str(tmp_path), source_directory="notebooks")
    text = summary(coursedir, "07_exercise")
    assert "honest_a" in text and "0 of 2 submissions have flagged parts" in text
    assert (tmp_path / "similarity_07_exercise.csv").exists()


def test_links_are_not_followed(source, tmp_path):
    """A submission that is a symbolic link (to another student's notebook, or a student folder that
    links elsewhere) is reported and skipped, as the grader does; a path given to summary() too."""
    outside = tmp_path / "elsewhere" / "07_exercise"
    outside.mkdir(parents=True)
    nbformat.write(notebook(source, "honest_b"), outside / SOURCE.name)
    course = tmp_path / "course"
    folder = course / "submitted" / "honest_a" / "07_exercise"
    folder.mkdir(parents=True)
    nbformat.write(notebook(source, "honest_a"), folder / SOURCE.name)
    (course / "submitted" / "mallory" / "07_exercise").mkdir(parents=True)
    (course / "submitted" / "mallory" / "07_exercise" / SOURCE.name).symlink_to(folder / SOURCE.name)
    (course / "submitted" / "trudy").symlink_to(tmp_path / "elsewhere")
    text, _ = similarity.report(course, "07_exercise", SOURCE.parent)
    skipped = dict(re.findall(r"not compared: (\w+): (.*)", text))
    assert set(skipped) == {"mallory", "trudy"}, text
    assert all("symbolic link" in why for why in skipped.values())
    assert "1 of 1 submissions" in text or "0 of 1 submissions" in text
    text = summary({"a": folder / SOURCE.name, "m": course / "submitted" / "mallory" / "07_exercise" / SOURCE.name},
                   source)
    assert re.search(r"not compared: m: .*symbolic link", text) and "of 1 submissions" in text
