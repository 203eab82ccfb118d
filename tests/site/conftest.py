"""The site is built once per test session (site/build.py, as `make site` runs it) and served on
127.0.0.1 to one Chromium: tests/site/test_site.py and tests/site/test_accessibility.py share both."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sitekit import chromium, serve, site_build


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    start = time.monotonic()
    assert site_build.main(["--out", str(out)]) == 0, "site/build.py failed"
    print(f"site built in {time.monotonic() - start:.0f} s")
    return out


@pytest.fixture(scope="session")
def browser(site, tmp_path_factory):
    if chromium.missing():
        pytest.fail(chromium.missing())
    with serve(site) as origin, chromium.persistent_context(tmp_path_factory.mktemp("chromium")) as context:
        yield origin, context
