"""Grade the parts of one submitted notebook: read it safely, check the rules, run each part in the
zygote's sandbox, judge the arrays that come back.

Everything here runs outside the sandbox, never on student code: the part's outputs come back as
JSON and raw arrays and are compared with course_lib's reference (:mod:`.judging`). A verdict is a
:class:`PartResult` whose ``status`` is structured ("passed", "failed": the submission's doing,
"error": the grader's): nothing a student writes in a message can turn one into another. Making the
cases and judging need torch (:mod:`.cases`, :mod:`.judging`, imported when first used): the class
grader's own process (:mod:`.pool`) leaves both to the sandbox's judge (:mod:`.judge`) and never
imports torch.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import hashlib
import json
import os
import re
import stat
from dataclasses import asdict, dataclass, fields

from course_lib.grading import policy
from course_lib.grading.parts import DEPENDENCIES, NAMES, ONE_RUN, PARTS, part_of_test

from . import json_in, references, sandbox, wire

MAX_NOTEBOOK_BYTES = 20 << 20

__all__ = ["PartResult", "part_of_test", "read_notebook", "solution_sources"]


@dataclass
class PartResult:
    status: str                   # "passed" | "failed" (the submission's doing) | "error" (the grader's)
    message: str
    seconds: float = 0.0
    guard_tampered: str = ""      # why the part is named to the instructor (the guard switched off), or ""
    mistake: str = ""             # the failure's stable id (course_lib.grading.mistakes.IDS), "" when passed
    section: str = ""             # the lecture section that teaches it, or ""
    failed_on: str = ""           # "visible" | "hidden": the kind of case that failed, "" when none did
    visible_passed: bool = False  # the grader ran visible cases and all passed (False: one failed, or none ran)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def as_dict(self) -> dict:
        return {**asdict(self), "passed": self.passed}

    @classmethod
    def from_dict(cls, d: dict) -> PartResult:
        """The verdict as the judge's process sent it (:meth:`as_dict`); unknown fields are ignored."""
        text = lambda key: str(d.get(key) or "")           # noqa: E731
        return cls(text("status"), text("message"), float(d.get("seconds") or 0.0), text("guard_tampered"),
                   text("mistake"), text("section"), text("failed_on"), d.get("visible_passed") is True)


def tampered(header) -> str:
    """Why a part's result says its guard was not as armed at its end (:func:`guard.check`), or "": a
    result without the guard's answer (forged, or the guard was off by request) counts as tampered."""
    said = header.get("guard") if isinstance(header, dict) else None
    if said in ("intact", "off"):
        return ""
    return f"the guard was switched off ({str(said)[:80] if said else 'its result has no answer from the guard'})"


#: what a solution never needs and a part that switches the guard off uses (named, not penalised)
REACHES_IN = re.compile(r"as_strided|stride_tricks|__array_interface__|__kwdefaults__|__defaults__|"
                        r"ctypes|addaudithook|_dispatch_|course_grading|tattle")


def reaches_in(source: str) -> str:
    """The first word of ``source`` that reaches into the grader's guard or raw memory, or ""."""
    m = REACHES_IN.search(source or "")
    return m.group(0) if m else ""


# ------------------------------------------------------------------ the submission

def link_in(path: str, root: str) -> tuple[str, str] | None:
    """(the first link, "symbolic" or "hard") on the way from ``root`` to ``path``, or inside ``path``'s
    folder: a symbolic link is never followed, and a file with a second name (``st_nlink > 1``) may be
    any file its owner could link to (a root-only one, copied to the instructor with the submission)."""
    rel = os.path.relpath(path, root)
    if rel.startswith(".."):
        return path, "symbolic"
    cur = root
    for piece in rel.split(os.sep):
        cur = os.path.join(cur, piece)
        if os.path.islink(cur):
            return cur, "symbolic"
    for folder, dirs, files in os.walk(os.path.dirname(path), followlinks=False):
        for name in dirs + files:
            info = os.lstat(os.path.join(folder, name))
            if stat.S_ISLNK(info.st_mode):
                return os.path.join(folder, name), "symbolic"
            if not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1:
                return os.path.join(folder, name), "hard"
    return None


def malformed(nb) -> str | None:
    """Why the notebook's cells are not what nbgrader can read (a cell whose metadata, or nbgrader's
    part of it, is not an object, e.g. ``"nbgrader": null``), or None."""
    for i, cell in enumerate(nb.get("cells", [])):
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        if not isinstance(meta, dict):
            return f"cell {i} has no metadata object"
        if "nbgrader" in meta and not isinstance(meta["nbgrader"], dict):
            return f"cell {i}'s nbgrader metadata is not an object"
    return None


