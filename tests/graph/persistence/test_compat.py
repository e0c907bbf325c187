"""Snapshot JSON is interchangeable with pydantic-graph 1.x, and survives round trips.

`data/pydantic_graph_history.json` was written by pydantic-graph 1.107.10 (see
`data/make_pydantic_graph_history.py`, whose node classes these mirror).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgewise.graph import (
    BaseNode,
    End,
    EndSnapshot,
    FullStatePersistence,
    Graph,
    GraphRunContext,
    NodeSnapshot,
    Snapshot,
)

pytestmark = pytest.mark.anyio

ANCHOR_HISTORY = Path(__file__).parent.parent / 'data' / 'pydantic_graph_history.json'


@dataclass
class Basket:
    items: list[str] = field(default_factory=list)
    total_cents: int = 0


@dataclass
class AddItem(BaseNode[Basket, None, dict[str, int]]):
    name: str
    price_cents: int

    async def run(self, ctx: GraphRunContext[Basket]) -> Checkout:
        ctx.state.items.append(self.name)
        ctx.state.total_cents += self.price_cents
        return Checkout(discount=10)


@dataclass
class Checkout(BaseNode[Basket, None, dict[str, int]]):
    discount: int

    async def run(self, ctx: GraphRunContext[Basket]) -> AddItem | End[dict[str, int]]:
        if len(ctx.state.items) < 2:
            return AddItem(name='tea', price_cents=250)
        return End({'paid': ctx.state.total_cents - self.discount, 'items': len(ctx.state.items)})


basket_graph = Graph(nodes=(AddItem, Checkout))


def _loaded_anchor_history() -> FullStatePersistence[Basket, dict[str, int]]:
    persistence = FullStatePersistence[Basket, dict[str, int]]()
    persistence.set_graph_types(basket_graph)
    persistence.load_json(ANCHOR_HISTORY.read_bytes())
    return persistence


def _shape(value: Any) -> Any:
    """The structure of a JSON value: keys (in order) and value types, not the values themselves."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


def test_a_pydantic_graph_history_loads() -> None:
    persistence = _loaded_anchor_history()
    anchor = json.loads(ANCHOR_HISTORY.read_bytes())
    ts = [datetime(2025, 1, 2, 3, 4, s, tzinfo=timezone.utc) for s in (5, 6, 7, 8, 59)]
    assert persistence.history == [
        NodeSnapshot(
            state=Basket(),
            node=AddItem(name='coffee', price_cents=300),
            start_ts=ts[0],
            duration=0.25,
            status='success',
            id=anchor[0]['id'],
        ),
        NodeSnapshot(
            state=Basket(items=['coffee'], total_cents=300),
            node=Checkout(discount=10),
            start_ts=ts[1],
            duration=0.25,
            status='success',
            id=anchor[1]['id'],
        ),
        NodeSnapshot(
            state=Basket(items=['coffee'], total_cents=300),
            node=AddItem(name='tea', price_cents=250),
            start_ts=ts[2],
            duration=0.25,
            status='success',
            id=anchor[2]['id'],
        ),
        NodeSnapshot(
            state=Basket(items=['coffee', 'tea'], total_cents=550),
            node=Checkout(discount=10),
            start_ts=ts[3],
            duration=0.25,
            status='success',
            id=anchor[3]['id'],
        ),
        EndSnapshot(
            state=Basket(items=['coffee', 'tea'], total_cents=550),
            result=End({'paid': 540, 'items': 2}),
            ts=ts[4],
            id=anchor[4]['id'],
        ),
    ]


def test_a_pydantic_graph_history_dumps_back_to_the_same_json() -> None:
    dumped = _loaded_anchor_history().dump_json(indent=2) + b'\n'
    assert dumped == ANCHOR_HISTORY.read_bytes()


async def test_an_edgewise_history_has_the_shape_of_a_pydantic_graph_one() -> None:
    persistence = FullStatePersistence[Basket, dict[str, int]]()
    await basket_graph.run(AddItem(name='coffee', price_cents=300), state=Basket(), persistence=persistence)
    ours = json.loads(persistence.dump_json())
    theirs = json.loads(ANCHOR_HISTORY.read_bytes())
    assert _shape(ours) == _shape(theirs)
    assert [(s['kind'], s.get('node', {}).get('node_id')) for s in ours] == [
        ('node', 'AddItem'),
        ('node', 'Checkout'),
        ('node', 'AddItem'),
        ('node', 'Checkout'),
        ('end', None),
    ]


async def test_a_loaded_pydantic_graph_history_can_be_resumed() -> None:
    persistence = _loaded_anchor_history()
    persistence.history[-1:] = []  # drop the end ...
    last = persistence.history[-1]
    assert isinstance(last, NodeSnapshot)
    last.status = 'created'  # ... and make the last checkout wait to run again
    async with basket_graph.iter_from_persistence(persistence) as run:
        nodes = [node async for node in run]
    assert nodes == [Checkout(discount=10), End({'paid': 540, 'items': 2})]


names = st.text(st.characters(codec='utf-8', exclude_categories=['Cs']), max_size=12)
timestamps = st.datetimes(
    timezones=st.just(timezone.utc), min_value=datetime(1970, 1, 2), max_value=datetime(9000, 1, 1)
)
baskets = st.builds(Basket, items=st.lists(names, max_size=4), total_cents=st.integers(-(2**53), 2**53))
nodes = st.one_of(
    st.builds(AddItem, name=names, price_cents=st.integers(-(2**53), 2**53)),
    st.builds(Checkout, discount=st.integers(-(2**53), 2**53)),
)
node_snapshots = st.builds(
    NodeSnapshot[Basket, dict[str, int]],
    state=baskets,
    node=nodes,
    start_ts=st.none() | timestamps,
    duration=st.none() | st.floats(min_value=0, allow_infinity=False),
    status=st.sampled_from(['created', 'pending', 'running', 'success', 'error']),
    id=names.map(lambda s: f'node:{s}'),
)
end_snapshots = st.builds(
    EndSnapshot[Basket, dict[str, int]],
    state=baskets,
    result=st.builds(End, st.dictionaries(names, st.integers(-(2**53), 2**53), max_size=3)),
    ts=timestamps,
    id=names.map(lambda s: f'end:{s}'),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(node_snapshots, end_snapshots), max_size=6))
def test_any_history_survives_a_json_round_trip(history: list[Snapshot[Basket, dict[str, int]]]) -> None:
    persistence = FullStatePersistence[Basket, dict[str, int]](history=history)
    persistence.set_graph_types(basket_graph)
    restored = FullStatePersistence[Basket, dict[str, int]]()
    restored.set_graph_types(basket_graph)
    restored.load_json(persistence.dump_json())
    assert restored.history == history
