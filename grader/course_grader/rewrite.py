"""Two spellings of one program made one, before the similarity report fingerprints them (issue 52).

* :func:`sort_statements`: the statements of a function that do not depend on each other in one order
  (a dependency sort, ties broken by the statement's text with the names left out). A copy whose three
  independent lines of the positional table were swapped lost most of its k-grams (1.00 to 0.45 against
  course_lib); sorted, it is the same token stream as the original.
* :func:`inlined`: course_lib's modules with the helpers their functions call written in place (a method of
  the same class, a function of course_lib), the argument checks dropped and the options the exercise's
  contract does not have set to their defaults (``return_attention=False``, ``allow_mask=None``), their
  branches folded. This is what a student does who moves the reference into the exercise's cells: the
  report compares a cell with course_lib as it is *and* as it reads once inlined.

Both work on Python's syntax tree and are linear in it (a block of more than :data:`MAX_SORTED`
statements is left in its order).
"""

from __future__ import annotations

import ast
import copy
import heapq
from collections import Counter

MAX_SORTED = 400        # statements of one block sorted (a longer block is left as it is)
MAX_INLINE_DEPTH = 3    # helpers of helpers inlined
#: the parameters of the exercise's contract (shared/exercise-contract.md's signatures): any other parameter
#: of a course_lib function is an option a student who copies it leaves at its default
CONTRACT_PARAMETERS = frozenset({"self", "max_len", "d_model", "q", "k", "v", "attn_mask", "num_heads", "dropout",
                                 "query", "key", "value", "key_padding_mask", "d_ff", "x", "norm_first",
                                 "vocab_size", "num_layers", "pad_id", "tokens"})
_BARRIERS = (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Yield, ast.YieldFrom, ast.Await)
_EFFECT = "<effect>"     # a pseudo-name: statements that call something for its effect keep their order
_MUTATORS = frozenset({"append", "extend", "insert", "update", "register_buffer", "register_parameter", "add_module"})
_KEY_NODES = 64          # nodes of a statement in its sort key


# ------------------------------------------------------------------ independent statements in one order

