"""Less common turns of builder runs: joins inside joins, cancelling only a fork's own branches, bad replies."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import anyio
import pytest
from typing_extensions import TypeAliasType

from edgewise.graph.builder import (
    EndMarker,
    GraphBuilder,
    GraphRuntimeError,
    GraphTaskRequest,
    ReduceFirstValue,
    StepContext,
    reduce_list_append,
    reduce_sum,
)
from edgewise.graph.builder.id_types import NodeID

pytestmark = pytest.mark.anyio


async def test_a_join_inside_another_is_released_first() -> None:
    g = GraphBuilder(input_type=list[int], output_type=list[int])

    @g.step
    async def cell(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs

    inner = g.join(reduce_sum, initial=0, preferred_parent_fork='closest', node_id='inner')
    outer = g.join(reduce_list_append, initial_factory=list[int], node_id='outer')
    g.add(
        g.edge_from(g.start_node).broadcast(
            lambda e: [e.transform(lambda ctx: 100).to(outer), e.map().to(cell)], fork_id='both'
        ),
        g.edge_from(cell).to(inner),
        g.edge_from(inner).to(outer),
        g.edge_from(outer).to(g.end_node),
    )
    graph = g.build()
    assert graph.intermediate_join_nodes[NodeID('outer')] == {'inner'}
    assert not graph.is_final_join(NodeID('inner'))
    assert graph.is_final_join(NodeID('outer'))
    assert sorted(await graph.run(inputs=[1, 2, 3])) == [6, 100]


async def test_an_outer_join_met_before_its_inner_one_waits_for_it() -> None:
    reduced = anyio.Event()
    g = GraphBuilder(input_type=list[int], output_type=list[int])

    @g.step
    async def cell(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs

    @g.step
    async def late(ctx: StepContext[None, None, list[int]]) -> int:
        await reduced.wait()
        return 100

    def add(current: int, value: int) -> int:
        reduced.set()
        return current + value

    inner = g.join(add, initial=0, preferred_parent_fork='closest', node_id='inner')
    outer = g.join(reduce_list_append, initial_factory=list[int], node_id='outer')
    assert inner.reducer is add
    g.add(
        g.edge_from(g.start_node).broadcast(lambda e: [e.to(late), e.map().to(cell)], fork_id='both'),
        g.edge_from(cell).to(inner),
        g.edge_from(inner, late).to(outer),
        g.edge_from(outer).to(g.end_node),
    )
    assert sorted(await g.build().run(inputs=[1, 2])) == [3, 100]


async def test_reduce_first_value_cancels_only_the_branches_of_its_own_fork() -> None:
    other_done = anyio.Event()
    g = GraphBuilder(output_type=list[object])

    @g.step
    async def quick(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs

    @g.step
    async def other(ctx: StepContext[None, None, object]) -> str:
        await other_done.wait()
        return 'other'

    first = g.join(ReduceFirstValue[int](), initial=0, preferred_parent_fork='closest', node_id='first')
    both = g.join(reduce_list_append, initial_factory=list[object], node_id='both')

    @g.step
    async def after_first(ctx: StepContext[None, None, int]) -> int:
        other_done.set()
        return ctx.inputs

    g.add(
        g.edge_from(g.start_node).broadcast(
            lambda e: [e.transform(lambda ctx: [1, 2, 3]).map().to(quick), e.to(other)], fork_id='split'
        ),
        g.edge_from(quick).to(first),
        g.edge_from(first).to(after_first),
        g.edge_from(after_first).to(both),
        g.edge_from(other).to(both),
        g.edge_from(both).to(g.end_node),
    )
    result = await g.build().run()
    assert 'other' in result
    assert len(result) == 2


async def test_a_map_whose_downstream_join_is_not_a_join_is_refused() -> None:
    g = GraphBuilder(input_type=list[int], output_type=int)

    @g.step
    async def keep(ctx: StepContext[None, None, int]) -> int:  # pragma: no cover - never reached
        return ctx.inputs

    g.add(g.edge_from(g.start_node).map(downstream_join_id='keep').to(keep), g.edge_from(keep).to(g.end_node))
    with pytest.raises(GraphRuntimeError, match="Node 'keep' is not a join of this graph"):
        await g.build().run(inputs=[])


async def test_a_value_sent_to_a_join_from_outside_its_fork_is_refused() -> None:
    g = GraphBuilder(input_type=list[int], output_type=int)
    total = g.join(reduce_sum, initial=0, node_id='total')
    g.add(g.edge_from(g.start_node).map(fork_id='each').to(total), g.edge_from(total).to(g.end_node))
    graph = g.build()
    with pytest.raises(GraphRuntimeError, match='not a join node of this graph'):
        graph.get_parent_fork(NodeID('each'))
    async with graph.iter(inputs=[1]) as run:
        await run.next()
        run.override_next([GraphTaskRequest(NodeID('total'), 5, ())])
        with pytest.raises(GraphRuntimeError, match="does not descend from its parent fork '__start__'"):
            await run.next()


async def test_an_end_can_be_replaced_by_more_tasks() -> None:
    g = GraphBuilder(input_type=int, output_type=int)

    @g.step
    async def add_one(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs + 1

    g.add(g.edge_from(g.start_node).to(add_one), g.edge_from(add_one).to(g.end_node))
    async with g.build().iter(inputs=1) as run:
        again = True
        async for event in run:
            if isinstance(event, EndMarker) and again:
                again = False
                run.override_next([GraphTaskRequest(NodeID('add_one'), event.value, ())])
    assert run.output == 3
    with pytest.raises(StopAsyncIteration):
        await run.next()


async def test_spans_can_be_given_or_turned_off() -> None:
    g = GraphBuilder(input_type=int, output_type=int, auto_instrument=False)
    g.add(g.edge_from(g.start_node).to(g.end_node))
    graph = g.build()
    assert await graph.run(inputs=1, span=nullcontext()) == 1
    assert await graph.run(inputs=2) == 2


Either = TypeAliasType('Either', 'int | None')


async def test_a_step_hint_through_a_type_alias_or_without_a_return_is_read() -> None:
    g = GraphBuilder(output_type=object)

    @g.step
    async def aliased(ctx: StepContext[None, None, None]) -> Either:
        return 1

    @g.step()
    async def unhinted(ctx: StepContext[None, None, Any]):
        return ctx.inputs

    g.add(
        g.edge_from(g.start_node).to(aliased), g.edge_from(aliased).to(unhinted), g.edge_from(unhinted).to(g.end_node)
    )
    assert await g.build().run() == 1


async def test_siblings_finishing_together_keep_only_the_first_value() -> None:
    g = GraphBuilder(input_type=list[int], output_type=int)

    @g.step
    async def echo(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs

    first = g.join(ReduceFirstValue[int](), initial=0)
    g.add(g.edge_from(g.start_node).map().to(echo), g.edge_from(echo).to(first), g.edge_from(first).to(g.end_node))
    assert await g.build().run(inputs=[1, 2, 3, 4]) in {1, 2, 3, 4}


def test_run_sync_may_leave_the_name_alone() -> None:
    g = GraphBuilder(input_type=int, output_type=int)
    g.add(g.edge_from(g.start_node).to(g.end_node))
    graph = g.build()
    assert graph.run_sync(inputs=3, infer_name=False) == 3
    assert graph.name is None
