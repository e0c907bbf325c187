"""`load_raw()`: a stored run's history read without the graph, as the `edgewise` command reads it."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from edgewise.graph import BaseNode, End, Graph, GraphRunContext, NodeSnapshot
from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.raw import RawEndSnapshot, RawNode, RawNodeSnapshot
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._workflow import Start, Tally, cycle_graph
from .conftest import Store, run_id_of

pytestmark = pytest.mark.anyio


async def test_load_raw_reads_the_history_as_data_without_the_graph(durable: Store) -> None:
    writer = durable()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=writer)
    typed = await writer.load_all()

    reader = durable(run_id_of(writer))  # never told the graph's types
    raw = await reader.load_raw()

    assert [type(s) for s in raw] == [RawNodeSnapshot, RawNodeSnapshot, RawNodeSnapshot, RawEndSnapshot]
    assert [s.id for s in raw] == [s.id for s in typed]
    start, middle, finish, end = raw
    assert isinstance(start, RawNodeSnapshot)
    assert isinstance(middle, RawNodeSnapshot)
    assert isinstance(finish, RawNodeSnapshot)
    assert isinstance(end, RawEndSnapshot)
    assert start.node == RawNode(node_id='Start', fields={})
    assert middle.node == RawNode(node_id='Middle', fields={'step': 1})
    assert middle.state == {'count': 1, 'target': 1, 'trail': ['Start'], 'effects_log': None, 'node_delay': 0.0}
    assert end.result.data == 1
    assert end.state['trail'] == ['Start', 'Middle', 'Finish']
    for raw_snapshot, snapshot in zip(raw[:3], typed[:3], strict=True):
        assert isinstance(raw_snapshot, NodeSnapshot)
        assert isinstance(snapshot, NodeSnapshot)
        assert (raw_snapshot.status, raw_snapshot.start_ts, raw_snapshot.duration) == (
            snapshot.status,
            snapshot.start_ts,
            snapshot.duration,
        )
    # Reading raw leaves the object's own types alone: typed reading still needs the graph.
    with pytest.raises(PersistenceError, match="needs the graph's types"):
        await reader.load_all()


async def test_load_raw_of_a_run_with_nothing_stored_is_empty(durable: Store) -> None:
    assert await durable('never-ran').load_raw() == []


@dataclass
class Renamed(BaseNode[Tally, None, int]):
    async def run(self, ctx: GraphRunContext[Tally]) -> End[int]:
        return End(0)  # pragma: no cover


renamed_graph = Graph(nodes=(Renamed,), name='renamed_graph')


async def test_load_raw_reads_a_run_whose_nodes_the_graph_no_longer_has(durable: Store) -> None:
    writer = durable()
    await cycle_graph.initialize(Start(), writer, state=Tally())
    reader = durable(run_id_of(writer))
    reader.set_graph_types(renamed_graph)

    with pytest.raises(PersistenceError, match='its node `Start` is not a node of this graph'):
        await reader.load_all()
    [snapshot] = await reader.load_raw()
    assert isinstance(snapshot, RawNodeSnapshot)
    assert (snapshot.node.node_id, snapshot.status) == ('Start', 'created')


async def test_fork_needs_no_graph_either(durable: Store) -> None:
    writer = durable()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=writer)
    second = (await writer.load_all())[1]

    fork = durable.track(await durable(run_id_of(writer)).fork(second.id, run_id='branch'))

    history = await fork.load_raw()
    assert [(s.node.node_id, s.status) for s in history if isinstance(s, RawNodeSnapshot)] == [
        ('Start', 'success'),
        ('Middle', 'created'),
    ]
    assert len(history) == 2


_NOT_A_SNAPSHOT = {'kind': 'node', 'id': 'a', 'state': {}, 'node': {'step': 1}}  # a node without its node_id


async def test_a_file_snapshot_that_is_not_one_is_reported(tmp_path: Path) -> None:
    run_file = tmp_path / 'damaged.json'
    run_file.write_text(json.dumps([_NOT_A_SNAPSHOT]))

    with pytest.raises(PersistenceError) as caught:
        await FileStatePersistence(run_file).load_raw()
    assert caught.value.message.startswith(
        f"Snapshot 'a' of run 'damaged' in file {str(run_file)!r} cannot be loaded: it is not a snapshot "
        '(node: Value error, a stored node is an object with a `node_id`). Nothing was changed; it was not written '
        'by Edgewise or pydantic-graph, or was damaged since.'
    )
    assert json.loads(run_file.read_text()) == [_NOT_A_SNAPSHOT]


async def test_a_sqlite_snapshot_that_is_not_one_is_reported(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    async with SqliteStatePersistence(db, 'damaged') as writer:
        await cycle_graph.initialize(Start(), writer, state=Tally())
    with sqlite3.connect(db) as conn:
        conn.execute('UPDATE edgewise_snapshots SET data = ?', (json.dumps(_NOT_A_SNAPSHOT),))

    async with SqliteStatePersistence(db, 'damaged') as reader:
        with pytest.raises(
            PersistenceError, match=r"Snapshot 'Start:\w+' of run 'damaged' in SQLite file .* not a snapshot"
        ):
            await reader.load_raw()


async def _last_snapshots(persistence: object, tmp_path: Path, run_ids: list[str]) -> dict[str, Any]:
    """`store.last_raw_snapshots` on the store of `persistence` (PostgreSQL's test schema has no URL: its class's)."""
    from edgewise.graph.persistence import store
    from edgewise.graph.persistence.postgres import PostgresStatePersistence

    if isinstance(persistence, SqliteStatePersistence):
        return await store.last_raw_snapshots(f'sqlite:///{persistence.path}', run_ids)
    if isinstance(persistence, FileStatePersistence):
        return await store.last_raw_snapshots(tmp_path.as_uri(), run_ids)
    assert isinstance(persistence, PostgresStatePersistence)
    return await PostgresStatePersistence.last_raw_snapshots(persistence._dsn, run_ids)


async def test_the_last_snapshots_of_many_runs_are_read_at_once(
    durable: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `runs list` reads them for its waiting runs; a run with nothing stored is left out."""
    from edgewise.graph.persistence import _sql

    monkeypatch.setattr(_sql, '_IDS_PER_QUERY', 2)  # three runs: two queries
    ids = []
    for target in (1, 2, 3):
        writer = durable()
        await cycle_graph.run(Start(), state=Tally(target=target), persistence=writer)
        ids.append(run_id_of(writer))
    histories = [await durable(run_id).load_raw() for run_id in ids]

    found = await _last_snapshots(durable('probe'), tmp_path, [*ids, 'never-ran'])

    assert found == {run_id: history[-1] for run_id, history in zip(ids, histories, strict=True)}
    assert [found[run_id].state['target'] for run_id in ids] == [1, 2, 3]
    assert await _last_snapshots(durable('probe'), tmp_path, []) == {}
