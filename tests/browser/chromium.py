"""Debian's Chromium (/usr/bin/chromium, `make browser-deps`), driven by Playwright.

Playwright never downloads a browser here: it is given the system's executable, a fresh profile
directory and a HOME of its own, with every background service of Chromium turned off (no network
traffic but the pages the tests open, all on 127.0.0.1).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
from pathlib import Path

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
VIEWPORT = {"width": 1280, "height": 900}


def missing() -> str | None:
    """Why the browser tests cannot run here (None when they can): a message that says the fix."""
    if not Path(CHROMIUM).exists():
        return (f"Chromium is missing at {CHROMIUM}: the browser tests need Debian's Chromium. "
                "Install it with `make browser-deps` (apt-get install -y chromium).")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"Playwright for Python is missing ({exc}): it is in the `dev` extra of pyproject.toml"
    return None


@functools.cache
def _playwright():
    """One Playwright driver for the whole test process: a second `sync_playwright()` started while
    the first runs (the browser tests' session fixture, then the hub test) is refused."""
    from playwright.sync_api import sync_playwright

    driver = sync_playwright().start()
    atexit.register(driver.stop)
    return driver


@contextlib.contextmanager
def persistent_context(base: Path, viewport: dict | None = None):
    """A browser context with its own profile under `base` (cookies and storage live there, so a
    second context is a second, independent browser: one per user of a hub)."""
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"))
    pw = _playwright()
    context = None
    try:
        context = pw.chromium.launch_persistent_context(
            str(base / "profile"),
            env=env,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=viewport or VIEWPORT,
            timeout=60_000,
        )
        context.set_default_timeout(30_000)
        yield context
    finally:
        if context is not None:
            context.close()
