"""A stored node is loaded only as the graph's node class its `node_id` tag names, even in a one-node graph."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pydantic
import pytest

from edgewise.graph import BaseNode, End, FullStatePersistence, Graph, GraphRunContext
from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

pytestmark = pytest.mark.anyio


@dataclass
class Alone(BaseNode[None, None, int]):
    value: int = 1

    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(self.value)


@dataclass
class Stranger(BaseNode[None, None, int]):
    """Same fields as `Alone`, so only the tag tells them apart."""

    value: int = 1

    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(self.value)  # pragma: no cover


alone_graph = Graph(nodes=[Alone], name='alone_graph')
stranger_graph = Graph(nodes=[Stranger], name='stranger_graph')


async def test_a_one_node_graph_refuses_a_node_of_another_graph_in_json() -> None:
    written = FullStatePersistence()
    await stranger_graph.initialize(Stranger(), written, state=None)
    reader = FullStatePersistence()
    reader.set_graph_types(alone_graph)

    with pytest.raises(pydantic.ValidationError) as caught:
        reader.load_json(written.dump_json())

    assert [(e['type'], e['loc'], e['ctx']) for e in caught.value.errors()] == [
        (
            'union_tag_invalid',
            (0, 'node', 'node'),
            {'discriminator': '_node_id_of()', 'tag': 'Stranger', 'expected_tags': "'Alone'"},
        )
    ]
    assert reader.history == []


async def test_a_one_node_graph_still_loads_its_own_node() -> None:
    written = FullStatePersistence()
    await alone_graph.initialize(Alone(value=7), written, state=None)
    reader = FullStatePersistence()
    reader.set_graph_types(alone_graph)

    reader.load_json(written.dump_json())

    assert [snapshot.node for snapshot in reader.history] == [Alone(value=7)]


async def test_a_one_node_graph_resuming_another_graphs_run_names_the_unexpected_node(tmp_path: Path) -> None:
    path = tmp_path / 'runs.db'
    written = SqliteStatePersistence(path, run_id='r1')
    await stranger_graph.initialize(Stranger(), written, state=None)
    snapshot_id = (await written.load_all())[0].id

    with pytest.raises(PersistenceError) as caught:
        async with alone_graph.iter_from_persistence(SqliteStatePersistence(path, run_id='r1')):
            pass  # pragma: no cover

    assert caught.value.message == (
        f"Snapshot {snapshot_id!r} of run 'r1' in SQLite file {str(path)!r} cannot be loaded: "
        'its node `Stranger` is not a node of this graph (renamed or removed?). Nothing was changed; load it with '
        'the version of the graph that wrote it, or fork the run from an earlier snapshot.'
    )
