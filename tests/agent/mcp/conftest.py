"""Real MCP servers for the MCP client tests.

- The FastMCP server of `fastmcp_server.py` (made with the MCP SDK's own server framework), run over stdio
  by each test, and over streamable HTTP and SSE on 127.0.0.1 (one subprocess per module, on a free port).
- The MCP project's reference "everything" server (Node), installed from the npm registry into
  `~/.cache/edgewise-tests/` (outside the repository) on first use. Without Node and npm its tests are
  skipped, unless `EDGEWISE_REQUIRE_SERVICES=1`, under which they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgewise.agent.mcp import MCPServerStdio, StdioTransport

SERVER = Path(__file__).with_name('fastmcp_server.py')
EVERYTHING_VERSION = '2026.8.31'
EVERYTHING_PREFIX = Path.home() / '.cache' / 'edgewise-tests' / f'mcp-everything-{EVERYTHING_VERSION}'
EVERYTHING_SCRIPT = EVERYTHING_PREFIX / 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'


def fastmcp_stdio(**kwargs: object) -> MCPServerStdio:
    """The FastMCP test server over stdio (not started until entered)."""
    kwargs.setdefault('timeout', 30)
    return StdioTransport(sys.executable, [str(SERVER), 'stdio'], **kwargs)  # type: ignore[arg-type]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return int(sock.getsockname()[1])


def _serve_http(transport: str) -> Iterator[str]:
    port = _free_port()
    path = '/mcp' if transport == 'streamable-http' else '/sse'
    yield from _serve([sys.executable, str(SERVER), transport, str(port)], port, path, None, 'FastMCP')


def _serve(command: list[str], port: int, path: str, env: dict[str, str] | None, what: str) -> Iterator[str]:
    """Run `command` until the fixture ends, once it listens on `port`; yields the URL of `path` on it."""
    transport = path.strip('/')
    # stderr to a file, not a pipe: a chatty server must never block on a full pipe.
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, env=env)
        try:
            # Bounded: 300 attempts, each a refused connect and a 0.1 s pause at most.
            for _ in range(300):
                if process.poll() is not None:
                    errors.seek(0)
                    pytest.fail(f'the {what} {transport} server exited: {errors.read().decode()}')
                try:
                    with socket.create_connection(('127.0.0.1', port), timeout=1):
                        break
                except OSError:
                    time.sleep(0.1)
            else:
                pytest.fail(f'the {what} {transport} server did not listen on port {port}')
            yield f'http://127.0.0.1:{port}{path}'
        finally:
            process.kill()
            process.wait(timeout=30)


@pytest.fixture(scope='module')
def streamable_http_url() -> Iterator[str]:
    """The URL of the FastMCP test server over streamable HTTP."""
    yield from _serve_http('streamable-http')


@pytest.fixture(scope='module')
def sse_url() -> Iterator[str]:
    """The URL of the FastMCP test server over SSE."""
    yield from _serve_http('sse')


@pytest.fixture(scope='session')
def everything_script() -> Path:
    """The entry point of the reference "everything" server, installed with npm on first use."""
    node, npm = shutil.which('node'), shutil.which('npm')
    if node is None or npm is None:
        if os.environ.get('EDGEWISE_REQUIRE_SERVICES') == '1':
            pytest.fail('Node.js and npm are needed for the MCP "everything" server (EDGEWISE_REQUIRE_SERVICES=1)')
        pytest.skip('Node.js and npm are needed for the MCP "everything" server')
    if not EVERYTHING_SCRIPT.exists():
        EVERYTHING_PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, 'install', '--prefix', str(EVERYTHING_PREFIX), '--no-audit', '--no-fund', '--no-save',
             f'@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}'],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    return EVERYTHING_SCRIPT


def _serve_everything(script: Path, transport: str, path: str) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, 'PORT': str(port)}
    yield from _serve(['node', str(script), transport], port, path, env, 'reference "everything"')


@pytest.fixture(scope='module')
def everything_http_url(everything_script: Path) -> Iterator[str]:
    """The URL of the reference "everything" server over streamable HTTP."""
    yield from _serve_everything(everything_script, 'streamableHttp', '/mcp')


@pytest.fixture(scope='module')
def everything_sse_url(everything_script: Path) -> Iterator[str]:
    """The URL of the reference "everything" server over SSE."""
    yield from _serve_everything(everything_script, 'sse', '/sse')
