"""Diagrams of a run's path through its child runs: inside a subgraph's composite state, and through the
branches of a fan-out (`child_histories`, read from a durable store with `load_child_histories()`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from inline_snapshot import snapshot

from edgewise.graph import mermaid
from edgewise.graph.exceptions import DiagramNodeError
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from tests.graph.persistence._nested import Checkout, Crash, Order, order_graph

pytestmark = pytest.mark.anyio

_BODY = """\
stateDiagram-v2
  state Checkout {
    AddItems --> CountItems
    CountItems --> [*]
  }
  Checkout --> Scatter
  state Scatter_fork <<fork>>
  Scatter --> Scatter_fork
  Scatter_fork --> Pack
  state Scatter_join <<join>>
  Scatter_join --> Ship
  Pack --> Scatter_join
  Ship --> [*]
"""


async def _histories(tmp_path: Path, items: list[str]) -> tuple[list[Any], dict[str, list[Any]]]:
    async with SqliteStatePersistence[Order, str](tmp_path / 'runs.db', 'order') as persistence:
        if 'crash' in items:
            with pytest.raises(BaseExceptionGroup) as raised:
                await order_graph.run(Checkout(), state=Order(items=items), persistence=persistence)
            assert raised.group_contains(Crash)
        else:
            await order_graph.run(Checkout(), state=Order(items=items), persistence=persistence)
    async with SqliteStatePersistence[Order, str](tmp_path / 'runs.db', 'order') as persistence:
        return await persistence.load_raw(), await persistence.load_child_histories()


async def test_the_path_goes_through_the_subgraph_and_the_branches(tmp_path: Path) -> None:
    history, children = await _histories(tmp_path, ['tea', 'cup'])
    assert sorted(children) == [f'{history[2].id}/0', f'{history[2].id}/1', 'cart']
    code = mermaid.generate_code(order_graph, history=history, child_histories=children)
    assert code.startswith(_BODY)
    assert code.removeprefix(_BODY) == snapshot("""\

classDef highlighted fill:#fdff32
class Checkout highlighted
class Scatter highlighted
class Ship highlighted
class AddItems highlighted
class CountItems highlighted
class Pack highlighted\
""")


async def test_a_failed_branch_is_marked_failed(tmp_path: Path) -> None:
    history, children = await _histories(tmp_path, ['tea', 'broken'])
    code = mermaid.generate_code(order_graph, history=history, child_histories=children)
    assert code.endswith('classDef failed fill:#ff8a80,stroke:#c62828,stroke-width:3px\nclass Pack failed')
    assert 'class Pack highlighted' not in code


async def test_a_run_stopped_in_a_fan_out_marks_the_fork_and_the_branch(tmp_path: Path) -> None:
    history, children = await _histories(tmp_path, ['crash'])
    code = mermaid.generate_code(order_graph, history=history, child_histories=children)
    assert code.startswith(_BODY)
    assert code.removeprefix(_BODY) == snapshot("""\

classDef highlighted fill:#fdff32
class Checkout highlighted
class Scatter highlighted
class AddItems highlighted
class CountItems highlighted
classDef stopped fill:#7ec8ff,stroke:#1f6fb2,stroke-width:3px
class Scatter_fork stopped
class Pack stopped\
""")


async def test_without_child_histories_only_the_run_itself_is_drawn(tmp_path: Path) -> None:
    history, _ = await _histories(tmp_path, ['tea'])
    code = mermaid.generate_code(order_graph, history=history)
    assert code.splitlines()[-4:] == [
        'classDef highlighted fill:#fdff32',
        'class Checkout highlighted',
        'class Scatter highlighted',
        'class Ship highlighted',
    ]


async def test_a_child_history_of_another_graph_is_refused(tmp_path: Path) -> None:
    history, children = await _histories(tmp_path, ['tea'])
    first = history[0]
    foreign = [replace(first, node=replace(first.node, node_id='Ping'))]
    with pytest.raises(DiagramNodeError, match=r'^Run history node "Ping" is in neither the graph nor its subgraphs'):
        mermaid.generate_code(order_graph, history=history, child_histories={**children, 'other': foreign})


async def test_graph_mermaid_code_takes_child_histories(tmp_path: Path) -> None:
    history, children = await _histories(tmp_path, ['tea'])
    code = order_graph.mermaid_code(history=history, child_histories=children, title=False)
    assert code.splitlines()[-3:] == [
        'class AddItems highlighted',
        'class CountItems highlighted',
        'class Pack highlighted',
    ]


async def test_a_history_read_with_the_graph_marks_the_fork_too(tmp_path: Path) -> None:
    await _histories(tmp_path, ['crash'])
    async with SqliteStatePersistence[Order, str](tmp_path / 'runs.db', 'order') as persistence:
        persistence.set_graph_types(order_graph)
        history = await persistence.load_all()
        children = await persistence.load_child_histories()
    code = mermaid.generate_code(order_graph, history=history, child_histories=children)
    assert code.splitlines()[-2:] == ['class Scatter_fork stopped', 'class Pack stopped']
