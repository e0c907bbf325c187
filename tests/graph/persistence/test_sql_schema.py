"""The SQL schema shared by SQLite and PostgreSQL: a step is one statement writing one row, and older stores migrate.

Version 2 added `edgewise_snapshots.prev_duration` and the trigger `edgewise_complete_previous`, which let a
step store the next snapshot and mark the one that ran `'success'` in a single `INSERT`. Version 3 drops the
trigger: the successor's `prev_duration` is itself the mark, so a step no longer rewrites the row before it.
"""

from __future__ import annotations

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


# What the trigger of version 2 did, for the rows of steps taken since: the row before one with a `prev_duration`
# is marked `'success'` with that duration.
_MARK_AS_THE_TRIGGER_DID = (
    "UPDATE edgewise_snapshots SET status = 'success', duration = (SELECT n.prev_duration FROM edgewise_snapshots n "
    'WHERE n.run_id = edgewise_snapshots.run_id AND n.seq = edgewise_snapshots.seq + 1) WHERE EXISTS (SELECT 1 '
    'FROM edgewise_snapshots n WHERE n.run_id = edgewise_snapshots.run_id AND n.seq = edgewise_snapshots.seq + 1 '
    'AND n.prev_duration IS NOT NULL)'
)


def _downgrade_to_version_1(store: Store, persistence: Any) -> None:
    """Turn the store back into what version 1 of the schema created (no column, no trigger, every status in its
    own row)."""
    statements = [
        _MARK_AS_THE_TRIGGER_DID,
        'DROP INDEX edgewise_runs_created',
        'ALTER TABLE edgewise_snapshots DROP COLUMN prev_duration',
        'UPDATE edgewise_schema_version SET version = 1',
    ]
    for statement in statements:
        _query(store, persistence, statement)


def _downgrade_to_version_2(store: Store, persistence: SqlStatePersistence[Any, Any]) -> None:
    """Turn the store back into what version 2 of the schema created: the trigger, and the rows it marked."""
    statements = [
        _MARK_AS_THE_TRIGGER_DID,
        'DROP INDEX edgewise_runs_created',
        *persistence.dialect.migrations[2],
        'UPDATE edgewise_schema_version SET version = 2',
    ]
    for statement in statements:
        _query(store, persistence, statement)


def _has_created_index(store: Store, persistence: Any) -> bool:
    if store.kind == 'sqlite':
        sql = "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'edgewise_runs_created'"
    else:
        sql = (
            "SELECT indexname FROM pg_indexes WHERE indexname = 'edgewise_runs_created' "
            'AND schemaname = current_schema()'
        )
    return bool(_query(store, persistence, sql))


def _has_trigger(store: Store, persistence: Any) -> bool:
    if store.kind == 'sqlite':
        sql = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name = 'edgewise_complete_previous'"
    else:
        sql = (
            'SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid '
            "WHERE t.tgname = 'edgewise_complete_previous' AND c.relnamespace = current_schema()::regnamespace"
        )
    return bool(_query(store, persistence, sql))


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
        assert not _has_trigger(store, resumed)
        assert _has_created_index(store, resumed)
        # Steps after the migration store the predecessor's duration in the row after it.
        carried = _query(store, resumed, 'SELECT COUNT(*) FROM edgewise_snapshots WHERE prev_duration IS NOT NULL')
        assert carried[0][0] >= 3


@pytest.mark.parametrize('kind', SQL)
async def test_a_version_2_store_loses_its_trigger_and_its_run_goes_on(kind: str, tmp_path: Path) -> None:
    async with opened_store(kind, tmp_path) as store:
        first: SqlStatePersistence[Tally, int] = store('r')
        async with cycle_graph.iter(Start(), state=Tally(target=2), persistence=first) as run:
            for _ in range(3):
                await run.next()
        _downgrade_to_version_2(store, first)
        await _close(first)
        assert _has_trigger(store, first)
        marked = _query(store, first, "SELECT COUNT(*) FROM edgewise_snapshots WHERE status = 'success'")
        assert marked == [(3,)]

        resumed: SqlStatePersistence[Tally, int] = store('r')
        resumed.set_graph_types(cycle_graph)
        await _advance(resumed, 100)

        assert _query(store, resumed, 'SELECT version FROM edgewise_schema_version') == [(SCHEMA_VERSION,)]
        assert not _has_trigger(store, resumed)
        assert _has_created_index(store, resumed)
        # The rows the trigger marked stay marked; the later ones are marked by their successors alone.
        marked = _query(store, first, "SELECT COUNT(*) FROM edgewise_snapshots WHERE status = 'success'")
        assert marked == [(3,)]
        history = await resumed.load_all()
        assert history[-1].state.trail == expected_trail(2)
        nodes = [s for s in history if isinstance(s, NodeSnapshot)]
        assert [s.status for s in nodes] == ['success'] * 6
        assert all(s.duration is not None and s.start_ts is not None for s in nodes)


@pytest.mark.parametrize('kind', SQL)
async def test_each_row_carries_the_duration_its_predecessor_is_marked_with(kind: str, tmp_path: Path) -> None:
    async with opened_store(kind, tmp_path) as store:
        persistence: SqlStatePersistence[Tally, int] = store('r')
        await cycle_graph.run(Start(), state=Tally(target=3), persistence=persistence)

        rows = _query(
            store, persistence, 'SELECT seq, status, duration, prev_duration FROM edgewise_snapshots ORDER BY seq'
        )
        assert len(rows) == 10
        # The first write of a run has no predecessor; every later one marks the row before it, which no write
        # changes once stored: it keeps the status it was stored with (the first step's row is stored, then
        # started; each later one is stored running), and no duration of its own.
        assert rows[0][3] is None
        assert [r[1] for r in rows] == ['running'] * 9 + [None]
        assert all(r[2] is None for r in rows)
        assert all(after[3] is not None for after in rows[1:])
        history = await persistence.load_all()
        assert [getattr(s, 'status', None) for s in history] == ['success'] * 9 + [None]
        assert [getattr(s, 'duration', None) for s in history] == [after[3] for after in rows[1:]] + [None]


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

    # No BEGIN, no COMMIT, no UPDATE: one INSERT per step.
    assert len(statements) == 3
    executed = statements
    assert all(s.startswith('INSERT INTO edgewise_snapshots') for s in executed)


async def _close(persistence: Any) -> None:
    await persistence.aclose()
