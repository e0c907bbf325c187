"""`persistence.set_graph_types(builder_graph)`: a store opened afresh reads a builder run's typed history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from edgewise.graph import End
from edgewise.graph.builder import GraphBuilder, StepContext, reduce_sum
from edgewise.graph.builder._stored import BuilderProgress
from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence import NodeSnapshot
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


STORED_BY_THE_FILE_STORE = Path(__file__).parent.parent / 'data' / 'file_store_builder_run.json'


async def test_a_builder_run_stored_in_the_file_stores_format_loads_and_resumes(tmp_path: Path) -> None:
    # Written by `data/make_file_store_builder_run.py` with the file store as it was: a change of the on-disk
    # format must keep reading it.
    file = tmp_path / 'run.json'
    file.write_bytes(STORED_BY_THE_FILE_STORE.read_bytes())
    graph = summing_graph()
    async with FileStatePersistence[None, int](file) as store:
        store.set_graph_types(graph)
        history = await store.load_all()
        assert [snapshot.status for snapshot in history if isinstance(snapshot, NodeSnapshot)] == [
            'success',
            'success',
            'created',
        ]
        assert len(history) == 3
        async with graph.iter_from_persistence(store) as run:
            async for _ in run:
                pass
        assert run.output == 14
        assert [snapshot.kind for snapshot in await store.load_all()][-1] == 'end'
