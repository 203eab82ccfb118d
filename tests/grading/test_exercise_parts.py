"""The exercise's parts, cases, mistakes and judge, in-process (the sandboxed round trip is in
test_exercise_roundtrip.py).

* every part's reference (course_lib's, or the source notebook's solution for the parts course_lib
  has no reference of) passes its visible and hidden cases;
* every one-bug submission of the corpus fails a *visible* case of its part, so the visible tests
  predict the grade;
* every known mistake, made from the reference, is named by the judge;
* the hidden cases cannot be made from the release plus the installed course_lib;
* a failed check is one line, with no course_lib frame.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

import course_grader.similarity
import course_lib
from course_grader.points import points, set_points, text_points, written
from course_lib.grading import cases as cases_module
from course_lib.grading import hints, policy
from course_lib.grading.cases import hidden_seeds, make_cases
from course_lib.grading.checks import REFERENCES, PartFailed, check, reference_dependencies
from course_lib.grading.harness import run_case
from course_lib.grading.judging import HIDDEN_MESSAGES, judge, judge_case, position_blind_ceiling
from course_lib.grading.mistakes import FAILURES, IDS, MISTAKES, SECTIONS
from course_lib.grading.parts import CONTRACT_PARTS, NAMES, NUMBERS, PARTS
from course_lib.grading.reference import reference_outputs
from exercise_corpus.submissions import CHEATS, FAULTS, HONEST, apply, define, solved
from exercise_corpus.submissions import MISTAKES as CORPUS_MISTAKES

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def source():
    return nbformat.read(SOURCE, as_version=4)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(SOURCE.parent, root / "notebooks" / "07_exercise")
    shutil.copy(REPO / "nbgrader_config.py", root)
    subprocess.run([str(BIN / "nbgrader"), "generate_assignment", "07_exercise"], cwd=root, check=True,
                   capture_output=True, env={"PATH": f"{BIN}:/usr/bin:/bin"})
    return nbformat.read(root / "release" / "07_exercise" / SOURCE.name, as_version=4)


@pytest.fixture(autouse=True)
def _one_thread():
    """As the grader: tiny tensors are faster on one thread, above all on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _reference(nb, part):
    return REFERENCES[part] if part in REFERENCES else define(nb, part, NAMES[part])


@pytest.mark.parametrize("part", PARTS)
def test_reference_passes_visible_and_hidden(source, part):
    """The source notebook's solution passes its checks; course_lib's reference (which the checks
    refuse as a submission: it is not the student's own) passes the judge on the same cases."""
    seeds = hidden_seeds(source)
    assert set(seeds) == set(PARTS) and all(2 ** 32 <= s < 2 ** 64 for s in seeds.values())
    solution = define(source, part, NAMES[part])
    check(part, solution)
    check(part, solution, hidden_seed=seeds[part])
    if part in REFERENCES:
        with pytest.raises(PartFailed, match="course_lib's own"):
            check(part, REFERENCES[part])
        for case in make_cases(part) + make_cases(part, seeds[part]):
            assert judge_case(case, run_case(case, REFERENCES[part])) is None, case.label


def test_visible_cases_cover_every_family(source):
    for part, seed in hidden_seeds(source).items():
        visible, hidden = make_cases(part), make_cases(part, seed)
        assert [c.family for c in visible] == [c.family for c in hidden]
        assert not any(c.hidden for c in visible) and all(c.hidden for c in hidden)
        assert visible[0].kwargs != hidden[0].kwargs or any(
            not torch.equal(visible[0].inputs[k], hidden[0].inputs[k]) for k in visible[0].inputs)
    families = {c.family for p in PARTS for c in make_cases(p)}
    for needed in ("pre-LN with padding", "pre-LN (final_norm)", "cross-attention, T_q != T_k, with padding",
                   "dropout > 0 in eval mode", "T_q != T_k, d_v != d_k, a bool mask",
                   "pad_id != 0, padding from pad_id"):
        assert needed in families
    for part in ("multi_head_attention", "feed_forward", "encoder_layer", "encoder"):   # every dropout rule
        assert any(c.training and c.kwargs["dropout"] > 0 for c in make_cases(part)), part
    case = next(c for c in make_cases("encoder") if c.family == "pad_id != 0, padding from pad_id")
    pad = case.inputs["tokens"] == case.kwargs["pad_id"]
    assert case.kwargs["pad_id"] != 0 and pad.any() and (case.inputs["tokens"][~pad] == 0).any()


