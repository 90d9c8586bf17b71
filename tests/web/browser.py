"""What the browser tests share: Debian's chromium (never a downloaded browser), its options, the
skip mark when it is missing, and an app served by uvicorn on a free loopback port."""

from __future__ import annotations

import os
import socket
import threading
import time
from contextlib import contextmanager

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

#: a browser test module's `pytestmark`: skipped where chromium is not installed
needs_chromium = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"{CHROMIUM} missing: apt-get install chromium (scripts/test.sh does)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(app):
    """`app` served by uvicorn on a free loopback port: yields its base URL."""
    import uvicorn

    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(10)
