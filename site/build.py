"""Build the course website into build/site/ (`make site`): offline, from the stored notebooks.

    python site/build.py [--out build/site]

1. Stage the sources in build/site-src/: the lectures and the capstone as stored (strict nbval checked
   exactly these outputs; nothing is re-run), the exercise as students receive it (nbgrader's release
   version: no solution, no hidden test, no hidden seed), res/, docs/, and three generated pages: the
   home page (the course map, from the README's table of notebooks), the API reference and how to
   open a notebook in JupyterLab.
2. Run Sphinx (site/conf.py: MyST-NB, the book theme, MathML maths, Sphinx's own search). Every
   warning fails the build, a reference that resolves to nothing included (conf.py is nitpicky).

Each lecture page says how to open it in JupyterLab. With COURSE_REPO_URL and COURSE_HUB_URL set at
build time (the course's git repository and the class's JupyterHub), it also gets an nbgitpuller link.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
EXERCISE = "07_exercise"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
DOC_ORDER = ["teachers-guide", "instructors", "rubric", "customising", "jupyterhub", "sandbox", "publishing",
             "notation", "course_lib", "development", "accessibility", "screen-reader"]
# the rest of docs/ is for instructors
REFERENCE_DOCS = {"notation", "course_lib", "development", "accessibility", "screen-reader"}
# Pages of docs/ the site does not publish: students read the site. The rubric quotes the model
# answers of Part 9; links to it become a pointer to the repository.
NOT_PUBLISHED = {"rubric": "the rubric (`docs/rubric.md` in the course's repository; not on this site, "
                           "since it holds the model answers)"}


def lectures() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def course_map() -> list[tuple[str, str, str]]:
    """(number, notebook path under notebooks/, what it teaches) from the README's table."""
    rows = []
    for line in (ROOT / "README.md").read_text().splitlines():
        m = re.match(r"\|\s*(\d\d)\s*\|\s*`([^`]+\.ipynb)`\s*\|\s*(.+?)\s*\|\s*$", line)
        if m:
            rows.append(m.groups())
    return rows


