"""The course website (`make site`): built offline from the stored notebooks, checked in Chromium.

The site is built once per session and served on 127.0.0.1 (tests/site/conftest.py). Every page must
load without a console error and without a request outside the site; every image must show; search
must work offline; the maths must be drawn; and nothing of the exercise's solutions or hidden tests
may be published. tests/site/test_accessibility.py checks the same pages for WCAG 2.1 AA.
"""

from __future__ import annotations

import json
import re

import pytest

from sitekit import ROOT, pages, site_build

SCREENSHOTS = ROOT / "screenshots"
SOURCE = ROOT / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"


def test_a_page_per_notebook(site):
    for nb in [*site_build.lectures(), SOURCE]:
        rel = nb.relative_to(ROOT).with_suffix(".html")
        assert (site / rel).is_file(), f"no page for {nb.relative_to(ROOT)}"
        how = re.search(r'href="([^"]*open\.html)">how to open a notebook<', (site / rel).read_text())
        assert how and ((site / rel).parent / how.group(1)).resolve().is_file(), f"{rel}: its 'how' link is broken"
    for page in ("index.html", "api.html", "open.html", "search.html", "docs/instructors.html"):
        assert (site / page).is_file(), page
    assert not list(site.rglob("rubric*")), "the rubric (Part 9's model answers) is published"
    assert "rubric.md" in (site / "docs" / "instructors.html").read_text(), "the pointer to the rubric is gone"
    assert "course_lib.attention.MultiHeadAttention" in (site / "api.html").read_text(), "no API reference"


PAGE = """# References

```{py:function} course_lib.masks.causal_mask(seq_len)

Documented on this page.
```

See {py:func}`course_lib.masks.%s`.
"""