#: the mistake id some corpus entries must get (the class report counts these ids)
EXPECTED_IDS = {
    "mha_wrong_head_split": "heads_split_wrong", "mha_inverted_padding_mask": "padding_mask_inverted",
    "attn_missing_scaling": "attention_unscaled", "layer_inplace_residual": "input_modified",
    "attn_softmax_overflow": "overflow", "attn_minus_inf_fill": "not_finite",
    "count_no_attention_biases": "count_attention_biases_or_layer_norms", "mha_no_dropout": "dropout_missing",
    "mha_weights_after_dropout": "weights_after_dropout", "mha_dropout_unscaled_mask": "dropout_not_scaled",
    "mha_dropout_keeps_p": "dropout_wrong_rate", "ffn_dropout_after_linear2": "dropout_misplaced",
    "layer_dropout_on_sum": "dropout_misplaced", "layer_no_dropout1": "dropout_missing",
    "encoder_dropout_before_positions": "dropout_misplaced", "accuracy_not_reversed": "reverse_accuracy_wrong",
    "train_no_step": "reverse_loss_not_falling", "mha_dropout_always_on": "dropout_in_eval",
    "layer_norm_eps": "layer_norm_eps", "mha_merge_without_transpose": "heads_merged_wrong",
    "encoder_pe_off_by_one_row": "pe_off_by_one_row", "pe_positions_from_one": "pe_off_by_one_row",
    "encoder_final_norm_post_ln": "final_norm_in_post_ln", "train_no_zero_grad": "reverse_no_zero_grad",
    "mha_softmax_overflow": "overflow",
    "train_drops_last_batch": "reverse_loss_count", "train_two_epochs": "reverse_too_many_steps",
    "encoder_scale_on_sum": "embedding_scale_on_sum",
    "encoder_one_layer_shared": "layers_shared", "mha_projections_without_bias": "bias_missing",
    "pe_float64": "pe_dtype", "layer_pre_ln_wrong": "pre_ln_branch_wrong", "encoder_persistent_pe": "buffer_persistent",
    "encoder_no_final_norm": "final_norm_missing", "count_final_norm_always": "count_final_norm_in_post_ln",
}


@pytest.mark.parametrize("name,edits,lost", CORPUS_MISTAKES, ids=[m[0] for m in CORPUS_MISTAKES])
def test_each_one_bug_submission_fails_a_visible_and_a_hidden_test(source, name, edits, lost):
    """The visible tests predict the grade: each bug fails its part's visible check, and the hidden one."""
    good = solved(source, source)
    bad = apply(good, edits)
    seeds = hidden_seeds(source)
    for part in lost:
        candidate = define(bad, part, NAMES[part], as_cell=True)
        for seed in (None, seeds[part]):
            with pytest.raises(PartFailed) as failure:
                check(part, candidate, hidden_seed=seed)
            assert failure.value.line.startswith(f"Part {PARTS.index(part) + 1}: ")
            assert ("hidden case" in failure.value.line) == (seed is not None)
            assert failure.value.mistake in IDS
            if name in EXPECTED_IDS:
                assert failure.value.mistake == EXPECTED_IDS[name], failure.value.line
    for part in {e[1] for e in edits} - set(lost):
        check(part, define(bad, part, NAMES[part], as_cell=True))


