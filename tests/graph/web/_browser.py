"""A real uvicorn server on 127.0.0.1 (a free port, in a thread) and headless Chromium driven by Playwright."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
]


def chromium_or_skip() -> str:
    """The system Chromium; the test skips where there is none (`.ci/run` installs it)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f'no Chromium at {CHROMIUM} (apt-get install -y chromium): the browser tests need one')
    return CHROMIUM


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve `app` on 127.0.0.1 at a free port until the block ends; yields the base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen(128)  # connections wait in the backlog until the server takes them: no wait for it to start
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    thread = threading.Thread(target=server.run, kwargs={'sockets': [sock]}, daemon=True)
    thread.start()
    try:
        yield f'http://127.0.0.1:{port}'
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


@contextmanager
def browser_page() -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page and the list of every URL it requests."""
    from playwright.sync_api import expect, sync_playwright

    # An expectation passes as soon as the page shows it; the bound is for a machine under load, not a delay.
    expect.set_options(timeout=30_000)
    executable = chromium_or_skip()
    requested: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={'width': 1280, 'height': 900})
            page.on('request', lambda request: requested.append(request.url))
            yield page, requested
        finally:
            browser.close()