@pytest.mark.parametrize("target,builds", [("causal_mask", True), ("no_such_mask", False)])
def test_a_reference_to_nothing_fails_the_build(tmp_path, target, builds):
    """site/build.py's Sphinx run with site/conf.py, on one page: a reference that resolves builds, one
    that resolves to nothing fails the build (nitpicky, and a warning is an error) and is named."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "index.md").write_text(PAGE % target)
    proc = site_build.sphinx(tmp_path / "src", tmp_path / "out" / "site", capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    assert (proc.returncode == 0) == builds, output
    assert ("reference target not found: course_lib.masks.no_such_mask" in output) == (not builds), output


def test_practice_is_marked_and_its_solutions_are_behind_a_click(site):
    for nb_path in site_build.lectures():
        nb = json.loads(nb_path.read_text())
        exercises = sum("exercise" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])
        html = (site / nb_path.relative_to(ROOT).with_suffix(".html")).read_text()
        name = nb_path.name
        assert html.count("tag_exercise") == exercises, f"{name}: practice cells not marked"
        sources = ["".join(c["source"]) for c in nb["cells"] if "solution" in c.get("metadata", {}).get("tags", [])]
        folded = [src for src in sources if re.match(r"\s*<details>\s*<summary>", src)]
        assert len(folded) == len(sources), f"{name}: {len(sources) - len(folded)} solutions not in a closed <details>"
        shown = len(re.findall(r"<details>\s*<summary>", html))
        assert shown >= len(sources), f"{name}: {shown} collapsed blocks on the page for {len(sources)} solutions"
        assert "<details open" not in html, f"{name}: a solution or answer shown open"


def _solution_lines() -> set[str]:
    """Substantive lines of the exercise's solutions and hidden tests that a student's copy lacks
    (lines the notebook also shows outside those blocks, or that course_lib ships, are left out)."""
    nb = json.loads(SOURCE.read_text())
    block = re.compile(r"### BEGIN (?:SOLUTION|HIDDEN TESTS)(.*?)### END (?:SOLUTION|HIDDEN TESTS)", re.S)
    texts = ["".join(cell["source"]) for cell in nb["cells"]]
    public = "\n".join(block.sub("", t) for t in texts)
    public += "\n".join(p.read_text() for p in (ROOT / "course_lib").rglob("*.py"))
    lines = set()
    for text in texts:
        for found in block.findall(text):
            for line in found.splitlines():
                line = line.strip()
                if len(line) >= 20 and not line.startswith("#") and line not in public:
                    lines.add(line)
    return lines


def test_nothing_of_the_solutions_is_published(site):
    secret = _solution_lines()
    seeds = set(re.findall(r"hidden_seed=(0x[0-9a-f]+)", SOURCE.read_text()))
    assert secret and seeds, "the source notebook has no solutions or seeds: the test would prove nothing"
    for path in site.rglob("*"):
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        where = path.relative_to(site)
        if "notebooks" in where.parts:          # the guides may name the markers; no notebook page may hold one
            for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
                assert marker not in text, f"{where}: {marker}"
        for seed in seeds:
            assert seed not in text, f"{where}: a hidden seed"
        leaked = [line for line in secret if line in text]
        assert not leaked, f"{where}: solution lines published: {leaked[:3]}"


BROKEN_IMAGES = """async () => {
  const broken = [];
  for (const img of document.querySelectorAll('img')) {
    img.loading = 'eager';
    try { await img.decode(); } catch (e) {}
    if (!img.complete || img.naturalWidth === 0) broken.push(img.getAttribute('src'));
  }
  return broken;
}"""


@pytest.mark.browser
def test_every_page_loads_offline_with_its_images(site, browser):
    origin, context = browser
    problems = []
    page = context.new_page()
    current = {"url": ""}
    page.on("console", lambda m: m.type == "error" and problems.append(f"{current['url']}: console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"{current['url']}: page error: {e}"))
    page.on("request", lambda r: r.url.startswith((origin, "data:", "blob:", "about:"))
            or problems.append(f"{current['url']}: request outside the site: {r.url}"))
    # a request the next navigation cut short (net::ERR_ABORTED, the favicon under load) is no missing
    # file: a missing one answers 404, which the response handler reports
    page.on("requestfailed", lambda r: r.failure == "net::ERR_ABORTED"
            or problems.append(f"{current['url']}: failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{current['url']}: HTTP {r.status}: {r.url}"))
    visited = pages(site)
    assert len(visited) >= 15, [str(p) for p in visited]
    for html in visited:
        rel = html.relative_to(site).as_posix()
        current["url"] = rel
        response = page.goto(f"{origin}/{rel}", wait_until="load")
        if response is None or response.status != 200:
            problems.append(f"{rel}: HTTP {response and response.status}")
            continue
        broken = page.evaluate(BROKEN_IMAGES)
        problems += [f"{rel}: image does not show: {src}" for src in broken]
        page.wait_for_load_state("networkidle")     # the favicon too: leaving earlier would abort its request
    page.close()
    assert not problems, "\n".join(problems[:40])


@pytest.mark.browser
def test_search_finds_positional_encoding(browser):
    origin, context = browser
    page = context.new_page()
    page.goto(f"{origin}/search.html?q=positional+encoding")
    page.wait_for_selector("#search-results ul.search li", timeout=30_000)
    hits = page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(e => e.getAttribute('href'))")
    page.close()
    assert any("05_positional_encodings" in h for h in hits), hits


@pytest.mark.browser
def test_the_maths_is_drawn(browser):
    origin, context = browser
    page = context.new_page()
    page.goto(f"{origin}/notebooks/02_attention.html")
    info = page.evaluate("""() => {
      const maths = [...document.querySelectorAll('article math')].filter(m => !m.closest('details:not([open])'));
      const sizes = maths.slice(0, 20).map(m => m.getBoundingClientRect().height);
      return {count: document.querySelectorAll('math').length, errors: document.querySelectorAll('merror').length,
              drawn: sizes.filter(h => h > 5).length, sampled: sizes.length};
    }""")
    page.close()
    assert info["count"] >= 5 and info["errors"] == 0 and info["drawn"] == info["sampled"], info


@pytest.mark.browser
def test_screenshots(browser):
    origin, context = browser
    SCREENSHOTS.mkdir(exist_ok=True)
    page = context.new_page()
    for name, rel in (("site_home", "index.html"), ("site_lecture", "notebooks/02_attention.html"),
                      ("site_exercise", "notebooks/07_exercise/encoder_from_scratch.html")):
        page.goto(f"{origin}/{rel}", wait_until="load")
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=False)
        assert path.stat().st_size > 10_000, f"{name}: an empty screenshot"
    page.close()
