"""Diagrams of builder graphs beyond `render()`: a stored run's path drawn on them, and images through the
renderers of classic graphs (the service, checked by a real HTTP server on 127.0.0.1, and the mermaid CLI,
played by tests/graph/fake_mmdc.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from inline_snapshot import snapshot

from edgewise.graph.builder import GraphBuilder, StepContext
from edgewise.graph.builder._run_path import MapProgress, read_run_path
from edgewise.graph.exceptions import DiagramNodeError, GraphSetupError, PersistenceError
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ..test_mermaid_local import mmdc  # noqa: F401 - the fixture
from ..test_mermaid_service import Service, _serve
from .test_stream import routed, squares_graph

pytestmark = pytest.mark.anyio

squares = squares_graph()

RENDERED = """\
---
title: squares
---
stateDiagram-v2
  state map <<fork>>
  square
  state total <<join>>

  [*] --> map
  map --> square
  square --> total
  total --> [*]\
"""


async def stored(tmp_path: Path, run_id: str, items: list[int], *, stop_at_map: bool = False) -> list[Any]:
    """The history of a run of `squares` stored in SQLite: to its end (or failure), or stopped at its map."""
    from .test_stream import Log

    async with SqliteStatePersistence(tmp_path / 'runs.db', run_id) as store:
        if stop_at_map:
            async with squares.iter(state=Log(), inputs=items, persistence=store) as run:
                async for event in run:
                    if isinstance(event, list) and len(event) == len(items):
                        break
        else:
            with pytest.raises(ValueError, match='negative') if any(i < 0 for i in items) else _nothing():
                await squares.run(state=Log(), inputs=items, persistence=store)
        return await store.load_all()


class _nothing:
    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        pass


async def test_a_finished_run_highlights_every_node_and_counts_every_map_item(tmp_path: Path) -> None:
    history = await stored(tmp_path, 'done', [1, 2, 3])
    assert squares.mermaid_code(history=history) == snapshot("""\
---
title: squares
---
stateDiagram-v2
  state map <<fork>>
  square
  state total <<join>>

  [*] --> map
  map --> square: 3/3 done
  square --> total
  total --> [*]

classDef highlighted fill:#fdff32
class map highlighted
class square highlighted
class total highlighted\
""")
    path = read_run_path(history, squares)
    assert path.ended
    assert path.done == ['__start__', 'map', 'square', 'total', '__end__']
    assert (path.failed, path.in_flight, path.error) == ([], [], None)
    assert path.taken == {('__start__', 'map'), ('map', 'square'), ('square', 'total'), ('total', '__end__')}


async def test_a_run_stopped_mid_map_shows_the_items_in_flight(tmp_path: Path) -> None:
    history = await stored(tmp_path, 'half', [1, 2, 3, 4], stop_at_map=True)
    code = squares.mermaid_code(history=history, title=False)
    assert code == snapshot("""\
stateDiagram-v2
  state map <<fork>>
  square
  state total <<join>>

  [*] --> map
  map --> square: 0/4 done
  square --> total
  total --> [*]

classDef highlighted fill:#fdff32
class map highlighted
classDef stopped fill:#7ec8ff,stroke:#1f6fb2,stroke-width:3px
class square stopped\
""")
    path = read_run_path(history, squares)
    assert path.marks == {'__start__': 'done', 'map': 'done', 'square': 'waiting'}
    assert path.maps == {'map': MapProgress(0, 4)}


async def test_items_done_are_counted_as_a_resume_goes_on(tmp_path: Path) -> None:
    """Half-way through a resumed run (stopped after two more steps), some items are done and some are not."""
    await stored(tmp_path, 'going', [1, 2, 3, 4], stop_at_map=True)
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'going') as store:
        async with squares.iter_from_persistence(store) as run:
            steps = 0
            async for _ in run:
                steps += 1
                if steps == 2:
                    break
        history = await store.load_all()
    path = read_run_path(history, squares)
    assert path.maps['map'].total == 4
    assert 0 < path.maps['map'].done < 4
    assert path.marks['square'] in ('waiting', 'done')
    assert str(path.maps['map']) in squares.mermaid_code(history=history)


async def test_a_failed_run_marks_the_step_that_raised(tmp_path: Path) -> None:
    history = await stored(tmp_path, 'failed', [-5])
    assert squares.mermaid_code(history=history, title=False).split('\n\n')[2] == snapshot("""\
