"""`persistence.set_graph_types(builder_graph)`: a store opened afresh reads a builder run's typed history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from edgewise.graph import End
from edgewise.graph.builder import GraphBuilder, StepContext, reduce_sum
from edgewise.graph.builder._stored import BuilderProgress
from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

pytestmark = pytest.mark.anyio


def summing_graph() -> Any:
    g = GraphBuilder(input_type=list[int], output_type=int)

    @g.step
    async def square(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs * ctx.inputs

    total = g.join(reduce_sum, initial=0)
    g.add(g.edge_from(g.start_node).map().to(square), g.edge_from(square).to(total), g.edge_from(total).to(g.end_node))
    return g.build()


@pytest.mark.parametrize('kind', ['file', 'sqlite'])
async def test_a_fresh_store_given_the_builder_graph_loads_its_runs_history(kind: str, tmp_path: Path) -> None:
    graph = summing_graph()

    def store() -> Any:
        if kind == 'file':
            return FileStatePersistence[None, int](tmp_path / 'run.json')
        return SqliteStatePersistence[None, int](tmp_path / 'runs.db', 'r1')

    async with store() as written:
        assert await graph.run(inputs=[1, 2, 3], persistence=written) == 14

    async with store() as fresh:
        with pytest.raises(PersistenceError):
            await fresh.load_all()  # it does not know the types yet
        fresh.set_graph_types(graph)
        history = await fresh.load_all()
    assert all(isinstance(snapshot.node, BuilderProgress) for snapshot in history[:-1])
    assert isinstance(history[-1].node, End)
    assert history[-1].node.data == 14
    assert graph.inferred_types == (type(None), int)
    assert graph.get_nodes() == [BuilderProgress]
