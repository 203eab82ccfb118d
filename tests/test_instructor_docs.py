"""What an instructor reads first holds: docs/instructors.md's install step works in a fresh environment,
every points figure in the docs is the source notebook's, and a corpus of one's own runs 08's and 09's
data code (issue 43)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from course_lib.capstone import Articles, article_sentences, balanced_split, load_articles, load_corpus
from course_lib.errors import CourseValueError

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTORS = ROOT / "docs" / "instructors.md"
SOURCE = ROOT / "notebooks" / "07_exercise" / "encoder_from_scratch.ipynb"


# ------------------------------------------------------------------ the install step, first, in a fresh environment

def setup_commands() -> list[str]:
    """The commands of the first ```bash block of docs/instructors.md, which must come before step 1."""
    text = INSTRUCTORS.read_text(encoding="utf-8")
    start = text.index("```bash\n")
    assert start < text.index("## 1."), "docs/instructors.md: the set-up comes before step 1"
    block = text[start + len("```bash\n"):text.index("```", start + 1)]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def fresh_env(tmp_path: Path) -> Path:
    """A new virtual environment that already has the student's set-up (PyTorch, nbgrader, ...: the
    packages of this checkout's environment on its path, so nothing is downloaded again) but nothing
    installed into it: neither course_grader nor, outside the repository, course_lib. Its stamp says the
    student's set-up is done, as `make setup` leaves it."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = subprocess.run([str(venv / "bin" / "python"), "-c", where], check=True, capture_output=True,
                          text=True).stdout.strip()
    # a plain path line: the packages there are importable, but their own .pth files (the editable
    # installs of course_lib and course_grader) are not run
    Path(site, "student_setup.pth").write_text(sysconfig.get_path("purelib") + "\n")
    (venv / ".installed").touch()
    return venv


def run_doc_commands(commands: list[str], venv: Path) -> list[subprocess.CompletedProcess]:
    """The doc's commands as an instructor runs them from the repository root, with VENV= pointing make
    at the fresh environment and `source .../activate` done by PATH."""
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", VIRTUAL_ENV=str(venv))
    env.pop("PYTHONPATH", None)
    done = []
    for command in commands:
        words = shlex.split(command)
        if words[:1] == ["source"]:
            assert words[1] == ".venv/bin/activate", command
            continue
        if words[:1] == ["make"]:
            words += [f"VENV={venv}"]
        done.append(subprocess.run(words, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900))
        assert done[-1].returncode == 0, (command, done[-1].stdout[-2000:], done[-1].stderr[-2000:])
    return done


@pytest.mark.slow
def test_the_install_step_gives_the_grader_in_a_fresh_environment(tmp_path):
    """Issue 43 item 1: `make lab` or `make setup` was all the page said, and step 3 failed with "No module
    named course_grader". The page's first commands, followed in a fresh environment, must give the grader
    its later steps call, and bubblewrap, without which it refuses to grade."""
    commands = setup_commands()
    assert any(c.startswith("make ") for c in commands), commands
    venv = fresh_env(tmp_path)
    python = str(venv / "bin" / "python")
    before = subprocess.run([python, "-m", "course_grader", "points"], cwd=ROOT, capture_output=True, text=True)
    assert "No module named course_grader" in before.stderr     # the fresh environment has no grader yet
    run_doc_commands(commands, venv)
    after = subprocess.run([python, "-m", "course_grader", "points"], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert after.returncode == 0, after.stderr
    assert re.search(r"autograded [\d.]+, by hand [\d.]+, total [\d.]+", after.stdout)
    bwrap = subprocess.run(["bash", "-c", "command -v bwrap"], capture_output=True, text=True)
    assert bwrap.returncode == 0, "the install step leaves bubblewrap on PATH"


def test_make_instructor_ends_with_the_next_step():
    """Issue 49 item 10: `make instructor` ended silently. Its last lines name the guide's next step: a
    section of docs/instructors.md that exists and holds the commands named, and the LMS sections of
    docs/customising.md, which exist too."""
    dry = subprocess.run(["make", "-n", "-W", "grader/pyproject.toml", "instructor", "VENV=/nonexistent/venv"],
                         cwd=ROOT, capture_output=True, text=True)
    said = " ".join(re.findall(r'^echo "(.*)"$', dry.stdout.split("chmod 700 .", 1)[1], re.M))
    assert said.startswith("The course directory is now yours alone") and "Next:" in said, dry.stdout
    section = re.search(r"docs/instructors\.md, section '([^']+)'", said).group(1)
    text = INSTRUCTORS.read_text(encoding="utf-8")
    body = text[text.index(f"## {section}\n"):]
    body = body[:body.index("\n## ")]
    for command in re.findall(r"(python -m course_grader [\w-]+|nbgrader [\w_]+ 07_exercise)", said):
        assert command in body, (section, command)
    assert "new-seeds" in said and "generate_assignment" in said
    customising = (ROOT / "docs" / "customising.md").read_text(encoding="utf-8")
    for title in re.findall(r"'([^']+)'", said.split("docs/customising.md", 1)[1]):
        assert f"## {title}\n" in customising, title
    assert "roster-from-canvas" in customising


def test_every_later_command_needs_only_what_the_install_step_gives():
    """Each `python -m course_grader` and `nbgrader` command of the instructor's pages comes after a set-up
    that installs the grader (the Makefile target the page names installs grader/)."""
    target = next(c.split()[1] for c in setup_commands() if c.startswith("make "))
    makefile = (ROOT / "Makefile").read_text()
    dry = subprocess.run(["make", "-n", "-W", "grader/pyproject.toml", target, "VENV=/nonexistent/venv"], cwd=ROOT,
                         capture_output=True, text=True)
    assert re.search(r"pip install [^\n]*\bgrader\b", dry.stdout), f"make {target} installs no grader:\n{dry.stdout}"
    assert re.search(rf"^{re.escape(target)}:[^\n]*sandbox-deps", makefile, re.M), f"make {target}: no bubblewrap"


# ------------------------------------------------------------------ points: the source notebook's metadata

def totals() -> dict[str, float]:
    """The points as nbgrader grades them: the source notebook's graded cells."""
    from course_grader.points import points, written
    nb = json.loads(SOURCE.read_text(encoding="utf-8"))
    auto, by_hand = points(nb), written(nb)
    return {"auto": sum(auto.values()), "written": sum(by_hand.values()),
            "total": sum(auto.values()) + sum(by_hand.values()), "parts": auto, "answers": by_hand}


