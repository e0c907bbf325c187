"""`checkpoint(state, node)`: a running node stores its progress in its own snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from edgewise.graph import BaseNode, End, FullStatePersistence, Graph, GraphRunContext, NodeSnapshot
from edgewise.graph.exceptions import PersistenceError

from .conftest import Store

pytestmark = pytest.mark.anyio


@dataclass
class Progress:
    done: list[int] = field(default_factory=list)


@dataclass
class Work(BaseNode[Progress, None, int]):
    async def run(self, ctx: GraphRunContext[Progress]) -> End[int]:
        persistence = ctx.deps
        for item in (1, 2):
            ctx.state.done.append(item)
            await persistence.checkpoint(ctx.state, self)  # type: ignore[attr-defined]
            stored = await persistence.load_all()  # type: ignore[attr-defined]
            assert stored[-1].state.done == ctx.state.done
            assert stored[-1].status == 'running'
        return End(len(ctx.state.done))


work_graph = Graph(nodes=(Work,), name='work_graph')


async def test_a_checkpoint_replaces_the_running_snapshots_state_and_keeps_its_place(durable: Store) -> None:
    persistence = durable('run-1')
    async with work_graph.iter(Work(), state=Progress(), deps=persistence, persistence=persistence) as run:
        async for _ in run:
            pass
    history = await persistence.load_all()
    assert [type(s).__name__ for s in history] == ['NodeSnapshot', 'EndSnapshot']
    first = history[0]
    assert isinstance(first, NodeSnapshot)
    assert first.state.done == [1, 2]
    assert first.status == 'success'


async def test_a_checkpoint_in_memory_does_nothing() -> None:
    persistence = FullStatePersistence()
    node = Work()
    await persistence.snapshot_node(Progress(), node)
    await persistence.checkpoint(Progress(done=[1]), node)
    assert persistence.history[0].state == Progress()


async def test_a_checkpoint_of_a_finished_node_is_refused(durable: Store) -> None:
    persistence = durable('run-2')
    node = Work()
    async with work_graph.iter(node, state=Progress(), deps=persistence, persistence=persistence) as run:
        async for _ in run:
            pass
    with pytest.raises(PersistenceError, match=f'has no unfinished snapshot {node.get_snapshot_id()!r}'):
        await persistence.checkpoint(Progress(done=[9]), node)
    with pytest.raises(PersistenceError, match="has no unfinished snapshot 'Work:unknown'"):
        await persistence.checkpoint(Progress(), _with_id(Work(), 'Work:unknown'))


def _with_id(node: Work, snapshot_id: str) -> Work:
    node.set_snapshot_id(snapshot_id)
    return node
