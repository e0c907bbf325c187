"""Every durable backend is an async context manager: `aclose()` ends the object's use, never the stored run."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from edgewise.graph import End
from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.raw import RawNodeSnapshot
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._workflow import Middle, Start, Tally, cycle_graph, expected_trail
from .conftest import Store, run_id_of

pytestmark = pytest.mark.anyio


def closed_message(persistence: Any) -> str:
    """The start of the error a closed persistence raises: it names the class, the run and the store."""
    if isinstance(persistence, FileStatePersistence):
        where = f'file {str(persistence.json_file)!r}'
    elif isinstance(persistence, SqliteStatePersistence):
        where = f'SQLite file {str(persistence.path)!r}'
    else:
        assert isinstance(persistence, PostgresStatePersistence)
        where = f'PostgreSQL database {persistence.dsn!r}'  # masked
    return f'{type(persistence).__name__} of run {run_id_of(persistence)!r} in {where} is closed'


async def test_async_with_gives_the_persistence_and_closes_it(durable: Store) -> None:
    persistence = durable()
    async with persistence as entered:
        assert entered is persistence
        result = await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)

    assert result.output == 1
    with pytest.raises(PersistenceError) as caught:
        await persistence.load_all()
    assert caught.value.message.startswith(closed_message(persistence))
    # The run itself is untouched: a new object reads it whole.
    reopened = durable(run_id_of(persistence))
    reopened.set_graph_types(cycle_graph)
    assert [s.kind for s in await reopened.load_all()] == ['node', 'node', 'node', 'end']


async def test_aclose_is_idempotent(durable: Store) -> None:
    unused = durable()
    await unused.aclose()
    await unused.aclose()

    used = durable()
    await cycle_graph.initialize(Start(), used, state=Tally())
    await used.aclose()
    await used.aclose()
    async with durable() as entered:
        await entered.aclose()  # and leaving the block closes it once more, quietly


def _uses(persistence: Any) -> dict[str, Callable[[], Awaitable[Any]]]:
    async def enter() -> None:
        async with persistence:
            pass  # pragma: no cover

    async def resume() -> None:
        async with cycle_graph.iter_from_persistence(persistence):
            pass  # pragma: no cover

    async def record_run() -> None:
        async with persistence.record_run('Start:0'):
            pass  # pragma: no cover

    return {
        'load_all': persistence.load_all,
        'load_raw': persistence.load_raw,
        'load_next': persistence.load_next,
        'info': persistence.info,
        'fork': lambda: persistence.fork('any'),
        'snapshot_node': lambda: persistence.snapshot_node(Tally(), Middle(step=9)),
        'snapshot_node_if_new': lambda: persistence.snapshot_node_if_new('new', Tally(), Middle(step=9)),
        'snapshot_end': lambda: persistence.snapshot_end(Tally(), End(0)),
        'record_run': record_run,
        'async with': enter,
        'iter_from_persistence': resume,
    }


@pytest.mark.parametrize(
    'use',
    [
        'load_all',
        'load_raw',
        'load_next',
        'info',
        'fork',
        'snapshot_node',
        'snapshot_node_if_new',
        'snapshot_end',
        'record_run',
        'async with',
        'iter_from_persistence',
    ],
)
async def test_every_use_after_aclose_is_refused_and_changes_nothing(durable: Store, use: str) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally())
    before = await durable(run_id_of(persistence)).load_raw()
    await persistence.aclose()

    with pytest.raises(PersistenceError) as caught:
        await _uses(persistence)[use]()

    assert caught.value.message.startswith(closed_message(persistence))
    assert caught.value.message.endswith(
        'nothing was read or written. Create a new persistence object for the run to use it again.'
    )
    assert await durable(run_id_of(persistence)).load_raw() == before


async def test_aclose_while_a_run_advances_lets_go_of_the_run(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))

    async with cycle_graph.iter_from_persistence(persistence) as run:
        await run.next()  # Start ran; Middle is stored, already marked running for the next step
        await persistence.aclose()
        with pytest.raises(PersistenceError, match=re.escape(closed_message(persistence))):
            await run.next()

    # Released: another object takes the run over at once, and runs Middle (which never started) and on.
    async with cycle_graph.iter_from_persistence(durable(run_id_of(persistence))) as resumed:
        async for _ in resumed:
            pass
    assert resumed.result is not None
    assert resumed.result.state.trail == expected_trail(1)


async def test_a_node_that_ends_after_aclose_is_not_recorded_and_runs_again(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    [snapshot] = await persistence.load_all()

    with pytest.raises(PersistenceError, match=re.escape(closed_message(persistence))):
        async with persistence.record_run(snapshot.id):
            await persistence.aclose()  # while the node runs

    reopened = durable(run_id_of(persistence))
    [stored] = await reopened.load_raw()
    assert isinstance(stored, RawNodeSnapshot)
    assert stored.status == 'running'  # as a node whose process died: the next claim runs it again
    async with cycle_graph.iter_from_persistence(reopened) as run:
        async for _ in run:
            pass
    assert run.result is not None
    assert run.result.state.trail == expected_trail(1)


async def test_sqlite_close_keeps_the_object_usable_unlike_aclose(tmp_path: Path) -> None:
    persistence = SqliteStatePersistence(tmp_path / 'runs.db', 'r')
    await cycle_graph.initialize(Start(), persistence, state=Tally())

    persistence.close()
    persistence.close()
    assert [s.kind for s in await persistence.load_all()] == ['node']  # opened again

    await persistence.aclose()
    persistence.close()  # nothing left to close: a no-op
    with pytest.raises(PersistenceError, match=r"SqliteStatePersistence of run 'r' in SQLite file '.*runs.db' is"):
        await persistence.load_all()
