"""A store that fails while a run advances (a full disk, a dropped database connection) is the store's failure,
never the node's: the run is left as stored, resumable at once, and nothing is written without the run's hold."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._store_fault_worker import Grow, during_grow, fault_graph
from .conftest import postgres_schema

pytestmark = pytest.mark.anyio


async def _statuses(persistence: Any) -> list[tuple[str, str | None]]:
    """Each stored snapshot's node (or `End`) and status."""
    return [
        (snapshot.node.node_id if snapshot.kind == 'node' else 'End', getattr(snapshot, 'status', None))
        for snapshot in await persistence.load_raw()
    ]


async def _finish(persistence: Any) -> int:
    async with fault_graph.iter_from_persistence(persistence) as run:
        async for _ in run:
            pass
    assert run.result is not None
    return run.result.output


async def test_a_write_the_sqlite_store_refuses_leaves_the_run_waiting_not_failed(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    async with SqliteStatePersistence(db, 'r') as persistence:
        await fault_graph.initialize(Grow(), persistence, state=['x' * 100_000])
    async with SqliteStatePersistence(db, 'r') as persistence:

        def fill_the_disk() -> None:  # no page may be added to the file; storing `Done` (large state) needs some
            connection = persistence._conn
            assert connection is not None
            # The pages the file has free (left by rewrites of the first row) are taken first, by another table.
            free = connection.execute('PRAGMA freelist_count').fetchone()[0]
            page_size = connection.execute('PRAGMA page_size').fetchone()[0]
            connection.execute('CREATE TABLE filler (x BLOB)')
            connection.execute('INSERT INTO filler VALUES (zeroblob(?))', (free * page_size,))
            connection.execute(f'PRAGMA max_page_count = {connection.execute("PRAGMA page_count").fetchone()[0]}')

        during_grow.append(fill_the_disk)
        with pytest.raises(PersistenceError) as exc_info:
            await _finish(persistence)
    assert exc_info.value.message == (
        f"SQLite file '{db}' refused a write for run 'r': database or disk is full. That write was rolled back, "
        'and the run can be resumed (its unfinished step runs again) once the store can be written again.'
    )

    async with SqliteStatePersistence(db, 'r') as persistence:
        info = await persistence.info()
        assert info is not None
        assert info.status == 'waiting'
        assert await _statuses(persistence) == [('Grow', 'running')]  # not 'error': the node did not fail
        assert await _finish(persistence) == 3
        assert await _statuses(persistence) == [('Grow', 'success'), ('Done', 'success'), ('End', None)]


async def test_a_run_whose_release_the_store_refused_is_resumable_at_once_from_another_process(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    async with SqliteStatePersistence(db, 'r') as persistence:
        await fault_graph.initialize(Grow(), persistence, state=[])
    command = [sys.executable, '-m', 'tests.graph.persistence._store_fault_worker', str(db), 'r']
    async with await anyio.open_process(command) as worker:
        assert worker.stdin is not None
        assert worker.stdout is not None
        line = (await BufferedByteReceiveStream(worker.stdout).receive_until(b'\n', 100_000)).decode()
        assert line.startswith(f"refused: SQLite file '{db}' refused a write for run 'r': "), line
        assert worker.returncode is None  # still alive, as a server whose disk filled up would be

        async with SqliteStatePersistence(db, 'r') as persistence:
            info = await persistence.info()
            assert info is not None
            assert info.status == 'waiting'
            assert await _finish(persistence) == 2
        await worker.stdin.aclose()
    assert worker.returncode == 0


async def test_a_dropped_postgresql_connection_leaves_the_run_resumable_and_is_not_reopened() -> None:
    import psycopg

    with postgres_schema() as dsn:
        async with PostgresStatePersistence(dsn, 'r') as persistence:
            await fault_graph.initialize(Grow(), persistence, state=[])
        persistence = PostgresStatePersistence(dsn, 'r')

        def drop_the_session() -> None:  # a server restart, a network cut, an administrator
            with psycopg.connect(dsn, autocommit=True) as admin:
                admin.execute('SELECT pg_terminate_backend(%s)', (persistence._conn.info.backend_pid,))

        during_grow.append(drop_the_session)
        with pytest.raises(PersistenceError) as exc_info:
            await _finish(persistence)
        message = exc_info.value.message
        assert message.startswith(f"The connection to {persistence._describe()} that held run 'r' was lost ("), message
        assert message.endswith('The run was left as stored, to be resumed (its unfinished step runs again).')
        assert persistence._conn is None  # and no new session was opened to write anything
        await persistence.aclose()

        async with PostgresStatePersistence(dsn, 'r') as again:
            info = await again.info()
            assert info is not None
            assert info.status == 'waiting'
            assert await _statuses(again) == [('Grow', 'running')]  # not 'error': the node did not fail
            assert await _finish(again) == 2
