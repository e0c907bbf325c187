"""Stepping through builder runs: the events, replies that change what runs next, recovery from errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import anyio
import pytest

from edgewise.graph.builder import (
    EndMarker,
    Graph,
    GraphBuilder,
    GraphRuntimeError,
    GraphTask,
    GraphTaskRequest,
    StepContext,
    reduce_list_append,
)
from edgewise.graph.builder.graph_builder import _GraphIterator
from edgewise.graph.builder.id_types import NodeID, NodeRunID, TaskID

pytestmark = pytest.mark.anyio


@dataclass
class Calls:
    names: list[str] = field(default_factory=list[str])


def chain() -> Graph[Calls, None, int, int]:
    g = GraphBuilder(state_type=Calls, input_type=int, output_type=int)

    @g.step
    async def add_one(ctx: StepContext[Calls, None, int]) -> int:
        ctx.state.names.append('add_one')
        return ctx.inputs + 1

    @g.step
    async def double(ctx: StepContext[Calls, None, int]) -> int:
        ctx.state.names.append('double')
        return ctx.inputs * 2

    g.add(g.edge_from(g.start_node).to(add_one), g.edge_from(add_one).to(double), g.edge_from(double).to(g.end_node))
    return g.build()


async def test_iterating_yields_the_tasks_each_task_leads_to_then_the_end() -> None:
    graph = chain()
    async with graph.iter(state=Calls(), inputs=1) as run:
        assert run.output is None
        assert [t.node_id for t in run.next_task] == ['__start__']  # type: ignore[union-attr]
        events = [event async for event in run]
    assert [[t.node_id for t in e] if isinstance(e, list) else e for e in events] == [
        ['add_one'],
        ['double'],
        ['__end__'],
        EndMarker(4),
    ]
    assert all(isinstance(t, GraphTask) for e in events[:-1] for t in e)  # type: ignore[union-attr]
    assert run.output == 4
    assert repr(EndMarker(4)) == 'EndMarker(value=4)'


async def test_next_replaces_the_planned_tasks() -> None:
    graph = chain()
    state = Calls()
    async with graph.iter(state=state, inputs=1) as run:
        planned = await run.next()
        assert [t.node_id for t in planned] == ['double']  # type: ignore[union-attr]
        event = await run.next([GraphTaskRequest(NodeID('__end__'), 100, planned[0].fork_stack)])  # type: ignore[index]
        assert event == EndMarker(100)
        with pytest.raises(StopAsyncIteration):
            await run.next()
    assert run.output == 100
    assert state.names == ['add_one']


async def test_an_end_marker_as_reply_ends_the_run_and_cancels_what_runs() -> None:
    graph = chain()
    async with graph.iter(state=Calls(), inputs=1) as run:
        await run.next()
        with pytest.raises(StopAsyncIteration):
            await run.next(EndMarker(-1))
    assert run.output == -1


async def test_a_step_error_can_be_recovered_with_override_next() -> None:
    g = GraphBuilder(output_type=str)
    attempts: list[int] = []

    @g.step
    async def flaky(ctx: StepContext[None, None, None]) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ValueError('first try fails')
        return 'ok'

    g.add_edge(g.start_node, flaky)
    g.add_edge(flaky, g.end_node)
    async with g.build().iter() as run:
        with pytest.raises(ValueError, match='first try fails'):
            await run.next()
        run.override_next([GraphTaskRequest(NodeID('flaky'), None, ())])
        events = [event async for event in run]
    assert events[-1] == EndMarker('ok')
    assert len(attempts) == 2


async def test_an_error_not_recovered_from_is_raised_again() -> None:
    g = GraphBuilder(output_type=str)

    @g.step
    async def broken(ctx: StepContext[None, None, None]) -> str:
        raise ValueError('broken')

    g.add_edge(g.start_node, broken)
    g.add_edge(broken, g.end_node)
    async with g.build().iter() as run:
        with pytest.raises(ValueError, match='broken'):
            await run.next()
        with pytest.raises(ValueError, match='broken'):
            await run.next()
    with pytest.raises(ValueError, match='broken'):
        await g.build().run()


async def test_a_released_join_can_be_replaced_or_ended() -> None:
    g = GraphBuilder(output_type=list[int])

    @g.step
    async def items(ctx: StepContext[None, None, None]) -> list[int]:
        return [1, 2]

    @g.step
    async def keep(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs

    @g.step
    async def after(ctx: StepContext[None, None, list[int]]) -> list[int]:
        return sorted(ctx.inputs)

    collect = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).to(items),
        g.edge_from(items).map().to(keep),
        g.edge_from(keep).to(collect),
        g.edge_from(collect).to(after),
        g.edge_from(after).to(g.end_node),
    )
    graph = g.build()

    async def release(replace: bool) -> object:
        async with graph.iter() as run:
            async for event in run:
                if isinstance(event, list) and [t.node_id for t in event] == ['after']:
                    if replace:
                        run.override_next([GraphTaskRequest(NodeID('__end__'), [0], event[0].fork_stack)])
                    else:
                        run.override_next(EndMarker([-1]))
        return run.output

    assert await release(replace=True) == [0]
    assert await release(replace=False) == [-1]


async def test_dropping_a_planned_task_skips_it() -> None:
    g = GraphBuilder(output_type=list[int])

    @g.step
    async def items(ctx: StepContext[None, None, None]) -> list[int]:
        return [1, 2, 3]

    @g.step
    async def keep(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs

    collect = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).to(items),
        g.edge_from(items).map().to(keep),
        g.edge_from(keep).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    async with g.build().iter() as run:
        async for event in run:
            if isinstance(event, list) and len(event) == 3:
                run.override_next([t for t in event if t.inputs != 2])
    assert sorted(run.output or []) == [1, 3]


async def test_leaving_a_run_early_cancels_its_tasks() -> None:
    g = GraphBuilder(input_type=list[int], output_type=int)
    started = anyio.Event()

    @g.step
    async def work(ctx: StepContext[None, None, int]) -> int:
        if ctx.inputs == 2:
            started.set()
            await anyio.sleep_forever()
        return ctx.inputs

    g.add(g.edge_from(g.start_node).map().to(work), g.edge_from(work).to(g.end_node))
    async with g.build().iter(inputs=[1, 2]) as run:
        async for event in run:  # pragma: no branch
            if isinstance(event, list) and [t.node_id for t in event] == ['__end__']:
                break  # `work(1)` is done, `work(2)` still runs
        await started.wait()
    assert run.output is None


async def test_a_path_that_leads_nowhere_ends_the_run_with_an_error() -> None:
    g = GraphBuilder(output_type=int)

    @g.step
    async def lost(ctx: StepContext[None, None, None]) -> int:
        return 1

    g.add_edge(g.start_node, lost)
    with pytest.raises(GraphRuntimeError, match="Node 'lost' has no outgoing edge"):
        await g.build(validate_graph_structure=False).run()
    g.add(g.edge_from(lost).label('only a label').to(g.end_node))
    graph = g.build()
    graph.edges_by_source[NodeID('lost')][0].items.pop()  # the path keeps its label but loses its destination
    with pytest.raises(GraphRuntimeError, match='no task left and reached no end node'):
        await graph.run()


async def test_a_task_for_a_node_not_in_the_graph_is_refused() -> None:
    graph = chain()
    async with graph.iter(state=Calls(), inputs=1) as run:
        await run.next()
        run.override_next([GraphTaskRequest(NodeID('nowhere'), None, ())])
        with pytest.raises(GraphRuntimeError, match="names node 'nowhere', which is not in this graph"):
            await run.next()


async def test_a_stream_step_yields_its_pieces_as_events() -> None:
    g = GraphBuilder(output_type=list[int])

    @g.stream
    async def count(ctx: StepContext[None, None, None]) -> AsyncIterator[int]:
        yield 1
        yield 2

    collect = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).to(count), g.edge_from(count).map().to(collect), g.edge_from(collect).to(g.end_node)
    )
    async with g.build().iter() as run:
        events = [event async for event in run]
    # the stream step, the map fork, one piece per item, the end of the stream, the released join
    assert [len(e) for e in events if isinstance(e, list)] == [1, 1, 1, 1, 0, 1]
    assert sorted(run.output or []) == [1, 2]


async def test_a_run_that_was_not_entered_says_how_to_use_it() -> None:
    from edgewise.graph.builder import GraphRun

    run = GraphRun(chain(), state=Calls(), deps=None, inputs=1)
    with pytest.raises(GraphRuntimeError, match='was not entered'):
        await run.next()


async def test_the_engine_under_its_pydantic_graph_name_tolerates_a_closed_doorbell() -> None:
    graph = chain()
    counter = iter(range(100))

    def task_id() -> TaskID:
        return TaskID(f'task:{next(counter)}')

    def run_id() -> NodeRunID:  # pragma: no cover - a single step makes no fork run
        return NodeRunID('run:0')

    async with anyio.create_task_group() as task_group:
        engine = _GraphIterator(graph, Calls(), None, task_group, run_id, task_id)
        engine.iter_stream_sender.close()
        engine.iter_stream_receiver.close()
        task_group.start_soon(engine._run_tracked_task, GraphTask(NodeID('add_one'), 1, (), task_id()))
    assert next(o.result for o in engine.progress.outcomes)[0].node_id == 'double'  # type: ignore[index]


def test_run_sync_runs_its_own_event_loop_and_names_the_graph() -> None:
    my_graph = chain()
    my_graph.name = None
    assert my_graph.run_sync(state=Calls(), inputs=2) == 6
    assert my_graph.name == 'my_graph'


async def test_run_sync_inside_an_event_loop_is_refused() -> None:
    from edgewise.graph.builder.exceptions import UnsupportedEventLoopError

    with pytest.raises(UnsupportedEventLoopError, match=r'use `await graph\.run'):
        chain().run_sync(state=Calls(), inputs=1)