def minutes_to_read(nb: dict) -> int:
    """Reading time: ~180 words a minute of prose, ~20 s a code cell; rounded up to 5 minutes."""
    words = sum(len(re.findall(r"\w+", "".join(c["source"]))) for c in nb["cells"] if c["cell_type"] == "markdown")
    code = sum(1 for c in nb["cells"] if c["cell_type"] == "code")
    minutes = words / 180 + code / 3
    return max(5, int(-(-minutes // 5) * 5))


def nbgitpuller_link(hub: str, repo: str, path: str, branch: str = "main") -> str:
    """The nbgitpuller link that clones (or updates) ``repo`` into the folder named after it (without
    ``.git``) in the student's home on ``hub``, and opens ``path`` (relative to the repository) in
    JupyterLab. The folder is named explicitly (``targetpath``): nbgitpuller's default keeps ``.git``."""
    name = repo.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    query = urllib.parse.urlencode({"repo": repo, "branch": branch, "targetpath": name,
                                    "urlpath": f"lab/tree/{name}/{path}"})
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def open_cell(path: str) -> dict:
    """The markdown cell a page starts with: how to open this notebook in JupyterLab."""
    hub, repo = os.environ.get("COURSE_HUB_URL"), os.environ.get("COURSE_REPO_URL")
    text = (f'<div class="course-open">Open in JupyterLab: <code>make lab</code> in the repository, '
            f'then <code>{path}</code>')
    if hub and repo:
        text += f' &middot; <a href="{nbgitpuller_link(hub, repo, path)}">on the class JupyterHub</a>'
    up = "../" * path.count("/")                        # the page sits where the notebook does
    text += f' &middot; <a href="{up}open.html">how to open a notebook</a></div>'
    return {"cell_type": "markdown", "metadata": {}, "source": text, "id": "course-open"}


def static_widgets(nb: dict) -> dict:
    """Drop the widgets' controls (the stored PNG after them is the figure a page shows)."""
    nb["metadata"].pop("widgets", None)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [o for o in cell["outputs"] if WIDGET_VIEW not in o.get("data", {})]
    return nb


def stage_notebook(src: Path, dst: Path, rel: str) -> None:
    nb = static_widgets(json.loads(src.read_text()))
    nb["cells"].insert(1, open_cell(rel))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(nb, indent=1))


def release_exercise(stage: Path) -> None:
    """nbgrader's release version of the exercise, made in a throw-away course directory."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(ROOT / "notebooks" / EXERCISE, Path(tmp) / "notebooks" / EXERCISE,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", EXERCISE, "--force",
                        f"--CourseDirectory.root={tmp}", f"--CourseDirectory.db_url=sqlite:///{tmp}/gradebook.db",
                        "--log-level=WARN"], cwd=ROOT, env=env, check=True)
        release = Path(tmp) / "release" / EXERCISE
        for src in release.rglob("*"):
            if src.is_file():
                rel = src.relative_to(release)
                dst = stage / "notebooks" / EXERCISE / rel
                if src.suffix == ".ipynb":
                    stage_notebook(src, dst, f"notebooks/{EXERCISE}/{rel}")
                else:
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dst)


def index_page(stage: Path) -> str:
    rows, lecture_docs, later_docs = [], [], []
    for number, path, what in course_map():
        src = ROOT / "notebooks" / path
        doc = "notebooks/" + path.removesuffix(".ipynb")
        nb = json.loads(src.read_text())
        title = next((ln.lstrip("# ").strip() for c in nb["cells"] if c["cell_type"] == "markdown"
                      for ln in "".join(c["source"]).splitlines() if ln.startswith("# ")), path)
        rows.append(f"| {number} | [{title}]({doc}) | {what} | {minutes_to_read(nb)} min |")
        (lecture_docs if int(number) < 7 else later_docs).append(doc)
    docs = sorted((stage / "docs").glob("*.md"), key=lambda p: (DOC_ORDER.index(p.stem) if p.stem in DOC_ORDER
                                                                 else len(DOC_ORDER), p.stem))

    def toc(caption, items):
        return "\n".join(["```{toctree}", f":caption: {caption}", ":maxdepth: 1", "", *items, "```", ""])

    return "\n".join([
        "# The Transformer encoder, hands-on", "",
        "A course in Jupyter notebooks, from sequence-to-sequence models to an encoder you write yourself "
        "in PyTorch. Every lecture draws its own figures, checks its own claims in code, asks you to try "
        "things in short practice exercises with instant feedback, and ends with a self-check. It runs "
        "on a laptop CPU. These pages show the notebooks exactly as stored (the outputs the tests check); "
        "to run them, [open them in JupyterLab](open.md).", "",
        "## The course map", "",
        "| # | notebook | what you see and do | time |", "|---|---|---|---|", *rows, "",
        "Lectures 01-06 build the encoder piece by piece; 07 is the graded exercise (nbgrader); 08 puts a "
        "real pretrained encoder to work. Instructors: start with " + (
            "[the teacher's guide](docs/teachers-guide.md)." if (stage / "docs" / "teachers-guide.md").exists()
            else "[For instructors](docs/instructors.md)."), "",
        toc("Lectures", lecture_docs), toc("The exercise and the capstone", later_docs),
        toc("For instructors", [f"docs/{p.stem}" for p in docs if p.stem not in REFERENCE_DOCS]),
        toc("Reference", [f"docs/{p.stem}" for p in docs if p.stem in REFERENCE_DOCS] + ["api", "open"]),
    ])


API_MODULES = ["course_lib", "course_lib.attention", "course_lib.positional", "course_lib.feed_forward",
               "course_lib.encoder", "course_lib.masks", "course_lib.heads", "course_lib.norms",
               "course_lib.rope", "course_lib.tokenizer", "course_lib.interop", "course_lib.utils",
               "course_lib.errors", "course_lib.widgets", "course_lib.practice", "course_lib.pretrained",
               "course_lib.plots", "course_lib.checks"]


def api_page() -> str:
    parts = ["# API reference: course_lib", "",
             "The package every notebook imports, from its docstrings. The exercise's public names and "
             "mask conventions are fixed by the course's exercise contract.", ""]
    for mod in API_MODULES:
        parts += [f"## `{mod}`", "", "```{eval-rst}", f".. automodule:: {mod}",
                  "   :members:", "   :no-index:" if mod == "course_lib" else "", "```", ""]
    return "\n".join(parts)


OPEN_PAGE = """# Open a notebook in JupyterLab

These pages are the notebooks as stored. To run one, change it and do its practice exercises:

**On your own machine.** Clone the repository and run `make lab` in it: it makes `.venv`, installs the
course (the CPU build of PyTorch on a machine without an NVIDIA GPU) and opens JupyterLab on
`notebooks/`. The page's box names the file to open.

**On your class's JupyterHub.** Your instructor gives you an [nbgitpuller](https://nbgitpuller.readthedocs.io)
link: one click clones the course into your home directory on the hub (or updates your copy without
touching your changes) and opens the notebook. The link pattern, with the hub's and the repository's
addresses URL-encoded:

```text
https://HUB/hub/user-redirect/git-pull?repo=REPO_URL&branch=main&targetpath=NAME&urlpath=lab/tree/NAME/notebooks/02_attention.ipynb
```

An instructor builds the site with the links filled in:
`COURSE_HUB_URL=https://hub.example.edu COURSE_REPO_URL=https://git.example.edu/course.git make site`.
nbgitpuller must be installed in the hub's single-user environment (`pip install nbgitpuller`); the
course's hub test (`tests/hub/`) opens such a link as a student and checks that the lectures arrive
in the student's home and the notebook opens.

**The exercise** is handed out by your instructor (nbgrader): its page here is the version students
receive, with nothing of the solution.
"""


def stage_docs(dst: Path) -> None:
    """docs/ without the pages that are not published; a link to one becomes its pointer."""
    dst.mkdir(parents=True)
    for src in sorted((ROOT / "docs").iterdir()):
        if src.stem in NOT_PUBLISHED:
            continue
        if src.suffix != ".md":
            shutil.copy2(src, dst / src.name)
            continue
        text = src.read_text()
        for stem, pointer in NOT_PUBLISHED.items():
            text = re.sub(rf"\[([^\]]*)\]\({re.escape(stem)}\.md\)", pointer, text)
        (dst / src.name).write_text(text)


def stage(out: Path) -> Path:
    stage_dir = out.parent / "site-src"
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    (stage_dir / "notebooks").mkdir(parents=True)
    for nb in lectures():
        stage_notebook(nb, stage_dir / "notebooks" / nb.name, f"notebooks/{nb.name}")
    release_exercise(stage_dir)
    shutil.copytree(ROOT / "res", stage_dir / "res")
    stage_docs(stage_dir / "docs")
    (stage_dir / "index.md").write_text(index_page(stage_dir))
    (stage_dir / "api.md").write_text(api_page())
    (stage_dir / "open.md").write_text(OPEN_PAGE)
    return stage_dir


def sphinx(src: Path, out: Path, **run) -> subprocess.CompletedProcess:
    """Sphinx's HTML build of ``src`` into ``out`` with site/conf.py. A warning is an error (``-W``),
    and conf.py is nitpicky, so a reference to nothing fails the build; ``--keep-going`` reports every
    warning first. ``run``: passed to ``subprocess.run``."""
    env = dict(os.environ, MPLBACKEND="Agg", HF_HUB_OFFLINE="1",
               PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going", "-j", "auto",
           "-c", str(SITE), "-d", str(out.parent / "site-doctrees"), str(src), str(out)]
    return subprocess.run(cmd, env=env, **run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "site"))
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    src = stage(out)
    if out.exists():
        shutil.rmtree(out)
    return sphinx(src, out).returncode


if __name__ == "__main__":
    raise SystemExit(main())
