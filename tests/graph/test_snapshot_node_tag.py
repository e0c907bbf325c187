"""A stored node is loaded only as the graph's node class its `node_id` tag names, even in a one-node graph; every
kind of node class is stored with that tag."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

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


@dataclass
class Aliased(BaseNode[None, None, int]):
    """A field with a serialization alias: the tag is added to the dumped dict, the field keeps its own name."""

    value: Annotated[int, pydantic.Field(serialization_alias='v')] = 1

    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(self.value)  # pragma: no cover


@dataclass
class OwnsTheName(BaseNode[None, None, int]):
    """A field named like the tag: the tag wins in the stored JSON, as it always has."""

    node_id: str = 'mine'

    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(1)  # pragma: no cover


@pydantic.dataclasses.dataclass
class PydanticNode(BaseNode[None, None, int]):
    """A pydantic dataclass carries its own schema, which snapshots must not change."""

    value: int = 1

    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(self.value)  # pragma: no cover


@pytest.mark.parametrize(
    ('node', 'stored'),
    [
        (Alone(value=3), {'value': 3, 'node_id': 'Alone'}),
        (Aliased(value=3), {'value': 3, 'node_id': 'Aliased'}),
        (OwnsTheName(), {'node_id': 'OwnsTheName'}),
        (PydanticNode(value=3), {'value': 3, 'node_id': 'PydanticNode'}),
    ],
)
async def test_every_kind_of_node_is_stored_with_its_tag_and_loads_back(
    node: BaseNode[None, None, Any], stored: dict[str, Any]
) -> None:
    graph: Graph[None, None, Any] = Graph(
        nodes=list(dict.fromkeys([type(node), Alone])), name='tags'
    )  # each with a plain node
    written = FullStatePersistence()
    await graph.initialize(node, written, state=None)

    assert json.loads(written.dump_json())[0]['node'] == stored
    reader = FullStatePersistence()
    reader.set_graph_types(graph)
    reader.load_json(written.dump_json())
    assert type(reader.history[0].node) is type(node)


async def test_a_pydantic_dataclass_node_dumps_without_the_tag_outside_snapshots() -> None:
    graph = Graph(nodes=[PydanticNode], name='pydantic_node')
    written = FullStatePersistence()
    await graph.initialize(PydanticNode(value=2), written, state=None)
    written.dump_json()

    assert pydantic.TypeAdapter(PydanticNode).dump_python(PydanticNode(value=2)) == {'value': 2}