@pytest.mark.parametrize("name,edits,lost", HONEST, ids=[m[0] for m in HONEST])
def test_honest_choices_cost_nothing(source, name, edits, lost):
    """Type hints, a namedtuple, dropout by F.dropout or a mask drawn by hand: full marks, visible and hidden."""
    bad = apply(solved(source, source), edits)
    seeds = hidden_seeds(source)
    assert not lost
    for part in {e[1] for e in edits}:
        candidate = define(bad, part, NAMES[part], as_cell=True)
        check(part, candidate)
        check(part, candidate, hidden_seed=seeds[part])


def test_the_model_answer_counts_with_course_lib(source):
    """9.4's model answer quotes the base model's size as course_lib's Encoder has it."""
    answer = next("".join(c.source) for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                  == "answer_parameters")
    base = course_lib.Encoder(37000, 512, 8, 2048, 6)
    count = course_lib.count_parameters(base)
    assert f"{count:,}" in answer and f"({count / 1e6:.1f} M)" in answer


@pytest.mark.parametrize("part", CONTRACT_PARTS)
def test_every_mistake_is_named(part):
    """A mistake made from the reference gets its own id (or that of a mistake with the same outputs on that
    case), with its lecture section, on a visible case where it shows; every id is named somewhere."""
    named = set()
    for case in make_cases(part):
        if case.training or case.family.startswith("a query whose mask allows no key"):
            continue                        # judged by what dropout does (test_dropout_*), or either way
        variants = {}
        for m in MISTAKES[part]:
            try:
                variants[m] = reference_outputs(case, **m.how)
            except LookupError:
                continue
        for m, outputs in variants.items():
            verdict = judge(case, outputs)
            if verdict is None:
                continue
            same = {o.id for o, out in variants.items()
                    if all(np.allclose(out[k], outputs[k], atol=1e-3) for k in outputs if k in out)}
            assert verdict.mistake in same, (case.label, m.id, verdict)
            assert verdict.section == m.section or verdict.mistake != m.id
            named.add(verdict.mistake)
    assert named == {m.id for m in MISTAKES[part]}


def test_parameter_count_mistakes_are_named():
    case = make_cases("parameter_count")[0]                                   # pre-LN: every mistake shows
    for m in MISTAKES["parameter_count"]:
        assert judge(case, reference_outputs(case, **m.how)).mistake == m.id


def test_ids_sections_and_symptoms():
    """Every id is a stable identifier with a lecture section or none; rung 1 says where to look and
    never states a formula (that is rung 3); the LayerNorm/bias shortfall names both."""
    assert len(IDS) == len(set(IDS)) and all(i.isidentifier() and i == i.lower() for i in IDS)
    for ms in MISTAKES.values():
        for m in ms:
            assert m.section in SECTIONS.values() and m.rule and "look" in m.symptom, m.id
            assert "sqrt(d_k)" not in m.symptom and "√" not in m.symptom, m.id
    for f in FAILURES.values():
        assert f.section is None or f.section in SECTIONS.values()
    both = next(m for m in MISTAKES["parameter_count"] if m.id == "count_attention_biases_or_layer_norms")
    assert "LayerNorm" in both.symptom and "biases" in both.symptom


def test_the_notebook_rule_and_the_allow_list_agree(source):
    """The notebook's import rule names exactly the modules policy.ALLOWED_IMPORTS allows."""
    intro = "".join(source.cells[0].source)
    rule = re.sub(r"\(already imported[^)]*\)", "", intro.split("may import only", 1)[1].split("Type hints", 1)[0])
    named = set(re.findall(r"`([a-z_.]+)`", rule))
    assert named == policy.ALLOWED_IMPORTS - {"__future__"}, named ^ (policy.ALLOWED_IMPORTS - {"__future__"})


