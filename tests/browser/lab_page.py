"""Page helpers for JupyterLab in Chromium: open a notebook, run it, look at what it shows, drive
its widgets, press nbgrader's buttons, take screenshots.

The JavaScript these helpers run in the page lives beside this file in js/*.js, one function per
file; `js_function(name)` loads it with `findPanel(path)` (js/find_panel.js) in scope. Everything
goes through `window.jupyterapp` (the server runs with --LabApp.expose_app_in_browser=True). Every
wait is bounded.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from pathlib import Path

JS_DIR = Path(__file__).resolve().parent / "js"


@functools.cache
def js_function(name: str) -> str:
    """The page function of js/<name>.js, with `findPanel` defined for it."""
    body = (JS_DIR / f"{name}.js").read_text()
    if name == "find_panel":
        return body
    return (f"(arg) => {{ const findPanel = {_strip_comments(js_function('find_panel'))};\n"
            f"return ({_strip_comments(body)})(arg); }}")


def _strip_comments(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//")).strip()


def run_js(page, name: str, arg=None):
    return page.evaluate(js_function(name), arg)


@dataclass
class RunResult:
    seconds: float
    state: dict


def lab_url(base: str, path: str, token: str | None = None) -> str:
    """The URL that opens `path` in JupyterLab at `base` (a server's URL, or a hub's /user/<name>)
    in a reset workspace (no tabs left from an earlier test)."""
    query = "reset" + (f"&token={token}" if token else "")
    return f"{base}/lab/tree/{path}?{query}"


def wait_for_lab(page, timeout: float = 60.0) -> None:
    """Wait until JupyterLab has started, restored its workspace and removed its splash screen."""
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=timeout * 1000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    page.locator("#jupyterlab-splash").wait_for(state="detached", timeout=timeout * 1000)


def open_notebook(page, base: str, path: str, token: str | None = None, timeout: float = 60.0) -> None:
    """Open `path` (relative to the server root) in a reset workspace; wait for an idle kernel."""
    page.goto(lab_url(base, path, token), wait_until="domcontentloaded", timeout=timeout * 1000)
    wait_for_lab(page, timeout)
    page.wait_for_function(
        "(path) => { const s = (" + js_function("notebook_state") + ")(path);"
        " return s.found && s.ready && s.kernel === 'idle'; }",
        arg=path, timeout=timeout * 1000,
    )


def notebook_state(page, path: str) -> dict:
    return run_js(page, "notebook_state", path)


def accept_dialog(page, timeout: float) -> None:
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(state="visible", timeout=timeout * 1000)
    dialog.locator(".jp-Dialog-button.jp-mod-accept").click(timeout=timeout * 1000)
    dialog.wait_for(state="hidden", timeout=timeout * 1000)


def restart_and_run_all(page, path: str, timeout: float = 120.0) -> RunResult:
    """Clear outputs, then "Restart Kernel and Run All Cells" (answering its dialog); wait until
    the kernel is idle and every non-empty code cell has run (or the run stopped at an error)."""
    run_js(page, "activate_and_clear", path)
    t0 = time.monotonic()
    # Not awaited: the command resolves only after its confirmation dialog is answered.
    page.evaluate("() => { window.__runAll = window.jupyterapp.commands.execute('notebook:restart-run-all'); }")
    accept_dialog(page, 20)
    deadline = t0 + timeout
    stable = 0
    state: dict = {}
    dead_since = None
    while time.monotonic() < deadline:
        state = notebook_state(page, path)
        # 'unknown' / 'restarting' are normal for a moment during the restart
        if state.get("kernel") in ("dead", "unknown", None, "autorestarting"):
            dead_since = dead_since or time.monotonic()
            if state.get("kernel") == "dead" or time.monotonic() - dead_since > 30:
                raise AssertionError(f"{path}: the kernel died (status {state.get('kernel')})")
        else:
            dead_since = None
        done = (state.get("kernel") == "idle" and state.get("pending") == 0
                and (state.get("executed") == state.get("code") or state.get("errors")))
        stable = stable + 1 if done else 0
        if stable >= 3:
            return RunResult(time.monotonic() - t0, state)
        time.sleep(0.5)
    raise AssertionError(
        f"{path}: not finished after {timeout:.0f} s (kernel {state.get('kernel')}, "
        f"{state.get('executed')}/{state.get('code')} code cells run, {state.get('pending')} pending)"
    )


def run_cell(page, path: str, index: int, timeout: float = 60.0) -> dict:
    """Run code cell `index` alone (after a run that stopped at an error, the cells below it); wait
    until it has its execution count and the kernel is idle. Returns the notebook's state. For a
    notebook of code cells only (`index` is then also its place among notebook_state's counts)."""
    assert run_js(page, "run_cell", [path, index]), f"{path} is not open"
    deadline, stable, state = time.monotonic() + timeout, 0, {}
    while time.monotonic() < deadline:
        state = notebook_state(page, path)
        done = (state.get("kernel") == "idle" and state.get("pending") == 0
                and state.get("counts", [None] * (index + 1))[index] is not None)
        stable = stable + 1 if done else 0
        if stable >= 2:
            return state
        time.sleep(0.3)
    raise AssertionError(f"{path}: cell {index} not run after {timeout:.0f} s (kernel {state.get('kernel')})")


def page_problems(page, path: str) -> dict:
    return run_js(page, "page_problems", path)


def wait_images_loaded(page, path: str, timeout: float = 20.0) -> list[dict]:
    """Wait (bounded) until every <img> in the notebook has loaded; return those that did not."""
    deadline = time.monotonic() + timeout
    bad: list[dict] = []
    while time.monotonic() < deadline:
        bad = [im for im in page_problems(page, path)["images"]
               if not (im["complete"] and im["naturalWidth"] > 0)]
        if not bad:
            return []
        time.sleep(0.5)
    return bad


def markdown_images(page, path: str) -> list[dict]:
    return run_js(page, "markdown_images", path) or []


# ---- widgets ------------------------------------------------------------------------------

def widget_controls(page, path: str, index: int) -> dict:
    return run_js(page, "widget_controls", [path, index])


def cell_images(page, path: str, index: int) -> list[dict]:
    return run_js(page, "cell_images", [path, index])


def cell_output_text(page, path: str, index: int) -> str:
    return run_js(page, "cell_output_text", [path, index])


def keyboard_walk(page, path: str, index: int) -> tuple[list[str], list[str]]:
    """Tab through the widget view of cell `index` like a keyboard user (WCAG 2.1.1 and 2.4.7).

    The walk starts on a focusable marker put just before the view (js/widget_tab_walk.js): not a
    code editor, where Tab indents, and not inside a control. Each Tab's document.activeElement is
    recorded until the focus leaves the view. Every part that takes the focus (a slider's handle and
    its editable readout, a text field, a select, a button) must be reached, and, while focused,
    show it: the site's criterion (an outline of at least 2 px, tests/site/test_accessibility.py).
    Returns (problems, the parts in the order reached)."""
    parts = run_js(page, "widget_tab_walk", [path, index])
    if not parts:
        return ["no part of the widget takes the keyboard focus"], []
    names = {p["tag"]: f"{p['control'] or '?'}: {p['what']}" for p in parts}
    start = page.locator("[data-browser-test-kbd-start]").first
    start.scroll_into_view_if_needed(timeout=10_000)
    start.focus(timeout=5_000)
    reached, looks, trail = [], {}, []
    for _ in range(len(parts) + 3):
        page.keyboard.press("Tab")
        page.wait_for_timeout(100)
        now = run_js(page, "focus_look", [None])
        trail.append(names.get(now["tag"], now["what"]))
        if now["tag"] is None:
            break                                   # the focus left the widget view
        if now["tag"] in looks:
            break                                   # round once
        reached.append(now["tag"])
        looks[now["tag"]] = now
    problems = []
    missed = [names[p["tag"]] for p in parts if p["tag"] not in looks]
    if missed:
        problems.append(f"never reached with Tab: {missed} (Tab went to {trail})")
    if reached != [p["tag"] for p in parts][:len(reached)]:
        problems.append(f"Tab order is not the page order: {trail}")
    for tag, look in looks.items():
        if not look["outline"]:
            blurred = run_js(page, "focus_look", [tag])
            problems.append(f"{names[tag]}: no visible focus outline (focused: {look['look']}; "
                            f"not focused: {blurred['look']})")
    return problems, [names[t] for t in reached]


def change_control(page, control: dict) -> tuple[bool, str]:
    """Change one ipywidgets control like a user would (keys, a select, typing + Enter).

    Returns (whether the control's value changed, what was done)."""
    loc = page.locator(f'[data-browser-test-control="{control["id"]}"]')
    loc.scroll_into_view_if_needed(timeout=10_000)
    kind = control["kind"]
    if kind == "slider":
        readout = loc.locator(".widget-readout").first
        before = readout.inner_text(timeout=5_000)
        loc.locator(".noUi-handle").first.focus(timeout=5_000)
        for key in ("ArrowRight", "ArrowLeft"):
            page.keyboard.press(key)
            page.wait_for_timeout(300)
            after = readout.inner_text(timeout=5_000)
            if after != before:
                return True, f"slider {before!r} -> {after!r} ({key})"
        return False, f"slider stuck at {before!r}"
    if kind == "dropdown":
        sel = loc.locator("select").first
        options = sel.locator("option").all_inner_texts()
        if len(options) < 2:
            return False, "dropdown with one option"
        current = sel.evaluate("s => s.selectedIndex")
        target = (current + 1) % len(options)
        sel.select_option(index=target, timeout=5_000)
        return True, f"dropdown {options[current]!r} -> {options[target]!r}"
    if kind == "text":
        inp = loc.locator("input, textarea").first
        value = inp.input_value()
        if re.fullmatch(r"\s*-?\d+\s*", value):
            new = str(int(value) + 1)
        elif re.fullmatch(r"\s*-?\d*\.\d*(e-?\d+)?\s*", value):
            new = repr(float(value) * 1.5 + 0.1)
        else:  # e.g. the positional-encoding explorer's "dims": comma-separated indices
            new = "2, 3" if value.replace(" ", "") != "2,3" else "0, 1"
        inp.fill(new, timeout=5_000)
        inp.press("Enter")
        inp.press("Tab")  # commit on blur too (continuous_update=False)
        return True, f"text {value!r} -> {new!r}"
    if kind in ("toggle", "radio"):
        opts = loc.locator("button, input[type=radio]")
        for i in range(opts.count()):
            o = opts.nth(i)
            if not o.evaluate("e => e.classList.contains('mod-active') || e.checked === true"):
                o.click(timeout=5_000)
                return True, f"{kind} option {i}"
        return False, f"{kind}: nothing to change"
    if kind == "checkbox":
        loc.locator("input").first.click(timeout=5_000)
        return True, "checkbox toggled"
    raise ValueError(kind)


# ---- screenshots ---------------------------------------------------------------------------

def full_notebook_screenshot(page, path: str, out: Path, max_height: int = 40000) -> Path:
    """Screenshot of the whole notebook: the viewport is made as tall as the notebook."""
    out.parent.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size or {"width": 1280, "height": 900}
    try:
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        page.wait_for_timeout(300)
        dims = run_js(page, "notebook_height", path)
        if dims:
            height = min(max_height, size["height"] + max(0, dims["scroll"] - dims["client"]) + 40)
            page.set_viewport_size({"width": size["width"], "height": int(height)})
            page.wait_for_timeout(800)
        page.screenshot(path=str(out), full_page=True, timeout=60_000)
    finally:
        page.set_viewport_size(size)
    return out


# ---- nbgrader --------------------------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def set_cell_source(page, path: str, grade_id: str, source: str) -> bool:
    """Type `source` into the cell with nbgrader grade_id `grade_id` (False: no such cell)."""
    return run_js(page, "set_cell_source", [path, grade_id, source])


def save_notebook(page, path: str, notebook: dict) -> dict:
    """Write `notebook` (nbformat JSON) to `path` through the contents API, as the page's user."""
    return run_js(page, "save_notebook", [path, notebook])


def run_validate(page, timeout: float = 240.0, screenshot: Path | None = None) -> dict:
    """Press nbgrader's Validate button; return the result dialog's title, class, text and, for each
    failed cell, its source and the error shown under it."""
    button = page.locator(".validate-button").first
    button.wait_for(state="visible", timeout=30_000)
    button.click(timeout=10_000)
    dialog = page.locator(".jp-Dialog").filter(has=page.locator("#validation-message, .jp-Dialog-header"))
    dialog.first.wait_for(state="visible", timeout=timeout * 1000)
    d = dialog.first
    title = d.locator(".jp-Dialog-header").inner_text(timeout=5_000).strip()
    msg = d.locator("#validation-message")
    result = {"title": title, "classes": "", "failures": [], "failed_sources": [],
              "text": d.inner_text(timeout=5_000)}
    if msg.count():
        result["classes"] = msg.get_attribute("class") or ""
        result["failures"] = [{"source": f["source"], "error": ANSI.sub("", f["error"])}
                              for f in msg.evaluate(js_function("validation_failures"))]
        result["failed_sources"] = [f["source"] for f in result["failures"]]
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), timeout=30_000)
    d.locator(".jp-Dialog-button.jp-mod-accept").click(timeout=10_000)
    d.wait_for(state="hidden", timeout=10_000)
    return result
