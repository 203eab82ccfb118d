"""A class on a real JupyterHub, on this machine: the set-up the README's JupyterHub section describes.

`DemoClass` makes, as root:
- Unix accounts: one instructor and the students, with passwords set by `chpasswd` and private
  homes (0700). They log in through JupyterHub's PAM authenticator (the machine's own accounts,
  as on a real course server); only they are allowed in.
- The course environment every user's server and kernel runs: the repository's `.venv`, copied
  outside the checkout (hard links, so it takes seconds) with course_lib and course_grader installed into it as
  `pip install .` would (not the editable install that points into the checkout), so a student needs
  nothing of the repository. While the class runs the checkout itself is closed to other users
  (`chmod o-rwx`; its mode comes back on stop): on a course server the instructor's clone lives in
  their private home.
- nbgrader's exchange: a directory writable by everybody with the sticky bit (`1777`, as
  `/srv/nbgrader/exchange` in the README) and one Jupyter configuration directory per role, put on
  the servers' `JUPYTER_CONFIG_PATH`: the exchange and the course id for everybody; for students,
  the formgrader and the create-assignment tools turned off.
- The instructor's course directory `~/course`: nbgrader_config.py, notebooks/07_exercise/ and res/
  copied from the repository, owned by the instructor.
- JupyterHub (`jupyterhub` from PyPI, `configurable-http-proxy` from npm in `.hub/`) on 127.0.0.1,
  with a generated jupyterhub_config.py and an API token for the test (a hub service).

`stop()` undoes all of it: the hub and every process of the class's accounts, the accounts and
their homes, the temporary directory, the checkout's mode.

Run by hand (`make hub-demo`): `python tests/hub/hub_class.py` starts the same class with the
accounts `instructor`, `ada`, `bob`, `eve`, prints the URL and the passwords, and runs until Ctrl-C.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv"
CHP = REPO / ".hub" / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE_ID = "transformer-encoder-hands-on"
ASSIGNMENT = "07_exercise"
NOTEBOOK = "encoder_from_scratch.ipynb"
SCREENSHOTS = REPO / "screenshots" / "hub"
MARK = "course hub test account"          # the GECOS field of every account a DemoClass makes
PATH_TAIL = "/usr/local/bin:/usr/bin:/bin"
# Lab page settings of every server: no news or update checks (nothing reaches out of the machine).
LAB_ARGS = [
    "--LabApp.expose_app_in_browser=True",
    "--LabApp.news_url=",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
]
STUDENT_DISABLED_LABEXTENSIONS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"]


def missing() -> str | None:
    """Why a hub cannot run here (None when it can), with the fix."""
    if os.geteuid() != 0:
        return "the hub test makes Unix accounts and spawns servers as them: it must run as root"
    for tool in ("useradd", "userdel", "chpasswd", "runuser"):
        if shutil.which(tool) is None:
            return f"`{tool}` is missing (Debian: passwd / util-linux)"
    if not (VENV / "bin" / "python").exists():
        return f"no course environment at {VENV}: run `make setup`"
    if VENV.is_symlink():
        # the class's environment is made of hard links to the venv's files, and some are then
        # rewritten: through a link to another checkout's venv, that venv would be rewritten too
        return f"{VENV} is a symbolic link: the hub test needs a .venv of this checkout's own (`make setup-dev`)"
    probe = subprocess.run([str(VENV / "bin" / "python"), "-c", "import jupyterhub, pamela"],
                           capture_output=True, text=True)
    if probe.returncode:
        return f"jupyterhub is not installed in {VENV} (the `dev` extra): {probe.stderr.strip()[-300:]}"
    if not CHP.exists():
        return f"configurable-http-proxy is missing at {CHP}: run `make hub-deps` (npm install --prefix .hub)"
    return None


def free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Account:
    name: str
    password: str
    role: str                              # "instructor" | "ta" | "student"
    uid: int = -1
    gid: int = -1
    home: Path = Path("/nonexistent")


@dataclass
class DemoClass:
    instructor: str
    students: list[str]
    tas: list[str] = field(default_factory=list)   # teaching assistants: they grade in the course's shared server
    base: Path | None = None               # a fresh temporary directory when None
    port: int = 0                          # the hub's public port (0: a free one)
    accounts: dict[str, Account] = field(default_factory=dict)
    hub: subprocess.Popen | None = None
    api_token: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    library_path: str = ""                 # LD_LIBRARY_PATH for the environment's python ("" if none)
    git_daemon: subprocess.Popen | None = None
    git_url: str = ""                      # the lectures' repository, as students pull it (nbgitpuller)
    _repo_mode: int | None = None

    # ---- paths -------------------------------------------------------------------------------
    @property
    def env(self) -> Path:
        return self.base / "env"

    @property
    def exchange(self) -> Path:
        return self.base / "exchange"

    @property
    def hub_dir(self) -> Path:
        return self.base / "hub"

    def config_dir(self, role: str) -> Path:
        return self.base / "etc" / role

    def course_dir(self) -> Path:
        return self.accounts[self.instructor].home / "course"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def user_url(self, name: str) -> str:
        return f"{self.url}/user/{name}"

    @property
    def grading_url(self) -> str:
        """The course's shared grading server (a hub service named after the course, run as the
        instructor's account on their course directory): the instructor's and the TAs' formgrader."""
        return f"{self.url}/services/{COURSE_ID}"

    # ---- set-up ------------------------------------------------------------------------------
    def start(self) -> DemoClass:
        why = missing()
        if why:
            raise RuntimeError(why)
        t0 = time.monotonic()
        if self.base is None:
            # under /srv like a course server's /srv/nbgrader/exchange (and not /tmp, which the
            # grader's sandbox covers with a private tmpfs: an environment there would vanish)
            parent = "/srv" if os.path.isdir("/srv") else None
            self.base = Path(tempfile.mkdtemp(prefix="course-hub-", dir=parent))
        self.base.chmod(0o755)
        self._close_checkout()
        self._step("environment", self._make_environment)
        self._step("exchange and configuration", self._make_exchange_and_config)
        self._step("accounts", self._make_accounts)
        self._step("course directory", self._make_course_dir)
        self._step("lecture repository", self._serve_lectures)
        self._step("hub", self._start_hub)
        self.timings["start"] = time.monotonic() - t0
        return self

    def _step(self, name: str, fn) -> None:
        t = time.monotonic()
        fn()
        self.timings[name] = time.monotonic() - t

    def _close_checkout(self) -> None:
        """Other users get nothing of the checkout (its source notebook holds the hidden tests)."""
        mode = stat.S_IMODE(REPO.stat().st_mode)
        self._repo_mode = mode
        REPO.chmod(mode & ~0o007)

    def _make_environment(self) -> None:
        """The course environment outside the checkout: .venv hard-linked (copied when on another file
        system), course_lib copied in as a regular install, scripts pointed at the copy's python.
        When the interpreter the venv was made from is private (pyenv under /root, say), it is
        linked out the same way and its libraries are found through LD_LIBRARY_PATH."""
        probe = subprocess.run([str(VENV / "bin" / "python"), "-c",
                                "import sys; print(sys.base_prefix); print('python%d.%d' % sys.version_info[:2])"],
                               check=True, capture_output=True, text=True).stdout.split()
        base_prefix, lib = Path(probe[0]), f"lib/{probe[1]}"
        _link_tree(VENV, self.env)
        if not _world_reachable(base_prefix):
            python = self.base / "python"
            # the interpreter and its standard library (not its own site-packages: a venv ignores them)
            _link_tree(base_prefix, python, skip=(f"{lib}/site-packages", f"{lib}/test"))
            self.library_path = str(python / "lib")
            for link in (self.env / "bin").iterdir():
                if link.is_symlink() and os.readlink(link).startswith(str(base_prefix)):
                    target = os.readlink(link).replace(str(base_prefix), str(python), 1)
                    link.unlink()
                    link.symlink_to(target)
            cfg = self.env / "pyvenv.cfg"
            text = cfg.read_text().replace(str(base_prefix), str(python)).replace(str(VENV), str(self.env))
            cfg.unlink()
            cfg.write_text(text)
        site = next((self.env / "lib").glob("python3*/site-packages"))
        packages = {"course_lib": REPO / "course_lib", "course_grader": REPO / "grader" / "course_grader"}
        for name, source in packages.items():
            for editable in list(site.glob(f"__editable__*{name}*")):
                editable.unlink()
            for info in site.glob(f"{name}-*.dist-info"):
                shutil.rmtree(info)
            shutil.copytree(source, site / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        old = f"#!{VENV}/bin/python".encode()
        for script in (self.env / "bin").iterdir():
            if script.is_symlink() or not script.is_file():
                continue
            data = script.read_bytes()
            if data.startswith(old):
                mode = stat.S_IMODE(script.stat().st_mode)
                script.unlink()                      # a hard link: never write through it
                script.write_bytes(f"#!{self.env}/bin/python".encode() + data[len(old):])
                script.chmod(mode)
        # the copy's own files are world-readable like a system install (umask may say otherwise)
        for name in packages:
            for path in [site / name, *(site / name).rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)

    def _make_exchange_and_config(self) -> None:
        self.exchange.mkdir()
        self.exchange.chmod(0o1777)
        common = (f"c = get_config()  # noqa: F821\n"
                  f"c.Exchange.root = {str(self.exchange)!r}\n"
                  f"c.CourseDirectory.course_id = {COURSE_ID!r}\n")
        page_config = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
        for role in ("instructor", "student"):
            cfg = self.config_dir(role)
            (cfg / "labconfig").mkdir(parents=True)
            text = common
            pc = json.loads(json.dumps(page_config))
            if role == "student":
                pc["disabledExtensions"].update({name: True for name in STUDENT_DISABLED_LABEXTENSIONS})
                (cfg / "jupyter_server_config.json").write_text(json.dumps(
                    {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False}}},
                    indent=1))
            else:
                text += "c.CourseDirectory.root = os.path.expanduser('~/course')\n"
                text = "import os\n" + text
            (cfg / "nbgrader_config.py").write_text(text)
            (cfg / "labconfig" / "page_config.json").write_text(json.dumps(pc, indent=1))
        for path in [self.base / "etc", *(self.base / "etc").rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)

    def _make_accounts(self) -> None:
        names = ([(self.instructor, "instructor")] + [(t, "ta") for t in self.tas]
                 + [(s, "student") for s in self.students])
        for name, role in names:
            _remove_leftover_account(name)
            acc = Account(name=name, password=secrets.token_urlsafe(12), role=role)
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment", MARK, name],
                           check=True, capture_output=True, text=True)
            self.accounts[name] = acc
            subprocess.run(["chpasswd"], input=f"{name}:{acc.password}\n", check=True,
                           capture_output=True, text=True)
            pw = pwd.getpwnam(name)
            acc.uid, acc.gid, acc.home = pw.pw_uid, pw.pw_gid, Path(pw.pw_dir)
            acc.home.chmod(0o700)

    def _make_course_dir(self) -> None:
        course = self.course_dir()
        (course / "notebooks").mkdir(parents=True)
        shutil.copy2(REPO / "nbgrader_config.py", course / "nbgrader_config.py")
        ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc")
        shutil.copytree(REPO / "notebooks" / ASSIGNMENT, course / "notebooks" / ASSIGNMENT, ignore=ignore)
        if (REPO / "res").is_dir():
            shutil.copytree(REPO / "res", course / "res", ignore=ignore)
        acc = self.accounts[self.instructor]
        for path in [course, *course.rglob("*")]:
            os.chown(path, acc.uid, acc.gid, follow_symlinks=False)

    def _serve_lectures(self) -> None:
        """The lectures as students pull them with nbgitpuller: a git repository of the lecture
        notebooks and res/ (never the exercise's source), served on loopback by `git daemon`, as a
        real class's repository is served by its git host (a repository on the hub's own disk owned
        by another user is refused by git's safe.directory check)."""
        work, served = self.base / "lectures-src", self.base / "git" / "lectures.git"
        (work / "notebooks").mkdir(parents=True)
        for nb in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")):
            shutil.copy2(nb, work / "notebooks" / nb.name)
        if (REPO / "res").is_dir():
            shutil.copytree(REPO / "res", work / "res")
        ident = {"GIT_AUTHOR_NAME": "course", "GIT_AUTHOR_EMAIL": "course@localhost",
                 "GIT_COMMITTER_NAME": "course", "GIT_COMMITTER_EMAIL": "course@localhost"}
        env = {**os.environ, **ident}
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "lectures"]):
            subprocess.run(["git", *args], cwd=work, env=env, check=True)
        subprocess.run(["git", "clone", "-q", "--bare", str(work), str(served)], check=True)
        port = free_port()
        self.git_daemon = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", "--export-all", f"--base-path={served.parent}",
             "--listen=127.0.0.1", f"--port={port}", str(served.parent)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.git_url = f"git://127.0.0.1:{port}/lectures.git"
        deadline = time.monotonic() + 20
        while subprocess.run(["git", "ls-remote", self.git_url], capture_output=True).returncode:
            if time.monotonic() > deadline or self.git_daemon.poll() is not None:
                raise RuntimeError("git daemon did not serve the lectures' repository")
            time.sleep(0.2)

    def pull_link(self, name: str, notebook: str) -> str:
        """The nbgitpuller link of the course site's "Open in JupyterLab" (docs/publishing.md)."""
        import build as site_build  # noqa: PLC0415
        return site_build.nbgitpuller_link(self.url, self.git_url, f"notebooks/{notebook}")

    # ---- the hub -----------------------------------------------------------------------------
    def hub_config(self) -> str:
        users = [self.instructor, *self.tas, *self.students]
        graders = [self.instructor, *self.tas]
        instructor_home = self.accounts[self.instructor].home
        return f'''# Generated by tests/hub/hub_class.py: the demo class of the README's JupyterHub section.
c = get_config()  # noqa: F821

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {self.port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.command = [{str(CHP)!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.pid_file = {str(self.hub_dir / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{self.hub_dir / "jupyterhub.sqlite"}"
c.JupyterHub.cookie_secret_file = {str(self.hub_dir / "cookie_secret")!r}
c.JupyterHub.cleanup_servers = True

# The machine's own accounts, through PAM; only the class may log in.
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = {set(users)!r}
c.PAMAuthenticator.open_sessions = False

# Each user's server runs as that user, from the course environment (its python is the kernel).
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{str(self.env / "bin" / "python")!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.args = {LAB_ARGS!r}
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 90
c.Spawner.env_keep = ["LANG", "LC_ALL"]
c.Spawner.environment = {self.base_env()!r}
INSTRUCTORS = {{{self.instructor!r}}}
CONFIG = {{"instructor": {str(self.config_dir("instructor"))!r}, "student": {str(self.config_dir("student"))!r}}}


def per_role(spawner):
    """Students get the student configuration (no formgrader), the instructor theirs."""
    role = "instructor" if spawner.user.name in INSTRUCTORS else "student"
    spawner.environment = dict(spawner.environment, JUPYTER_CONFIG_PATH=CONFIG[role])


c.Spawner.pre_spawn_hook = per_role

# The course's shared grading server: a hub service named after the course, run as the instructor's
# account in their course directory, with the instructor's configuration (the formgrader). Everybody
# in the group formgrade-<course> reaches it through the hub (nbgrader's "one class, multiple
# graders"): the instructor and the TAs grade one gradebook, and nobody else gets in.
c.JupyterHub.load_groups = {{"formgrade-{COURSE_ID}": {graders!r}}}
GRADING = {{
    "name": {COURSE_ID!r},
    "url": "http://127.0.0.1:{free_port()}",
    "command": [{str(self.env / "bin" / "python")!r}, "-m", "jupyterhub.singleuser", *{LAB_ARGS!r}],
    "user": {self.instructor!r},
    "cwd": {str(instructor_home)!r},
    "oauth_no_confirm": True,
    "environment": dict({self.base_env()!r}, HOME={str(instructor_home)!r},
                        JUPYTER_CONFIG_PATH=CONFIG["instructor"], JUPYTERHUB_DEFAULT_URL="/lab"),
}}

# A token for the test (and for scripts): start/stop servers, act on them.
c.JupyterHub.services = [{{"name": "course-admin", "api_token": {self.api_token!r}}}, GRADING]
c.JupyterHub.load_roles = [
    {{"name": "course-admin", "services": ["course-admin"],
     "scopes": ["admin:users", "admin:servers", "access:servers", "list:users"]}},
    {{"name": "formgrade-{COURSE_ID}", "groups": ["formgrade-{COURSE_ID}"],
     "scopes": ["access:services!service={COURSE_ID}", "list:services", "read:services!service={COURSE_ID}"]}},
]
'''

    def _start_hub(self, timeout: float = 60.0) -> None:
        self.hub_dir.mkdir(mode=0o700)
        self.api_token = secrets.token_hex(32)
        self.port = self.port or free_port()
        config = self.hub_dir / "jupyterhub_config.py"
        config.write_text(self.hub_config())
        log = open(self.hub_dir / "hub.log", "ab")
        env = {"LANG": os.environ.get("LANG", "C.UTF-8"), "HOME": str(self.hub_dir), **self.base_env()}
        self.hub = subprocess.Popen(
            [str(self.env / "bin" / "python"), "-m", "jupyterhub", "-f", str(config)],
            cwd=self.hub_dir, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.hub.poll() is not None:
                raise RuntimeError(f"jupyterhub exited with {self.hub.returncode}:\n{self.log_tail()}")
            try:
                self.api("GET", "/hub/api/")
                return
            except (urllib.error.URLError, OSError, ValueError):
                time.sleep(0.3)
        raise RuntimeError(f"jupyterhub did not answer on {self.url} within {timeout:.0f} s:\n{self.log_tail()}")

    def api(self, method: str, path: str, body=None, timeout: float = 30):
        """A request to the hub (or, through it, to a user's server: /user/<name>/api/...) with the
        class's service token."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.url}{path}", data=data, method=method,
                                     headers={"Authorization": f"token {self.api_token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
        return json.loads(raw) if raw else None

    def log_tail(self, n: int = 80) -> str:
        try:
            return "\n".join((self.hub_dir / "hub.log").read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no hub log)"

    # ---- acting as a user --------------------------------------------------------------------
    def base_env(self) -> dict:
        """What every process of the class gets: the environment's tools first on PATH."""
        env = {"PATH": f"{self.env}/bin:{PATH_TAIL}"}
        if self.library_path:
            env["LD_LIBRARY_PATH"] = self.library_path
        return env

    def user_env(self, name: str) -> dict:
        acc = self.accounts[name]
        return {"HOME": str(acc.home), "USER": name, "LOGNAME": name, "LANG": "C.UTF-8",
                "JUPYTER_CONFIG_PATH": str(self.config_dir("instructor" if acc.role == "instructor" else "student")),
                **self.base_env()}

    def run_as(self, name: str, args: list[str], cwd: Path | None = None, timeout: float = 300,
               check: bool = True) -> subprocess.CompletedProcess:
        """Run a command as user `name` with the environment of their server (a terminal there)."""
        acc = self.accounts[name]
        env_args = [f"{k}={v}" for k, v in self.user_env(name).items()]
        proc = subprocess.run(["runuser", "-u", name, "--", "env", "-i", *env_args, *args],
                              cwd=cwd or acc.home, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode:
            raise AssertionError(f"as {name}: {' '.join(args)} exited with {proc.returncode}:\n"
                                 f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return proc

    def nbgrader(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """`nbgrader ARGS` run by the instructor in their course directory."""
        return self.run_as(self.instructor, [str(self.env / "bin" / "nbgrader"), *args],
                           cwd=self.course_dir(), timeout=timeout)

    # ---- tear-down ---------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop everything the class started and remove what it made (every step runs)."""
        errors = []
        for what, fn in (("hub", self._stop_hub), ("git daemon", self._stop_git_daemon),
                         ("user processes", self._kill_user_processes),
                         ("accounts", self._remove_accounts), ("files", self._remove_files),
                         ("checkout mode", self._reopen_checkout)):
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - keep tearing down, report at the end
                errors.append(f"{what}: {exc!r}")
        if errors:
            raise RuntimeError("tearing the hub class down: " + "; ".join(errors))

    def _stop_hub(self) -> None:
        hub, self.hub = self.hub, None
        if hub is None:
            return
        if hub.poll() is None:
            os.killpg(hub.pid, signal.SIGTERM)       # the hub stops the servers and the proxy
            try:
                hub.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(hub.pid, signal.SIGKILL)
                hub.wait(timeout=10)
        try:
            os.killpg(hub.pid, signal.SIGKILL)       # the proxy lives in the hub's process group
        except (ProcessLookupError, PermissionError):
            pass
        pid_file = self.hub_dir / "proxy.pid"
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)
            except (ValueError, ProcessLookupError, PermissionError):
                pass

    def _stop_git_daemon(self) -> None:
        daemon, self.git_daemon = self.git_daemon, None
        if daemon is not None and daemon.poll() is None:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait(timeout=10)

    def _kill_user_processes(self) -> None:
        uids = {acc.uid for acc in self.accounts.values() if acc.uid >= 0}
        for _ in range(20):
            pids = _pids_of_uids(uids)
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)

    def _remove_accounts(self) -> None:
        for name in list(self.accounts):
            _remove_leftover_account(name)
            del self.accounts[name]

    def _remove_files(self) -> None:
        if self.base is not None and self.base.exists():
            _remove_tree(self.base)

    def _reopen_checkout(self) -> None:
        if self._repo_mode is not None:
            REPO.chmod(self._repo_mode)
            self._repo_mode = None


def _link_tree(src: Path, dst: Path, skip: tuple[str, ...] = ()) -> None:
    """`dst`: a copy of `src` made of hard links (a real copy across file systems), without the
    folders `skip` (paths relative to `src`)."""
    if not skip:
        try:
            subprocess.run(["cp", "-al", str(src), str(dst)], check=True, capture_output=True)
            return
        except subprocess.CalledProcessError:
            _remove_tree(dst)
    for top, dirs, files in os.walk(src):
        rel = Path(top).relative_to(src)
        dirs[:] = [d for d in dirs if (rel / d).as_posix() not in skip]
        (dst / rel).mkdir(parents=True, exist_ok=True)
        shutil.copystat(top, dst / rel)
        for name in dirs + files:
            s, d = Path(top) / name, dst / rel / name
            if s.is_symlink():
                d.symlink_to(os.readlink(s))
            elif name in files:
                try:
                    os.link(s, d)
                except OSError:
                    shutil.copy2(s, d)


def _remove_tree(path: Path) -> None:
    subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False)


def _world_reachable(path: Path) -> bool:
    """Whether any user can reach `path` (every directory on the way has o+x)."""
    path = path.resolve()
    return all(stat.S_IMODE(p.stat().st_mode) & 0o001 for p in [path, *path.parents])


def _pids_of_uids(uids: set[int]) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def _remove_leftover_account(name: str) -> None:
    """Remove account `name` if a DemoClass made it (its GECOS says so); refuse any other."""
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        return
    if pw.pw_gecos.split(",")[0] != MARK:
        raise RuntimeError(f"a Unix account {name!r} exists and was not made by the hub test: not touching it")
    for pid in _pids_of_uids({pw.pw_uid}):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
    if Path(pw.pw_dir).exists() and Path(pw.pw_dir).stat().st_uid == pw.pw_uid:
        shutil.rmtree(pw.pw_dir, ignore_errors=True)
    cache = Path(tempfile.gettempdir()) / f"torchinductor_{name}"      # torch's cache, made by the account's kernels
    if cache.is_dir() and not cache.is_symlink() and cache.stat().st_uid == pw.pw_uid:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> int:
    """`make hub-demo`: the test's class, started by hand, until Ctrl-C."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--instructor", default="instructor")
    parser.add_argument("--students", default="ada,bob,eve")
    parser.add_argument("--tas", default="tina", help="teaching assistants (comma-separated; '' for none)")
    args = parser.parse_args()
    demo = DemoClass(instructor=args.instructor, students=args.students.split(","), port=args.port,
                     tas=[t for t in args.tas.split(",") if t])
    try:
        demo.start()
        demo.nbgrader("generate_assignment", ASSIGNMENT, "--force")
        demo.nbgrader("release_assignment", ASSIGNMENT, "--force")
        print(f"\nJupyterHub: {demo.url}  (07_exercise is released; Ctrl-C stops the class and removes it)\n")
        for acc in demo.accounts.values():
            print(f"  {acc.role:10}  {acc.name:12}  password {acc.password}")
        print(f"\nInstructor's course directory: {demo.course_dir()}; exchange: {demo.exchange}")
        print(f"The course's grading server (instructor and TAs): {demo.grading_url}/formgrader")
        env = " ".join(f"{k}={v}" for k, v in demo.base_env().items())
        print(f"Grade as root:  cd {demo.course_dir()} && env {env} python -m course_grader autograde {ASSIGNMENT}")
        while demo.hub.poll() is None:
            time.sleep(1)
        print(demo.log_tail())
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        demo.stop()


if __name__ == "__main__":
    sys.exit(main())
