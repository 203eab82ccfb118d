"""Shared test set-up: offline Hugging Face, a headless matplotlib, a fixed seed."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import matplotlib  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

# Headless figures in this process only: an MPLBACKEND variable would reach the notebook kernels
# that nbval and the browser tests start, and take their inline figures away.
matplotlib.use("Agg")


# Whole modules that start the grader's sandbox, a real nbgrader run, a hub or a browser: `make test`
# runs them, `make test-fast` (the core: course_lib, practice, plots, figures) leaves them out.
SLOW_MODULES = {
    "grading": {"test_attacks", "test_attacks_third", "test_attacks_fifth", "test_autograde_accidents",
                "test_class_report", "test_course_admin", "test_exchange", "test_exercise_roundtrip",
                "test_fuzz_files", "test_fuzz_html", "test_fuzz_json",
                "test_fair_to_honest_code", "test_feedback", "test_hidden_stays_hidden", "test_landlock", "test_lms",
                "test_lms_end_to_end", "test_lms_uploads", "test_exchange_end_to_end",
                "test_new_seeds", "test_pool", "test_recording", "test_reverse_learns", "test_sandbox",
                "test_sandbox_autograde", "test_sandbox_nonroot", "test_similarity", "test_similarity_limits",
                "test_termination", "test_validation"},
    "hub": None, "site": None, "browser": None,           # None: every module of the folder
}


# The modules that take longest (minutes each, `make test` on 2 cores), started first: `make test`
# hands whole modules to its two workers (pytest-xdist, --dist loadscope) in collection order, and a
# long module handed out last would run alone at the end. Every other module keeps its place after them.
LONGEST_FIRST = ("tests/hub/test_hub_class.py", "tests/test_practice.py", "tests/browser/test_lecture_notebooks.py",
                 "tests/site/test_accessibility.py", "tests/grading/test_exercise_roundtrip.py",
                 "tests/grading/test_similarity.py", "tests/grading/test_class_report.py",
                 "notebooks/09_the_encoder_learns.ipynb", "notebooks/08_the_encoder_at_work.ipynb")


def _rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]                # the module's path from the root directory
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config, items):
    items[:] = sorted(items, key=_rank)                 # stable: each module's own order is kept
    for item in items:
        path = item.path
        if path.parent.name in SLOW_MODULES:
            names = SLOW_MODULES[path.parent.name]
            if names is None or path.stem in names:
                item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield
