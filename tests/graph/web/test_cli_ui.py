"""`edgewise ui` on the command line: a real server in a subprocess, stopped with Ctrl-C (SIGINT)."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import anyio
import httpx
import pytest

from edgewise.graph.cli._ui import is_loopback

from ..cli.conftest import Edgewise, RunningCommand
from ..cli.conftest import edgewise as edgewise
from ._flows import seed


def _url(command: RunningCommand) -> str:
    command.read_until('\n')
    line = command._out.decode().splitlines()[0]
    assert line.startswith('edgewise ui: http://'), line
    return line.removeprefix('edgewise ui: ')


def _stop(command: RunningCommand) -> None:
    """Ctrl-C, as a user stops it: the server shuts down, and the command ends as any other on Ctrl-C."""
    command.send_signal(signal.SIGINT)
    result = command.finish()
    assert (result.code, result.err) == (130, 'edgewise: error: interrupted\n')


def test_serves_the_stores_on_loopback(edgewise: Edgewise, tmp_path: Path, sqlite_url: str) -> None:
    anyio.run(seed, sqlite_url)
    command = edgewise.start('ui', '--store', sqlite_url, '--port', '0', cwd=tmp_path)
    try:
        url = _url(command)
        page = httpx.get(url, timeout=30)
    finally:
        _stop(command)

    assert url.startswith('http://127.0.0.1:')
    assert '?token=' not in url
    assert page.status_code == 200
    assert 'data-run="broken"' in page.text


def test_beyond_loopback_a_token_is_generated_and_required(edgewise: Edgewise, tmp_path: Path, sqlite_url: str) -> None:
    anyio.run(seed, sqlite_url)
    command = edgewise.start(
        'ui', '--store', sqlite_url, '--host', '0.0.0.0', '--port', '0', '--read-only', cwd=tmp_path
    )
    try:
        url = _url(command).replace('0.0.0.0', '127.0.0.1')
        refused = httpx.get(url.partition('?')[0], timeout=30)
        with httpx.Client(timeout=30, follow_redirects=True) as client:
            given = client.get(url)
    finally:
        _stop(command)

    assert '?token=' in url
    assert refused.status_code == 401
    assert (given.status_code, 'read-only' in given.text) == (200, True)


@pytest.mark.parametrize(
    ('args', 'message'),
    [
        (('--store', 'dbos+sqlite:///x.db'), 'edgewise ui shows Edgewise stores; dbos+sqlite is a DBOS store.'),
        (('--store', 'sqlite:///x.db', '--app', 'nowhere:graph'), "Cannot import 'nowhere'"),
        (('--store', 'ftp://x'), "Unsupported store URL 'ftp://x'"),
    ],
)
def test_mistakes_are_one_line_errors(edgewise: Edgewise, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    result = edgewise('ui', *args, cwd=tmp_path)

    assert result.code == 1
    assert result.err.startswith('edgewise: error: ')
    assert message in result.err


def test_a_port_in_use(edgewise: Edgewise, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = edgewise('ui', '--store', 'sqlite:///x.db', '--port', str(port), cwd=tmp_path)

    assert (result.code, result.err) == (
        1,
        f'edgewise: error: Cannot listen on 127.0.0.1 port {port}: Address already in use.\n',
    )


def test_loopback_addresses() -> None:
    assert [is_loopback(h) for h in ('127.0.0.1', 'localhost', '::1', '[::1]', '0.0.0.0', 'example.com')] == [
        True, True, True, True, False, False,
    ]  # fmt: skip


def test_without_the_web_extra_the_error_names_it() -> None:
    from ..._without_module import run_without

    imported = run_without('starlette', 'import edgewise.graph.web')
    command = run_without(
        'uvicorn', 'from edgewise.graph.cli import main; raise SystemExit(main(["ui", "--store", "sqlite:///x.db"]))'
    )

    assert imported.returncode == 1
    assert 'ModuleNotFoundError: edgewise ui needs the `web` extra (starlette is missing)' in imported.stderr
    assert (command.returncode, command.stderr) == (
        1,
        'edgewise: error: edgewise ui needs the `web` extra (uvicorn is missing): pip install "edgewise-graph[web]"\n',
    )
