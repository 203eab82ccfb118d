"""A class on a real JupyterHub, end to end, in Chromium: the README's JupyterHub section as it runs.

The instructor generates and releases 07_exercise. Each student logs in (PAM, their Unix password),
fetches the assignment in the Assignments tab, fills it (ada: correct; bob: one bug from the test
corpus; eve: correct, plus an attack that reads her classmates' and the instructor's files and
raises with whatever it found), validates with nbgrader's button and submits in the Assignments tab.
The instructor collects, grades with the README's sandboxed command once as root and once as their
own user (the non-root level), generates and releases feedback; each student fetches it in the
Assignments tab and sees their score. After every step, each student's account tries to list and
read the instructor's course directory, the source notebook, the gradebook and every classmate's
files: all must be refused. Screenshots of each step go to screenshots/hub/ (git-ignored).

The notebooks are filled by writing them through the user's own server (its contents API, from the
logged-in page); everything nbgrader does for a student goes through the Assignments tab and the
Validate button. Run:  .venv/bin/python -m pytest tests/hub -m hub -rA -s
Needs root, Debian's Chromium and `make hub-deps` (configurable-http-proxy under .hub/).
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import subprocess
import time
import urllib.error
from pathlib import Path

import pytest

import chromium
import hub_class
import lab_page
from exercise_corpus import submissions as corpus

pytestmark = [pytest.mark.hub, pytest.mark.browser, pytest.mark.slow]
SCREENSHOTS = hub_class.SCREENSHOTS

ASSIGNMENT, NOTEBOOK = hub_class.ASSIGNMENT, hub_class.NOTEBOOK
NB_PATH = f"{ASSIGNMENT}/{NOTEBOOK}"
GRADE_TIMEOUT = 300                   # seconds for one grading of the three submissions (a few on an idle machine)
BUG = "attn_missing_scaling"          # bob's one bug, from the corpus (parts that lose points listed there)
PROBE = r"""
import json, os, sys
out = {}
for kind, path in json.loads(sys.argv[1]):
    try:
        os.listdir(path) if kind == "list" else open(path, "rb").read(1)
        out[path] = "open"
    except FileNotFoundError:
        out[path] = "missing"
    except PermissionError:
        out[path] = "denied"
    except OSError as exc:
        out[path] = f"error {exc.errno}"