classDef highlighted fill:#fdff32
class map highlighted
classDef failed fill:#ff8a80,stroke:#c62828,stroke-width:3px
class square failed\
""")
    path = read_run_path(history, squares)
    assert path.failed == ['square']
    assert path.error == 'ValueError: negative: -5'
    assert path.maps == {'map': MapProgress(0, 1)}


async def test_the_raw_history_draws_the_same_path(tmp_path: Path) -> None:
    history = await stored(tmp_path, 'raw', [1, 2], stop_at_map=True)
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'raw') as store:
        raw = await store.load_raw()
    assert squares.mermaid_code(history=raw) == squares.mermaid_code(history=history)


async def test_a_run_a_process_advances_marks_its_tasks_running(tmp_path: Path) -> None:
    history = await stored(tmp_path, 'live', [1, 2], stop_at_map=True)
    history[-1].status = 'running'
    assert read_run_path(history, squares).marks['square'] == 'running'
    assert 'class square stopped' in squares.mermaid_code(history=history)


def test_highlighted_nodes_notes_labels_and_direction() -> None:
    g = GraphBuilder(input_type=int, output_type=str)

    @g.step
    async def small(ctx: StepContext[None, None, int]) -> str:
        return 'small'  # pragma: no cover - never run

    route = g.decision(note='How big?').branch(g.match(int).label('any').to(small))
    g.add(g.edge_from(g.start_node).to(route), g.edge_from(small).to(g.end_node))
    sized = g.build()
    assert sized.mermaid_code(
        title='Sized', direction='LR', notes=False, edge_labels=False, highlighted_nodes=[small, 'decision']
    ) == snapshot("""\
---
title: Sized
---
stateDiagram-v2
  direction LR
  state decision <<choice>>
  small

  [*] --> decision
  decision --> small
  small --> [*]

