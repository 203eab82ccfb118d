"""Fixtures of the hub test: the demo class (accounts, environment, exchange, JupyterHub) and Chromium."""

from __future__ import annotations

import secrets

import pytest

import hub_class


def pytest_configure(config):
    config.addinivalue_line("markers", "hub: a class on a real JupyterHub (root, Chromium, configurable-http-proxy)")


@pytest.fixture(scope="module")
def demo():
    """The class of the README: an instructor, a teaching assistant and three students (names unique
    to this run)."""
    why = hub_class.missing()
    if why:
        pytest.fail(why, pytrace=False)
    sfx = secrets.token_hex(2)
    cls = hub_class.DemoClass(instructor=f"teach{sfx}", students=[f"ada{sfx}", f"bob{sfx}", f"eve{sfx}"],
                              tas=[f"tina{sfx}"])
    try:
        cls.start()
        print(f"hub class up in {cls.timings['start']:.1f} s: "
              + ", ".join(f"{k} {v:.1f} s" for k, v in cls.timings.items() if k != "start"))
        yield cls
    finally:
        cls.stop()