print(json.dumps(out))
"""
# Eve's attack: passes the static policy (numpy reads the files), runs wherever her cell runs (her own
# kernel, the grader's sandbox), and raises with anything it could read, so a leak reaches her feedback.
ATTACK = '''_stolen = []
for _path in {paths!r}:
    try:
        _text = np.fromfile(_path, dtype=np.uint8).tobytes().decode("utf-8", "replace")
    except Exception:
        continue
    if "SECRET-" in _text.replace("{own}", "") or "BEGIN HIDDEN TESTS" in _text:
        _stolen.append(_path + ": " + _text[:3000])
if _stolen:
    raise ValueError("LEAKED " + " | ".join(_stolen))
'''


def test_a_class_on_jupyterhub(demo, tmp_path):
    timings: dict[str, float] = {}
    shots: list[Path] = []
    t_start = time.monotonic()
    try:
        run_class(demo, tmp_path, timings, shots)
    finally:
        timings["total"] = time.monotonic() - t_start
        print("hub flow timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
        print("screenshots:\n  " + "\n  ".join(str(p) for p in shots))


def run_class(demo, tmp_path, timings: dict, shots: list) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("*.png"):
        old.unlink()
    teacher, (ada, bob, eve) = demo.instructor, demo.students
    course = demo.course_dir()
    secrets_of = {s: f"SECRET-{s}-{secrets.token_hex(8)}" for s in demo.students}
    logged_in: set[str] = set()
    problems: list[str] = []          # found on the way, reported at the end (the flow goes on)

    def shot(page, name: str, full: bool = False) -> None:
        path = SCREENSHOTS / f"{len(shots) + 1:02d}_{name}.png"
        page.screenshot(path=str(path), full_page=full, timeout=60_000)
        shots.append(path)
        print(f"screenshot: {path}")

    shot.logged_in = logged_in
    def private(step: str) -> None:
        check_private(demo, step)

    # 1. The instructor makes the student version and releases it (a terminal in their server).
    t = time.monotonic()
    demo.nbgrader("generate_assignment", ASSIGNMENT, "--force")
    demo.nbgrader("release_assignment", ASSIGNMENT, "--force")
    release = json.loads((course / "release" / ASSIGNMENT / NOTEBOOK).read_text())
    source = json.loads((course / "notebooks" / ASSIGNMENT / NOTEBOOK).read_text())
    assert "BEGIN HIDDEN TESTS" not in json.dumps(release), "the release still holds hidden tests"
    with chromium.persistent_context(tmp_path / f"chromium-{teacher}") as context:
        page = login(context, demo, teacher, shot)
        page.goto(f"{demo.user_url(teacher)}/formgrader", wait_until="domcontentloaded")
        page.get_by_text(ASSIGNMENT).first.wait_for(timeout=30_000)
        shot(page, "instructor_formgrader_released")
        formgrader_page = page.content()
        assert "released" in formgrader_page.lower() or "Released" in formgrader_page
    timings["release"] = time.monotonic() - t
    private("after the release")

    # 2. Each student: log in, fetch, fill, validate, submit.
    expected_lost = next(parts for name, _, parts in corpus.MISTAKES if name == BUG)
    notebooks = {
        ada: corpus.solved(release, source),
        bob: corpus.apply(corpus.solved(release, source), next(e for n, e, _ in corpus.MISTAKES if n == BUG)),
        eve: attacked(corpus.solved(release, source), demo, eve, secrets_of[eve]),
    }
    validated = {}
    for student in demo.students:
        t = time.monotonic()
        nb = mark(notebooks[student], secrets_of[student])
        with chromium.persistent_context(tmp_path / f"chromium-{student}") as context:
            page = login(context, demo, student, shot)
            assert page.locator("text=Formgrader").count() == 0
            if student == ada:
                tp = time.monotonic()
                pull_lectures(demo, page, student, shot)
                timings["nbgitpuller"] = time.monotonic() - tp
            assignments = open_assignments(page)
            row = assignments.locator("#released_assignments_list .list_item", has_text=ASSIGNMENT)
            row.wait_for(timeout=30_000)
            shot(page, f"{role_of(demo, student)}_assignments_released")
            row.locator("button", has_text="Fetch").click()
            fetched = assignments.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT)
            fetched.locator("button", has_text="Submit").wait_for(timeout=60_000)
            shot(page, f"{role_of(demo, student)}_fetched")
            private(f"after {student} fetched")

            lab_page.save_notebook(page, NB_PATH, nb)
            lab_page.open_notebook(page, demo.user_url(student), NB_PATH, timeout=120)
            broken = broken_markdown_images(page, NB_PATH)
            if broken:
                problems.append(f"{student}'s fetched {NB_PATH}: markdown images that do not load in the "
                                f"student's server (a figure outside the assignment folder does not travel "
                                f"with it): {broken}")
            tv = time.monotonic()
            dialog = SCREENSHOTS / f"{len(shots) + 1:02d}_{role_of(demo, student)}_validate.png"
            result = lab_page.run_validate(page, timeout=300, screenshot=dialog)
            shots.append(dialog)
            validated[student] = result
            timings[f"validate {student}"] = time.monotonic() - tv
            assert "LEAKED /" not in result["text"], (f"{student}'s own kernel read a classmate's files:\n"
                                                      f"{result['text'][:2000]}")

            assignments = open_assignments(page)
            fetched = assignments.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT)
            fetched.locator("button", has_text="Submit").click()
            submitted = assignments.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT)
            submitted.locator("button", has_text="Fetch Feedback").wait_for(timeout=60_000)
            shot(page, f"{role_of(demo, student)}_submitted")
        demo.api("DELETE", f"/hub/api/users/{student}/server", timeout=60)   # the CPU goes to the next one
        timings[f"student {student}"] = time.monotonic() - t
        private(f"after {student} submitted")
    assert "validation-success" in validated[ada]["classes"], validated[ada]["text"][:3000]
    assert "validation-failed" in validated[bob]["classes"], validated[bob]["text"][:3000]

    # 3. The instructor collects and grades: as their own user (the non-root level), then as root (the
    #    README's `sudo env "PATH=$PATH" ...`), handing what root wrote back to them.
    t = time.monotonic()
    # docs/jupyterhub.md step 3: the server-side collect, never plain `nbgrader collect` (issue 41)
    demo.run_as(demo.instructor, [str(demo.env / "bin" / "python"), "-m", "course_grader", "collect", ASSIGNMENT],
                cwd=demo.course_dir())
    for student in demo.students:
        collected = course / "submitted" / student / ASSIGNMENT / NOTEBOOK
        assert collected.exists(), f"{student}'s submission not collected"
    private("after collect")
    grading = {}
    for how in ("instructor", "root"):
        run = grade(demo, as_root=how == "root")
        grading[how] = (run, gradebook_scores(course, demo.students))
        print(f"grading as {how}: sandbox level {run['level']!r}, {run['seconds']:.1f} s; scores {grading[how][1]}")
        print("\n".join(line for line in run["log"].splitlines() if " level " in line or " took " in line))
        leaks = leaked(course / "autograded", secrets_of)
        assert not leaks, f"grading as {how}: student code read what is not theirs: {leaks}"
        check_scores(grading[how][1], ada, bob, eve, expected_lost, how)
        private(f"after grading as {how}")
    left_to_root = [str(p) for p in course.rglob("*") if p.lstat().st_uid == 0]   # the grader gave it back
    assert not left_to_root, f"grading as root left files to root in the instructor's course: {left_to_root[:5]}"
    timings["grading"] = time.monotonic() - t
    assert grading["root"][1] == grading["instructor"][1], (
        f"root and the instructor's own user grade differently: {grading['root'][1]} vs {grading['instructor'][1]}")
    assert grading["root"][0]["level"] == "root", f"grading as root ran at level {grading['root'][0]['level']!r}"
    assert grading["instructor"][0]["level"] in ("userns", "rlimits"), grading["instructor"][0]["level"]

    demo.nbgrader("generate_feedback", ASSIGNMENT, "--force")
    demo.nbgrader("release_feedback", ASSIGNMENT)
    with chromium.persistent_context(tmp_path / f"chromium-{teacher}-2") as context:
        page = login(context, demo, teacher, shot)
        page.goto(f"{demo.user_url(teacher)}/formgrader/gradebook/{ASSIGNMENT}/{NOTEBOOK.removesuffix('.ipynb')}",
                  wait_until="domcontentloaded")
        page.locator("tbody tr").nth(len(demo.students) - 1).wait_for(timeout=30_000)   # a row per student
        page.get_by_text("Show All Names").click()
        shot(page, "instructor_gradebook")
    timings["feedback"] = time.monotonic() - t - timings["grading"]
    private("after the feedback was released")

    # 3b. A teaching assistant grades in the course's shared grading server (a hub service run as the
    #     course's account; the instructor and the TAs are in its group): same gradebook, every student
    #     listed; a student is refused there.
    t = time.monotonic()
    gradebook = f"{demo.grading_url}/formgrader/gradebook/{ASSIGNMENT}/{NOTEBOOK.removesuffix('.ipynb')}"
    for ta in demo.tas:
        with chromium.persistent_context(tmp_path / f"chromium-{ta}") as context:
            page = login(context, demo, ta, shot)
            assert page.locator("text=Formgrader").count() == 0, "a TA's own server has the formgrader"
            page.goto(gradebook, wait_until="domcontentloaded")
            page.locator("tbody tr").nth(len(demo.students) - 1).wait_for(timeout=60_000)
            page.get_by_text("Show All Names").click()
            rows = page.locator("tbody tr").all_inner_texts()
            shot(page, "ta_shared_gradebook")
            for student in demo.students:
                assert any(student in r for r in rows), f"{ta} does not see {student} in the shared gradebook"
        demo.api("DELETE", f"/hub/api/users/{ta}/server", timeout=60)
    with chromium.persistent_context(tmp_path / f"chromium-{ada}-grading") as context:
        page = login(context, demo, ada, shot, wait_for_lab=False)
        response = page.goto(gradebook, wait_until="domcontentloaded")
        assert response is not None and response.status == 403, (
            f"a student reached the grading server: {response and response.status} {page.url}")
    stop_server(demo, ada)
    timings["TA"] = time.monotonic() - t

    # 4. Each student fetches their feedback in the Assignments tab and reads their score.
    final = grading["root"][1]
    for student in demo.students:
        t = time.monotonic()
        with chromium.persistent_context(tmp_path / f"chromium-{student}-2") as context:
            page = login(context, demo, student, shot)
            assignments = open_assignments(page)
            submitted = assignments.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT)
            submitted.locator("button", has_text="Fetch Feedback").click()
            assignments.locator("#submitted_assignments_list", has_text="view feedback").wait_for(timeout=60_000)
            shot(page, f"{role_of(demo, student)}_feedback_fetched")
            html_path = page.evaluate(FIND_FEEDBACK, ASSIGNMENT)
            assert html_path, f"{student}: no feedback HTML under ~/{ASSIGNMENT}/feedback/"
            page.goto(f"{demo.user_url(student)}/files/{html_path}", wait_until="load")
            text = page.inner_text("body")
            shot(page, f"{role_of(demo, student)}_feedback")                 # the score and the list of cells
            shot(page, f"{role_of(demo, student)}_feedback_full", full=True)
        demo.api("DELETE", f"/hub/api/users/{student}/server", timeout=60)
        m = re.search(r"Score:\s*([\d.]+)\s*/\s*([\d.]+)", text)
        assert m, f"{student}'s feedback shows no score:\n{text[:2000]}"
        total = sum(score for score, _ in final[student].values())
        assert abs(float(m.group(1)) - total) < 0.01, (
            f"{student}'s feedback says {m.group(0)}, the gradebook {total}")
        for other, marker in secrets_of.items():
            if other != student:
                assert marker not in text, f"{student}'s feedback shows {other}'s notebook"
        for word in ("LEAKED /", "### BEGIN HIDDEN TESTS", "hidden_seed"):     # the attack reports "LEAKED <path>: ..."
            if word in text:
                at = text.index(word)
                problems.append(f"{student}'s feedback shows {word!r}: ...{text[max(0, at - 300):at + 300]}...")
        timings[f"feedback {student}"] = time.monotonic() - t
        private(f"after {student} read the feedback")

    assert all(p.exists() for p in shots)
    assert not problems, "\n".join(problems)


# ---- steps ----------------------------------------------------------------------------------

FIND_FEEDBACK = """async (assignment) => {
  const contents = window.jupyterapp.serviceManager.contents;
  const top = await contents.get(assignment + '/feedback');
  for (const stamp of top.content.filter(i => i.type === 'directory')) {
    const dir = await contents.get(stamp.path);
    const html = dir.content.find(i => i.name.endsWith('.html'));
    if (html) return html.path;
  }
  return null;
}"""


def broken_markdown_images(page, path: str, timeout: float = 15.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        bad = [im["src"] for im in lab_page.markdown_images(page, path)
               if not (im["complete"] and im["naturalWidth"] > 0)]
        if not bad or time.monotonic() > deadline:
            return bad
        time.sleep(0.5)


def role_of(demo, name: str) -> str:
    if name == demo.instructor:
        return "instructor"
    if name in demo.tas:
        return "ta"
    return {0: "ada_correct", 1: "bob_bug", 2: "eve_attack"}[demo.students.index(name)]


def login(context, demo, name: str, shot, wait_for_lab: bool = True):
    """Log `name` in through the hub's login form; wait for their JupyterLab (spawned on login), or,
    with ``wait_for_lab=False``, only until the hub has taken the login."""
    page = context.new_page()
    page.goto(f"{demo.url}/hub/login", wait_until="domcontentloaded")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", demo.accounts[name].password)
    if name not in shot.logged_in:                     # the form once per user
        shot(page, f"{role_of(demo, name)}_login")
        shot.logged_in.add(name)
    page.click("[type=submit]")
    if not wait_for_lab:
        page.wait_for_url(lambda url: "/hub/login" not in url, timeout=60_000)
        return page
    page.wait_for_url(re.compile(rf"/user/{name}/lab"), timeout=180_000)
    lab_page.wait_for_lab(page, timeout=120)
    return page


def stop_server(demo, name: str, timeout: float = 180.0) -> None:
    """Stop `name`'s server, also one the hub is still spawning (it refuses to stop it until then)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            demo.api("DELETE", f"/hub/api/users/{name}/server", timeout=60)
            return
        except urllib.error.HTTPError as exc:
            if exc.code != 400 or time.monotonic() > deadline:
                raise
            time.sleep(2)


