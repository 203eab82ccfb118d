"""Which solutions look alike: a report for the instructor after autograding, never a penalty.

It measures *containment*: how much of a student's solution cell (or written answer) is found elsewhere,

* in the public solutions: **all of course_lib** (every module, the helpers the graded classes call
  included), which is on every student's disk, and the exercise's **model solution** and **model
  answers** (the source notebook's cells, public in the course's repository: :func:`solutions`);
* in each other student's cell of the same part.

The fingerprints are copydetect's (Stanford MOSS's winnowing, Schleimer, Wilkerson and Aiken, SIGMOD
2003): k-grams of a normalised token stream, winnowed to one hash per window, the released notebook's
skeleton of the cell removed as boilerplate, and the share of the cell's tokens covered by shared
fingerprints (copydetect 0.5.0's ``copydetect.utils``: ``winnow``, ``find_fingerprint_overlap``,
``get_copied_slices``, ``get_token_coverage``, written here in plain Python as :func:`winnow` and
:func:`copied_tokens`, which give the same numbers faster and spare the report copydetect's import;
tests/grading/test_report_shortcuts.py compares them with copydetect's; the k-grams are hashed without
Python's per-process salt, so a report is the same every run). Its own front end (pygments, every name
and attribute turned into ``V``) is replaced by Python's tokenizer (:func:`normalize`): the names a
student chose become one symbol, so renaming, reformatting, comments and reordering change nothing but
the seams, while the library's API names (``softmax``, ``masked_fill``) stay and tell honest solutions
apart; before that, the cell is written in one :func:`canonical` spelling (Python's syntax tree written
back), so parentheses, line breaks and quotes count for nothing. On the test corpus (14 honest styles,
copies in four disguises) copydetect's own front end (k = 25 characters) left one honest pair at 0.79
and one disguised copy at 0.79, around any threshold, and took 20 s where this one takes about 1 s; this
one keeps honest cells at most 0.52 against course_lib and 0.68 against another student, and copies at
0.86 or more. Before the tokens are fingerprinted, statements that have no effect are dropped
(:func:`dead_spans`: ``pass``, bare expressions, assignments nothing reads, ``if False:`` ...), as
winnowing tools drop whitespace: ``pad = 0`` after every line of a copy cut every k-gram and hid it
(issue 40). Independent statements are put in one order (:func:`rewrite.sort_statements`: a copy with three
lines of the positional table swapped fell from 1.00 to 0.45), and the statements the contract spells out
for everyone (:data:`CONTRACT_SKETCH`: the attributes, the formulas of ``forward``) are dropped, as no
evidence (issue 52: three honest encoders scored 0.885 to 0.925 against the model solution). course_lib
is fingerprinted as it is and as a student who moves it into the cells writes it, its helpers inlined
(:func:`reference_hashes`). Against course_lib a cell is also measured on its syntax tree
(:func:`subtree_containment`: the share of its nodes inside subtrees that course_lib holds, order and
seams counting for nothing) and scores the larger of the two: two copies disguised by hand (their own
names, comments, order and inlining) kept 0.34 to 0.79 of their tokens and were flagged on no part; on
their subtrees every part is flagged, while the honest cells of the corpus reach 0.73 on a cell of
:data:`SMALL` tokens or more (flagged from 0.8) and 0.80 on a smaller one (flagged from 0.95) (issue 52).
Written answers are fingerprinted as words (:func:`words`, :data:`PROSE_K` words a k-gram).

A part is *flagged* when its containment reaches :data:`THRESHOLD` and the cell has at least
:data:`MIN_TOKENS` tokens of its own covered by fingerprints (a one-line feed-forward network looks the
same in every notebook); a cell under :data:`SMALL` tokens (a feed-forward network, which its contract
mostly fixes) from :data:`SMALL_THRESHOLD` (an honest feed-forward network reached 0.93 against a
classmate's buggy copy of the model solution, tests/grading/test_class_report.py; copies of a public
solution, verbatim, renamed, padded or rewritten by a tool, reach 0.98 or more). Against the model
solution or a classmate, such a small cell is flagged only when the two also share
:data:`COMMENT_EVIDENCE` characters of comments the released cell does not hold (:func:`shares_comments`):
two honest students write the same seven lines of attention, or the model solution's feed-forward
network, token for token, so the code alone is no evidence there; course_lib's definitions, which carry
checks and options of their own, are flagged on the code alone. A written answer is flagged from
:data:`PROSE_THRESHOLD` with :data:`MIN_WORDS` words. Common code, subtracted, is only the released
notebook's own text (:func:`skeletons`), never what many students share: a solution that a tenth or half
of the class shares is flagged for each of them, with how many share it (issue 40: "49 of 49 flagged",
relabelled common code, told the instructor nothing). A short part is judged on more than its few lines
(:func:`corroborate`): a student flagged against course_lib, the model solution or a classmate on a part
of :data:`SMALL` tokens or more is flagged against the same one on every code part from
:data:`CORROBORATED`. A flag asks an instructor to look at two cells side by side; it decides nothing.

Command line, in the course directory after autograding::

    python -m course_grader.similarity 07_exercise [--csv similarity.csv]
"""

from __future__ import annotations

import argparse
import ast
import builtins
import csv
import functools
import glob
import hashlib
import importlib.util
import io
import itertools
import keyword
import math
import os
import re
import stat
import sys
import tokenize
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from course_lib.grading.parts import NAMES, PARTS

from . import rewrite
from .runner import CONTRACT_NAMES, MAX_NOTEBOOK_BYTES, read_notebook, solution_sources
from .submissions import plain_id

K = 16                 # tokens per fingerprinted k-gram (copydetect's noise threshold, in tokens)
GUARANTEE = 20         # any run of this many shared tokens is found (copydetect's guarantee threshold)
WINDOW = GUARANTEE - K + 1
THRESHOLD = 0.8        # a flag from this share of the cell's tokens found elsewhere on
MIN_TOKENS = 60        # cells with fewer tokens of their own covered (a one-line FFN, the Reverser) are never flagged
SMALL = 120            # cells with fewer tokens covered (a feed-forward network, which its contract mostly fixes) ...
SMALL_THRESHOLD = 0.95  # ... are flagged from this share on (honest ones reach 0.93, copies 0.98 or more)
CORROBORATED = 0.6     # a part of a student flagged on another part against the same other: flagged from this on
CORROBORATED_TOKENS = 32  # ... with this many tokens of its own covered (two k-grams: more than the cell's headers)
SUBTREE = 6           # syntax nodes of the smallest subtree compared with course_lib's (smaller ones are idioms)
COMMENT_EVIDENCE = 24  # ... and, against the model solution or a classmate, share this many characters of comments
MAX_COMMENTS = 200     # comments read of a cell
MAX_CHARS = 200_000    # of a cell compared (a solution is a few KB; a 20 MiB cell is cut, not compared whole)
MAX_TOKENS = 20_000    # of a cell compared
PROSE_K = 6            # words per k-gram of a written answer (a copied clause, not a shared phrase)
PROSE_WINDOW = 3       # any run of 8 shared words is found
PROSE_THRESHOLD = 0.5  # a written answer is flagged from this share on (honest: 0.0; one word in 8 changed: 0.56)
MIN_WORDS = 40         # written answers with fewer words of their own covered are never flagged
_WORD = re.compile(r"[^\W_]+")
_KEEP = set(keyword.kwlist) | set(dir(builtins)) | {"self", "torch", "nn", "F", "np", "math"}
#: the public names of the graded parts (a copy may call them or inline them)
GRADED_NAMES = frozenset(NAMES.values())
#: the names a statement's structure keeps (:func:`rewrite.statement_key`): the library's and the contract's
KEY_NAMES = frozenset(_KEEP | GRADED_NAMES | CONTRACT_NAMES)
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
         tokenize.ENDMARKER}