classDef highlighted fill:#fdff32
class small highlighted
class decision highlighted\
""")
    assert sized.mermaid_code(title=False) == sized.render()
    assert sized.name == 'sized'


def test_an_unknown_highlighted_node_is_refused() -> None:
    with pytest.raises(
        DiagramNodeError, match=r'Highlighted node "nope" is not in the graph; its nodes are: square, map, total.'
    ):
        squares.mermaid_code(highlighted_nodes='nope')


async def test_the_history_of_a_classic_run_is_refused(tmp_path: Path) -> None:
    from edgewise.graph import BaseNode, End, Graph, GraphRunContext
    from edgewise.graph.persistence.in_mem import FullStatePersistence

    class Only(BaseNode[None, None, int]):
        async def run(self, ctx: GraphRunContext) -> End[int]:
            return End(1)

    store = FullStatePersistence()
    await Graph(nodes=[Only]).run(Only(), persistence=store)
    with pytest.raises(
        PersistenceError, match=r"The run is not a builder run: its snapshot 'Only:.*' holds node 'Only'"
    ):
        squares.mermaid_code(history=await store.load_all())


async def test_a_history_of_another_builder_graph_is_refused(tmp_path: Path) -> None:
    history = await stored(tmp_path, 'other', [1])
    with pytest.raises(
        DiagramNodeError,
        match=r'Run history nodes "map", "square", "total" are not in the graph; its nodes are: double, decision',
    ):
        routed.mermaid_code(history=history)


@pytest.fixture
def service() -> Iterator[Service]:
    yield from _serve('')


def test_an_image_from_the_service_is_of_the_code_with_the_run_path(service: Service, tmp_path: Path) -> None:
    history = anyio.run(stored, tmp_path, 'img', [2, 3])
    with httpx.Client() as client:
        image = squares.mermaid_image(history=history, image_type='png', httpx_client=client, base_url=service.url)
    assert image == b'png image'
    [received] = service.received
    assert (received.endpoint, received.query) == ('img', 'type=png')
    assert received.code == squares.mermaid_code(history=history)


def test_mermaid_save_picks_the_format_from_the_suffix(service: Service, tmp_path: Path) -> None:
    with httpx.Client() as client:
        squares.mermaid_save(tmp_path / 'squares.svg', httpx_client=client, base_url=service.url, theme='dark')
    assert (tmp_path / 'squares.svg').read_bytes() == b'svg image'
    [received] = service.received
    assert (received.endpoint, received.query, received.code) == ('svg', 'theme=dark', RENDERED)


def test_the_local_renderer_draws_a_builder_graph(mmdc: str, tmp_path: Path) -> None:  # noqa: F811
    squares.mermaid_save(tmp_path / 'squares.pdf', renderer='local', mmdc=mmdc, pdf_fit=True, title='Squares')
    image = json.loads((tmp_path / 'squares.pdf').read_text())
    assert image == {
        'format': 'pdf',
        'options': {'quiet': True, 'pdfFit': True},
        'code': RENDERED.replace('title: squares', 'title: Squares'),
    }
    unnamed = squares_graph()
    png = json.loads(unnamed.mermaid_image(renderer='local', mmdc=mmdc, direction='LR'))
    assert png['format'] == 'png'
    assert png['code'].startswith('---\ntitle: unnamed\n---\nstateDiagram-v2\n  direction LR\n')
    again = squares_graph()
    again.mermaid_save(tmp_path / 'again.png', renderer='local', mmdc=mmdc)
    assert json.loads((tmp_path / 'again.png').read_text())['code'].startswith('---\ntitle: again\n')


def test_options_of_classic_graphs_only_are_refused() -> None:
    with pytest.raises(GraphSetupError, match='`start_node` applies to classic graphs'):
        squares.mermaid_image(start_node='square')


async def test_a_run_through_a_decision_and_a_base_node_takes_the_edges_it_ran(tmp_path: Path) -> None:
    from .test_stream import Halve

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'routed') as store:
        assert await routed.run(inputs=6, persistence=store) == 'reached 1'
        history = await store.load_raw()
    path = read_run_path(history, routed)
    assert path.done == ['__start__', 'double', 'decision', 'Halve', '__end__']
    assert path.taken == {
        ('__start__', 'double'),
        ('double', 'decision'),
        ('decision', 'Halve'),
        ('Halve', 'Halve'),
        ('Halve', '__end__'),
    }
    assert read_run_path(history).taken == path.taken  # every edge of this run is named by a stored outcome
    code = routed.mermaid_code(history=history, highlighted_nodes=Halve, title=False)
    assert code.split('\n\n')[-1] == snapshot("""\
classDef highlighted fill:#fdff32
class Halve highlighted
class double highlighted
class decision highlighted\
""")


def _small_or_big_graph() -> Any:
    """`.map()` the items through a decision: big ones are halved by a step on their way to the join, small ones go
    straight to it (a decision's answer that leads to a join, whose step replaces the snapshot holding the
    decision's outcome)."""
    from edgewise.graph.builder import reduce_list_append

    g = GraphBuilder(input_type=list[int], output_type=list[int])

    @g.step
    async def halve(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs // 2

    collect = g.join(reduce_list_append, initial_factory=list[int], node_id='collect')
    route = (
        g.decision(node_id='big_or_small')
        .branch(g.match(int, matches=lambda value: value >= 20).to(halve))
        .branch(g.match(int).to(collect))
    )
    g.add(
        g.edge_from(g.start_node).map().to(route),
        g.edge_from(halve).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    return g.build()


small_or_big = _small_or_big_graph()


@pytest.mark.parametrize('items', [[4], [30, 4], [4, 30], [4, 30, 6, 50]])
async def test_a_decisions_answer_that_a_joins_step_replaced_in_the_store_is_still_taken(
    tmp_path: Path, items: list[int]
) -> None:
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'small-or-big') as store:
        assert sorted(await small_or_big.run(inputs=items, persistence=store)) == sorted(
            i // 2 if i >= 20 else i for i in items
        )
        history = await store.load_all()
    expected = {('__start__', 'map'), ('map', 'big_or_small'), ('big_or_small', 'collect')}
    if any(i >= 20 for i in items):
        expected |= {('big_or_small', 'halve'), ('halve', 'collect')}
    # Without the graph, only what the store names: every edge but the join's release to the end.
    assert read_run_path(history).taken == expected
    assert read_run_path(history, small_or_big).taken == expected | {('collect', '__end__')}