def open_assignments(page):
    """nbgrader's Assignments tab (the assignment_list extension), its lists loaded."""
    command = "nbgrader:open-assignment-list"
    page.wait_for_function("(c) => window.jupyterapp.commands.hasCommand(c)", arg=command, timeout=60_000)
    page.evaluate("(c) => window.jupyterapp.commands.execute(c)", command)
    panel = page.locator("#nbgrader-assignment-list")
    panel.wait_for(timeout=30_000)
    page.locator("#refresh_assignments_list").click()
    page.wait_for_function(
        """() => ['released', 'fetched', 'submitted'].every(k => {
             const el = document.getElementById(k + '_assignments_list_loading');
             return el && el.offsetParent === null; })""", timeout=60_000)
    return panel


def mark(nb: dict, marker: str) -> dict:
    """The notebook with a private marker (a comment in the first solution cell)."""
    nb = copy.deepcopy(nb)
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution")
                and c["cell_type"] == "code")
    src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    cell["source"] = f"# private: {marker}\n" + src
    return nb


def attacked(nb: dict, demo, attacker: str, own_marker: str) -> dict:
    """Eve's notebook: correct, with the attack prepended to the first solution cell."""
    course = demo.course_dir()
    paths = [str(course / "notebooks" / ASSIGNMENT / NOTEBOOK), str(course / "gradebook.db"),
             str(hub_class.REPO / "notebooks" / ASSIGNMENT / NOTEBOOK)]
    for other in demo.students:
        if other != attacker:
            home = demo.accounts[other].home
            paths += [str(home / NB_PATH), str(course / "submitted" / other / NB_PATH),
                      str(course / "autograded" / other / NB_PATH)]
    nb = copy.deepcopy(nb)
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution")
                and c["cell_type"] == "code")
    src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    cell["source"] = ATTACK.format(paths=paths, own=own_marker) + src
    return nb