# ------------------------------------------------------------------ what the contract makes anyone write

#: The statements that shared/exercise-contract.md spells out (attributes, their types, the formulas of
#: ``forward``), in the few ways they are spelled: every honest student writes them, so they are no
#: evidence of copying and are left out of every fingerprint (:func:`contract_keys`, compared by their
#: structure: names, and the attributes of ``self``, do not count). Three honest encoders scored 0.885 to
#: 0.925 against the model solution, whose only code of its own there is the embedding's initialisation
#: (issue 52). What is left of a cell is what students write in their own way.
CONTRACT_SKETCH = """
def __init__(self, d_model, num_heads, d_ff, dropout, norm_first, vocab_size, num_layers, max_len, pad_id):
    super().__init__()
    self.d_model = d_model
    self.d_k = d_model // num_heads
    self.w_q = nn.Linear(d_model, d_model)
    self.w_k = nn.Linear(d_model, d_model)
    self.w_v = nn.Linear(d_model, d_model)
    self.w_o = nn.Linear(d_model, d_model)
    self.linear1 = nn.Linear(d_model, d_ff)
    self.linear2 = nn.Linear(d_ff, d_model)
    self.linear1 = nn.Linear(in_features=d_model, out_features=d_ff)
    self.linear2 = nn.Linear(in_features=d_ff, out_features=d_model)
    self.dropout = nn.Dropout(dropout)
    self.dropout = nn.Dropout(p=dropout)
    self.dropout1 = nn.Dropout(dropout)
    self.dropout2 = nn.Dropout(dropout)
    self.norm1 = nn.LayerNorm(d_model)
    self.norm2 = nn.LayerNorm(d_model)
    self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
    self.self_attn = MultiHeadAttention(d_model=d_model, num_heads=num_heads, dropout=dropout)
    self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
    self.ffn = PositionwiseFeedForward(d_model=d_model, d_ff=d_ff, dropout=dropout)
    self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
    self.embedding = nn.Embedding(num_embeddings=vocab_size, embedding_dim=d_model, padding_idx=pad_id)
    self.register_buffer('pe', sinusoidal_positional_encoding(max_len, d_model), persistent=False)
    self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                 for i in range(num_layers)])
    self.layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for i in range(num_layers))
    self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first)
                                 for i in range(num_layers)])
    self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()


def forward(self, x, tokens, key_padding_mask):
    return self.linear2(self.dropout(torch.relu(self.linear1(x))))
    return self.linear2(self.dropout(F.relu(self.linear1(x))))
    x = self.norm1(x + self.dropout1(self.self_attn(x, x, x, key_padding_mask=key_padding_mask)[0]))
    x = self.norm2(x + self.dropout2(self.ffn(x)))
    x = x + self.dropout1(self.self_attn(y, y, y, key_padding_mask=key_padding_mask)[0])
    x = x + self.dropout2(self.ffn(self.norm2(x)))
    if key_padding_mask is None:
        key_padding_mask = tokens == self.pad_id
    for layer in self.layers:
        x = layer(x, key_padding_mask=key_padding_mask)
    for layer in self.layers:
        x = layer(x, key_padding_mask)
    x = self.dropout(x)
    x = self.final_norm(x)
    return self.final_norm(x)
"""


@functools.cache
def contract_keys() -> frozenset:
    """The structures (:func:`rewrite.statement_key`) of :data:`CONTRACT_SKETCH`'s statements."""
    return rewrite.statement_keys(CONTRACT_SKETCH, KEY_NAMES)


# ------------------------------------------------------------------ statements with no effect

#: calls that compute nothing the code keeps when their value is thrown away (a bare ``len(x)``, ``print(x)``)
_PURE_CALLS = frozenset({"print", "len", "abs", "int", "float", "str", "bool", "repr", "type", "id", "hash",
                         "isinstance", "min", "max", "sum", "round", "range", "list", "tuple", "dict", "set"})
_EFFECTS = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)


def _has_effect(node: ast.AST) -> bool:
    """Whether evaluating ``node`` could do anything but compute a value: it calls something, but for a
    builtin of :data:`_PURE_CALLS` on arguments that call nothing."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            if not (isinstance(sub.func, ast.Name) and sub.func.id in _PURE_CALLS):
                return True
        elif isinstance(sub, _EFFECTS):
            return True
    return False


def _targets(target: ast.AST) -> list | None:
    """The names an assignment target binds (``self.pad``: ``pad``), or None when it changes something
    else (``x[i] = ...``, ``other.attr = f()``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute) and not _has_effect(target.value):
        return [target.attr]
    if isinstance(target, (ast.Tuple, ast.List)):
        names = [_targets(t) for t in target.elts]
        return None if any(n is None for n in names) else [x for n in names for x in n]
    if isinstance(target, ast.Starred):
        return _targets(target.value)
    return None


def _binds(stmt: ast.stmt) -> list | None:
    """The names a statement binds if binding them is all it does, else None."""
    if isinstance(stmt, ast.Assign):
        names = [_targets(t) for t in stmt.targets]
        return None if any(n is None for n in names) else [x for n in names for x in n]
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return _targets(stmt.target)
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return None if any(a.name == "*" for a in stmt.names) else [(a.asname or a.name).split(".")[0]
                                                                   for a in stmt.names]
    return None


def _statements(tree: ast.Module) -> list:
    """(statement, whether it is a definition to keep: a method, or a top-level function or class, which
    another cell or the grader may call, the statement it is in or None) for every statement."""
    out, todo = [], [(tree, None)]
    while todo:
        node, owner = todo.pop()
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            for child in children if isinstance(children, list) else ():
                if isinstance(child, ast.stmt):
                    out.append((child, node is tree or isinstance(node, ast.ClassDef), owner))
                    todo.append((child, len(out) - 1))
                else:                                     # an except handler, a match case: its body
                    todo.append((child, owner))
    return out


