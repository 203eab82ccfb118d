"""Fixtures of the browser tests: one throw-away JupyterLab server and one Chromium per session."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import chromium
import lab_page
import lab_server

REPO, NOTEBOOKS, SCREENSHOTS, NBGRADER_CONFIG = (lab_server.REPO, lab_server.NOTEBOOKS, lab_server.SCREENSHOTS,
                                                 lab_server.NBGRADER_CONFIG)


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory) -> Path:
    """A throw-away copy of what the server needs: notebooks/, res/, nbgrader_config.py."""
    base = tmp_path_factory.mktemp("browser")
    root = base / "root"
    root.mkdir()
    lab_server.copy_tree(NOTEBOOKS, root / "notebooks")
    if (REPO / "res").is_dir():
        lab_server.copy_tree(REPO / "res", root / "res")
    if NBGRADER_CONFIG.exists():
        shutil.copy2(NBGRADER_CONFIG, root / NBGRADER_CONFIG.name)
    return root


@pytest.fixture(scope="session")
def lab(lab_root):
    server = lab_server.LabServer(root=lab_root, base=lab_root.parent)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory):
    why = chromium.missing()
    if why:
        pytest.fail(why, pytrace=False)
    with chromium.persistent_context(tmp_path_factory.mktemp("chromium")) as context:
        yield context


@pytest.fixture
def page(browser_context, lab):
    pg = browser_context.new_page()
    pg.js_errors = []
    pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
    try:
        yield pg
    finally:
        try:
            pg.close()
        finally:
            lab.shutdown_kernels(wait=False)


@pytest.fixture
def notebook_screenshot(record_property):
    """screenshot(page, path): the whole notebook to screenshots/<name>.png, recorded as the test's
    `screenshot` property (junit XML) and printed."""
    def take(page, path: str) -> Path:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(path).stem) + ".png"
        shot = lab_page.full_notebook_screenshot(page, path, SCREENSHOTS / name)
        record_property("screenshot", str(shot))
        print(f"screenshot: {shot}")
        return shot
    return take