def grade(demo, as_root: bool) -> dict:
    """The README's sandboxed grading command, in the course directory: as root (the README's
    `sudo env "PATH=$PATH" python -m course_grader autograde ...`) or as the instructor."""
    args = [str(demo.env / "bin" / "python"), "-m", "course_grader", "autograde", ASSIGNMENT, "--force",
            "--allow-public-seeds"]
    t = time.monotonic()
    if as_root:
        env = {"HOME": "/root", "LANG": "C.UTF-8", **demo.base_env()}
        proc = subprocess.run(args, cwd=demo.course_dir(), env=env, capture_output=True, text=True,
                              timeout=GRADE_TIMEOUT)
        assert proc.returncode == 0, f"grading as root failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    else:
        proc = demo.run_as(demo.instructor, args, cwd=demo.course_dir(), timeout=GRADE_TIMEOUT)
    log = proc.stdout + proc.stderr
    m = re.search(r"in a sandbox(?: \(|: level )(\w+)", log)
    return {"seconds": time.monotonic() - t, "level": m.group(1) if m else "?", "log": log}


def gradebook_scores(course: Path, students: list[str]) -> dict[str, dict[str, tuple[float, float]]]:
    """{student: {grade_id: (score, max)}} of the autograded test cells, read from gradebook.db."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in students:
            nb = gb.find_submission_notebook(NOTEBOOK.removesuffix(".ipynb"), ASSIGNMENT, student)
            out[student] = {g.name: (float(g.score), float(g.max_score)) for g in nb.grades
                            if g.name.startswith("test_")}
    return out


def leaked(autograded: Path, secrets_of: dict[str, str]) -> list[str]:
    """What the autograded notebooks show that their student could not know: a classmate's marker
    anywhere, or the attack's report ("LEAKED ...") or a hidden test's source in an output."""
    found = []
    for path in autograded.rglob("*.ipynb"):
        nb = json.loads(path.read_text())
        owner = path.relative_to(autograded).parts[0]
        whole = json.dumps(nb)
        outputs = json.dumps([c.get("outputs", []) for c in nb["cells"]])
        found += [f"{owner} shows {other}'s marker" for other, m in secrets_of.items() if other != owner and m in whole]
        found += [f"{owner}: {word!r} in an output" for word in ("LEAKED /", "### BEGIN HIDDEN TESTS")
                  if word in outputs]
    return found


def pull_lectures(demo, page, student: str, shot) -> None:
    """The course site's "Open in JupyterLab" link on the hub (nbgitpuller): one click clones the
    lectures into the student's home and opens the notebook in JupyterLab."""
    link = demo.pull_link(student, "02_attention.ipynb")
    page.goto(link, wait_until="domcontentloaded")
    pulled = demo.accounts[student].home / "lectures" / "notebooks" / "02_attention.ipynb"
    deadline = time.monotonic() + 120
    while not pulled.exists():
        assert time.monotonic() < deadline, f"nbgitpuller did not pull the lectures for {student}: {link}"
        time.sleep(0.5)
    page.wait_for_url(re.compile(r".*/lab/tree/lectures/notebooks/02_attention\.ipynb.*"), timeout=120_000)
    page.locator(".jp-NotebookPanel .jp-MarkdownCell").first.wait_for(timeout=120_000)
    shot(page, f"{role_of(demo, student)}_nbgitpuller")
    assert pulled.stat().st_uid == demo.accounts[student].uid, "the pulled lectures are not the student's own"
    assert not (pulled.parents[1] / "notebooks" / ASSIGNMENT).exists(), "the exercise's source was pulled"


