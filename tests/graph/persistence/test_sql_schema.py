"""The SQL schema shared by SQLite and PostgreSQL: a step is one statement, and stores of version 1 migrate.

Version 2 added `edgewise_snapshots.prev_duration` and the trigger `edgewise_complete_previous`, which lets a
step store the next snapshot and mark the one that ran `'success'` in a single `INSERT`.
"""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from edgewise.graph import End, NodeSnapshot
from edgewise.graph.persistence._sql import SCHEMA_VERSION, SqlStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._workflow import Start, Tally, cycle_graph, expected_trail
from .conftest import Store, opened_store

pytestmark = pytest.mark.anyio

SQL = ['sqlite', 'postgres']


def _query(store: Store, persistence: Any, sql: str) -> list[tuple[Any, ...]]:
    """Run `sql` on the store's database through a connection of the test's own."""
    if store.kind == 'sqlite':
        with sqlite3.connect(persistence.path) as conn:
            return conn.execute(sql).fetchall()
    import psycopg

    with psycopg.connect(persistence._dsn, autocommit=True) as conn:
        cursor = conn.execute(sql)
        return cursor.fetchall() if cursor.description is not None else []


def _downgrade_to_version_1(store: Store, persistence: Any) -> None:
    """Turn the store back into what version 1 of the schema created (no column, no trigger)."""
    if store.kind == 'sqlite':
        statements = ['DROP TRIGGER edgewise_complete_previous']
    else:
        statements = [
            'DROP TRIGGER edgewise_complete_previous ON edgewise_snapshots',
            'DROP FUNCTION edgewise_complete_previous()',
        ]
    statements += [
        'ALTER TABLE edgewise_snapshots DROP COLUMN prev_duration',
        'UPDATE edgewise_schema_version SET version = 1',
    ]
    for statement in statements:
        _query(store, persistence, statement)


async def _advance(persistence: SqlStatePersistence[Tally, int], steps: int) -> None:
    async with cycle_graph.iter_from_persistence(persistence) as run:
        for _ in range(steps):
            if isinstance(await run.next(), End):
                return


@pytest.mark.parametrize('kind', SQL)
async def test_a_version_1_store_is_migrated_and_its_run_goes_on(kind: str, tmp_path: Path) -> None:
    async with opened_store(kind, tmp_path) as store:
        first: SqlStatePersistence[Tally, int] = store('r')
        async with cycle_graph.iter(Start(), state=Tally(target=2), persistence=first) as run:
            await run.next()
            await run.next()
        _downgrade_to_version_1(store, first)
        await _close(first)
        assert _query(store, first, 'SELECT version FROM edgewise_schema_version') == [(1,)]

        resumed: SqlStatePersistence[Tally, int] = store('r')
        resumed.set_graph_types(cycle_graph)
        await _advance(resumed, 100)

        assert _query(store, resumed, 'SELECT version FROM edgewise_schema_version') == [(SCHEMA_VERSION,)]
        history = await resumed.load_all()
        assert history[-1].state.trail == expected_trail(2)
        nodes = [s for s in history if isinstance(s, NodeSnapshot)]
        assert [s.status for s in nodes] == ['success'] * 6
        assert all(s.duration is not None and s.start_ts is not None for s in nodes)
        # Steps after the migration went through the trigger: their rows carry the predecessor's duration.
        carried = _query(store, resumed, 'SELECT COUNT(*) FROM edgewise_snapshots WHERE prev_duration IS NOT NULL')
        assert carried[0][0] >= 3


@pytest.mark.parametrize('kind', SQL)
async def test_each_row_carries_the_duration_its_predecessor_is_marked_with(kind: str, tmp_path: Path) -> None:
    async with opened_store(kind, tmp_path) as store:
        persistence: SqlStatePersistence[Tally, int] = store('r')
        await cycle_graph.run(Start(), state=Tally(target=3), persistence=persistence)

        rows = _query(
            store, persistence, 'SELECT seq, status, duration, prev_duration FROM edgewise_snapshots ORDER BY seq'
        )
        assert len(rows) == 10
        assert [r[1] for r in rows] == ['success'] * 9 + [None]
        # The first write of a run has no predecessor; every later one marks the row before it.
        assert rows[0][3] is None
        for before, after in itertools.pairwise(rows):
            assert before[2] == after[3]


async def test_a_step_of_a_sqlite_run_is_one_statement(tmp_path: Path) -> None:
    persistence: SqliteStatePersistence[Tally, int] = SqliteStatePersistence(tmp_path / 'runs.db', 'r')
    statements: list[str] = []
    try:
        async with cycle_graph.iter(Start(), state=Tally(target=3), persistence=persistence) as run:
            await run.next()  # the first step also writes the run's first rows
            assert persistence._conn is not None
            persistence._conn.set_trace_callback(statements.append)
            for _ in range(3):
                await run.next()
            persistence._conn.set_trace_callback(None)
    finally:
        persistence.close()

    # No BEGIN, no COMMIT, no UPDATE: one INSERT per step (traced again as its trigger runs, hence the set).
    executed = list(dict.fromkeys(statements))
    assert len(executed) == 3
    assert all(s.startswith('INSERT INTO edgewise_snapshots') for s in executed)


async def _close(persistence: Any) -> None:
    await persistence.aclose()