def read_notebook(path: str, root: str):
    """(notebook, None) or (None, why it is not a valid submission). Links are never followed."""
    link = link_in(path, root)
    if link is not None:
        what = "symbolic link" if link[1] == "symbolic" else "hard link (a file with a second name)"
        return None, (f"the submission contains a {what} ({os.path.relpath(link[0], root)}), "
                      f"which is not {'followed' if link[1] == 'symbolic' else 'copied'}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        return None, f"the notebook could not be opened ({e.strerror})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_NOTEBOOK_BYTES:
            return None, "the notebook is not a regular file of at most 20 MiB"
        if info.st_nlink > 1:
            return None, "the notebook is a hard link (a file with a second name), which is not copied"
        from .notebook_in import parse
        with os.fdopen(fd, "rb", closefd=False) as f:
            text = f.read(MAX_NOTEBOOK_BYTES + 1).decode("utf-8")
        if json_in.depth(text) > json_in.MAX_DEPTH:              # bounded parsing: json recurses per level
            return None, f"the notebook's JSON is nested deeper than {json_in.MAX_DEPTH}"
        nb, _ = parse(text, MAX_NOTEBOOK_BYTES + 1)              # the gate's reading (notebook_in): writable
    except Exception as e:                                  # noqa: BLE001
        return None, f"the notebook could not be read ({type(e).__name__})"
    finally:
        os.close(fd)
    why = malformed(nb)
    if why:
        return None, f"the notebook is malformed: {why}"
    from .recording import invalid_metadata
    why = invalid_metadata(nb, os.path.dirname(path))
    return (None, f"nbgrader could not record it: {why}") if why else (nb, None)


def solution_sources(nb) -> dict[str, str]:
    """The solution cells of the graded parts, by grade_id (the last copy wins, as nbgrader's DeduplicateIds)."""
    found = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id")
        if cell.get("cell_type") == "code" and meta.get("solution") and gid in PARTS:
            src = cell.get("source", "")
            found[gid] = "".join(src) if isinstance(src, list) else str(src)
    return found


# ------------------------------------------------------------------ the cases

def make_all_cases(seeds: dict) -> dict:
    """{part: visible + hidden cases} from ``{part: hidden seed}`` (the seeds of the hidden-test blocks,
    ``course_lib.grading.seeds.hidden_seeds``). A part of ``ONE_RUN`` (a training run) is graded on one
    case: the hidden one if there is a seed."""
    from course_lib.grading.cases import make_cases
    cases = {}
    for p in PARTS:
        hidden = make_cases(p, seeds[p]) if p in seeds else []
        cases[p] = hidden if (hidden and p in ONE_RUN) else make_cases(p) + hidden
    return cases


def expected_answers(cases: dict) -> dict:
    """{part: the reference's outputs for each of its cases}."""
    from course_lib.grading.judging import expected
    return {p: [expected(c) for c in cs] for p, cs in cases.items()}


_ENCODED: dict = {}        # part -> (its cases, encoded, arrays, key); in the grader, made before its workers fork


def encoded_cases(cases: dict) -> tuple[dict, list]:
    """Every part's cases in wire form, as one message: ({part: [encoded case, ...]}, arrays), the
    indices in each part's cases counting from that part's first array (see :func:`use_encoded`)."""
    header, arrays = {}, []
    for part, part_cases in cases.items():
        encoded, part_arrays, _ = _encoded(part, part_cases)
        header[part] = {"cases": encoded, "first": len(arrays), "count": len(part_arrays)}
        arrays.extend(part_arrays)
    return header, arrays


def use_encoded(header: dict, arrays: list) -> None:
    """In the grader: the cases as :func:`encoded_cases` sent them, for :func:`request` (``cases``
    then names the part's encoded cases: the grader holds no Case objects, no tensors)."""
    for part, entry in header.items():
        first = int(entry["first"])
        part_arrays = arrays[first:first + int(entry["count"])]
        _ENCODED[part] = (entry["cases"], entry["cases"], part_arrays, _key(entry["cases"], part_arrays))


def _key(encoded: list, arrays: list) -> str:
    """A name for a part's cases, from their content: a zygote that has them already is not sent them again."""
    h = hashlib.blake2b(json.dumps(encoded, sort_keys=True).encode(), digest_size=16)
    for a in arrays:
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _encoded(part: str, cases: list) -> tuple[list, list, str]:
    hit = _ENCODED.get(part)
    if hit is None or hit[0] is not cases:
        arrays: list = []
        made: dict = {}
        encoded = [wire.encode({f.name: getattr(c, f.name) for f in fields(c)}, arrays, made) for c in cases]
        hit = _ENCODED[part] = (cases, encoded, arrays, _key(encoded, arrays))
    return hit[1], list(hit[2]), hit[3]


def request(part: str, source: str, cases: list, opts: sandbox.SandboxOptions, read_roots=(), known=(), **extra):
    """The zygote request for one part: (header, arrays). Cases whose key is in ``known`` (the zygote
    has them from an earlier request) are named by their key only."""
    encoded, arrays, key = _encoded(part, cases)
    if key in known:
        encoded, arrays = None, []
    _, exports = references.for_part(part)
    deps = []
    for name, code in references.compiled(part):           # [name, index of its marshalled code in arrays]
        deps.append([name, len(arrays)])
        arrays.append(code)
    header = dict(part=part, name=NAMES[part], source=source, cases=encoded, cases_key=key, deps=deps,
                  exports={k: list(v) for k, v in exports.items()}, timeout=opts.timeout,
                  memory_mb=opts.memory_mb, cpu_seconds=opts.cpu_seconds, max_file_mb=opts.max_file_mb,
                  tmp_mb=opts.tmp_mb, uid=opts.uid, gid=opts.gid,
                  read_roots=list(read_roots))
    header.update(extra)
    return header, arrays


# ------------------------------------------------------------------ grading

#: what a verdict may say of an error the part reported: its process held the hidden cases, so its own
#: text is never shown (it could spell them out); Python's own exception names are kept, nothing else
_BUILTIN_ERRORS = frozenset(name for name, v in vars(builtins).items()
                            if isinstance(v, type) and issubclass(v, BaseException))
NOT_SHOWN = "its text is not shown: the process had the hidden cases; run the cell in your notebook to see it"


def error_kind(text) -> str:
    """``"raised <Python's exception name>"`` or ``"raised an exception"`` from what a part wrote."""
    m = re.match(r"(?:the solution cell )?raised (\w+)", str(text))
    return f"raised {m.group(1)}" if m and m.group(1) in _BUILTIN_ERRORS else "raised an exception"


def fixed_cell_error(part: str, text) -> str:
    """A fixed message for the part's ``cell_error`` (never its text)."""
    if str(text).startswith("the solution cell does not define"):
        return f"{part}: the solution cell does not define {NAMES[part]}."
    if str(text).startswith("the solution cell raised"):
        return f"{part}: the solution cell {error_kind(text)} when it ran ({NOT_SHOWN})."
    return f"{part}: the solution cell could not be run."


#: the harness's contract messages (course_lib/grading/harness.py ResultError), as the grader may repeat
#: them: what was checked (from this list), the fixed phrase, and for what the part returned only a type
#: or dtype from :data:`RESULT_TYPES`; names, keys, lists and numbers the part chose become "…"
RESULT_WHATS = frozenset({"out", "weights", "output", "the returned table", "MultiHeadAttention.forward",
                          "MultiHeadAttention", "PositionwiseFeedForward", "EncoderLayer", "Encoder", "Reverser",
                          "the predictions", "the untrained model's predictions"})
RESULT_PHRASES = ("expected a torch.Tensor, got", "expected a floating-point tensor, got",
                  "expected a tuple (out, weights), got", "expected an nn.Module, got", "the state_dict has no",
                  "the state_dict has keys the contract does not have", "parameter '…' has shape",
                  "expected an int (the number of parameters), got", "expected float32 (torch's default dtype), got",
                  "expected logits of shape (B, T, vocab_size)")
RESULT_TYPES = frozenset({"Tensor", "tuple", "list", "dict", "int", "float", "bool", "str", "NoneType", "ndarray",
                          "Parameter", "function", "type", *(f"torch.{t}" for t in (
                              "float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
                              "bool", "complex64", "complex128"))})
RESULT_WORDS = RESULT_TYPES | frozenset(re.findall(r"[A-Za-z_][\w.]*", " ".join(RESULT_PHRASES) + (
    " of length its keys are use the attribute names of the contract so reference weights can be loaded adds no "
    "parameters and a table that is not a weight is a buffer registered with persistent=False expected got "
    "another type torch's default dtype look at the in cell's docstring which test loads its weights by how module "
    "stores says not part of")))


#: the names of the contract: every attribute, submodule and buffer name of course_lib's reference modules
#: (tests/grading/test_attacks_third.py checks them against the references' state_dicts)
CONTRACT_NAMES = frozenset({"bias", "dropout", "dropout1", "dropout2", "embedding", "ffn", "final_norm", "layers",
                            "linear1", "linear2", "norm1", "norm2", "pe", "self_attn", "w_k", "w_o", "w_q", "w_v",
                            "weight"})
MAX_NAMED_KEYS, MAX_KEY_CHARS = 8, 60
_EXTRA_KEYS = re.compile(r"(the state_dict has (?:keys the contract does not have: |no ))(\[[^\]]*\])"
                         r"(?:( \.\.\.)?)(?=;| \(|$)")


def nameable_keys(listed: str, source: str | None) -> str | None:
    """The extra (or missing) keys of a contract message as the grader may show them, or None (then masked).

    The part's process had the hidden cases and could spell them out in the names it reports, so a key is
    named only when every dotted component is an identifier spelled in the student's own solution cell
    (``source``, which the grader read from the submission, never the part's process), a name of the
    contract (:data:`CONTRACT_NAMES`) or an index below 1000; at most :data:`MAX_NAMED_KEYS` keys of at most
    :data:`MAX_KEY_CHARS` characters, sorted. What the part can still choose is which of the student's own
    words and which indices it lists: at most 8 keys' worth of choices among words the student wrote before
    any case existed and numbers below 1000 (tens of bits, not free text)."""
    if not source:
        return None
    try:
        keys = ast.literal_eval(listed)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if (not isinstance(keys, list) or not 0 < len(keys) <= MAX_NAMED_KEYS or keys != sorted(set(keys))
            or not all(isinstance(k, str) and 0 < len(k) <= MAX_KEY_CHARS for k in keys)):
        return None
    spelled = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))

    def known(component: str) -> bool:
        if re.fullmatch(r"0|[1-9][0-9]{0,2}", component):
            return True
        return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", component)) and (
            component in spelled or component in CONTRACT_NAMES)
    if not all(known(c) for k in keys for c in k.split(".")):
        return None
    return "[" + ", ".join(f"'{k}'" for k in keys) + "]"


