"""Static rules for a solution cell: "from scratch" and no reaching around the sandbox.

A part whose solution cell breaks a rule earns no points; the reason goes into the feedback. This is
the first of three layers against delegation (the others run in the sandbox: torch's fused attention
and ``nn.MultiheadAttention`` are caught when called, and course_lib's own version of the part being
graded raises there).
"""

from __future__ import annotations

import ast
import re

ALLOWED_IMPORTS = {"math", "torch", "torch.nn", "torch.nn.functional", "numpy", "typing", "functools",
                   "itertools", "collections", "dataclasses", "warnings", "__future__"}

# identifiers / attributes / imported names that delegate the work (substring match)
FORBIDDEN_WORDS = ("MultiheadAttention", "TransformerEncoder", "TransformerDecoder", "Transformer",
                   "multi_head_attention", "_native_multi_head", "flash_attention", "efficient_attention",
                   "course_lib")
# attributes only: calling somebody's scaled_dot_product_attention (a bare name is the student's own or
# the reference of a dependency, which is allowed)
FORBIDDEN_ATTRIBUTE_WORDS = ("scaled_dot_product",)
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "globals", "locals", "vars", "open", "breakpoint",
                   "input", "delattr"}
ALLOWED_DUNDERS = {"__init__", "__name__", "__call__", "__future__"}
# attributes that lead out of the exercise: to the interpreter, the process, other modules' memory
FORBIDDEN_ATTRIBUTES = {"sys", "os", "gc", "builtins", "importlib", "inspect", "ctypes", "subprocess", "socket",
                        "_getframe", "f_globals", "f_locals", "f_back", "f_builtins", "tb_frame", "gi_frame",
                        "cr_frame", "ag_frame", "_C", "_ops", "ops", "_dynamo", "_pop_mode", "_push_mode"}
_DUNDER = re.compile(r"__\w+__")


def check_source(source: str) -> str | None:
    """None when ``source`` follows the rules, else the reason (for the student's feedback)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None                                   # the sandbox reports the syntax error itself
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name not in ALLOWED_IMPORTS:
                    return (f"imports '{a.name}': a solution cell may import only "
                            f"{sorted(ALLOWED_IMPORTS - {'__future__'})}.")
                bad = _word(a.asname or "")
                if bad:
                    return f"uses '{bad}'."
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "") not in ALLOWED_IMPORTS or node.level:
                return (f"imports from '{node.module}': a solution cell may import only "
                        f"{sorted(ALLOWED_IMPORTS - {'__future__'})}.")
            for a in node.names:
                bad = _word(a.name) or _word(a.asname or "") or _attr_word(a.name)
                if bad:
                    return f"imports '{a.name}', which {_why(bad)}"
        elif isinstance(node, ast.Name):
            bad = "course_lib" if "course_lib" in node.id else None     # imported names are checked above
            if bad:
                return f"uses '{node.id}', which {_why(bad)}"
            if node.id in FORBIDDEN_CALLS:
                return f"uses '{node.id}', which solution cells may not use."
            if _DUNDER.fullmatch(node.id) and node.id not in ALLOWED_DUNDERS:
                return f"uses '{node.id}', which solution cells may not use."
        elif isinstance(node, ast.Attribute):
            bad = _word(node.attr) or _attr_word(node.attr)
            if bad:
                return f"uses '.{node.attr}', which {_why(bad)}"
            if (_DUNDER.fullmatch(node.attr) and node.attr not in ALLOWED_DUNDERS) or node.attr in FORBIDDEN_ATTRIBUTES:
                return f"uses '.{node.attr}', which solution cells may not use."
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            bad = _word(node.value) or _attr_word(node.value)
            if bad and not _is_docstring_like(node.value):
                return f"mentions '{bad}' in a string, which {_why(bad)}"
            if _DUNDER.search(node.value) and any(m not in ALLOWED_DUNDERS for m in _DUNDER.findall(node.value)) \
                    and not _is_docstring_like(node.value):
                return "uses a dunder name in a string, which solution cells may not use."
    return None


def _is_docstring_like(text: str) -> bool:
    return "\n" in text or " " in text.strip()


def _word(name: str) -> str | None:
    for w in FORBIDDEN_WORDS:
        if w in name:
            return w
    return None


def _attr_word(name: str) -> str | None:
    for w in FORBIDDEN_ATTRIBUTE_WORDS:
        if w in name:
            return w
    return None


def _why(word: str) -> str:
    if word == "course_lib":
        return "is the reference solution: the exercise asks for your own implementation."
    return "delegates the work to PyTorch's ready-made attention: the exercise asks for the explicit computation."