def test_hints_climb_and_the_record_is_only_a_record(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hints.LAST_FAILURE.clear()
    rung, text = hints.next_rung("attention")
    assert rung == 0 and "run its test cell first" in text
    symptom = next(m for m in MISTAKES["attention"] if m.id == "attention_unscaled")
    with pytest.raises(PartFailed):
        check("attention", lambda q, k, v, attn_mask=None: course_lib.scaled_dot_product_attention(
            q * q.shape[-1] ** 0.5, k, v, attn_mask=attn_mask))
    assert hints.LAST_FAILURE["attention"][0] == "attention_unscaled"
    texts = [hints.next_rung("attention") for _ in range(4)]
    assert [r for r, _ in texts] == [1, 2, 3, 3]
    assert symptom.symptom not in texts[0][1] and "print" in texts[0][1]      # rung 1: what to print, not the message
    assert symptom.section in texts[1][1] and symptom.rule in texts[2][1]
    record = hints.read_record(str(tmp_path / hints.HINTS_FILE))
    assert record["attention"] == {"rung": 3, "asked": 4, "mistakes": {"attention_unscaled": 3}}
    (tmp_path / hints.HINTS_FILE).write_text('{"parts": {"attention": {"rung": 99, "asked": "x"}, "os": {}}}')
    assert hints.read_record(str(tmp_path / hints.HINTS_FILE)) == {"attention": {"rung": 3, "asked": 0, "mistakes": {}}}
    (tmp_path / hints.HINTS_FILE).write_text("not json")
    assert hints.next_rung("attention")[0] == 1                               # a broken record starts afresh
    hints.LAST_FAILURE.clear()


def test_the_from_scratch_rules_fail_a_visible_check(source):
    """A cell that delegates to torch's or course_lib's attention fails the notebook's own check, as the
    grader fails it (the same rules, and tripwires on torch's ready-made attention)."""
    good = solved(source, source)
    for name, edits, lost in CHEATS + [f for f in FAULTS if f[0] == "import_os"]:
        if name in ("patch_everything", "patch_inside_solution_cell", "test_cells_edited", "test_cell_deleted",
                    "reverser_counts_calls"):
            continue      # a wrong part behind a cheat: its own bug fails it (and, run here, the cheat would
                          # patch torch.allclose for every later test of this process)
        bad = apply(good, edits)
        for part in lost:
            candidate = define(bad, part, NAMES[part], as_cell=True)
            with pytest.raises(PartFailed, match="ready-made attention|course_lib's own|may import only") as failure:
                check(part, candidate)
            assert failure.value.line.startswith(f"Part {PARTS.index(part) + 1}: "), (name, failure.value.line)
    for part in PARTS:                                      # a right cell, seen as a cell, passes
        check(part, define(good, part, NAMES[part], as_cell=True))


def test_hidden_messages_do_not_reveal_inputs(source):
    """On a hidden case each kind of failure has one fixed message: nothing the outputs choose (issue 30)."""
    seed = hidden_seeds(source)["multi_head_attention"]
    for case in make_cases("multi_head_attention", seed):
        out = run_case(case, REFERENCES["multi_head_attention"])
        wrong = dict(out, weights=out["weights"][..., :1])                     # a wrong shape
        assert judge(case, wrong).message == f"{case.label}: {HIDDEN_MESSAGES['wrong_shape']}"
        for error in ("raised RuntimeError: The size of tensor a (5) must match the size of tensor b (7)",
                      "raised E_1_3_10: 0.123", "raised ValueError"):
            assert judge(case, None, error).message == f"{case.label}: {HIDDEN_MESSAGES['raised']}"
        if not case.training:
            verdict = judge(case, dict(out, out=out["out"] + 1608.0))
            assert verdict.mistake in ("values_differ", "dropout_in_eval")
            assert verdict.message == f"{case.label}: {HIDDEN_MESSAGES[verdict.mistake]}"
    count = make_cases("parameter_count", hidden_seeds(source)["parameter_count"])[0]
    verdict = judge(count, {"count": np.array(float(expected_count(count) + 94402406124))})
    assert verdict.message == f"{count.label}: {HIDDEN_MESSAGES['count_wrong']}"


def expected_count(case):
    return int(reference_outputs(case)["count"])


def test_hidden_cases_cannot_be_made_from_the_release(source, release):
    """Every integer in the release and in the installed course_lib, tried as a seed, gives other
    cases than the hidden ones."""
    assert "hidden_seed" not in "".join("".join(c["source"]) for c in release["cells"])
    assert hidden_seeds(release) == {}
    texts = ["".join(c["source"]) for c in release["cells"]]
    texts += [p.read_text() for p in Path(course_lib.__file__).parent.rglob("*.py")]
    found = {int(t.replace("_", ""), 16 if t[:2] in ("0x", "0X") else 10) for text in texts
             for t in re.findall(r"\b(?:0[xX][0-9a-fA-F_]+|\d[\d_]*)\b", text)}
    candidates = sorted(n for n in found if 0 <= n < 2 ** 64)
    secret = hidden_seeds(source)
    assert not set(secret.values()) & set(candidates)
    part = "encoder_layer"
    hidden = make_cases(part, secret[part])[2]
    for n in candidates:
        tried = make_cases(part, n)[2]
        assert tried.kwargs != hidden.kwargs or not torch.equal(tried.inputs["x"], hidden.inputs["x"])


def test_a_failed_check_is_one_line_without_course_lib_frames():
    def unfinished(max_len, d_model):
        raise NotImplementedError()

    def crashes(q, k, v, attn_mask=None):
        return q[7, 7, 7]

    with pytest.raises(PartFailed) as failure:
        check("positional_encoding", unfinished)
    assert failure.value._render_traceback_() == ["Part 1: not done yet"]
    with pytest.raises(PartFailed) as failure:
        check("attention", crashes)
    (line,) = failure.value._render_traceback_()
    assert line.startswith("Part 2: ") and "IndexError" in line and "course_lib" not in line
    assert failure.value.mistake == "raised" and line.endswith('[hint("attention") for a hint]')
    assert "in crashes, line" in line


def test_reverse_task_is_reproducible_and_cheap(source):
    reverser = define(source, "reverse_task", NAMES["reverse_task"])
    case = make_cases("reverse_task")[0]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with reference_dependencies("reverse_task", reverser):
            first = run_case(case, reverser)
            start = time.perf_counter()
            second = run_case(case, reverser)
            seconds = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)
    assert np.array_equal(first["predicted"], second["predicted"])
    assert np.array_equal(first["losses"], second["losses"])
    accuracy = float((first["predicted"] == case.inputs["test"].flip(1).numpy()).mean())
    assert accuracy > position_blind_ceiling(case.inputs["test"]) + 0.2
    print(f"the grader's training run: {seconds:.3f} s on one thread, accuracy {accuracy:.3f}")