def fixed_result_error(text, source: str | None = None) -> str | None:
    """The harness's contract message rebuilt from a fixed vocabulary (see :data:`RESULT_PHRASES`), or
    None when ``text`` is not one of its messages. With the student's ``source``, the extra keys of a
    state_dict are named when :func:`nameable_keys` allows it."""
    what, sep, rest = str(text)[:600].partition(": ")
    if not sep:
        what, rest = "", str(text)[:600]
    if what and what not in RESULT_WHATS:
        return None
    named = None
    found = _EXTRA_KEYS.search(rest)
    if found and found.start() == 0:
        named = nameable_keys(found.group(2), source)
    rest = re.sub(r"'[^']*'", "'…'", rest)
    rest = re.sub(r"\[[^\]]*\]", "[…]", rest)
    rest = re.sub(r"\((?:\s*-?\d+\s*,?)*\)", "(…)", rest)
    rest = re.sub(r"(?<![\w.])-?\d+(?![\w.])", "…", rest)
    rest = re.sub(r"got ([\w.]+)", lambda m: "got " + (m.group(1) if m.group(1) in RESULT_TYPES else "another type"),
                  rest)
    if (not any(rest.startswith(p) for p in RESULT_PHRASES) or re.search(r"[^\w\s.,:;'()\[\]=…+-]", rest)
            or any(w not in RESULT_WORDS for w in re.findall(r"[A-Za-z_][\w.]*", rest))):
        return None
    if named is not None:
        rest = rest.replace("[…]", named, 1)
    return (f"{what}: " if what else "") + rest


