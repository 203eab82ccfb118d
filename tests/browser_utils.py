"""Helpers for tests/test_browser.py: a throw-away JupyterLab server and a headless Chromium.

The server runs on 127.0.0.1 with a random token, in its own process group, with every
Jupyter/IPython/home directory in a temporary folder, serving a temporary copy of the course
files (the repository is never written). The browser is Debian's Chromium (/usr/bin/chromium)
driven by Playwright; nothing is downloaded. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# Lab settings for the throw-away config dir: every cell stays in the DOM (so all images load
# and the screenshot shows the whole notebook), no news / update pop-ups.
LAB_USER_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}
PAGE_CONFIG = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jupyter_executable() -> Path:
    """The venv's `jupyter` (beside the running interpreter, else the repo's .venv)."""
    for cand in (Path(sys.executable).parent / "jupyter", REPO / ".venv" / "bin" / "jupyter"):
        if cand.exists():
            return cand
    raise FileNotFoundError("no `jupyter` executable beside %s or in %s/.venv/bin" % (sys.executable, REPO))


def isolated_env(base: Path) -> dict:
    """Environment with Jupyter's config/data/runtime dirs, IPython's and HOME under `base`.

    Caches that are expensive to rebuild and hold no state the page shows (matplotlib's font
    cache, XDG cache) keep pointing at the real ones, so a first cell does not print
    "Matplotlib is building the font cache".
    """
    env = dict(os.environ)
    real_home = Path(os.path.expanduser("~"))
    env.setdefault("MPLCONFIGDIR", _matplotlib_cachedir())
    env.setdefault("XDG_CACHE_HOME", str(real_home / ".cache"))
    dirs = {
        "HOME": base / "home",
        "JUPYTER_CONFIG_DIR": base / "jupyter_config",
        "JUPYTER_DATA_DIR": base / "jupyter_data",
        "JUPYTER_RUNTIME_DIR": base / "jupyter_runtime",
        "IPYTHONDIR": base / "ipython",
        "XDG_CONFIG_HOME": base / "xdg_config",
        "XDG_DATA_HOME": base / "xdg_data",
    }
    for key, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[key] = str(path)
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_PLATFORM_DIRS", None)
    # The venv's tools first (nbgrader runs `alembic` from PATH), as in an activated venv.
    venv_bin = str(Path(jupyter_executable()).parent)
    env["PATH"] = os.pathsep.join([venv_bin] + [p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin])
    # The kernels import course_lib from this checkout, whether or not it is pip-installed.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env.pop("MPLBACKEND", None)  # notebooks use the inline backend, as for a student
    return env


def _matplotlib_cachedir() -> str:
    try:
        import matplotlib

        return matplotlib.get_cachedir()
    except Exception:  # pragma: no cover - matplotlib is a course dependency
        return str(Path(os.path.expanduser("~")) / ".cache" / "matplotlib")


def write_lab_settings(env: dict) -> None:
    cfg = Path(env["JUPYTER_CONFIG_DIR"])
    for rel, value in LAB_USER_SETTINGS.items():
        path = cfg / "lab" / "user-settings" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    (cfg / "labconfig").mkdir(parents=True, exist_ok=True)
    (cfg / "labconfig" / "page_config.json").write_text(json.dumps(PAGE_CONFIG))


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: SIGTERM this process when the test process dies (even by SIGKILL)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _pids_mentioning(needle: str) -> list[int]:
    """PIDs whose command line mentions `needle` (a unique temp path of ours)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmd:
            pids.append(int(entry.name))
    return pids