def test_position_blind_ceiling():
    tokens = torch.tensor([[1, 1, 1, 1], [1, 2, 3, 4]])
    assert position_blind_ceiling(tokens) == pytest.approx((4 * 1.0 + 4 * (1 / 3)) / 8)


def test_no_second_implementation_in_grading():
    """The grader computes no attention, layer or encoder of its own: no softmax, no layer norm,
    no LayerNorm epsilon, no positional formula outside the reference modules."""
    grading = Path(cases_module.__file__).parent
    files = [grading / f"{name}.py" for name in ("parts", "harness", "cases", "mistakes", "judging", "checks")]
    files.append(Path(course_grader.similarity.__file__))
    files.append(Path(course_lib.__file__).parent / "checks.py")
    for path in files:
        text = path.read_text()
        for pattern in (r"softmax\(", r"layer_norm\(", r"1e-5", r"1e-05", r"10000\s*\*\*", r"\bsin\(", r"\bcos\("):
            assert not re.search(pattern, text), (path.name, pattern)


def test_points_come_from_the_metadata_and_the_text_agrees(source):
    """nbgrader grades with the test cells' metadata; the introduction's table and each heading show it."""
    auto, by_hand = points(source), written(source)
    assert set(auto) == set(PARTS) and all(v > 0 for v in auto.values()) and len(by_hand) == 5
    shown = text_points(source)
    for part, value in auto.items():
        assert shown[NUMBERS[part]] == (value, value), part
    assert shown[len(PARTS) + 1] == (sum(by_hand.values()),) * 2