def fixed_case_error(text, source: str | None = None) -> str:
    """A fixed message for a case's error: the exception's kind, or the contract message the part's
    result broke (its parts the part could choose masked, or named as :func:`nameable_keys` allows), or a
    generic one."""
    if str(text).startswith("raised "):
        return f"{error_kind(text)} ({NOT_SHOWN})"
    return fixed_result_error(text, source) or ("returned something the part's contract does not allow (the "
                                                "notebook's own checks say what)")


MAX_OUTPUTS = 16          # outputs of a training case (the Reverser's: its reference gives no outputs to count)
EXTRA_OUTPUTS = ("input_changed",)   # what the harness reports besides the reference's outputs (harness._changed)


def judge(part: str, cases: list, wants: list, outcome: sandbox.Outcome) -> PartResult:
    """The verdict on ``part`` from its outcome: the sandbox's failures first, then each case's outputs
    against the reference's (``wants``), the first wrong one named. Nothing the part wrote is shown as
    text (its process had the hidden cases): errors become fixed messages. The arrays are consumed by
    index, and a result with more arrays than its cases have outputs is refused before any is read."""
    if outcome.status != "ok":
        status = "error" if outcome.status == "grader" else "failed"
        return PartResult(status, f"{part}: {outcome.failure}", outcome.seconds,
                          mistake="grader_error" if status == "error" else _sandbox_failure(outcome.failure))
    source = outcome.header.get(GRADER_SOURCE) if isinstance(outcome.header, dict) else None
    result = _judged(part, cases, wants, outcome, source if isinstance(source, str) else None)
    result.guard_tampered = tampered(outcome.header)
    return result


