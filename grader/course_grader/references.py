"""The references a part may use, as source text without the graded part's own definition.

A part process must never be able to reach course_lib's reference of the part it is graded on, yet
the parts it depends on are the references (``MultiHeadAttention`` inside a student's
``EncoderLayer``). So the grader sends, with each part, just the course_lib modules that define its
dependencies (and the modules those import), with every top-level definition and import of the
graded part's name *removed from the syntax tree*, compiled from that cut source once by the grader
(:func:`compiled`, marshalled): the part process executes them under a private package name
(:func:`guard.load_dependencies`), and the graded reference's code never exists there, not even as a
code object.
"""

from __future__ import annotations

import ast
import functools
import importlib
import marshal
import os

import numpy as np

from course_lib.grading.parts import DEPENDENCIES, NAMES

PACKAGE = "course_lib"


def _module_of(name: str) -> str:
    """'attention' for course_lib's public ``MultiHeadAttention`` (from the package's table of exports,
    without importing the module: the grader's process never imports torch)."""
    module = getattr(importlib.import_module(PACKAGE), "_MODULE_OF", {}).get(name)
    if module is None:
        raise ValueError(f"{name} is not defined in {PACKAGE}")
    return module


def _path(module: str) -> str:
    root = os.path.dirname(importlib.import_module(PACKAGE).__file__)
    return os.path.join(root, *module.split(".")) + ".py"


def _relative_imports(tree: ast.Module) -> list[str]:
    found = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.append(node.module)
            else:
                found += [a.name for a in node.names]
    return found


def _strip(tree: ast.Module, name: str) -> ast.Module:
    """``tree`` without any top-level definition, assignment or import of ``name``."""
    body = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                continue
        if isinstance(node, (ast.ImportFrom, ast.Import)):
            node.names = [a for a in node.names if (a.asname or a.name).split(".")[0] != name]
            if not node.names:
                continue
        body.append(node)
    tree.body = body
    return tree


@functools.cache
def for_part(part: str) -> tuple[tuple, dict]:
    """``(modules, exports)`` for ``part``: [(module, source)] in import order, {public name: (module, attr)}."""
    exports = {NAMES[d]: (_module_of(NAMES[d]), NAMES[d]) for d in DEPENDENCIES[part]}
    order, trees = [], {}

    def visit(module):                                    # dependencies first
        if module in trees:
            return
        with open(_path(module), encoding="utf-8") as f:
            trees[module] = ast.parse(f.read())
        for dep in _relative_imports(trees[module]):
            visit(dep)
        order.append(module)
    for module in sorted(m for m, _ in exports.values()):
        visit(module)
    graded = NAMES[part]
    modules = tuple((m, ast.unparse(_strip(trees[m], graded))) for m in order)
    return modules, exports


@functools.cache
def compiled(part: str) -> tuple:
    """``for_part``'s modules compiled by the grader, once: ((module, its marshalled code as a uint8 array), ...).
    A part process loads them (before its guard is armed) instead of compiling their source again
    for every part of every student; what they hold is the same cut source."""
    return tuple((m, np.frombuffer(marshal.dumps(compile(source, f"<reference {m}>", "exec")), dtype=np.uint8))
                 for m, source in for_part(part)[0])
