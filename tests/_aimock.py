"""The aimock protocol simulator (the `@copilotkit/aimock` npm package), run on 127.0.0.1 for the tests.

aimock speaks the OpenAI Chat Completions and Responses APIs, Anthropic's Messages API and the Gemini API,
streamed or not, from fixtures added at run time (`POST /__aimock/fixtures`), and injects failures: error
statuses (429 with `Retry-After`), dropped connections, truncated streams and latency. It keeps a journal of
the requests it received (`GET /__aimock/journal`).

The package is installed with `npm install --prefix` into a cache directory outside the repository
(`EDGEWISE_NPM_CACHE`, by default `~/.cache/edgewise-npm`) the first time it is needed, so a fresh machine
with Node.js gets it by itself. Without Node.js the tests that need it skip, unless
`EDGEWISE_REQUIRE_SERVICES=1`, under which they fail.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest

AIMOCK_VERSION = '1.43.0'
AIMOCK_PACKAGE = f'@copilotkit/aimock@{AIMOCK_VERSION}'
"""The simulator's npm package, pinned: fixtures and fault injection are used as this version documents them."""
_LISTENING = re.compile(r'listening on (http://127\.0\.0\.1:\d+)')
_START_LIMIT = 60.0
"""Seconds given to the install and the start: a guard against a wedged process, not a measure."""


def npm_cache_dir() -> Path:
    """Where the simulator is installed (outside the repository)."""
    configured = os.environ.get('EDGEWISE_NPM_CACHE')
    return Path(configured) if configured else Path.home() / '.cache' / 'edgewise-npm'


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get('EDGEWISE_REQUIRE_SERVICES') == '1':
        pytest.fail(f'the aimock simulator is required (EDGEWISE_REQUIRE_SERVICES=1) but {reason}')
    pytest.skip(f'the aimock simulator is unavailable: {reason}')


def _installed_binary() -> Path:
    prefix = npm_cache_dir()
    binary = prefix / 'node_modules' / '.bin' / 'llmock'
    manifest = prefix / 'node_modules' / '@copilotkit' / 'aimock' / 'package.json'
    if binary.exists() and manifest.exists() and json.loads(manifest.read_text())['version'] == AIMOCK_VERSION:
        return binary
    npm = shutil.which('npm')
    if npm is None or shutil.which('node') is None:
        _unavailable('Node.js (node and npm) is not installed')
    prefix.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [npm, 'install', '--prefix', str(prefix), '--no-audit', '--no-fund', '--no-save', AIMOCK_PACKAGE],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0 or not binary.exists():
        _unavailable(f'`npm install {AIMOCK_PACKAGE}` failed: {result.stderr.strip()[-500:]}')
    return binary


@dataclass
class Aimock:
    """A running simulator: its URL, its control API, and a fresh marker per scenario."""

    url: str
    control: httpx.Client = field(repr=False)

    def marker(self) -> str:
        """A unique word to put in a prompt, so that a scenario's fixtures match only its own requests."""
        return f'scenario-{uuid.uuid4().hex}'

    def add(self, *fixtures: dict[str, Any]) -> None:
        """Add fixtures (aimock's JSON fixture entries: `match`, `response` and the stream/chaos options)."""
        reply = self.control.post('/__aimock/fixtures', json={'fixtures': list(fixtures)})
        assert reply.status_code == 200, reply.text

    def journal(self, path: str) -> list[dict[str, Any]]:
        """The requests received whose path contains `path`, oldest first."""
        reply = self.control.get('/__aimock/journal', params={'path': path})
        assert reply.status_code == 200, reply.text
        entries: list[dict[str, Any]] = reply.json()
        return entries

    def requests_for(self, marker: str) -> list[dict[str, Any]]:
        """The journal entries of the requests whose body mentions `marker`."""
        reply = self.control.get('/__aimock/journal')
        assert reply.status_code == 200, reply.text
        return [entry for entry in reply.json() if marker in repr(entry.get('body'))]


def _read_lines(stream: Any, lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


@pytest.fixture(scope='session')
def aimock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Aimock]:
    """The simulator, installed if needed and started on a free port of 127.0.0.1 for the session."""
    binary = _installed_binary()
    fixtures = tmp_path_factory.mktemp('aimock') / 'empty.json'
    fixtures.write_text('{"fixtures": []}')
    process = subprocess.Popen(
        [str(binary), '--port', '0', '--host', '127.0.0.1', '--fixtures', str(fixtures), '--log-level', 'info'],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True)
    reader.start()
    url = None
    seen: list[str] = []
    try:
        while url is None:
            line = lines.get(timeout=_START_LIMIT)
            if line is None:
                _unavailable(f'it exited before listening: {"".join(seen)[-500:]}')
            seen.append(line)
            if found := _LISTENING.search(line):
                url = found.group(1)
        with httpx.Client(base_url=url) as control:
            yield Aimock(url=url, control=control)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=10)  # the pipe is at its end once the process is gone
        if process.stdout is not None:
            process.stdout.close()