def test_points_command_changes_metadata_and_text(tmp_path):
    path = tmp_path / "exercise.ipynb"
    shutil.copy(SOURCE, path)
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "course_grader", "points", str(path), "multi_head_attention=5",
                           "feed_forward=2.5", "answer_reverser=3"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    nb = nbformat.read(path, as_version=4)
    assert points(nb)["multi_head_attention"] == 5 and points(nb)["feed_forward"] == 2.5
    assert written(nb)["answer_reverser"] == 3
    shown = text_points(nb)
    assert shown[3] == (5, 5) and shown[4] == (2.5, 2.5) and shown[9] == (11, 11)
    assert "autograded 22.5, by hand 11, total 33.5" in proc.stdout
    before = nbformat.read(SOURCE, as_version=4)
    changed = [i for i, (a, b) in enumerate(zip(before.cells, nb.cells)) if a != b]
    assert len(before.cells) == len(nb.cells) and len(changed) == 7           # intro, 3 headings, 3 cells' metadata
    with pytest.raises(ValueError, match="not a part"):
        set_points(nb, {"attention_typo": 3})
    bad = subprocess.run([sys.executable, "-m", "course_grader", "points", str(path), "attention=-1"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "points must be >= 0" in bad.stderr


def test_a_warning_from_the_students_code_is_a_note_on_stdout_not_stderr(source, capsys):
    """nbgrader's Validate fails a test cell that writes to stderr: a warning that correct code makes
    (torch warns about ``float(loss)`` on a loss with its graph) must not cost the student a failed
    Validate. The check prints it once on stdout, as a note, and the part passes."""
    nb = apply(source, [("sub", "feed_forward", "    def forward(self, x):\n",
                         "    def forward(self, x):\n        __import__('warnings').warn('a note from the cell')\n")])
    check("feed_forward", define(nb, "feed_forward", NAMES["feed_forward"]))
    out, err = capsys.readouterr()
    assert err == "", err
    assert out.count("a note from the cell") == 1 and "costs no points" in out, out
    assert out.rstrip().endswith("passed"), out


_PREFIXES = re.compile(r"\b(?:self|torch|math|np|nn\.functional|F)\.")


def _normal(text: str) -> str:
    """Lower case, no blanks, no ``self.``/``torch.``/``math.``/``F.`` prefixes, one kind of quote."""
    return re.sub(r"\s+", "", _PREFIXES.sub("", text)).lower().replace('"', "'")


def _constructor(node) -> bool:
    """A call of a class (``nn.Linear(...)``, ``EncoderLayer(...)``): a module of the contract."""
    import ast
    if not isinstance(node, ast.Call):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    return name[:1].isupper() or name in NAMES.values()             # or a part's own signature


def _computation_lines(nb) -> list[str]:
    """The model solution's computation, normalised: every statement between the code solution cells'
    BEGIN/END SOLUTION markers (whole, and the expression it assigns or returns), and every larger
    sub-expression of one; module constructors (the contract's attributes) and short lines left out."""
    import ast
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("solution"):
            continue
        lines = cell.source.splitlines()
        inside, flag = set(), False
        for i, line in enumerate(lines, 1):
            flag = {"### BEGIN SOLUTION": True, "### END SOLUTION": False}.get(line.strip(), flag)
            if flag:
                inside.add(i)
        for node in ast.walk(ast.parse(cell.source)):
            if getattr(node, "lineno", None) not in inside:
                continue
            value = getattr(node, "value", None) if isinstance(node, (ast.Assign, ast.Return, ast.AugAssign)) else None
            if _constructor(value) or isinstance(value, (ast.IfExp, ast.Name)) or _constructor(node):
                continue                                              # a module the contract names
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and not (
                    node.value.args or node.value.keywords):
                continue                                              # model.train(), optimizer.step(): API names
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)):
                found += [t for t in (_normal(ast.unparse(node)), value is not None and _normal(ast.unparse(value)))
                          if t and len(t) >= 12]
            elif isinstance(node, (ast.Call, ast.BinOp, ast.Compare, ast.Subscript, ast.Attribute)):
                text = _normal(ast.unparse(node))
                if len(text) >= 20:
                    found.append(text)
    return sorted(set(found))