def _root(node: ast.AST) -> str | None:
    """The variable an expression reads or changes: ``x`` of ``x[0].y``, ``self.a`` of ``self.a.b[0]``."""
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return "self." + node.attr
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _call_writes(node: ast.Call) -> set:
    """What a call changes: ``super()`` ``self``; an in-place method (``x.zero_()``, ``append``) its receiver,
    ``register_buffer("pe", ...)`` ``self.pe``, an in-place function (``nn.init.normal_(w)``) its first argument."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "super":
        return {"self"}
    if isinstance(func, ast.Attribute) and (name.endswith("_") or name in _MUTATORS):
        first = node.args[0] if node.args else None
        named = isinstance(first, ast.Constant) and isinstance(first.value, str)
        return {_root(func.value), _EFFECT} | ({"self." + first.value} if named else set())
    if name.endswith("_") and node.args:
        return {_root(node.args[0]), _EFFECT}
    return set()


def _uses(stmt: ast.stmt) -> tuple:
    """(names read, names written, a sort key, whether it is a barrier) of ``stmt``, in one walk of it.

    ``self.attr`` is a name of its own, written by an assignment to it and read by any other use; every
    use of ``self.attr`` reads ``self``, which ``super().__init__()`` writes. A call made for its effect
    writes what :func:`_call_writes` says and :data:`_EFFECT` (so such calls keep their order). The key is
    the statement's node types, attributes and constants in walk order, not the names a student chose
    (renaming keeps it). A barrier is a statement that leaves the block or defines something (``return``,
    ``raise``, ``def`` ...), or one that holds such a statement."""
    reads: set = set()
    writes: set = set()
    key: list = []
    barrier = isinstance(stmt, _BARRIERS)
    for node in ast.walk(stmt):
        if len(key) < _KEY_NODES:
            key.append(type(node).__name__)
        if isinstance(node, ast.Name):
            (writes if isinstance(node.ctx, (ast.Store, ast.Del)) else reads).add(node.id)
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                (writes if isinstance(node.ctx, (ast.Store, ast.Del)) else reads).add("self." + node.attr)
            else:
                key.append(node.attr)
        elif isinstance(node, ast.Constant):
            key.append(repr(node.value)[:20])
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            reads.add(_root(node))                                  # pe[:, 0::2] = ... changes the table pe
            writes.add(_root(node))
        elif isinstance(node, ast.Call):
            changed = _call_writes(node)
            reads |= changed
            writes |= changed
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            reads.add(_root(node.target))
        elif node is not stmt and isinstance(node, _BARRIERS):
            barrier = True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        writes.add(_EFFECT)
    reads.discard(None)
    writes.discard(None)
    if any(n.startswith("self.") for n in reads | writes):
        reads.add("self")
    return reads, writes, " ".join(key[:_KEY_NODES * 2]), barrier


def _segment_sorted(stmts: list, uses: list) -> list:
    """``stmts`` (no barrier among them) in dependency order, each step the smallest key of those ready
    (``uses``: their :func:`_uses`). A statement depends on the last one that wrote a name it reads. A
    local name assigned again is a new variable (as in SSA form: ``b, t, _ = key.shape`` after
    ``b, t, _ = query.shape`` depends on neither it nor its readers); the state, ``self.attr`` and what is
    called for its effect, keeps its order: a statement writing it also waits for the last writer and
    for the readers since."""
    last_writer: dict = {}
    readers: dict = {}
    after: list = [[] for _ in stmts]
    waiting = [0] * len(stmts)
    for j, (reads, writes, _, _) in enumerate(uses):
        state = {n for n in writes if n.startswith(("self", "<"))}
        deps = {last_writer[n] for n in reads | state if n in last_writer}
        deps |= {i for n in state for i in readers.get(n, ())}
        deps.discard(j)
        for i in deps:
            after[i].append(j)
        waiting[j] = len(deps)
        for n in reads:
            readers.setdefault(n, []).append(j)
        for n in writes:
            last_writer[n] = j
            readers[n] = []
    ready = [(uses[j][2], j) for j in range(len(stmts)) if not waiting[j]]
    heapq.heapify(ready)
    out = []
    while ready:
        _, i = heapq.heappop(ready)
        out.append(stmts[i])
        for j in after[i]:
            waiting[j] -= 1
            if not waiting[j]:
                heapq.heappush(ready, (uses[j][2], j))
    return out


def _sort_block(stmts: list) -> list:
    """A block with its statements sorted between its barriers (:func:`_uses`), which stay where they were."""
    if len(stmts) < 2 or len(stmts) > MAX_SORTED:
        return stmts
    out, run, uses = [], [], []
    for stmt in stmts:
        used = _uses(stmt)
        if used[3]:
            out += _segment_sorted(run, uses) + [stmt]
            run, uses = [], []
        else:
            run.append(stmt)
            uses.append(used)
    return out + _segment_sorted(run, uses)


def sort_statements(tree: ast.AST, inside: bool = False) -> ast.AST:
    """``tree`` with the statements of every block inside a function in dependency order (in place)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.stmt, ast.excepthandler, ast.match_case)):
            sort_statements(node, inside or isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)))
    if inside or isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(tree, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(tree, field, _sort_block(block))
    return tree



# ------------------------------------------------------------------ a reference's helpers inlined

def _is_check(stmt: ast.stmt) -> bool:
    """An argument check: a bare call of ``check_...``/``_check_...``, or ``if ...: raise ...``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name.lstrip("_").startswith("check")
    if isinstance(stmt, ast.If) and not stmt.orelse and all(isinstance(s, ast.Raise) for s in stmt.body):
        return True
    if isinstance(stmt, ast.For) and all(_is_check(s) for s in stmt.body):
        return True
    return False


def _body(fn: ast.FunctionDef) -> list:
    body = [s for s in fn.body if not _is_check(s)]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]                                                   # the docstring
    return body


class _Substitute(ast.NodeTransformer):
    """Names (and ``self.attr``, keyed ``"self.attr"``) replaced by copies of expressions; ``option``: the
    copies are marked as an option's default (:func:`_drop_options` removes them from calls)."""

    def __init__(self, mapping: dict, option: bool = False):
        self.mapping, self.option = mapping, option

    def _copy(self, key):
        new = copy.deepcopy(self.mapping[key])
        if self.option:
            new.option = True
        return new

    def visit_Name(self, node):
        if node.id in self.mapping and isinstance(node.ctx, ast.Load):
            return self._copy(node.id)
        return node

    def visit_Attribute(self, node):
        key = f"self.{node.attr}"
        if (isinstance(node.value, ast.Name) and node.value.id == "self" and key in self.mapping
                and isinstance(node.ctx, ast.Load)):
            return self._copy(key)
        return self.generic_visit(node)


class _DropOptions(ast.NodeTransformer):
    """The arguments that are an option's default left out of calls (a copier adapting the reference to
    the contract leaves ``eps=layer_norm_eps`` or ``allow_mask`` out), and ``a, b = a, b`` dropped."""

    def visit_Call(self, node):
        self.generic_visit(node)
        node.keywords = [k for k in node.keywords if not getattr(k.value, "option", False)]
        while node.args and getattr(node.args[-1], "option", False):
            node.args.pop()
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        same = len(node.targets) == 1 and ast.dump(node.targets[0]).replace("Store", "Load") == ast.dump(node.value)
        return None if same else node


def _bind(fn: ast.FunctionDef, call: ast.Call, method: bool) -> dict | None:
    """{parameter: argument expression} of ``call`` to ``fn`` (defaults for what it leaves out), or None."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    defaults = fn.args.defaults
    bound = dict(zip(params[len(params) - len(defaults):], defaults))
    bound.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None})
    if method:
        params = params[1:]
    if (fn.args.vararg or fn.args.kwarg or any(isinstance(a, ast.Starred) for a in call.args)
            or len(call.args) > len(params)):
        return None
    bound.update(zip(params, call.args))
    for kw in call.keywords:
        if kw.arg is None:
            return None
        bound[kw.arg] = kw.value
    names = set(params) | {a.arg for a in fn.args.kwonlyargs}
    return bound if names <= set(bound) else None


class _Fold(ast.NodeTransformer):
    """Branches on constants taken (``if False: ...``, ``a if None is None else b``)."""

    @staticmethod
    def _value(test):
        if isinstance(test, ast.Constant):
            return bool(test.value)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Constant):
            return not test.operand.value
        if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Constant)
                and isinstance(test.comparators[0], ast.Constant)):
            a, b, op = test.left.value, test.comparators[0].value, test.ops[0]
            same = a is b if isinstance(op, (ast.Is, ast.IsNot)) else a == b
            if isinstance(op, (ast.Is, ast.Eq)):
                return same
            return not same if isinstance(op, (ast.IsNot, ast.NotEq)) else None
        return None

    def visit_If(self, node):
        self.generic_visit(node)
        value = self._value(node.test)
        if value is None:
            return node
        return (node.body if value else node.orelse) or None

    def visit_IfExp(self, node):
        self.generic_visit(node)
        value = self._value(node.test)
        return node if value is None else node.body if value else node.orelse


def _folded(stmts: list) -> list:
    """``stmts`` with their branches on constants taken (:class:`_Fold`)."""
    out: list = []
    for stmt in stmts:
        done = _Fold().visit(stmt)
        out += done if isinstance(done, list) else [done] if done is not None else []
    return out


class _Inliner:
    """Inlines, in one function, the calls of the helpers it can see (see :func:`inlined`)."""

    def __init__(self, functions: dict, methods: dict, hoist: bool):
        self.functions, self.methods, self.hoist = functions, methods, hoist

    def helper(self, call: ast.AST, depth: int, target: ast.expr | None = None):
        """(statements, value) that replace ``call``, or None when it is not a helper's that can be inlined.
        ``target``: what the call's value is assigned to; a helper that returns one of its parameters
        (``init_embedding(nn.Embedding(...))``) then works on the target, assigned the argument first."""
        if not isinstance(call, ast.Call) or depth >= MAX_INLINE_DEPTH:
            return None
        f = call.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            fn, method = self.methods.get(f.attr), True
        else:
            fn, method = self.functions.get(f.id) if isinstance(f, ast.Name) else None, False
        if fn is None:
            return None
        body = _body(fn)
        returns = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)]
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None or len(returns) != 1:
            return None
        bound = _bind(fn, call, method)
        if bound is None:
            return None
        first = []
        returned = body[-1].value
        if target is not None and isinstance(returned, ast.Name) and returned.id in bound:
            first = [ast.Assign(targets=[copy.deepcopy(target)], value=bound[returned.id])]
            bound[returned.id] = _loaded(target)
        used = Counter(n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name))
        for param, arg in list(bound.items()):     # an argument computed once, as a student writes it
            if self.hoist and used[param] > 1 and not isinstance(arg, (ast.Name, ast.Constant, ast.Attribute)):
                first.append(ast.Assign(targets=[ast.Name(param, ast.Store())], value=arg))
                del bound[param]
        new = _folded([_Substitute(bound).visit(copy.deepcopy(s)) for s in body])
        if not new or not isinstance(new[-1], ast.Return):
            return None
        return first + self.block(new[:-1], depth + 1), new[-1].value

    def expand(self, node: ast.expr, depth: int, hoisted: list | None) -> ast.expr:
        """``node`` with the helpers' calls in it replaced by their values; their statements go to ``hoisted``
        (None: only helpers without statements are inlined)."""
        if isinstance(node, ast.Call):
            found = self.helper(node, depth)
            if found is not None and (hoisted is not None or not found[0]):
                hoisted += found[0] if hoisted is not None else []
                return self.expand(found[1], depth, hoisted)
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                setattr(node, field, self.expand(value, depth, hoisted))
            elif isinstance(value, list):
                setattr(node, field, [self.expand(v, depth, hoisted) if isinstance(v, ast.expr) else v for v in value])
        return node

    def block(self, stmts: list, depth: int = 0) -> list:
        """``stmts`` with the checks dropped and the helpers they call inlined."""
        out: list = []
        for stmt in stmts:
            if _is_check(stmt):
                continue
            if isinstance(stmt, (ast.Assign, ast.Return, ast.Expr, ast.AugAssign)):
                hoisted: list = []
                found = self.helper(stmt.value, depth, stmt.targets[0]) if (
                    isinstance(stmt, ast.Assign) and len(stmt.targets) == 1) else None
                if found is not None:
                    hoisted += found[0]
                    stmt.value = found[1]
                stmt = self.expand(stmt, depth, hoisted)
                out += hoisted
            else:
                for field in ("test", "iter", "items"):
                    value = getattr(stmt, field, None)
                    if isinstance(value, ast.expr):
                        setattr(stmt, field, self.expand(value, depth, None))
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(stmt, field, None)
                    if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                        setattr(stmt, field, self.block(block, depth) or [ast.Pass()])
            out.append(stmt)
        return out


def _loaded(target: ast.expr) -> ast.expr:
    """An assignment's target as an expression that reads it."""
    new = copy.deepcopy(target)
    for node in ast.walk(new):
        if hasattr(node, "ctx"):
            node.ctx = ast.Load()
    return new


def _constant_attributes(cls: ast.ClassDef) -> dict:
    """{"self.attr": constant} of the attributes that one statement of the class sets, to a constant."""
    found: dict = {}
    count: dict = {}
    for node in ast.walk(cls):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        count[t.attr] = count.get(t.attr, 0) + 1
                        if isinstance(node, ast.Assign) and t is target and isinstance(node.value, ast.Constant):
                            found[f"self.{t.attr}"] = node.value
    return {k: v for k, v in found.items() if count[k[5:]] == 1}


def _options(fn: ast.FunctionDef) -> dict:
    """{parameter: default} of ``fn``'s parameters that the contract does not have, with constant defaults."""
    params = fn.args.posonlyargs + fn.args.args
    pairs = list(zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults))
    pairs += [(a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None]
    return {a.arg: d for a, d in pairs if a.arg not in CONTRACT_PARAMETERS and isinstance(d, ast.Constant)}


def inlined(source: str, functions: dict, names, hoist: bool = True) -> str | None:
    """The definitions of ``source`` (a course_lib module) named in ``names``, each function with its
    helpers written in place: a call of a method of the same class (``self.split_heads(x)``) or of a
    function in ``functions`` ({name: FunctionDef}), whose one ``return`` ends it, becomes the helper's
    statements and its returned expression, its parameters replaced by the arguments. Argument checks
    are dropped, and the parameters that are not the contract's (:data:`CONTRACT_PARAMETERS`) take their
    defaults, their branches folded. ``hoist``: an argument that the helper uses more than once is assigned
    to the parameter's name first (``x = self.w_q(query)``; else it is written at each use). None if
    ``source`` does not parse or defines none of ``names``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    tree.body = [n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name in names]
    for owner in tree.body:
        methods = {n.name: n for n in owner.body if isinstance(n, ast.FunctionDef)} if isinstance(
            owner, ast.ClassDef) else {}
        for fn in list(methods.values()) or [owner]:
            fn.body = _folded([_Substitute(_options(fn), option=True).visit(s) for s in _body(fn)])
        if methods:                                    # self.positional = "sinusoidal" (an option's default)
            constants = _constant_attributes(owner)
            for fn in methods.values():
                fn.body = _folded([_Substitute(constants, option=True).visit(s) for s in fn.body
                                   if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                                           and ast.unparse(s.targets[0]) in constants)])
        inliner = _Inliner(functions, methods, hoist)
        for fn in list(methods.values()) or [owner]:
            fn.body = inliner.block(fn.body) or [ast.Pass()]
    if not tree.body:
        return None
    try:
        return ast.unparse(ast.fix_missing_locations(_DropOptions().visit(tree)))
    except (RecursionError, ValueError, MemoryError):
        return None


def functions_of(sources: list[str]) -> dict:
    """{name: FunctionDef} of the top-level functions of ``sources`` (the first one of a name wins)."""
    found: dict = {}
    for text in sources:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                found.setdefault(node.name, node)
    return found


# ------------------------------------------------------------------ what the contract makes anyone write

def statement_key(stmt: ast.stmt, keep: frozenset) -> str:
    """``stmt``'s structure: its node types in walk order, with the attributes, constants and the names in
    ``keep`` (the library's, the contract's classes and attributes); the names a student chooses left out,
    ``self.d_model = d_model`` and ``self.pad_id = pad_id`` are one statement, ``self.dropout(x)`` and
    ``self.norm1(x)`` two."""
    key = []
    for node in ast.walk(stmt):
        key.append(type(node).__name__)
        if isinstance(node, ast.Name) and node.id in keep:
            key.append(node.id)
        elif isinstance(node, ast.Attribute) and (node.attr in keep or not (
                isinstance(node.value, ast.Name) and node.value.id == "self")):
            key.append(node.attr)
        elif isinstance(node, ast.Constant):
            key.append(repr(node.value))
        elif isinstance(node, ast.keyword):
            key.append(str(node.arg))
    return " ".join(key)


def _inner_blocks(tree: ast.AST, inside: bool = False):
    """(node, field) of every statement block inside a function of ``tree``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.stmt, ast.excepthandler, ast.match_case)):
            yield from _inner_blocks(node, inside or isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)))
    if inside or isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(tree, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield tree, field


def statement_keys(source: str, keep: frozenset) -> frozenset:
    """The :func:`statement_key` of every statement inside the functions of ``source``."""
    return frozenset(statement_key(s, keep) for node, field in _inner_blocks(ast.parse(source))
                     for s in getattr(node, field))


def drop_statements(tree: ast.AST, keys: frozenset, keep: frozenset) -> ast.AST:
    """``tree`` without the statements inside its functions whose :func:`statement_key` is in ``keys`` (in
    place; a block left empty holds ``pass``, which the fingerprints drop)."""
    for node, field in reversed(list(_inner_blocks(tree))):       # a compound statement before its blocks
        block = [s for s in getattr(node, field) if statement_key(s, keep) not in keys]
        setattr(node, field, block or [ast.Pass()])
    return tree
