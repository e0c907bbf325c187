"""Diagrams of a run's path: the nodes it ran highlighted, where it stopped or failed marked with a class of its own."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from inline_snapshot import snapshot

from edgewise.graph import BaseNode, End, FullStatePersistence, Graph, GraphRunContext, mermaid
from edgewise.graph.exceptions import DiagramNodeError

pytestmark = pytest.mark.anyio


@dataclass
class Job:
    rounds: int = 2
    fail_in: str | None = None


class Fetch(BaseNode[Job, None, str]):
    async def run(self, ctx: GraphRunContext[Job]) -> Transform:
        return Transform()


class Transform(BaseNode[Job, None, str]):
    async def run(self, ctx: GraphRunContext[Job]) -> Transform | Store:
        ctx.state.rounds -= 1
        if ctx.state.fail_in == 'Transform':
            raise ValueError('bad row')
        return Transform() if ctx.state.rounds > 0 else Store()


class Store(BaseNode[Job, None, str]):
    async def run(self, ctx: GraphRunContext[Job]) -> End[str]:
        if ctx.state.fail_in == 'Store':
            raise OSError('disk full')
        return End('stored')


class Audit(BaseNode[Job, None, str]):
    async def run(self, ctx: GraphRunContext[Job]) -> End[str]:
        return End('audited')


etl = Graph(nodes=[Fetch, Transform, Store, Audit], auto_instrument=False)


async def _history(job: Job, steps: int | None = None) -> FullStatePersistence[Job, str]:
    persistence = FullStatePersistence[Job, str]()
    async with etl.iter(Fetch(), state=job, persistence=persistence) as run:
        taken = 0
        async for _ in run:
            if steps is not None and taken == steps:
                break
            taken += 1
    return persistence


async def test_finished_run_highlights_every_node_it_ran() -> None:
    history = await (await _history(Job())).load_all()
    assert etl.mermaid_code(history=history, title=False) == snapshot("""\
stateDiagram-v2
  Fetch --> Transform
  Transform --> Transform
  Transform --> Store
  Store --> [*]
  Audit --> [*]

classDef highlighted fill:#fdff32
class Fetch highlighted
class Transform highlighted
class Store highlighted""")


async def test_failed_node_gets_the_failed_class() -> None:
    persistence = FullStatePersistence[Job, str]()
    with pytest.raises(OSError, match='disk full'):
        await etl.run(Fetch(), state=Job(rounds=1, fail_in='Store'), persistence=persistence)
    history = await persistence.load_all()
    assert etl.mermaid_code(history=history, title=False, start_node=Fetch) == snapshot("""\
stateDiagram-v2
  [*] --> Fetch
  Fetch --> Transform
  Transform --> Transform
  Transform --> Store
  Store --> [*]
  Audit --> [*]

classDef highlighted fill:#fdff32
class Fetch highlighted
class Transform highlighted
classDef failed fill:#ff8a80,stroke:#c62828,stroke-width:3px
class Store failed""")


async def test_failure_on_the_first_node_run_marks_only_it() -> None:
    persistence = FullStatePersistence[Job, str]()
    with pytest.raises(ValueError, match='bad row'):
        await etl.run(Transform(), state=Job(fail_in='Transform'), persistence=persistence)
    assert etl.mermaid_code(history=await persistence.load_all(), title=False, notes=False) == snapshot("""\
stateDiagram-v2
  Fetch --> Transform
  Transform --> Transform
  Transform --> Store
  Store --> [*]
  Audit --> [*]

classDef failed fill:#ff8a80,stroke:#c62828,stroke-width:3px
class Transform failed""")


async def test_stopped_run_marks_the_next_node_to_run() -> None:
    history = await (await _history(Job(rounds=3), steps=1)).load_all()
    assert etl.mermaid_code(history=history, title=False, direction='LR') == snapshot("""\
stateDiagram-v2
  direction LR
  Fetch --> Transform
  Transform --> Transform
  Transform --> Store
  Store --> [*]
  Audit --> [*]

classDef highlighted fill:#fdff32
class Fetch highlighted
classDef stopped fill:#7ec8ff,stroke:#1f6fb2,stroke-width:3px
class Transform stopped""")


async def test_stop_node_already_visited_is_only_marked_stopped() -> None:
    history = await (await _history(Job(rounds=3), steps=2)).load_all()
    code = etl.mermaid_code(history=history, title=False)
    assert code.partition('\n\n')[2] == snapshot("""\
classDef highlighted fill:#fdff32
class Fetch highlighted
classDef stopped fill:#7ec8ff,stroke:#1f6fb2,stroke-width:3px
class Transform stopped""")


async def test_highlighted_nodes_come_first_then_the_run_path() -> None:
    history = await (await _history(Job(rounds=1))).load_all()
    code = etl.mermaid_code(history=history, highlighted_nodes=[Audit, 'Store'], highlight_css='fill:#0f0')
    assert code.partition('\n\n')[2] == snapshot("""\
classDef highlighted fill:#0f0
class Audit highlighted
class Store highlighted
class Fetch highlighted
class Transform highlighted""")


async def test_custom_css_for_stopped_and_failed_nodes() -> None:
    history = await (await _history(Job(), steps=1)).load_all()
    code = mermaid.generate_code(etl, history=history, stopped_css='fill:blue', failed_css='fill:red')
    assert code.partition('\n\n')[2] == snapshot("""\
classDef highlighted fill:#fdff32
class Fetch highlighted
classDef stopped fill:blue
class Transform stopped""")


async def test_empty_history_draws_the_plain_diagram() -> None:
    assert etl.mermaid_code(history=[]) == etl.mermaid_code()


async def test_history_of_another_graph_is_refused() -> None:
    other = Graph(nodes=[Fetch, Transform, Store])
    history = await (await _history(Job(rounds=1))).load_all()
    with pytest.raises(DiagramNodeError) as exc_info:
        Graph(nodes=[Audit, Store]).mermaid_code(history=history)
    assert str(exc_info.value) == (
        'Run history nodes "Fetch", "Transform" are not in the graph; its nodes are: Audit, Store.'
    )
    assert isinstance(exc_info.value, LookupError)
    assert other.mermaid_code(history=history, title=False).endswith('class Store highlighted')


async def test_run_path_on_an_image_request() -> None:
    history = await (await _history(Job(), steps=1)).load_all()
    with pytest.raises(DiagramNodeError, match='Run history nodes "Fetch", "Transform" are not in the graph'):
        mermaid.request_image(Graph(nodes=[Audit]), history=history, base_url='http://127.0.0.1:9')
