"""A throw-away JupyterLab server for the browser tests.

The server runs on 127.0.0.1 with a random token (and --allow-root when the tests run as root), in
its own process group, with every Jupyter/IPython/home directory in a temporary folder, serving a
temporary copy of the course files (the repository is never written). Every wait is bounded; stop()
ends the server, its kernels and anything else started with its temporary paths.
"""

from __future__ import annotations

import json
import os
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

REPO = Path(__file__).resolve().parents[2]
# What the browser tests serve: the lecture notebooks (BROWSER_TEST_NOTEBOOKS=<dir> points them at
# another folder, used to check that they fail on a broken notebook), and where screenshots go.
NOTEBOOKS = Path(os.environ.get("BROWSER_TEST_NOTEBOOKS", REPO / "notebooks")).resolve()
SCREENSHOTS = REPO / "screenshots"
NBGRADER_CONFIG = REPO / "nbgrader_config.py"
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
    raise FileNotFoundError(f"no `jupyter` executable beside {sys.executable} or in {REPO}/.venv/bin")


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

    def start(self, timeout: float = 90.0) -> LabServer:
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
