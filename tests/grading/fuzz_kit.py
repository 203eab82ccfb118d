"""What the fuzzers (tests/grading/test_fuzz_*.py) check: their promises, written once."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import HealthCheck, settings


def fuzz(examples: int) -> settings:
    """Every fuzzer's budget: a fixed number of examples, reproducible in CI (derandomize), no deadline
    per example on a loaded machine, no example database."""
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))

_ELEMENTS = {"script", "iframe", "frame", "frameset", "object", "embed", "form", "base", "link", "applet",
             "foreignobject", "use", "animate", "set"}
_URLS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "background", "content"}


class _Active(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in _ELEMENTS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = re.sub(r"[\x00-\x20]", "", value or "")          # as a browser reads a URL
            if name.startswith("on"):
                self.found.append(f"{tag} {name}")
            elif name in _URLS and re.search(r"(?i)(^|url=)(javascript|vbscript|data:text/html)", value):
                self.found.append(f"{tag} {name}={value[:40]}")
            elif name == "http-equiv" and "refresh" in value.lower():
                self.found.append("meta refresh")


def active_html(page: str) -> list[str]:
    """What in ``page`` a browser could run: script, frame, object, embed, form, base or link elements,
    event handlers, a meta refresh, and ``javascript:``, ``vbscript:`` or ``data:text/html`` URLs in
    attributes, read as a browser's parser reads them (character references decoded, control bytes
    dropped); text that merely spells them is not active."""
    parser = _Active()
    parser.feed(page)
    parser.close()
    return parser.found


#: CSS that moves, hides, covers or replaces what the page shows (a verdict hidden, a fake one on top)
RESTYLES = re.compile(r"(?i)^\s*(position|display|visibility|z-index|top|left|right|bottom|inset|margin[\w-]*|"
                      r"transform[\w-]*|content|float|clip[\w-]*|overflow[\w-]*|width|height|(max|min)-\w+|"
                      r"background(-image)?|mask[\w-]*|filter)\s*:")
_LOADS = {"src", "srcset", "poster", "background", "data", "action", "formaction", "lowsrc", "dynsrc"}


class _Loads(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.in_head = False
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "head":
            self.in_head = True
        elif tag == "body":
            self.in_head = False
        if tag == "style" and not self.in_head:
            self.found.append("<style> outside the head")
        if tag in ("link", "import"):
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = value or ""
            if name in _LOADS and not value.strip().lower().startswith("data:image/"):
                self.found.append(f"{tag} {name}={value[:40]}")
            if name in ("href", "xlink:href") and tag in ("image", "use", "feimage", "script"):
                self.found.append(f"{tag} {name}")
            if re.search(r"(?i)url\s*\(\s*['\"]?(?!#)", value) or "@import" in value.lower():
                self.found.append(f"{tag} {name}: url()")
            if name == "style" and any(RESTYLES.match(d) for d in value.split(";")):
                self.found.append(f"{tag} style={value[:40]}")

    def handle_endtag(self, tag):
        if tag == "head":
            self.in_head = False


def loads_or_restyles(page: str) -> list[str]:
    """What in ``page`` a browser would load from elsewhere (an image, a style sheet, a font, a ``url()``
    but within the page) or what could restyle the page (a ``<style>`` outside its head, a ``style``
    attribute that moves, hides or covers)."""
    parser = _Loads()
    parser.feed(page)
    parser.close()
    return parser.found