def _sandbox_failure(failure: str) -> str:
    """The reserved id of a failure the sandbox saw (course_lib.grading.mistakes), from its fixed text."""
    text = str(failure)
    for words, mistake in (("timed out", "timed_out"), ("memory", "out_of_memory"),
                           ("ready-made", "ready_made_attention"), ("reference", "reference_used")):
        if words in text:
            return mistake
    return "rule_broken"


def with_source(outcome: sandbox.Outcome, source: str) -> sandbox.Outcome:
    """``outcome`` with the student's solution cell as the grader read it from the submission, under
    :data:`GRADER_SOURCE` (whatever the part's process wrote under that key is replaced): what
    :func:`nameable_keys` may name extra state_dict keys from."""
    if outcome.status != "ok" or not isinstance(outcome.header, dict):
        return outcome
    return dataclasses.replace(outcome, header={**outcome.header, GRADER_SOURCE: str(source)})


#: the key of a part's outcome header under which the grader's side puts the student's cell (:func:`with_source`)
GRADER_SOURCE = "grader_source"


def _judged(part: str, cases: list, wants: list, outcome: sandbox.Outcome, source: str | None = None) -> PartResult:
    from course_lib.grading.judging import judge
    h, arrays = outcome.header, outcome.arrays
    try:
        if h.get("cell_error"):
            return PartResult("failed", fixed_cell_error(part, h["cell_error"]), outcome.seconds,
                              mistake="cell_error")
        entries = h.get("cases")
        if not isinstance(entries, list) or len(entries) != len(cases):
            raise ValueError("wrong number of cases")
        counts = [len(e.get("keys", [])) if isinstance(e, dict) and isinstance(e.get("keys", []), list) else -1
                  for e in entries]
        allowed = [None if part in ONE_RUN or not isinstance(w, dict) else {*w, *EXTRA_OUTPUTS} for w in wants]
        caps = [MAX_OUTPUTS if a is None else len(a) for a in allowed]
        unknown = [a is not None and not {str(k) for k in e.get("keys", [])} <= a
                   for a, e in zip(allowed, entries) if isinstance(e, dict)]
        if any(n < 0 or n > cap for n, cap in zip(counts, caps)) or any(unknown) or sum(counts) != len(arrays):
            return PartResult("failed", f"{part}: returned more results than its cases have outputs.",
                              outcome.seconds, mistake="results_unreadable")
        at = 0
        visible = sum(not c.hidden for c in cases)
        for i, (case, want, entry) in enumerate(zip(cases, wants, entries)):
            keys = entry.get("keys", [])
            outputs = {str(k): arrays[at + i].astype("float64") for i, k in enumerate(keys)}
            at += len(keys)
            err = entry.get("error")
            found = judge(case, outputs, None if err is None else fixed_case_error(err, source), want=want,
                          passed=cases[:i])                     # every case before it passed
            if found is not None:
                return PartResult("failed", found.message, outcome.seconds, mistake=found.mistake,
                                  section=found.section or "", failed_on="hidden" if found.hidden else "visible",
                                  # every visible case was judged before it and passed (a training part runs none)
                                  visible_passed=found.hidden and 0 < visible == sum(not c.hidden for c in cases[:i]))
    except Exception as e:                                  # noqa: BLE001 (malformed results: the part's doing)
        return PartResult("failed", f"{part}: the results could not be read ({type(e).__name__}).", outcome.seconds,
                          mistake="results_unreadable")
    n_hidden = sum(c.hidden for c in cases)
    return PartResult("passed", f"{part}: all {len(cases)} checks passed ({len(cases) - n_hidden} visible, "
                                f"{n_hidden} hidden).", outcome.seconds)