def test_the_release_states_no_computation_line_of_the_solution(source, release):
    """Maths and contract, not code (issue 40): no statement of the model solution, nor a larger piece of
    one, stands in the released notebook's text (markdown, docstrings, comments, the cells as released)."""
    lines = _computation_lines(source)
    assert len(lines) > 40 and "key_padding_mask=tokens==pad_id" in lines       # the scan sees the solution
    assert "finfo(scores.dtype).min" in lines and "x.view(b,t,num_heads,d_k).transpose(1,2)" in lines
    text = _normal("\n".join(c.source for c in release.cells))
    stated = [line for line in lines if line in text]
    assert not stated, stated
    for fragment in ("register_buffer(", "finfo(", "==pad_id", ".transpose(1,2)", "*sqrt(d_model)+pe[:t]"):
        assert fragment not in text, fragment
    # and the scan would see one: the examples, put back into a copy of the release's text
    for example in ("x.view(b, t, num_heads, d_k).transpose(1, 2)", "key_padding_mask = tokens == pad_id",
                    "torch.finfo(scores.dtype).min", "linear2(dropout(relu(linear1(x))))"):
        assert any(line in _normal(example) or _normal(example) in line for line in lines), example


def test_every_section_a_hint_names_is_a_heading_of_its_topic(tmp_path):
    """Rung 2's titles are read from the lecture notebooks by number (sections.py): every place is a heading
    there about its topic, so a section renumbered, renamed away from its topic or removed fails here."""
    from course_lib.grading import sections
    for key, (lecture, number, topic) in sections.PLACES.items():
        found = sections.headings(lecture).get(number)
        assert found and topic in found.lower(), (key, lecture, number, found)
        assert sections.title(key).startswith(f"{lecture:02d} §{number} {found}")
    assert all(m.section.split(" ", 2)[2] for ms in MISTAKES.values() for m in ms)
    assert dict(hints.PART_SECTIONS)["reverse_task"].startswith("03 §3 ")            # a training loop written out
    # a heading renamed in a copy of the notebooks: the title follows it
    for path in (REPO / "notebooks").glob("0[1-6]_*.ipynb"):
        text = path.read_text(encoding="utf-8")
        if path.name.startswith("02_"):
            text = text.replace("## 5. Multi-head attention", "## 5. Many heads")
        (tmp_path / path.name).write_text(text, encoding="utf-8")
    assert sections.title("heads", str(tmp_path)) == "02 §5 Many heads"
    assert "multi-head" not in sections.headings(2, str(tmp_path))[5].lower()
    # the titles kept for where the notebooks cannot be read (the grader's judge) are the notebooks' own now,
    # and a renamed heading makes them stale: rewrite them with `python -m course_lib.grading.sections`
    written = Path(sections.__file__).with_name("section_titles.py").read_text(encoding="utf-8")
    assert written == sections.snapshot(), "a heading changed: run python -m course_lib.grading.sections"
    assert written != sections.snapshot(str(tmp_path))
    monkeypatch_free = sections.headings(2, str(tmp_path / "nowhere"))
    assert monkeypatch_free == {}