@dataclass
class LabServer:
    root: Path
    base: Path
    port: int = 0
    token: str = ""
    proc: subprocess.Popen | None = None
    log_path: Path | None = None
    env: dict = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90.0) -> "LabServer":
        self.env = isolated_env(self.base)
        write_lab_settings(self.env)
        self.token = secrets.token_hex(24)
        self.log_path = self.base / "jupyter_server.log"
        last_error = None
        for _attempt in range(3):  # a free port can be taken between probe and bind
            self.port = free_port()
            cmd = [
                str(jupyter_executable()), "lab",
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--ServerApp.token={self.token}",
                f"--ServerApp.root_dir={self.root}",
                "--ServerApp.open_browser=False",
                "--LabApp.expose_app_in_browser=True",
                "--LabApp.news_url=",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            ]
            if os.geteuid() == 0:
                cmd.append("--allow-root")
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(
                cmd, cwd=self.root, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
            log.close()
            try:
                self._wait_ready(timeout)
                return self
            except RuntimeError as exc:
                last_error = exc
                self.stop()
        raise RuntimeError(f"JupyterLab did not start: {last_error}\n--- server log ---\n{self.log_tail()}")

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}")
            try:
                self.api("GET", "/api/status", timeout=2)
                # the lab page itself must be served too
                with urllib.request.urlopen(f"{self.url}/lab?token={self.token}", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.3)
        raise RuntimeError(f"no answer on {self.url} within {timeout:.0f} s")

    def api(self, method: str, path: str, body=None, timeout: float = 10):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.url}{path}", data=data, method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
        return json.loads(raw) if raw else None

    def shutdown_kernels(self, wait: bool = True) -> None:
        """Stop the sessions and kernels running now (between notebooks: the CPU goes to the next).

        With wait=False the DELETE requests run in a daemon thread (the server finishes them while
        the next notebook opens; stop() ends whatever is left). The ids are taken now, so a
        session opened later is never touched."""
        try:
            sessions = [s["id"] for s in self.api("GET", "/api/sessions") or []]
            kernels = [k["id"] for k in self.api("GET", "/api/kernels") or []]
        except (urllib.error.URLError, OSError, ValueError):
            return

        def delete():
            for what, ids in (("sessions", sessions), ("kernels", kernels)):
                for i in ids:
                    try:
                        self.api("DELETE", f"/api/{what}/{i}", timeout=20)
                    except (urllib.error.URLError, OSError, ValueError):
                        pass  # already gone with its session, or the server is stopping

        if wait:
            delete()
        else:
            threading.Thread(target=delete, daemon=True).start()

    def log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no server log)"

    def stop(self) -> None:
        """Stop the server, its kernels and anything else started with our temp paths."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # jupyter_server shuts its kernels down
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=10)
        if proc is not None:
            try:  # the group may outlive its leader
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        # Kernels run in their own sessions; their connection files live in our runtime dir.
        runtime = self.env.get("JUPYTER_RUNTIME_DIR")
        if runtime:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and _pids_mentioning(runtime):
                time.sleep(0.2)
            for pid in _pids_mentioning(runtime):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(
        src, dst, dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc"),
    )


# --------------------------------------------------------------------------------------------
# In the page. All JavaScript goes through window.jupyterapp (LabApp.expose_app_in_browser).

JS_PANEL = r"""
(path) => {
  const app = window.jupyterapp;
  if (!app) return null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.content.widgets) return w;
  }
  return null;
}
"""

JS_NOTEBOOK_STATE = r"""
(path) => {
  const app = window.jupyterapp;
  let panel = null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.content.widgets) { panel = w; break; }
  }
  if (!panel) return {found: false};
  const sc = panel.sessionContext;
  const kernel = sc && sc.session && sc.session.kernel;
  const st = {found: true, ready: panel.context.isReady && sc.isReady,
              kernel: kernel ? kernel.status : null, kernelName: kernel ? kernel.name : null,
              code: 0, executed: 0, pending: 0, errors: [], counts: []};
  panel.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    if (cell.model.sharedModel.getSource().trim() === '') return;
    st.code += 1;
    const n = cell.model.executionCount;
    st.counts.push(n);
    if (n !== null && n !== undefined) st.executed += 1;
    const prompt = cell.node.querySelector('.jp-InputPrompt');
    if (prompt && prompt.textContent.includes('*')) st.pending += 1;
    const outs = cell.model.outputs;
    for (let j = 0; j < outs.length; j++) {
      const o = outs.get(j).toJSON();
      if (o.output_type === 'error')
        st.errors.push({cell: i, ename: o.ename, evalue: o.evalue,
                        traceback: (o.traceback || []).join('\n').replace(/\x1b\[[0-9;]*m/g, '')});
    }
  });
  return st;
}
"""

JS_PAGE_PROBLEMS = r"""
(path) => {
  const app = window.jupyterapp;
  let panel = null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.content.widgets) { panel = w; break; }
  }
  const res = {stderr: [], tracebacks: [], figureReprs: [], images: [], widgetCells: []};
  panel.content.widgets.forEach((cell, i) => {
    for (const el of cell.node.querySelectorAll('.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]')) {
      const t = el.innerText;
      res.stderr.push({cell: i, text: t.slice(0, 2000)});
      if (/Traceback|Error\b/.test(t)) res.tracebacks.push({cell: i, text: t.slice(0, 4000)});
    }
    for (const el of cell.node.querySelectorAll('.jp-RenderedText[data-mime-type="text/plain"]')) {
      if (/<Figure size [^>]*>/.test(el.innerText)) res.figureReprs.push({cell: i, text: el.innerText.slice(0, 200)});
    }
    for (const img of cell.node.querySelectorAll('img')) {
      const inOutput = !!img.closest('.jp-OutputArea');
      res.images.push({cell: i, where: inOutput ? 'output' : 'markdown', complete: img.complete,
                       naturalWidth: img.naturalWidth, src: (img.getAttribute('src') || '').slice(0, 80)});
    }
    if (cell.model.type === 'code') {
      const outs = cell.model.outputs;
      for (let j = 0; j < outs.length; j++) {
        const o = outs.get(j).toJSON();
        if (o.data && o.data['application/vnd.jupyter.widget-view+json']) { res.widgetCells.push(i); break; }
      }
    }
  });
  return res;
}
"""


@dataclass
class RunResult:
    seconds: float
    state: dict


def open_notebook(page, server: LabServer, path: str, timeout: float = 60.0) -> None:
    """Open `path` (relative to the server root) in a reset workspace; wait for an idle kernel."""
    page.goto(f"{server.url}/lab/tree/{path}?reset&token={server.token}",
              wait_until="domcontentloaded", timeout=timeout * 1000)
    page.wait_for_function("() => !!window.jupyterapp", timeout=timeout * 1000)
    page.wait_for_function(
        "(path) => { const f = " + JS_NOTEBOOK_STATE + "; const s = f(path);"
        " return s.found && s.ready && s.kernel === 'idle'; }",
        arg=path, timeout=timeout * 1000,
    )


def notebook_state(page, path: str) -> dict:
    return page.evaluate(JS_NOTEBOOK_STATE, path)


def _accept_dialog(page, timeout: float) -> None:
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(state="visible", timeout=timeout * 1000)
    dialog.locator(".jp-Dialog-button.jp-mod-accept").click(timeout=timeout * 1000)
    dialog.wait_for(state="hidden", timeout=timeout * 1000)


def restart_and_run_all(page, path: str, timeout: float = 120.0) -> RunResult:
    """Clear outputs, then "Restart Kernel and Run All Cells" (answering its dialog); wait until
    the kernel is idle and every non-empty code cell has run (or the run stopped at an error)."""
    page.evaluate(
        """(path) => {
          const app = window.jupyterapp;
          for (const w of app.shell.widgets('main'))
            if (w.context && w.context.path === path) { app.shell.activateById(w.id); break; }
          return app.commands.execute('notebook:clear-all-cell-outputs');
        }""",
        path,
    )
    t0 = time.monotonic()
    # Not awaited: the command resolves only after its confirmation dialog is answered.
    page.evaluate("() => { window.__runAll = window.jupyterapp.commands.execute('notebook:restart-run-all'); }")
    _accept_dialog(page, 20)
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


def page_problems(page, path: str) -> dict:
    return page.evaluate(JS_PAGE_PROBLEMS, path)


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


# ---- widgets ------------------------------------------------------------------------------

JS_WIDGET_CONTROLS = r"""
(arg) => {
  const [path, index] = arg;
  const app = window.jupyterapp;
  let panel = null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.content.widgets) { panel = w; break; }
  }
  const cell = panel.content.widgets[index];
  const kinds = [
    ['slider', '.widget-slider, .widget-hslider'],
    ['dropdown', '.widget-dropdown'],
    ['text', '.widget-text, .widget-inttext, .widget-floattext, .widget-bounded-inttext, .widget-bounded-floattext'],
    ['toggle', '.widget-toggle-buttons'],
    ['radio', '.widget-radio'],
    ['checkbox', '.widget-checkbox'],
  ];
  const seen = new Set();
  const controls = [];
  let k = 0;
  for (const [kind, sel] of kinds) {
    for (const el of cell.node.querySelectorAll(sel)) {
      if (seen.has(el) || el.closest('.jp-OutputArea') === null) continue;
      seen.add(el);
      const label = el.querySelector('.widget-label');
      const disabled = !!el.querySelector('[disabled]') || el.classList.contains('mod-disabled');
      const id = index + '-' + k;
      el.setAttribute('data-browser-test-control', id);
      controls.push({id, kind, description: label ? label.innerText.trim() : '', disabled});
      k += 1;
    }
  }
  const srcs = Array.from(cell.node.querySelectorAll('.jp-OutputArea img')).map(i => i.getAttribute('src') || '');
  return {controls, srcs};
}
"""

JS_CELL_IMAGES = r"""
(arg) => {
  const [path, index] = arg;
  const app = window.jupyterapp;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.content.widgets) {
      const cell = w.content.widgets[index];
      return Array.from(cell.node.querySelectorAll('.jp-OutputArea img')).map(
        i => ({src: i.getAttribute('src') || '', ok: i.complete && i.naturalWidth > 0}));
    }
  }
  return [];
}
"""


JS_CELL_OUTPUT_TEXT = r"""
(arg) => {
  const [path, index] = arg;
  const app = window.jupyterapp;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.content.widgets) {
      const area = w.content.widgets[index].node.querySelector('.jp-OutputArea');
      return area ? area.innerText : '';
    }
  }
  return '';
}
"""


def cell_images(page, path: str, index: int) -> list[dict]:
    return page.evaluate(JS_CELL_IMAGES, [path, index])


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
        dims = page.evaluate(
            """(path) => {
              const app = window.jupyterapp;
              for (const w of app.shell.widgets('main')) {
                if (w.context && w.context.path === path && w.content) {
                  const outer = w.node.querySelector('.jp-WindowedPanel-outer') || w.content.node;
                  return {scroll: outer.scrollHeight, client: outer.clientHeight};
                }
              }
              return null;
            }""",
            path,
        )
        if dims:
            height = min(max_height, size["height"] + max(0, dims["scroll"] - dims["client"]) + 40)
            page.set_viewport_size({"width": size["width"], "height": int(height)})
            page.wait_for_timeout(800)
        page.screenshot(path=str(out), full_page=True, timeout=60_000)
    finally:
        page.set_viewport_size(size)
    return out


# ---- nbgrader --------------------------------------------------------------------------------

def run_validate(page, timeout: float = 240.0, screenshot: Path | None = None) -> dict:
    """Press nbgrader's Validate button; return the result dialog's class and failed cells."""
    button = page.locator(".validate-button").first
    button.wait_for(state="visible", timeout=30_000)
    button.click(timeout=10_000)
    dialog = page.locator(".jp-Dialog").filter(has=page.locator("#validation-message, .jp-Dialog-header"))
    dialog.first.wait_for(state="visible", timeout=timeout * 1000)
    d = dialog.first
    title = d.locator(".jp-Dialog-header").inner_text(timeout=5_000).strip()
    msg = d.locator("#validation-message")
    result = {"title": title, "classes": "", "failed_sources": [], "text": d.inner_text(timeout=5_000)}
    if msg.count():
        result["classes"] = msg.get_attribute("class") or ""
        result["failed_sources"] = msg.evaluate(
            """m => {
              const out = [];
              const ps = Array.from(m.querySelectorAll('p'));
              for (const p of ps) {
                if (!p.innerText.includes('The following cell failed')) continue;
                const src = p.parentElement.nextElementSibling;
                out.push(src ? src.innerText : '');
              }
              return out;
            }"""
        )
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), timeout=30_000)
    d.locator(".jp-Dialog-button.jp-mod-accept").click(timeout=10_000)
    d.wait_for(state="hidden", timeout=10_000)
    return result
