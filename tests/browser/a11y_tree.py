"""What a screen reader finds in a page: Chromium's own accessibility tree, read over CDP.

Playwright's ``aria_snapshot`` computes names with its own script; a screen reader gets Chromium's
tree, so these helpers ask Chromium (``Accessibility.queryAXTree`` under a DOM node,
``Accessibility.getPartialAXTree`` for one node). Used by tests/browser/test_lab_accessibility_tree.py and
tests/browser/test_lecture_notebooks.py (JupyterLab).
"""

from __future__ import annotations

import re

#: roles a user operates: each must have a name
CONTROL_ROLES = ("button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox",
                 "slider", "spinbutton", "switch", "tab", "menuitem")
#: mathematical alphanumeric symbols (𝑑 is U+1D451): espeak-ng spells them out code point by code point
MATH_ALPHANUMERIC = re.compile("[\U0001D400-\U0001D7FF]")


class Tree:
    """Chromium's accessibility tree of ``page`` through one CDP session."""

    def __init__(self, page):
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("DOM.enable")
        self.cdp.send("Accessibility.enable")
        self.root = self.cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]

    def nodes(self, selector: str) -> list[int]:
        """DOM node ids of ``selector``."""
        return self.cdp.send("DOM.querySelectorAll", {"nodeId": self.root, "selector": selector})["nodeIds"]

    def query(self, node_id: int, role: str) -> list[dict]:
        """The exposed (not ignored) accessibility nodes of ``role`` under DOM node ``node_id``."""
        found = self.cdp.send("Accessibility.queryAXTree", {"nodeId": node_id, "role": role})["nodes"]
        return [n for n in found if not n.get("ignored")]

    def everything(self) -> list[dict]:
        """Every exposed node of the page's tree (one call; MathML's roles are Chromium's own names,
        ``MathMLMath`` for ``<math>``, which ``queryAXTree`` does not match by role)."""
        return [n for n in self.cdp.send("Accessibility.getFullAXTree")["nodes"] if not n.get("ignored")]

    def node(self, node_id: int) -> dict:
        """The accessibility node of one DOM node (its name, role, properties)."""
        return self.cdp.send("Accessibility.getPartialAXTree", {"nodeId": node_id, "fetchRelatives": False})[
            "nodes"][0]

    def text(self, node: dict) -> str:
        """What a screen reader reads inside the exposed node ``node``: the text nodes of its subtree, in
        order, whitespace collapsed (text under ``aria-hidden`` is not in the tree, so not read)."""
        texts = self.cdp.send("Accessibility.queryAXTree", {"backendNodeId": node["backendDOMNodeId"],
                                                           "role": "StaticText"})["nodes"]
        return " ".join("".join(str((n.get("name") or {}).get("value", "")) for n in texts
                                if not n.get("ignored")).split())

    def close(self) -> None:
        self.cdp.detach()


def name(node: dict) -> str:
    return str((node.get("name") or {}).get("value", "")).strip()


def role(node: dict) -> str:
    return str((node.get("role") or {}).get("value", ""))


def prop(node: dict, key: str):
    for p in node.get("properties", []):
        if p.get("name") == key:
            return p.get("value", {}).get("value")
    return None


MATH_ROLES = ("math", "MathMLMath")


def unnamed_controls(tree: Tree, node_id: int, where: str) -> list[str]:
    """A line for each control under ``node_id`` that has no accessible name."""
    return [f"{where}: a {r} has no name" for r in CONTROL_ROLES for n in tree.query(node_id, r) if not name(n)]


VERDICT_LINE = re.compile(r"^\s*(✓|✗|○|hint:|Part \d+: all)")
OUTPUT_AREAS = ".jp-Notebook .jp-Cell .jp-OutputArea"
OUTPUTS_JS = """(sel) => [...document.querySelectorAll(sel)].map(area => ({
  verdicts: [...area.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText.trim())
              .filter(t => /^(✓|✗|○|hint:|Part \\d+: all)/.test(t)),
  bareImages: [...area.querySelectorAll('.jp-OutputArea-output img')].filter(i => !i.alt).length,
}))"""


def notebook_problems(page, tree: Tree) -> tuple[list[str], list[str]]:
    """The open notebook's outputs as a screen reader finds them: (problems, what is heard).

    Each verdict line (✓, ✗, ○, a hint, a visible test's line) must sit in a polite live region
    (role status) that says it in words; an image without alt text (every output image in
    JupyterLab) needs a caption in its cell (role note, "figure description"); every control of an
    output needs a name. What is heard is each status's and each caption's text as Chromium's tree
    holds it (``Tree.text``: the marks ✓, ✗ and ○ are aria-hidden, so "wrong: ...", not "✗ wrong: ...")."""
    shown = page.evaluate(OUTPUTS_JS, OUTPUT_AREAS)
    areas = tree.nodes(OUTPUT_AREAS)
    problems, heard = [], []
    for k, (area, info) in enumerate(zip(areas, shown)):
        where = f"output {k}"
        statuses = [n for n in tree.query(area, "status") if prop(n, "live") == "polite"]
        texts = page.evaluate("([sel, k]) => [...document.querySelectorAll(sel)][k].querySelectorAll("
                              "'[role=status]').length ? [...[...document.querySelectorAll(sel)][k]"
                              ".querySelectorAll('[role=status]')].map(e => e.innerText.trim()) : []",
                              [OUTPUT_AREAS, k])
        heard += [tree.text(n) for n in statuses]
        for line in info["verdicts"]:
            if line not in texts:
                problems.append(f"{where}: {line[:80]!r} is in no live region (role status)")
            elif not re.search(r"\b(correct|wrong|not done|hint|passed)\b", line):
                problems.append(f"{where}: {line[:80]!r} does not say its verdict in words")
        if len(statuses) < len(texts):
            problems.append(f"{where}: {len(texts) - len(statuses)} status outputs are not polite live regions")
        notes = [n for n in tree.query(area, "note") if name(n) == "figure description"]
        if info["bareImages"]:
            if not notes:
                problems.append(f"{where}: {info['bareImages']} image(s) with no alt text and no caption")
        heard += [tree.text(n) for n in notes]
        problems += unnamed_controls(tree, area, where)
    return problems, heard
