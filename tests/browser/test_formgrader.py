"""The formgrader's page of a submission, as an instructor opens it offline: the notebook's maths is
drawn (MathML, no MathJax from a CDN), a long failure message and a long code line wrap inside a
1280-pixel window, no request leaves the machine, and nbgrader's formgrade.js starts (it waits for
MathJax; without a stand-in its keyboard shortcuts never come).

A throw-away course (the exercise's source and nbgrader_config.py) with one submission in the
gradebook, autograded by hand here (a sandbox run is tests/grading's business): the exercise with a
failing part's message, a long line in a solution and maths in a written answer. `jupyter lab`
serves it with nbgrader's formgrader as an instructor starts it; Chromium opens the submission with
every request to another host refused and recorded. Then `nbgrader generate_feedback` on the same
submission: the formgrader's preprocessor leaves the feedback page as it was.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import nbformat
import pytest

import lab_server

pytestmark = pytest.mark.browser

REPO = lab_server.REPO
ASSIGNMENT, NOTEBOOK, STUDENT = "07_exercise", "encoder_from_scratch", "ada"
MESSAGE = ("Part 2: the scores are not divided by sqrt(d_k): with d_k = 16 the weights of every row are "
           "too peaked; look at the line that computes the scores, before the softmax (hidden cases: other sizes)")
LONG_LINE = ("    scores = torch.matmul(query_for_every_head_and_position, key_for_every_head_and_position"
             ".transpose(-2, -1)) / math.sqrt(query_for_every_head_and_position.size(-1))  # the scaled scores")
ANSWER_MATHS = "I divide by $\\sqrt{d_k}$ so that the scores keep a variance of about one."
WIDTH = 1280


def _cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _run(args, cwd, env):
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """(root, env, submission id): the course with ada's autograded submission in its gradebook."""
    base = tmp_path_factory.mktemp("formgrader")
    root = base / "course"
    shutil.copytree(REPO / "notebooks" / ASSIGNMENT, root / "notebooks" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy2(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    env = lab_server.isolated_env(base)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "grader"), env["PYTHONPATH"]])   # course_grader
    _run([str(lab_server.jupyter_executable().parent / "nbgrader"), "generate_assignment", ASSIGNMENT], root, env)

    nb = nbformat.read(root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    _cell(nb, "test_attention").outputs = [nbformat.v4.new_output(   # as autograde leaves a failing part
        "error", ename="AssertionError", evalue=MESSAGE, traceback=[f"\x1b[31mAssertionError\x1b[0m: {MESSAGE}"])]
    solution = _cell(nb, "attention")
    solution.source = solution.source.replace("### BEGIN SOLUTION\n", "### BEGIN SOLUTION\n" + LONG_LINE + "\n", 1)
    _cell(nb, "answer_scores_shape").source = ANSWER_MATHS
    folder = root / "autograded" / STUDENT / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{NOTEBOOK}.ipynb")
    shutil.copytree(root / "notebooks" / ASSIGNMENT / "figures", folder / "figures")

    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        gb.update_or_create_student(STUDENT, first_name="Ada", last_name="Lovelace")
        gb.add_submission(ASSIGNMENT, STUDENT)
        submission = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT).id
    return root, env, submission


@pytest.fixture(scope="module")
def formgrader(course):
    root, _, _ = course
    server = lab_server.LabServer(root=root, base=root.parent)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_the_submission_page_draws_its_maths_wraps_and_stays_offline(course, formgrader, browser_context):
    _, _, submission = course
    tab = browser_context.new_page()
    outside, errors = [], []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))

    def only_this_server(route):
        if route.request.url.startswith(formgrader.url + "/"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()
    try:
        tab.set_viewport_size({"width": WIDTH, "height": 900})
        tab.set_extra_http_headers({"Authorization": f"token {formgrader.token}"})
        tab.route("**/*", only_this_server)
        response = tab.goto(f"{formgrader.url}/formgrader/submissions/{submission}/", wait_until="load")
        assert response.status == 200, tab.content()[:2000]
        found = tab.evaluate("""([message, line]) => {
            const pre = text => [...document.querySelectorAll('pre')].find(p => p.textContent.includes(text));
            const fits = p => ({right: p.getBoundingClientRect().right, hidden: p.scrollWidth - p.clientWidth});
            const sqrt = [...document.querySelectorAll('math')].filter(m => m.querySelector('msqrt'));
            return {pageWidth: document.documentElement.scrollWidth, window: window.innerWidth,
                    message: fits(pre(message)), line: fits(pre(line)),
                    maths: document.querySelectorAll('math').length,
                    sqrtDrawn: sqrt.filter(m => m.getBoundingClientRect().width > 0).length,
                    text: document.body.innerText,
                    started: Boolean(window.formgrader && window.formgrader.loaded)};
        }""", ["not divided by sqrt(d_k)", "query_for_every_head_and_position.size(-1)"])
    finally:
        tab.close()
    text = found.pop("text")
    assert outside == [], outside                                 # (c) nothing from a CDN, or anywhere else
    assert "\\sqrt{" not in text and "$$" not in text, text[:2000]  # (a) no TeX source to read
    assert found["maths"] >= 10 and found["sqrtDrawn"] >= 3, found  # the attention's, Part 6's, ada's answer
    assert "I divide by" in text and "variance of about one" in text
    assert found["window"] == WIDTH and found["pageWidth"] <= WIDTH, found          # (b) nothing to the right
    for long in ("message", "line"):
        assert found[long]["right"] <= WIDTH and found[long]["hidden"] <= 1, found
    assert found["started"] and errors == [], (found, errors)  # formgrade.js ran to its end


def test_the_feedback_page_is_left_as_it_was(course):
    """generate_feedback reads the same HTMLExporter configuration: the formgrader's preprocessor
    stays out of it (the student's maths is MathML, not escaped into text), and nbgrader prints no
    warning about configuration it does not recognise."""
    root, env, _ = course
    proc = _run([str(lab_server.jupyter_executable().parent / "nbgrader"), "generate_feedback", ASSIGNMENT,
                 "--student", STUDENT], root, env)
    assert "not recognized" not in proc.stderr and "display_data_priority" not in proc.stderr, proc.stderr
    html = (root / "feedback" / STUDENT / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    answer = html[html.index("I divide by"):html.index("variance of about one")]
    assert "<msqrt>" in answer and "&lt;math" not in answer, answer
    assert "\\sqrt{" not in html

