"""A Sphinx math renderer that writes MathML at build time (latex2mathml), so pages need no MathJax.

Browsers draw MathML themselves (Chromium since 109, Firefox, Safari); the feedback pages of the
autograder use the same converter (grader/course_grader/feedback.py).

What a screen reader hears: every formula's ``<math>`` carries an ``aria-label``, its LaTeX said in
words (:func:`spoken`: ``\\frac{QK^\\top}{\\sqrt{d_k}}`` is "fraction, Q K transpose, over square
root of d sub k, end fraction"). Without it Chromium exposes MathML's letters as
mathematical-italic code points (𝑑, U+1D451), which espeak-ng spells out code point by code point,
and a heading that holds a formula loses it from its name ("4. Why divide by ?"). A multi-letter
subscript or superscript (``d_{model}``) is one identifier, one word, not five letters.
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from latex2mathml.converter import convert

GREEK = {name: name for name in (
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho "
    "sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega"
).split()}
GREEK.update({"varepsilon": "epsilon", "vartheta": "theta", "varphi": "phi"})
WORDS = {
    "cdot": "times", "times": "times", "in": "in", "approx": "approximately equals", "le": "less than or equal to",
    "leq": "less than or equal to", "ge": "greater than or equal to", "geq": "greater than or equal to",
    "ne": "not equal to", "neq": "not equal to", "to": "to", "rightarrow": "to", "leftarrow": "gets",
    "mapsto": "maps to", "sum": "sum", "prod": "product", "dots": "dot dot dot", "ldots": "dot dot dot",
    "cdots": "dot dot dot", "infty": "infinity", "partial": "partial", "nabla": "nabla",
    "odot": "element-wise times", "mid": "given", "ell": "ell", "pm": "plus or minus", "sim": "distributed as",
    "setminus": "minus", "bmod": "mod", "log": "log", "ln": "natural log", "exp": "exp", "sin": "sine",
    "cos": "cosine", "tanh": "tanh", "max": "max", "min": "min", "arg": "arg", "lVert": "norm of",
    "rVert": "end norm", "|": "norm", "{": "open brace", "}": "close brace", "top": "transpose",
    "propto": "proportional to", "forall": "for all", "otimes": "tensor product", "circ": "composed with",
}
SILENT = {"big", "Big", "bigg", "Bigg", "left", "right", "textstyle", "displaystyle", ",", ";", "!", ":", " ",
          "quad", "qquad", "limits", "nolimits", "bigl", "bigr", "Bigl", "Bigr"}
TEXT_COMMANDS = {"text", "mathrm", "operatorname", "mathbf", "mathit", "mathsf", "mathtt", "textrm", "textbf",
                 "mathcal", "boldsymbol", "mathbb"}
ACCENTS = {"hat": "hat", "bar": "bar", "tilde": "tilde", "vec": "vector", "dot": "dot", "overline": "bar"}
SYMBOLS = {"+": "plus", "-": "minus", "=": "equals", "<": "less than", ">": "greater than", "/": "divided by",
           "*": "times", "'": "prime", "&": " ", "~": " "}
TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[A-Za-z]+|\d+(?:\.\d+)?|\S")
SUPERSCRIPTS = {"2": "squared", "3": "cubed", "transpose": "transpose", "-1": "inverse", "minus 1": "inverse"}


class _Speech:
    """A recursive reader of LaTeX tokens that says each construct in words."""

    def __init__(self, latex: str):
        self.tokens = TOKEN.findall(latex)
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str | None:
        tok = self.peek()
        self.i += tok is not None
        return tok

    def group_text(self) -> str:
        """The raw text of the next ``{...}`` (or token), for \\text and \\begin."""
        if self.peek() != "{":
            return self.take() or ""
        self.take()
        depth, out = 1, []
        while self.peek() is not None:
            tok = self.take()
            depth += {"{": 1, "}": -1}.get(tok, 0)
            if depth == 0:
                break
            out.append(tok)
        return " ".join(t.lstrip("\\") for t in out)

    def argument(self, letters_as_word: bool = False) -> list[str]:
        """The words of the next argument: a ``{...}`` group or one token."""
        if self.peek() == "{":
            self.take()
            return self.sequence(until="}", letters_as_word=letters_as_word)
        return self.atom(self.take(), letters_as_word) if self.peek() is not None else []

    def sequence(self, until: str | None = None, letters_as_word: bool = False) -> list[str]:
        words: list[str] = []
        base_is_big_operator = False
        while self.peek() is not None:
            tok = self.take()
            if tok == until:
                break
            if tok in ("^", "_"):
                arg = self.argument(letters_as_word=True)
                said = " ".join(arg)
                if base_is_big_operator:
                    words += ["from" if tok == "_" else "to", *arg]
                elif tok == "_":
                    words += ["sub", *arg] + (["end sub"] if len(arg) > 2 else [])
                elif said in SUPERSCRIPTS:
                    words.append(SUPERSCRIPTS[said])
                elif len(arg) == 1 and arg[0].isalpha():         # W^Q, the paper's labels: not a power
                    words += ["superscript", *arg]
                else:
                    words += ["to the power", *arg] + (["end power"] if len(arg) > 2 else [])
                continue
            base_is_big_operator = tok in ("\\sum", "\\prod", "\\max", "\\min", "\\arg")
            words += self.atom(tok, letters_as_word)
        return words

    def atom(self, tok: str, letters_as_word: bool = False) -> list[str]:
        if tok == "{":
            return self.sequence(until="}", letters_as_word=letters_as_word)
        if tok.startswith("\\"):
            return self.command(tok[1:])
        if tok.isalpha():                   # ``QK`` is Q times K; ``pos`` and ``_{model}`` are one word each
            return [tok] if letters_as_word or len(tok) >= WORD else list(tok)
        if tok in SYMBOLS:
            return [SYMBOLS[tok]] if SYMBOLS[tok].strip() else []
        if tok == "}":
            return []
        return [tok]

    def command(self, name: str) -> list[str]:
        if name in ("frac", "tfrac", "dfrac"):
            top, bottom = self.argument(), self.argument()
            if len(top) == 1 and len(bottom) == 1:
                return [*top, "over", *bottom]
            return ["fraction,", *top, ", over", *bottom, ", end fraction"]
        if name == "sqrt":
            index = []
            if self.peek() == "[":
                self.take()
                while self.peek() not in (None, "]"):
                    index += self.atom(self.take())
                self.take()
            body = self.argument()
            head = [*index, "th root of"] if index else ["square root of"]
            return [*head, *body] + ([", end root"] if len(body) > 1 else [])
        if name in TEXT_COMMANDS:
            text = self.group_text()
            return ["the reals"] if name == "mathbb" and text == "R" else [text]
        if name in ACCENTS:
            return [*self.argument(), ACCENTS[name]]
        if name == "underbrace":
            return self.argument()
        if name in ("begin", "end"):
            self.group_text()
            return []
        if name == "\\":
            return [","]
        if name in ("quad", "qquad"):
            return [","]
        if name in SILENT:
            return []
        if name in GREEK:
            return [GREEK[name]]
        if name in WORDS:
            return [WORDS[name]]
        return [name]


def spoken(latex: str) -> str:
    """What a screen reader should say for ``latex``: its symbols in words, one space between."""
    words = " ".join(w for w in _Speech(latex).sequence() if w)
    words = re.sub(r"\s+([,.])", r"\1", words)
    words = re.sub(r",(\s*,)+", ",", words)                  # \quad after a comma: one pause
    return re.sub(r"\s+", " ", words).strip(" ,")


LETTER_RUN = re.compile(r"([_^])\{([A-Za-z]{2,})\}")
UPRIGHT_LETTERS = re.compile(r'(?:<mi mathvariant="normal">[A-Za-z]</mi>){2,}|(?:<mi>[A-Za-z]</mi>){3,}')
WORD = 3                  # a run of this many letters or more is a word (``pos``); ``QK`` stays Q times K


def _one_identifier(match: re.Match) -> str:
    word = "".join(re.findall(r">([A-Za-z])<", match.group(0)))
    return f"<mi>{word}</mi>"             # a multi-letter <mi> is upright and read as one word


def _mathml(latex: str, display: bool) -> str:
    latex = latex.strip()
    source = LETTER_RUN.sub(lambda m: f"{m.group(1)}{{\\mathrm{{{m.group(2)}}}}}", latex)
    markup = convert(source, display="block" if display else "inline")
    markup = UPRIGHT_LETTERS.sub(_one_identifier, markup)
    return markup.replace("<math ", f'<math aria-label="{html.escape(spoken(latex), quote=True)}" ', 1)


def visit_math(self, node):
    self.body.append(f'<span class="math notranslate">{_mathml(node.astext(), False)}</span>')
    raise nodes.SkipNode


def visit_displaymath(self, node):
    latex = node["latex"] if "latex" in node else node.astext()
    self.body.append(f'<div class="math notranslate">{_mathml(latex, True)}</div>')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_displaymath, None))
    app.config.html_math_renderer = "mathml"
    return {"parallel_read_safe": True, "parallel_write_safe": True}