def check_scores(scores: dict, ada: str, bob: str, eve: str, lost: set[str], how: str) -> None:
    full = {gid: mx for gid, (_, mx) in scores[ada].items()}
    assert full and all(scores[ada][gid][0] == mx for gid, mx in full.items()), (
        f"grading as {how}: the correct submission lost points: {scores[ada]}")
    for gid, (score, mx) in scores[bob].items():
        part = next((p for p in corpus.PARTS if gid == f"test_{p}" or gid.startswith(f"test_{p}_")), None)
        if part in lost:
            assert score < mx, f"grading as {how}: bob's bug in {part} was not found ({gid}: {score}/{mx})"
        else:
            assert score == mx, f"grading as {how}: bob lost points in {gid} ({score}/{mx}) without a bug there"
    assert sum(s for s, _ in scores[eve].values()) <= sum(full.values())


def check_private(demo, step: str) -> None:
    """Every student's account tries to list and read what is not theirs: all refused."""
    course = demo.course_dir()
    exchange_course = demo.exchange / hub_class.COURSE_ID
    for student in demo.students:
        targets = [("list", demo.accounts[demo.instructor].home), ("list", course), ("list", hub_class.REPO),
                   ("read", hub_class.REPO / "notebooks" / ASSIGNMENT / NOTEBOOK)]
        targets += [("read", p) for p in course.rglob("*") if p.is_file()]
        for sub in ("inbound", "feedback"):
            if (exchange_course / sub).exists():
                targets.append(("list", exchange_course / sub))
        for other in demo.students:
            if other != student:
                home = demo.accounts[other].home
                targets.append(("list", home))
                targets += [("read", p) for p in home.rglob("*") if p.is_file()]
        proc = demo.run_as(student, [str(demo.env / "bin" / "python"), "-c", PROBE,
                                     json.dumps([(k, str(p)) for k, p in targets])])
        seen = {p: r for p, r in json.loads(proc.stdout).items() if r not in ("denied", "missing")}
        assert not seen, f"{step}: {student} can reach what is not theirs: {seen}"