def _dead(stmt: ast.stmt, kept: bool, unread) -> bool:
    """Whether ``stmt`` has no effect on what the cell computes (see :func:`dead_spans`)."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr):
        return not _has_effect(stmt.value)
    if isinstance(stmt, (ast.If, ast.While)) and isinstance(stmt.test, ast.Constant):
        return not stmt.test.value and not stmt.orelse       # if False: ..., while 0: ...
    if isinstance(stmt, ast.Assert):
        return isinstance(stmt.test, ast.Constant) and bool(stmt.test.value)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return not kept and unread([stmt.name])               # a nested helper nothing calls
    names = _binds(stmt)
    return names is not None and unread(names)


def _parsed(source: str):
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    bare = "\n".join(" " * len(line) if line.lstrip()[:1] in ("%", "!") else line for line in source.split("\n"))
    try:
        return ast.parse(bare)                                # IPython's magics blanked, the lines kept
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_ASSIGN = frozenset({"=", ":", ",", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", ">>=", "<<="})
_CONSTANT_TESTS = frozenset({"True", "False", "None"})


def _suspect(toks: list) -> bool:
    """Whether ``toks`` may hold a statement :func:`dead_spans` drops: a logical line that is ``pass``, a
    bare expression, a constant test, an import, a bare ``print``, a nested ``def``, or a name that
    occurs only where a statement binds it (``pad = 0`` after every line). Most honest cells have none
    and are not parsed (parsing is most of the cost of dropping dead code)."""
    uses = Counter(t.string for t in toks if t.type == tokenize.NAME)
    bound: Counter = Counter()
    line: list = []
    for t in [*toks, None]:
        if t is None or t.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or (t.type == tokenize.OP and t.string == ";"):
            if line and _suspect_line(line, uses, bound):
                return True
            line = []
        elif t.type not in _SKIP:
            line.append(t)
    return any(uses[n] <= k for n, k in bound.items())


def _suspect_line(line: list, uses: Counter, bound: Counter) -> bool:
    """Whether one logical line may be dead by itself; counts the names it binds in ``bound``."""
    words = [t.string for t in line]
    first = words[0]
    if "pass" in words or first in ("import", "from", "assert"):
        return True
    if first in ("if", "elif") and len(line) > 1 and (line[1].type == tokenize.NUMBER or words[1] in _CONSTANT_TESTS):
        return True
    if first == "while" and len(words) > 1 and words[1] in ("0", "False", "None"):
        return True
    if first in ("def", "class") and len(words) > 1 and line[0].start[1] > 0 and words[1] != "forward":
        bound[words[1]] += not words[1].startswith("__")         # perhaps a nested helper nothing calls
        return False
    if first in _PURE_CALLS and len(words) > 1 and words[1] == "(":
        return True
    if len(line) == 1 and line[0].type == tokenize.STRING:
        return False                                   # a docstring: normalize drops it anyway
    binding = [i for i, w in enumerate(words) if w in _ASSIGN and w != ","]
    if (first in _CONSTANT_TESTS or not keyword.iskeyword(first)) and "(" not in words and not binding:
        return True                                    # a bare expression that calls nothing
    depth, last = 0, -1
    for i, t in enumerate(line):                       # the last binding operator outside brackets
        if t.type == tokenize.OP:
            depth += (t.string in "([{") - (t.string in ")]}")
            if depth == 0 and t.string in _ASSIGN and t.string != "," and (t.string != ":" or i in (1, 3)):
                last = i
    depth = 0
    for t in line[:max(last, 0)]:                      # the names it binds (self.pad: pad)
        if t.type == tokenize.OP:
            depth += (t.string in "([{") - (t.string in ")]}")
        elif depth == 0 and t.type == tokenize.NAME and not keyword.iskeyword(t.string):
            bound[t.string] += 1
    return False


def dead_spans(source: str, toks: list) -> list[tuple]:
    """The spans ``((row, col), (row, col))`` (tokenize's positions) of the statements of ``source`` that
    have no effect: ``pass``; an expression statement that calls nothing (a docstring, a bare name, a
    constant, a ``print`` or ``len`` of such); an assignment or import whose names appear nowhere else in
    the cell (``pad = 0``, ``self.pad = 0``, ``_ = x``); ``if False:`` and ``while 0:`` blocks,
    ``assert True``; a nested function or class that nothing names (top-level ones and methods stay:
    another cell or the grader calls them); and the header of ``if True:`` wrapped around code.
    Repeated while something goes (an assignment read only by a dead one goes too).

    Winnowing tools drop whitespace and names before fingerprinting because they change nothing that
    runs; these statements change nothing either, and a dead line after every line of a copied cell
    cuts every k-gram of it. "Read" is counted on ``toks`` (the cell's tokens): a name is read if it
    occurs more often than statements that only bind it bind it (a keyword argument, an attribute
    loaded, a string naming it count as reads; ``pad += 1`` binds). A cell Python cannot parse (but for
    IPython's magics) has no dead span."""
    if not _suspect(toks):
        return []
    tree = _parsed(source)
    if tree is None:
        return []
    lines = source.split("\n")

    def pos(row, col):                                 # ast's column is in UTF-8 bytes, tokenize's in characters
        line = lines[row - 1] if 0 < row <= len(lines) else ""
        return (row, col if line.isascii() else len(line.encode("utf-8", "surrogatepass")[:col].decode(
            "utf-8", "ignore")))
    stmts = _statements(tree)
    binds = [_binds(s) for s, _, _ in stmts]
    dropped = [False] * len(stmts)
    spans: list = []
    for _ in range(8):
        for i, (_, _, owner) in enumerate(stmts):          # a statement inside a dropped one is dropped
            dropped[i] = dropped[i] or (owner is not None and dropped[owner])
        spans = sorted((pos(s.lineno, s.col_offset), pos(s.end_lineno, s.end_col_offset))
                       for (s, _, owner), gone in zip(stmts, dropped) if gone and (owner is None or not dropped[owner]))
        uses: Counter = Counter()
        for t in _outside(toks, spans):
            if t.type == tokenize.NAME:
                uses[t.string] += 1
            elif t.type == tokenize.STRING and t.string.strip("'\"rRbBuUfF").isidentifier():
                uses[t.string.strip("'\"rRbBuUfF")] += 1          # getattr(self, "w_q")
        bound: Counter = Counter()
        for (s, _, _), names, gone in zip(stmts, binds, dropped):
            if not gone:
                bound.update(names or ([s.name] if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.ClassDef)) else []))

        def unread(names, uses=uses, bound=bound):
            return all(uses[n] <= bound[n] for n in names)     # every use of it binds it
        changed = False
        for i, (stmt, kept, _) in enumerate(stmts):
            if not dropped[i] and _dead(stmt, kept, unread):
                dropped[i] = changed = True
        if not changed:
            break
    spans += [(pos(s.lineno, s.col_offset), pos(s.body[0].lineno, s.body[0].col_offset))   # if True: around code
              for (s, _, _), gone in zip(stmts, dropped)
              if not gone and isinstance(s, ast.If) and isinstance(s.test, ast.Constant) and s.test.value
              and not s.orelse]
    return sorted(spans)


def _outside(toks: list, spans: list) -> list:
    """``toks`` but those that start inside one of ``spans`` (sorted)."""
    if not spans:
        return toks
    out, i = [], 0
    for t in toks:                                      # the spans do not overlap
        while i < len(spans) and spans[i][1] <= t.start:
            i += 1
        if i == len(spans) or t.start < spans[i][0]:
            out.append(t)
    return out


def _tokens(source: str, max_tokens: int) -> list:
    return [t for t in itertools.islice(tokenize.generate_tokens(io.StringIO(source).readline), max_tokens)
            if t.type != tokenize.ERRORTOKEN]


def without_dead_code(source: str) -> str:
    """``source`` with the statements of :func:`dead_spans` blanked out (their characters made spaces)."""
    try:
        toks = _tokens(source, MAX_TOKENS * 100)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    lines = source.split("\n")
    for (r0, c0), (r1, c1) in dead_spans(source, toks):
        for r in range(r0, r1 + 1):
            line = lines[r - 1]
            start, end = (c0 if r == r0 else 0), (c1 if r == r1 else len(line))
            lines[r - 1] = line[:start] + " " * (end - start) + line[end:]
    return "\n".join(lines)


def comments(source: str) -> frozenset:
    """The cell's comments, lower-cased, spaces collapsed, without their ``#`` (at most
    :data:`MAX_COMMENTS` of them, 200 characters each): what :func:`normalize` drops, and what a small
    cell's copy still carries (:func:`shares_comments`)."""
    found = set()
    try:
        for tok in itertools.islice(tokenize.generate_tokens(io.StringIO(source[:MAX_CHARS]).readline),
                                    MAX_TOKENS * 5):
            if tok.type == tokenize.COMMENT:
                text = " ".join(tok.string.lstrip("#").lower().split())[:200]
                if text:
                    found.add(text)
                if len(found) >= MAX_COMMENTS:
                    break
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return frozenset(found)


def shares_comments(mine: frozenset, theirs: frozenset, released: frozenset = frozenset()) -> bool:
    """Whether two cells share at least :data:`COMMENT_EVIDENCE` characters of comments that the released
    cell does not hold. Below :data:`SMALL` tokens the code alone is no evidence: the contract fixes most
    of it, and two honest students (or one and the model solution) write the same seven lines of
    attention or the same feed-forward network token for token (issue 40: honest work is never flagged)."""
    return sum(len(c) for c in (mine & theirs) - released) >= COMMENT_EVIDENCE


def canonical(source: str) -> str:
    """``source`` as Python writes its syntax tree back (``ast.unparse``): one spelling for one program,
    whatever its parentheses, line breaks, quotes, trailing commas or number spellings (``return (a, b)``
    and ``return a, b``; ``1e-9`` and ``1E-09``); comments go. A cell Python cannot parse (but for
    IPython's magics) is kept as it is. A copy rewritten by a tool (an AST round trip that pads it with
    dead statements) put parentheses around every returned tuple, and those few tokens kept a padded copy
    of the model solution's 90-token attention under the threshold of a small cell."""
    return _canonical_pair(source)[1]


def _canonical_pair(source: str) -> tuple:
    """(the syntax tree :func:`canonical` writes back, or None; :func:`canonical`'s text)."""
    tree = _canonical_tree(source)
    if tree is None:
        return None, source
    try:
        return tree, ast.unparse(tree)
    except (RecursionError, ValueError, MemoryError):
        return None, source


def normalize(source: str, max_chars: int = MAX_CHARS, max_tokens: int = MAX_TOKENS,
              canonical_text: str | None = None) -> list[str]:
    """The cell's tokens in its :func:`canonical` spelling, without comments, docstrings, layout or
    statements that have no effect (:func:`without_dead_code`), the names the student chose as ``ID``
    (keyword arguments, keywords, builtins and the library's names stay). About linear in the cell, which
    is cut at :data:`MAX_CHARS` characters and :data:`MAX_TOKENS` tokens (a solution has a few hundred).
    ``canonical_text``: the cut cell's :func:`canonical` text, when the caller made it already."""
    source = canonical(source[:max_chars]) if canonical_text is None else canonical_text
    try:
        toks = _tokens(source, max_tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source.split()[:max_tokens]
    toks = _outside(toks, dead_spans(source, toks))
    nexts: list = [None] * len(toks)               # the next token that is not a line break or a comment
    after = None
    for i in range(len(toks) - 1, -1, -1):
        nexts[i] = after
        if toks[i].type not in (tokenize.NL, tokenize.COMMENT):
            after = toks[i]
    out: list[str] = []
    starts_statement, depth = True, 0
    for i, tok in enumerate(toks):
        if tok.type in _SKIP:
            starts_statement = starts_statement or tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
            continue
        following = nexts[i]
        if (tok.type == tokenize.STRING and starts_statement
                and (following is None or following.type == tokenize.NEWLINE)):
            continue                                                    # a docstring or a bare string
        previous = out[-2:] if len(out) >= 2 else []
        depth += tok.string in "([{" if tok.type == tokenize.OP else 0
        depth -= tok.string in ")]}" if tok.type == tokenize.OP else 0
        keyword_argument = depth > 0 and following is not None and following.string == "="
        if tok.type == tokenize.STRING:
            out.append("STR")
        elif (tok.type == tokenize.NAME and tok.string not in _KEEP and not keyword_argument
              and (previous[-1:] != ["."] or previous[0] == "self")):
            out.append("ID")                                            # a name the student chose
        else:
            out.append(tok.string)
        starts_statement = False
    return out


def answer_sources(nb) -> dict[str, str]:
    """The written answers (markdown cells an instructor grades, Part 9's ``answer_*``), by grade_id."""
    found = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id")
        if cell.get("cell_type") == "markdown" and meta.get("solution") and isinstance(gid, str) and gid not in PARTS:
            src = cell.get("source", "")
            found[gid] = "".join(src) if isinstance(src, list) else str(src)
    return found


def cells_of(nb) -> dict[str, str]:
    """What is compared of a notebook: its solution cells (code) and its written answers (prose)."""
    return {**solution_sources(nb), **answer_sources(nb)}


def _without_solutions(text: str) -> str:
    keep, inside = [], False
    for line in text.split("\n"):
        inside = (inside or line.strip() == "### BEGIN SOLUTION") and line.strip() != "### END SOLUTION"
        if not inside and line.strip() != "### END SOLUTION":
            keep.append(line)
    return "\n".join(keep)


def skeletons(source_nb) -> dict[str, str]:
    """The released text of each solution cell and written answer: the source's cell without its
    solution blocks (what every student receives; the only code or text subtracted as common)."""
    return {part: _without_solutions(text) for part, text in cells_of(source_nb).items()}


def solutions(source_nb) -> dict[str, str]:
    """The model solution and the model written answers: the source notebook's cells, markers dropped
    (the source notebook is public in the course's repository)."""
    return {part: "\n".join(line for line in text.split("\n")
                            if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
            for part, text in cells_of(source_nb).items()}


def is_prose(part: str) -> bool:
    """A written answer (compared as words), not a code part."""
    return part not in PARTS


def words(text: str, max_chars: int = MAX_CHARS, max_tokens: int = MAX_TOKENS) -> list[str]:
    """A written answer's words and numbers, lower case (markdown's marks, punctuation and layout dropped)."""
    return _WORD.findall(text[:max_chars].lower())[:max_tokens]


@functools.cache
def _code(token: str) -> int:
    """A token's 64-bit code, the same in every process (Python's ``hash`` of a str is salted per process)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


_BASE = np.uint64(1_000_003)


def kgram_hashes(tokens: list[str], k: int = K) -> np.ndarray:
    """The hash of every k-gram of ``tokens`` (a polynomial of the tokens' codes, modulo 2**64), stable
    across processes and runs: copydetect's ``hashed_kgrams`` on one symbol per token, minus the salt."""
    codes = np.array([_code(t) for t in tokens], dtype=np.uint64)
    n = len(codes) - k + 1
    out = np.zeros(max(n, 0), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            out = out * _BASE + codes[j:j + n]
    return out.view(np.int64)


def winnow(hashes: np.ndarray, window: int = WINDOW) -> tuple[np.ndarray, np.ndarray]:
    """(the hashes selected, their positions): copydetect 0.5.0's robust winnowing over windows of
    :data:`WINDOW` (``copydetect.utils.winnow(hashes, WINDOW, remove_duplicates=False)`` with its Python
    ``_winnow``), step for step, on Python floats where copydetect keeps a numpy float buffer (the same
    float64 values, so the same ties). Written here because importing copydetect imports matplotlib's
    pyplot (0.6 to 0.9 s a process) and its numpy buffer took 0.25 ms a cell;
    tests/grading/test_report_shortcuts.py checks it against copydetect's."""
    selected: list[int] = []
    buffer = [math.inf] * window
    r = low = 0                                # the newest value's slot, the slot of the window's minimum
    for i, value in enumerate(hashes.astype(np.float64).tolist()):
        r = (r + 1) % window
        buffer[r] = value
        if low == r:                           # the minimum left the window: the rightmost minimum of it
            j = (r - 1) % window
            while j != r:
                if buffer[j] < buffer[low]:
                    low = j
                j = (j - 1) % window
            selected.append(i - ((r - low) % window))
        elif value < buffer[low]:
            low = r
            selected.append(i)
    where = np.array(selected, dtype=np.int64)
    return hashes[where], where


@dataclass
class Print:
    """A cell's winnowed fingerprints (copydetect's ``CodeFingerprint``, on :func:`normalize`'s tokens)."""
    hashes: set
    where: dict            # hash -> [token index, ...]
    coverage: int          # tokens covered by the fingerprints (copydetect's token coverage)
    k: int = K             # tokens per k-gram


def fingerprint(source: str, boilerplate=(), limit: bool = True, prose: bool = False,
                canonical_text: str | None = None) -> Print:
    """The fingerprints of ``source`` without those of ``boilerplate`` (hashes), copydetect's winnowing;
    ``prose``: a written answer, fingerprinted as words (:data:`PROSE_K` words a k-gram)."""
    cut = (MAX_CHARS, MAX_TOKENS) if limit else (MAX_CHARS * 100, MAX_TOKENS * 100)
    tokens = words(source, *cut) if prose else normalize(source, *cut, canonical_text=canonical_text)
    k, window = (PROSE_K, PROSE_WINDOW) if prose else (K, WINDOW)
    if len(tokens) < k:
        return Print(set(), {}, 0, k)
    hashes, where = winnow(kgram_hashes(tokens, k), window)                             # copydetect's winnowing
    if len(boilerplate):
        keep = ~np.isin(hashes, np.fromiter(boilerplate, dtype=np.int64, count=len(boilerplate)))
        hashes, where = hashes[keep], where[keep]
    index: dict = {}
    for h, i in zip(hashes.tolist(), where.tolist()):
        index.setdefault(h, []).append(i)
    # copydetect's get_token_coverage: the tokens that the k-grams starting at the positions kept cover
    return Print(set(index), index, copied_tokens(sorted(where.tolist()), k) if len(where) else 0, k)


def containment(mine: Print, hashes: set) -> float:
    """The share of ``mine``'s covered tokens that fingerprints in ``hashes`` cover too, 0 .. 1."""
    if not mine.coverage:
        return 0.0
    shared = mine.hashes & hashes
    if not shared:
        return 0.0
    return copied_tokens(sorted(i for h in shared for i in mine.where[h]), mine.k) / mine.coverage


def copied_tokens(starts: list[int], k: int = K) -> int:
    """The tokens covered by the k-grams starting at ``starts`` (sorted): copydetect's
    ``find_fingerprint_overlap`` and ``get_copied_slices``, summed, in plain Python (a cell has a few
    dozen fingerprints, where numpy's per-call cost is most of the time). A k-gram starting within
    ``K - 1`` tokens of the previous one continues its slice; a slice ends ``K`` tokens after its last."""
    total, first, last = 0, starts[0], starts[0]
    for i in starts[1:]:
        if i - last > k - 1:
            total += last + k - first
            first = i
        last = i
    return total + last + k - first


def reference_files() -> list[Path]:
    """Every Python file of course_lib (the package on every student's disk)."""
    root = Path(importlib.util.find_spec("course_lib").origin).resolve().parent
    return sorted(root.rglob("*.py"))


@functools.lru_cache(maxsize=4)
def _reference_variants(files: tuple) -> tuple:
    """course_lib's modules as they are, and each that defines a graded part also as :func:`rewrite.inlined`
    writes it."""
    texts = [Path(path).read_text(encoding="utf-8") for path in files]
    everything = rewrite.functions_of(texts)
    own = {name: fn for name, fn in everything.items() if name not in GRADED_NAMES}
    defines = re.compile(r"^(?:class|def) (?:" + "|".join(sorted(GRADED_NAMES)) + r")\b", re.M)
    out = []
    for text in texts:
        out.append(text)
        if defines.search(text):          # a graded definition: also as a student who moves it into a cell writes it
            out += [v for v in (rewrite.inlined(text, helpers, GRADED_NAMES, hoist)
                                for helpers in (own, everything) for hoist in (True, False)) if v is not None]
    return tuple(out)


@functools.lru_cache(maxsize=4)
def _reference_hashes(files: tuple) -> frozenset:
    return frozenset(h for variant in _reference_variants(files) for h in fingerprint(variant, limit=False).hashes)


@functools.lru_cache(maxsize=4)
def _reference_subtrees(files: tuple) -> frozenset:
    out: set = set()
    for variant in _reference_variants(files):
        out.update(h for h, size in _subtrees(_canonical_tree(variant)) if size >= SUBTREE)
    return frozenset(out)


def reference_hashes() -> frozenset:
    """The fingerprints of all of course_lib (made once a process while its files stay the same): each module as
    it is, and the modules that define a graded part also as :func:`rewrite.inlined` writes them (with
    course_lib's helpers, and with only those that are not a graded part, which a copy may call from its
    own cell; with an argument used twice computed once, or at each use): what a student who moves the
    reference into the exercise's cells writes (issue 52: such a copy scored 0.58 to 0.84 on four parts)."""
    return _reference_hashes(tuple(str(p) for p in reference_files()))


def reference_subtrees() -> frozenset:
    """The :func:`subtree` hashes of course_lib's modules, as they are and inlined (as :func:`reference_hashes`)."""
    return _reference_subtrees(tuple(str(p) for p in reference_files()))


# ------------------------------------------------------------------ syntax subtrees (against course_lib)
#
# Winnowed k-grams of tokens lose at every seam: a statement moved, a helper inlined another way, two
# statements merged or split each cut the k-grams across them, and a cell that the contract keeps short
# is mostly seams (issue 52: course_lib's reference, renamed, reordered and inlined by hand, kept 0.34 to
# 0.79 of its code). Against course_lib a cell is also measured on its syntax tree: the share of its nodes
# inside a subtree of at least SUBTREE nodes that course_lib holds too (names the student chose are one
# label, a size read from a tensor is one label whatever its spelling: ``b`` of ``b, t, _ = x.shape``,
# ``x.shape[0]``, ``x.size(0)``), the subtrees of :data:`CONTRACT_SKETCH` counting for nothing. Order,
# seams and layout count for nothing; an expression written the reference's way counts whole.


def _canonical_tree(source: str):
    """``source``'s syntax tree as :func:`canonical` makes it (statements sorted, the contract's dropped), or None."""
    tree = _parsed(source)
    if tree is None:
        return None
    try:
        return rewrite.drop_statements(rewrite.sort_statements(tree), contract_keys(), KEY_NAMES)
    except (RecursionError, ValueError, MemoryError):
        return None


def _is_size(node: ast.AST) -> bool:
    """``x.shape[i]`` or ``x.size(i)``: a size read from a tensor."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"
            and len(node.args) == 1)


def _label(node: ast.AST) -> str:
    """One node as :func:`rewrite.statement_key` reads it: its type, and the library's names, attributes,
    constants and keywords (a name the student chose, or a size, is ``ID``)."""
    if _is_size(node) or isinstance(node, ast.Name) and node.id not in KEY_NAMES:
        return "ID"
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (node.attr in KEY_NAMES or not (
            isinstance(node.value, ast.Name) and node.value.id == "self")):
        return f"{type(node).__name__}.{node.attr}"
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.keyword):
        return f"keyword {node.arg}"
    return type(node).__name__


def _children(node: ast.AST) -> list:
    """The nodes under ``node`` that the subtrees count: none under a size, no load or store context."""
    return [] if _is_size(node) else [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context)]


def _code_units(tree) -> list:
    """The statements inside the functions of ``tree`` (a function's header is the release's, no evidence)."""
    return [] if tree is None else [stmt for node, field in rewrite._inner_blocks(tree) for stmt in getattr(node, field)
                                    if not isinstance(stmt, ast.Pass)]


def _hash_nodes(units: list) -> dict:
    """{id(node): (hash, nodes, children)} for every node under ``units``, bottom up (linear in the tree).
    The hash is Python's hash of a tuple: salted per process, as are the sets it is looked up in (made in
    the same process, never stored)."""
    memo: dict = {}
    stack = [(u, None) for u in units]
    while stack:
        node, kids = stack.pop()
        if kids is None:
            kids = _children(node)
            stack.append((node, kids))
            stack.extend((c, None) for c in kids)
            continue
        below = [memo[id(c)] for c in kids]
        memo[id(node)] = (hash((_label(node), *(b[0] for b in below))), 1 + sum(b[1] for b in below), kids)
    return memo


def _subtrees(tree) -> list:
    """(hash, nodes) of every subtree inside the functions of ``tree``."""
    return [(h, n) for h, n, _ in _hash_nodes(_code_units(tree)).values()]


@functools.cache
def _sketch_subtrees() -> frozenset:
    return frozenset(h for h, size in _subtrees(ast.parse(CONTRACT_SKETCH)) if size >= SUBTREE)


def subtree_containment(source: str, reference: frozenset, tree=False) -> tuple[float, int]:
    """(the share of ``source``'s syntax nodes inside subtrees of ``reference``, the nodes counted): top down,
    a subtree of :data:`SUBTREE` nodes or more that ``reference`` holds counts whole, one that
    :data:`CONTRACT_SKETCH` holds counts for nothing, any other node counts once, uncovered. ``tree``: the
    cut cell's canonical tree (:func:`_canonical_pair`), when the caller made it already."""
    try:
        units = _code_units(_canonical_tree(source[:MAX_CHARS]) if tree is False else tree)
        memo = _hash_nodes(units)
    except (RecursionError, MemoryError):
        return 0.0, 0
    sketch, covered, total = _sketch_subtrees(), 0, 0
    stack = list(units)
    while stack:
        h, size, kids = memo[id(stack.pop())]
        if size >= SUBTREE and h in sketch:
            continue
        if size >= SUBTREE and h in reference:
            covered, total = covered + size, total + size
            continue
        total += 1
        stack.extend(kids)
    return (covered / total if total else 0.0), total


LIBRARY = "course_lib"           # the "other" of a match against course_lib's modules
MODEL = "model solution"         # ... against the exercise's model solution (the source notebook's cells)
MODEL_ANSWER = "model answer"    # ... against its model written answers (Part 9)
PUBLIC = (LIBRARY, MODEL, MODEL_ANSWER)
CANDIDATES = 3                   # other students compared exactly, per student and part: those sharing most
HOLDERS_COUNTED = 64             # distinct cells counted per fingerprint when looking for the closest other student


@dataclass
class Match:
    student: str
    part: str
    other: str            # one of PUBLIC, or another student's id
    score: float          # containment, 0 .. 1 (against course_lib, of tokens or of syntax subtrees: the larger)
    size: int             # the student's own tokens covered by fingerprints in this part
    shared: int = 0       # flagged: how many students of the class share this cell (the student included)

    evidence: bool = True  # a small cell against the model solution or a student: do they share comments?
    corroborated: str = ""  # flagged because the student is flagged against the same other on this part

    @property
    def flagged(self) -> bool:
        if self.corroborated:
            return True
        if is_prose(self.part):
            return self.score >= PROSE_THRESHOLD and self.size >= MIN_WORDS
        return (self.score >= (THRESHOLD if self.size >= SMALL else SMALL_THRESHOLD) and self.size >= MIN_TOKENS
                and self.evidence)


def _public(skeleton: dict, solutions: dict | None, boiler: dict) -> dict:
    """{part: [(label, hashes)]}: what each part is compared with besides the class."""
    out: dict = defaultdict(list)
    model = {p: fingerprint(text, boiler.get(p, ()), limit=False, prose=is_prose(p)).hashes
             for p, text in (solutions or {}).items()}
    for part in set(skeleton) | set(model) | set(PARTS):
        if not is_prose(part):
            out[part].append((LIBRARY, reference_hashes()))
        if model.get(part):
            out[part].append((MODEL_ANSWER if is_prose(part) else MODEL, frozenset(model[part])))
    return out


def compare(submissions: dict[str, dict[str, str]], skeleton: dict[str, str] | None = None,
            solutions: dict[str, str] | None = None) -> list[Match]:
    """For each student and part: containment in course_lib (code) and in the model solution or model
    answer of the part (``solutions``, the source notebook's cells: :func:`solutions`), and the closest
    other student (the larger of the two containments, so that both sides of a copy are flagged).
    ``submissions``: {student: {part: source}}; ``skeleton``: {part: the released cell}, the only text
    subtracted as common (:func:`skeletons`).

    Nothing the students share is subtracted: a solution that half the class typed is flagged for
    every one of them, and each flag says how many students share the cell (``Match.shared``: the
    students flagged together, through any chain of flags, on that part; against a public solution,
    the students flagged against it on that part). A cell flagged against a public solution is not
    compared with the class (its look-alikes copied the same public solution, and are flagged too).

    About linear in the class: identical cells (after normalising) are fingerprinted and compared once,
    other cells are found through an index of fingerprints (counting at most :data:`HOLDERS_COUNTED`
    cells per fingerprint), and only the :data:`CANDIDATES` that share most are compared exactly."""
    skeleton = skeleton or {}
    boiler = {p: fingerprint(text, prose=is_prose(p)).hashes for p, text in skeleton.items()}
    public = _public(skeleton, solutions, boiler)
    released = {p: comments(text) for p, text in skeleton.items()}
    model_said = {p: comments(text) for p, text in (solutions or {}).items()}
    heard: dict = {}

    def said(student, part):
        if (student, part) not in heard:
            heard[student, part] = comments(submissions[student][part])
        return heard[student, part]
    made: dict = {}                       # (part, source) -> Print: a cell the class shares is fingerprinted once
    subtree: dict = {}                    # (part, source) -> its share of course_lib's syntax subtrees
    library = reference_subtrees()

    def print_of(part, source):
        key = (part, source)
        if key not in made:
            if is_prose(part):
                made[key] = fingerprint(source, boiler.get(part, ()), prose=True)
            else:                         # one canonical tree for the tokens and the subtrees
                tree, text = _canonical_pair(source[:MAX_CHARS])
                made[key] = fingerprint(source, boiler.get(part, ()), canonical_text=text)
                subtree[key] = subtree_containment(source, library, tree)[0]
        return made[key]
    prints = {s: {p: print_of(p, src) for p, src in parts.items()} for s, parts in submissions.items()}
    matches = []
    for part in sorted({p for parts in prints.values() for p in parts}):
        mine = {s: parts[part] for s, parts in prints.items() if part in parts and parts[part].coverage}
        kinds: dict = {}                  # the same fingerprints -> the students with them
        for s, pr in mine.items():
            kinds.setdefault((frozenset(pr.hashes), pr.coverage), []).append(s)
        reps = list(kinds.values())       # one student per kind of cell
        holders = defaultdict(list)
        for g, who in enumerate(reps):
            for h in mine[who[0]].hashes:
                holders[h].append(g)
        common = released.get(part, frozenset())
        for g, who in enumerate(reps):
            pr = mine[who[0]]
            found = [Match(who[0], part, label, containment(pr, hashes), pr.coverage) for label, hashes in public[part]]
            for m in found:
                if m.other == LIBRARY:                  # course_lib, copied by hand: also its syntax subtrees
                    m.score = max(m.score, subtree[part, submissions[who[0]][part]])
            small = pr.coverage < SMALL and not is_prose(part)   # the code alone is no evidence (shares_comments)
            index = defaultdict(list)                              # a comment -> the members of the kind with it
            for s in who if small and len(who) > 1 else ():
                for c in said(s, part) - common:
                    index[c].append(s)
            best = None
            if len(who) == 1 and not any(m.flagged for m in found):
                shared = Counter(o for h in pr.hashes for o in holders[h][:HOLDERS_COUNTED] if o != g)
                for other, _ in shared.most_common(CANDIDATES):
                    theirs = mine[reps[other][0]]
                    score = max(containment(pr, theirs.hashes), containment(theirs, pr.hashes))
                    if best is None or score > best.score:
                        best = Match(who[0], part, reps[other][0], score, min(pr.coverage, theirs.coverage))
            for s in who:
                listed = [Match(s, part, m.other, m.score, m.size, evidence=not small or m.other != MODEL or
                                shares_comments(said(s, part), model_said.get(part, frozenset()), common))
                          for m in found]
                matches += listed
                if any(m.flagged for m in listed):   # listed against the public solution, not in pairs too
                    continue
                if len(who) > 1:     # the same cell as another's; a small one: one that shares comments, if any
                    near = {o for c in said(s, part) - common for o in index.get(c, ()) if o != s} if small else ()
                    other = next((o for o in who
                                  if o in near and shares_comments(said(s, part), said(o, part), common)),
                                 who[1] if s == who[0] else who[0])
                    pair = Match(s, part, other, 1.0, pr.coverage)
                elif best is not None:
                    pair = Match(s, part, best.other, best.score, best.size)
                else:
                    continue
                if pair.size < SMALL and not is_prose(part):   # the smaller of the two cells decides
                    pair.evidence = shares_comments(said(s, part), said(pair.other, part), common)
                matches.append(pair)
    corroborate(matches)
    for part in {m.part for m in matches}:
        _count_sharing([m for m in matches if m.part == part])
    return matches


def corroborate(matches: list[Match]) -> None:
    """Judge a part on more than its few lines: a student flagged against one other (course_lib, the model
    solution, a classmate) on a part of at least :data:`SMALL` tokens is flagged against that same other on
    each code part that reaches :data:`CORROBORATED` with :data:`CORROBORATED_TOKENS` of its own covered
    (``Match.corroborated`` names the part that stood on its own). A copy of course_lib moved into the
    cells keeps only a few lines of its own in the parts the contract mostly fixes (the feed-forward
    network, the layer: 0.61 and 0.67 against course_lib, issue 52), where no honest style reaches 0.58;
    an honest student is flagged on no part, so this flags no honest student."""
    anchors = defaultdict(set)
    for m in matches:
        if m.flagged and not is_prose(m.part) and m.size >= SMALL:
            anchors[m.student, m.other].add(m.part)
    for m in matches:
        others = anchors.get((m.student, m.other), set()) - {m.part}
        if (others and not m.flagged and not is_prose(m.part) and m.score >= CORROBORATED
                and m.size >= CORROBORATED_TOKENS):
            m.corroborated = min(others)


def _count_sharing(matches: list[Match]) -> None:
    """Set ``shared`` on the flagged matches of one part: against a public solution, how many students are
    flagged against it; between students, the size of the group the flags join (union-find)."""
    parent: dict = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    public = Counter()
    for m in matches:
        if not m.flagged:
            continue
        if m.other in PUBLIC:
            public[m.other] += 1
        else:
            parent[root(m.student)] = root(m.other)
    size = Counter(root(x) for x in list(parent))
    for m in matches:
        if m.flagged:
            m.shared = public[m.other] if m.other in PUBLIC else size[root(m.student)]


def table(matches: list[Match]) -> str:
    """One line per student: the highest scores against the public solutions and another student, the flags."""
    lines = [f"{'student':<24} {'vs public':>10} {'vs a student':>13}  flagged (look at these cells)"]
    by_student = defaultdict(list)
    for m in matches:
        by_student[m.student].append(m)
    for student in sorted(by_student):
        mine = by_student[student]
        lib = max((m.score for m in mine if m.other in PUBLIC), default=0.0)
        peer = max((m.score for m in mine if m.other not in PUBLIC), default=0.0)
        flags = ", ".join(f"{m.part} ~ {m.other} ({m.score:.0%}; {m.shared} students share it"
                          f"{'; as ' + m.corroborated if m.corroborated else ''})"
                          for m in mine if m.flagged) or "-"
        lines.append(f"{student:<24} {lib:>10.0%} {peer:>13.0%}  {flags}")
    return "\n".join(lines)


def write_csv(matches: list[Match], path) -> None:
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["student", "part", "compared_with", "score", "tokens", "flagged", "students_sharing"])
        for m in matches:
            out.writerow([m.student, m.part, m.other, f"{m.score:.3f}", m.size, int(m.flagged),
                          m.shared if m.flagged else ""])


def _read(path):
    """The notebook at ``path``, never through a symbolic link (ValueError: a link, not a regular file)."""
    import nbformat
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise ValueError(f"it could not be opened ({e.strerror}; a symbolic link is not followed)") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_NOTEBOOK_BYTES:
            raise ValueError("it is not a regular file of at most 20 MiB")
        return nbformat.reads(f.read().decode("utf-8"), as_version=4)


def _load(notebooks: dict) -> tuple[dict, dict]:
    """({student: solution cells}, {student: why it was skipped}) from paths (read without following
    links), ``(None, why)`` pairs the grader already refused, or nbformat nodes."""
    subs, skipped = {}, {}
    for student, nb in notebooks.items():
        try:
            if isinstance(nb, tuple):
                raise ValueError(nb[1])
            subs[student] = cells_of(_read(nb) if isinstance(nb, (str, Path)) else nb)
        except ValueError as e:
            skipped[student] = str(e)
        except Exception as e:                             # noqa: BLE001 (not a notebook: skipped, reported)
            skipped[student] = f"it could not be read ({type(e).__name__})"
    return subs, skipped


def summary(notebooks, source=None, csv_path=None) -> str:
    """The report as text; writes ``csv_path`` if given.

    ``summary({student: notebook path or nbformat node}, source=<the source notebook>)``, or, from the
    autograder, ``summary(coursedir, assignment_id)`` with nbgrader's CourseDirectory: then the
    submissions under its ``submitted`` folder, the source under its source folder, and the CSV
    ``similarity_<assignment>.csv`` in the course root.
    """
    if hasattr(notebooks, "root") and isinstance(source, str):
        d = notebooks
        return report(Path(d.root), source, Path(d.root) / d.source_directory / source, d.submitted_directory,
                      csv_path)[0]
    subs, skipped = _load(notebooks)
    source = (_read(source) if isinstance(source, (str, Path)) else source) if source is not None else None
    matches = compare(subs, skeletons(source), solutions(source)) if source is not None else compare(subs)
    if csv_path is not None:
        write_csv(matches, csv_path)
    flagged = sorted({m.student for m in matches if m.flagged})
    return (table(matches) + f"\n\n{len(flagged)} of {len(subs)} submissions have flagged parts "
            f"(>= {THRESHOLD:.0%} of a cell's tokens found in course_lib, the model solution or answers, or "
            "another student's cell, fingerprinted after renaming and dropping statements with no effect; a "
            "flag is a reason to look, not a verdict)."
            + ("" if source is not None else "\nnot compared with the model solution: no source notebook found")
            + "".join(f"\nnot compared: {s}: {why}" for s, why in sorted(skipped.items())))


def report(root: Path, assignment: str, source_dir=None, submitted="submitted", csv_path=None) -> tuple[str, Path]:
    """The report of a course directory: (text, the CSV's path)."""
    folders = [Path(source_dir)] if source_dir else [root / "notebooks" / assignment, root / "source" / assignment]
    sources = [p for f in folders for p in sorted(f.glob("*.ipynb"))]
    names = {p.stem for p in sources}                 # the assignment's notebooks, of plain ids only (as graded)
    found = sorted(p for p in (root / submitted).glob(f"*/{glob.escape(assignment)}/*.ipynb")
                   if plain_id(p.parts[-3]) and (not names or p.stem in names))
    if not found:
        return f"similarity: no submissions under {root / submitted}/*/{assignment}/", None
    many = len({p.stem for p in found}) > 1
    notebooks = {}
    for p in found:                        # as the grader reads them: no symbolic link anywhere on the way
        nb, why = read_notebook(str(p), str(root / submitted))
        notebooks[f"{p.parts[-3]}/{p.stem}" if many else p.parts[-3]] = (None, why) if why else nb
    csv_path = Path(csv_path) if csv_path else root / f"similarity_{assignment}.csv"
    text = summary(notebooks, sources[0] if sources else None, csv_path)
    return text + f"\nwritten: {csv_path}", csv_path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_grader.similarity",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("assignment")
    parser.add_argument("--root", default=".", help="the course directory (default: here)")
    parser.add_argument("--source", default=None, help="the source folder (default: notebooks/ or source/)")
    parser.add_argument("--csv", default=None, help="where to write the CSV (default: similarity_<assignment>.csv)")
    args = parser.parse_args(argv)
    text, csv_path = report(Path(args.root), args.assignment, args.source, csv_path=args.csv)
    print(text, file=sys.stdout if csv_path else sys.stderr)
    return 0 if csv_path else 1


if __name__ == "__main__":
    sys.exit(main())