def test_rung_one_follows_the_failure(source, tmp_path, monkeypatch):
    """Issue 52: rung 1 is made from the failure, not one sentence per part: Part 3's mask bug, scale bug and
    missing biases each get their own, with the failing case's call and shapes, and where the outputs differ."""
    monkeypatch.chdir(tmp_path)
    good = solved(source, source)
    said = {}
    for name in ("mha_inverted_padding_mask", "mha_scaled_by_d_model", "mha_projections_without_bias"):
        edits = next(e for n, e, _ in CORPUS_MISTAKES if n == name)
        with pytest.raises(PartFailed):
            check("multi_head_attention", define(apply(good, edits), "multi_head_attention",
                                                 NAMES["multi_head_attention"], as_cell=True))
        said[name] = hints.next_rung("multi_head_attention")[1]
        assert "the failing case is MultiHeadAttention(d_model=" in said[name] and "called on query (" in said[name]
    assert len(set(said.values())) == 3, said
    assert "'weights' differs in heads" in said["mha_inverted_padding_mask"]
    assert "mask" in said["mha_inverted_padding_mask"] and "divided by" in said["mha_scaled_by_d_model"]
    assert "state_dict" in said["mha_projections_without_bias"]
    hints.LAST_FAILURE.clear()


def test_missing_biases_are_named_by_the_grader_too():
    """Issue 52: projections built without bias lose Part 3 as `bias_missing`, their keys named, in the grader
    (which rebuilds the harness's message from its fixed words) as in the notebook; keys a part forged are not."""
    from course_grader.runner import fixed_case_error
    case = make_cases("multi_head_attention")[0]
    said = ("MultiHeadAttention: the state_dict has no ['w_k.bias', 'w_o.bias', 'w_q.bias', 'w_v.bias'] (its keys "
            "are ['w_k.weight', 'w_o.weight', 'w_q.weight', 'w_v.weight']); look at the attribute names in the cell's "
            "docstring, which the test loads its weights by")
    verdict = judge(case, None, fixed_case_error(said, "self.w_q = nn.Linear(d_model, d_model, bias=False)"))
    assert verdict.mistake == "bias_missing" and "w_k.bias, w_o.bias, w_q.bias, w_v.bias" in verdict.message
    forged = judge(case, None, fixed_case_error(said.replace("w_k.bias", "LEAK_3.bias"), "self.w_q = ..."))
    assert forged.mistake == "wrong_result" and "LEAK" not in forged.message


@pytest.mark.parametrize("name,mistake", [("pe_float64", "pe_dtype"), ("encoder_persistent_pe", "buffer_persistent"),
                                          ("encoder_no_final_norm", "final_norm_missing")])
def test_contract_mistakes_are_named_by_the_grader_too(source, name, mistake):
    """Issue 52: the harness's contract message of the corpus's one-bug cell, as the grader rebuilds it from its
    fixed words (with the student's cell to name keys from), names the same mistake as in the notebook."""
    from course_grader.runner import fixed_case_error
    from course_lib.grading.harness import ResultError
    part, edits = next((next(iter(lost)), edits) for n, edits, lost in CORPUS_MISTAKES if n == name)
    bad = apply(solved(source, source), edits)
    cell = next("".join(c.source) for c in bad.cells if c.metadata.get("nbgrader", {}).get("grade_id") == part)
    candidate = define(bad, part, NAMES[part])
    for case in make_cases(part):
        try:
            with reference_dependencies(part, candidate):
                run_case(case, candidate)
        except ResultError as e:
            said = str(e)
            break
    verdict = judge(case, None, fixed_case_error(said, cell))
    assert verdict.mistake == mistake and verdict.message == judge(case, None, said).message, verdict.message


def test_part_8_states_the_graders_optimiser_and_budget(source):
    """Part 8's introduction gives the learning rate and the number of batches the grader trains with."""
    from course_lib.grading.cases import REVERSE
    intro = next("".join(c.source) for c in source.cells
                 if c.metadata.get("nbgrader", {}).get("grade_id") == "part8_intro")
    assert f"(learning rate {REVERSE['lr']})" in intro and f"{REVERSE['steps']} small batches" in intro
    assert "one optimiser step per batch" in intro and "lr_scheduler" in intro