NUM = r"(\d+(?:\.\d+)?)"
# every way the docs state a points figure, and what it must equal
CHECKS = [
    (rf"{NUM} points each: {NUM} of the exercise's {NUM} points", ("each written", "written", "total")),
    (rf"the {NUM} points of parts 1 to 8", ("auto",)),
    (rf"out of {NUM} that holds only the autograded points \(at most {NUM}\)", ("total", "auto")),
    (rf"autograded {NUM}, by hand {NUM}, total {NUM}", ("auto", "written", "total")),
    (rf"\({NUM} points, autograded", ("auto",)),
    (rf"\({NUM} points, graded by hand\)", ("written",)),
    (rf"\(Score: [\d.]+ / {NUM}\)", ("part 3",)),             # "Part 3: multi-head attention (Score: 0.0 / 4.0)"
    (rf"out of `max` \({NUM} with the default points\)", ("total",)),
    (rf"set it to {NUM} \(or your points\)", ("total",)),
    (rf"[\d.]+ of {NUM}\. The feedback page shows each part", ("total",)),
]
# anything that looks like a points figure; each must sit inside one of the CHECKS
FIGURE = re.compile(rf"\b{NUM} points?\b|\bout of {NUM}\b|\btotal {NUM}\b|Score: [\d.]+ / {NUM}|\b[\d.]+ of {NUM}\. ")
DOCS = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


def expected(kind: str, t: dict) -> float:
    if kind == "each written":
        values = set(t["answers"].values())
        assert len(values) == 1, f"the written answers' points differ ({t['answers']}): '2 points each' is wrong"
        return values.pop()
    if kind == "part 3":
        return t["parts"]["multi_head_attention"]
    return t[kind]


def test_every_points_figure_in_the_docs_is_the_notebooks():
    """Issue 43 item 2: rubric.md and customising.md said 29 (19 autograded) where nbgrader graded 30 (20 + 10).
    The totals are read from the source notebook's metadata now, so a change of points there shows here."""
    t = totals()
    seen = 0
    for name in DOCS:
        text = " ".join((ROOT / name).read_text(encoding="utf-8").split())          # one line: figures wrap
        covered = []
        for pattern, kinds in CHECKS:
            for m in re.finditer(pattern, text):
                covered.append(m.span())
                for kind, value in zip(kinds, m.groups(), strict=True):
                    assert float(value) == expected(kind, t), f"{name}: {m.group(0)!r}: {kind} is {expected(kind, t)}"
                seen += 1
        for m in FIGURE.finditer(text):
            assert any(a <= m.start() and m.end() <= b for a, b in covered), \
                f"{name}: a points figure no check reads: {text[max(0, m.start() - 60):m.end() + 20]!r}"
    assert seen >= 8                    # rubric, customising, teacher's guide and instructors.md state them


# ------------------------------------------------------------------ 08 and 09 on a corpus of one's own

def write_corpus(root: Path, per_topic: int = 130) -> Path:
    """docs/customising.md's layout: <topic>/<name>.txt, the headline first, then the body."""
    for topic in ("cooking", "astronomy"):
        (root / topic).mkdir(parents=True)
        for i in range(per_topic):
            (root / topic / f"{i:03d}.txt").write_text(
                f"{topic.title()} story number {i}\n\nThe first sentence of {topic} story {i}. A second one follows!\n"
                f"Another paragraph about {topic}.\n", encoding="utf-8")
    return root


def test_a_corpus_of_ones_own_runs_the_capstones_data_code(tmp_path):
    """Issue 43 item 12: the functions 08 and 09 call take a corpus in the BBC files' layout."""
    data = load_corpus(write_corpus(tmp_path / "corpus"))
    assert isinstance(data, Articles) and len(data) == 260
    assert sorted(set(data.topic)) == ["astronomy", "cooking"] and data.headline[0] == "Astronomy story number 0"
    train, test = balanced_split(data, train_per_topic=60, test_per_topic=60, seed=0)   # 08's split
    assert len(train) == len(test) == 120 and not set(train) & set(test)
    sentences = article_sentences(data, test[:1])                                      # 09's sentences
    assert sentences == [f"The first sentence of {data.topic[test[0]]} story {test[0] % 130}.", "A second one follows!",
                         f"Another paragraph about {data.topic[test[0]]}."]
    assert article_sentences(data.subset(test[:1])) == sentences                       # a subset keeps its root
    assert load_corpus(tmp_path / "corpus", topics=["cooking"]).topic == ["cooking"] * 130
    with pytest.raises(CourseValueError, match="topics: expected a folder 'politics'"):
        load_corpus(tmp_path / "corpus", topics=["politics"])
    with pytest.raises(CourseValueError, match="root: expected a folder"):
        load_corpus(tmp_path / "missing")


def test_the_bbc_articles_are_read_as_before():
    data = load_articles(topics=["tech"])
    assert data.root is None and len(data) == 401
    assert article_sentences(data, [0])[0] == article_sentences(data.subset([0]))[0]