def syntax_error(source: str) -> str | None:
    """The cell's syntax error, found here (the grader's process, which has no hidden case), or None."""
    import ast
    try:
        ast.parse(source)
    except SyntaxError as e:
        return f"has a syntax error: {str(e.msg)[:200]} (line {e.lineno})."
    except (ValueError, RecursionError, MemoryError) as e:
        return f"could not be parsed ({type(e).__name__})."
    return None


#: parts that load no reference: graded together in one process (one fork, not four). Each is then
#: graded again in a process of its own unless it passed there: all of them when that process does not
#: end well (a loop, a crash, a rule broken), else those that failed (another cell may have broken torch
#: for them). So a cell's bug costs only its own part, as when each part has a process of its own.
GROUP = tuple(p for p in PARTS if not DEPENDENCIES[p])


def grade_with(sources: dict, zygote: sandbox.Zygote, verdict, opts: sandbox.SandboxOptions, parts=PARTS,
               cases: dict | None = None) -> dict:
    """{part: PartResult}: each part run by ``zygote``, its outcome judged by ``verdict(part, outcome)``.
    ``cases``: {part: Case list}, or None for the encoded cases :func:`use_encoded` was given."""
    results, ready = {}, []
    for part in parts:
        if part not in sources:
            results[part] = PartResult("failed", f"{part}: the solution cell '{part}' is missing from the submission.",
                                       mistake="cell_missing")
            continue
        rule = policy.check_source(sources[part])
        if rule is None:
            rule = syntax_error(sources[part])
        if rule:
            reached = reaches_in(sources[part])
            results[part] = PartResult("failed", f"{part}: the solution cell {rule} No points for this part.",
                                       mistake="rule_broken",
                                       guard_tampered=f"the cell uses {reached}" if reached else "")
            continue
        ready.append(part)

    def named(part, result):
        """The verdict, with the source's reach into the guard or raw memory named (see :func:`reaches_in`)."""
        word = reaches_in(sources.get(part, ""))
        if word and not result.guard_tampered:
            result.guard_tampered = f"the cell uses {word}"
        return result
    base = verdict
    verdict = lambda part, outcome: named(part, base(part, with_source(outcome, sources[part])))   # noqa: E731

    def one(part):
        part_cases = _ENCODED[part][0] if cases is None else cases[part]
        return request(part, sources[part], part_cases, opts, zygote.read_roots, zygote.known_cases)
    together = [p for p in ready if p in GROUP]
    if len(together) > 1:
        outcome = zygote.run(*group_request([one(p) for p in together]))
        for part, split in (_split(outcome, together) or {}).items():
            result = verdict(part, split)
            if result.passed:
                results[part] = result
    for part in ready:
        if part not in results:
            results[part] = verdict(part, zygote.run(*one(part)))
    return {p: results[p] for p in parts}


def group_request(requests: list) -> tuple[dict, list]:
    """One zygote request for several parts without references: their requests as ``members``."""
    header = {k: v for k, v in requests[0][0].items() if k not in MEMBER_KEYS}
    header.update(deps=[], exports={}, members=[])
    arrays: list = []
    for h, a in requests:
        header["members"].append({**{k: h[k] for k in MEMBER_KEYS}, "first": len(arrays), "count": len(a)})
        arrays.extend(a)
    return header, arrays


MEMBER_KEYS = ("part", "name", "source", "cases", "cases_key")


def _split(outcome: sandbox.Outcome, parts: list) -> dict | None:
    """{part: its own Outcome} from a group's, or None (the group did not end well: grade them one by one)."""
    members = (outcome.header or {}).get("members") if outcome.status == "ok" else None
    if not isinstance(members, list) or [m.get("part") if isinstance(m, dict) else None for m in members] != parts:
        return None
    split, first = {}, 0
    for part, member in zip(parts, members):
        count = member.get("count")
        if not isinstance(count, int) or count < 0 or first + count > len(outcome.arrays):
            return None
        split[part] = sandbox.Outcome("ok", member, outcome.arrays[first:first + count], None, outcome.seconds,
                                      outcome.survivors)
        first += count
    return split if first == len(outcome.arrays) else None


def invalid(message: str, parts=PARTS) -> dict:
    """Every part fails with ``message`` (a submission that cannot be graded: the student's doing)."""
    return {p: PartResult("failed", f"{p}: {message}") for p in parts}
