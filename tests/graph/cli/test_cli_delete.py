"""`edgewise runs delete` and `edgewise runs prune`, as a subprocess against a copy of the seeded SQLite store."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from inline_snapshot import snapshot

from edgewise.graph.cli import main

if TYPE_CHECKING:
    from tests.graph.cli.conftest import Edgewise

STORE = 'sqlite:///runs.db'


def _run_ids(project: Path) -> list[str]:
    with sqlite3.connect(project / 'runs.db') as conn:
        return [row[0] for row in conn.execute('SELECT DISTINCT run_id FROM edgewise_snapshots ORDER BY run_id')]


def _normal(text: str) -> str:
    text = re.sub(r'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d', 'TIME', text)
    return re.sub(r'(?<=\S) {2,}', '  ', text)


def test_delete_removes_the_runs_and_every_snapshot_of_them(edgewise: Edgewise, project: Path) -> None:
    result = edgewise('runs', 'delete', 'run-done', 'run-failed', '--store', STORE, cwd=project)
    assert result == (0, 'Deleted run run-done.\nDeleted run run-failed.\n', '')
    assert _run_ids(project) == ['run-partial', 'run-ticks']
    listing = edgewise('runs', 'list', '--store', STORE, cwd=project)
    assert [line.split()[0] for line in listing.out.splitlines()[1:]] == ['run-partial', 'run-ticks']


def test_delete_of_an_unknown_run_removes_nothing(edgewise: Edgewise, project: Path) -> None:
    result = edgewise('runs', 'delete', 'run-done', 'nope', '--store', STORE, cwd=project)
    assert result == (
        1,
        '',
        "edgewise: error: No run 'nope' in sqlite:///runs.db (`edgewise runs list --store URL` lists them).\n",
    )
    assert _run_ids(project) == ['run-done', 'run-failed', 'run-partial', 'run-ticks']


def test_prune_removes_finished_runs_only(edgewise: Edgewise, project: Path) -> None:
    dry = edgewise('runs', 'prune', '--store', STORE, '--finished-before', '0m', '--dry-run', cwd=project)
    assert (dry.code, _normal(dry.out), dry.err) == (
        0,
        snapshot("""\
RUN ID  GRAPH  STATUS  ENDED (UTC)
run-done  review_graph  finished  TIME
1 run finished before TIME UTC; --dry-run: none removed.
"""),
        '',
    )
    assert _run_ids(project) == ['run-done', 'run-failed', 'run-partial', 'run-ticks']

    result = edgewise('runs', 'prune', '--store', STORE, '--finished-before', '0m', '--failed', cwd=project)
    assert (result.code, _normal(result.out), result.err) == (
        0,
        snapshot("""\
RUN ID  GRAPH  STATUS  ENDED (UTC)
run-done  review_graph  finished  TIME
run-failed  failing_graph  failed  TIME
Deleted 2 runs finished or failed before TIME UTC.
"""),
        '',
    )
    assert _run_ids(project) == ['run-partial', 'run-ticks']


def test_prune_before_every_run_removes_nothing(edgewise: Edgewise, project: Path) -> None:
    result = edgewise('runs', 'prune', '--store', STORE, '--finished-before', '2001-01-01', cwd=project)
    assert result == (0, 'No run in sqlite:///runs.db finished before 2001-01-01 00:00:00 UTC.\n', '')
    assert _run_ids(project) == ['run-done', 'run-failed', 'run-partial', 'run-ticks']


@pytest.mark.parametrize('command', [('runs', 'delete'), ('runs', 'prune')])
def test_help(capsys: pytest.CaptureFixture[str], command: tuple[str, ...]) -> None:
    with pytest.raises(SystemExit) as exc_info:
        main([*command, '--help'])
    out, err = capsys.readouterr()
    assert (exc_info.value.code, out.startswith(f'usage: edgewise {" ".join(command)}'), err) == (0, True, '')


def test_a_moment_that_is_neither_a_time_nor_an_age(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc_info:
        main(['runs', 'prune', '--store', STORE, '--finished-before', 'last week'])
    assert (exc_info.value.code, capsys.readouterr().err) == (
        2,
        "edgewise runs prune: error: argument --finished-before: 'last week' is neither an ISO date or time "
        '(2026-01-31, 2026-01-31T12:00) nor an age (30d, 12h, 45m) (see `edgewise runs prune --help`)\n',
    )
