"""What the site's tests share: the build, the pages, a local web server, the browser."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from pathlib import Path

import build as site_build  # noqa: F401 (the tests import it from here)
import chromium  # noqa: F401 (the tests import it from here)

ROOT = Path(__file__).resolve().parents[2]


def pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)


@contextlib.contextmanager
def serve(folder: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
