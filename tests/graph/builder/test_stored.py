"""A builder run's progress as stored data: what is kept, what is checked against the graph on resume."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from edgewise.graph import End, NodeSnapshot
from edgewise.graph.builder import (
    BaseNode,
    EndMarker,
    GraphBuilder,
    GraphRunContext,
    GraphRuntimeError,
    StepContext,
    reduce_list_append,
)
from edgewise.graph.builder._progress import GraphTask, JoinItem, JoinRelease, RunProgress, TaskOutcome
from edgewise.graph.builder._stored import BuilderProgress, decode_progress, encode_progress
from edgewise.graph.builder.id_types import NodeID, TaskID
from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.in_mem import FullStatePersistence

pytestmark = pytest.mark.anyio


@dataclass
class Point:
    x: int


@dataclass
class Hop(BaseNode[None, None, Any]):
    point: Point

    async def run(self, ctx: GraphRunContext[None, None]) -> End[int]:
        return End(self.point.x)


def graph() -> Any:
    g = GraphBuilder(input_type=list[int], output_type=list[int])

    @g.step
    async def to_point(ctx: StepContext[None, None, Point]) -> int:
        return ctx.inputs.x

    @g.step
    async def untyped(ctx) -> int:  # pragma: no cover - never run
        return 0

    collect = g.join(reduce_list_append, initial_factory=list[int], node_id='collect')
    g.add(
        g.edge_from(g.start_node).map().transform(lambda ctx: Point(ctx.inputs)).to(to_point),
        g.edge_from(to_point).to(collect),
        g.edge_from(collect).to(g.end_node),
        g.edge_from(untyped).to(g.end_node),
        g.node(Hop),
    )
    return g.build(validate_graph_structure=False)


def task(node: str, inputs: Any, number: int) -> GraphTask:
    return GraphTask(NodeID(node), inputs, (), TaskID(f'task:{number}'))


def test_values_come_back_as_the_types_their_nodes_take() -> None:
    nodes = graph().nodes
    progress = RunProgress(state=None)
    point_task, hop_task, plain = task('to_point', Point(3), 1), task('Hop', Hop(Point(4)), 2), task('untyped', 5, 3)
    for t in (point_task, hop_task, plain):
        progress.tasks[t.task_id] = t
    progress.outcomes.append(TaskOutcome(plain, EndMarker([1])))
    progress.outcomes.append(TaskOutcome(hop_task, JoinItem(NodeID('collect'), 7, ())))
    progress.awaiting = JoinRelease([task('__end__', [1, 2], 4)])
    restored = decode_progress(encode_progress(progress), None, nodes)
    assert restored.tasks[point_task.task_id].inputs == Point(3)
    assert restored.tasks[hop_task.task_id].inputs == Hop(Point(4))
    assert restored.tasks[plain.task_id].inputs == 5
    end, join = restored.outcomes
    assert end.result == EndMarker([1])
    assert join.result == JoinItem(NodeID('collect'), 7, ())
    assert isinstance(restored.awaiting, JoinRelease)
    assert restored.awaiting.tasks[0].inputs == [1, 2]


def test_an_error_outcome_is_not_stored_so_its_task_runs_again() -> None:
    progress = RunProgress(state=None)
    failed = task('untyped', 1, 1)
    progress.tasks[failed.task_id] = failed
    progress.outcomes.append(TaskOutcome(failed, [], error=ValueError('x')))
    progress.awaiting = TaskOutcome(failed, [], error=ValueError('x'))
    data = encode_progress(progress)
    assert (data['outcomes'], data['awaiting']) == ([], None)


@pytest.mark.parametrize(
    ('change', 'message'),
    [
        (lambda d: d.update(format=0), 'not the progress of a builder run'),
        (lambda d: d['tasks'][0].update(inputs='not a point'), "input of a task for node 'to_point' no longer fits"),
        (lambda d: d['outcomes'][0].update(task='task:99'), "names task 'task:99'"),
        (lambda d: d['outcomes'][0].update(join={'join': 'to_point', 'inputs': 1, 'stack': []}), "join 'to_point'"),
    ],
)
def test_a_stored_run_that_does_not_fit_is_refused(change: Any, message: str) -> None:
    progress = RunProgress(state=None)
    point_task = task('to_point', Point(3), 1)
    progress.tasks[point_task.task_id] = point_task
    progress.outcomes.append(TaskOutcome(point_task, [task('collect', 3, 2)]))
    data = encode_progress(progress)
    change(data)
    with pytest.raises(PersistenceError, match=message):
        decode_progress(data, None, graph().nodes)


async def test_a_progress_node_is_not_run_by_a_classic_graph() -> None:
    with pytest.raises(GraphRuntimeError, match='resume it with the builder graph'):
        await BuilderProgress({}).run(GraphRunContext(state=None, deps=None))


async def test_a_classic_run_is_not_resumed_as_a_builder_run() -> None:
    store = FullStatePersistence[None, Any]()
    g = GraphBuilder(output_type=int)
    g.add(g.edge_from(g.start_node).to(g.end_node))
    store.history.append(NodeSnapshot(state=None, node=Hop(Point(1))))
    with pytest.raises(PersistenceError, match="its next node is 'Hop'"):
        async with g.build().iter_from_persistence(store):
            pass  # pragma: no cover
    store.history.clear()
    with pytest.raises(GraphRuntimeError, match='holds no builder run waiting to go on \\('):
        async with g.build().iter_from_persistence(store):
            pass  # pragma: no cover


async def test_a_stream_step_output_cannot_be_stored_and_says_so() -> None:
    g = GraphBuilder(output_type=list[int])

    @g.stream
    async def count(ctx: StepContext[None, None, None]) -> AsyncIterator[int]:
        yield 1

    collect = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).to(count), g.edge_from(count).map().to(collect), g.edge_from(collect).to(g.end_node)
    )
    with pytest.raises(PersistenceError, match=r"A value on its way to node 'map' cannot be stored"):
        await g.build().run(persistence=FullStatePersistence())


def test_a_step_whose_hints_cannot_be_resolved_takes_its_stored_input_as_it_is() -> None:
    from edgewise.graph.builder._graph import _default_reply
    from edgewise.graph.builder._stored import _input_type

    g = GraphBuilder()

    @g.step
    async def vague(ctx: StepContext[None, None, NotDefinedAnywhere]) -> None:  # type: ignore[name-defined]  # noqa: F821  # pragma: no cover
        return None

    assert _input_type(vague) is Any
    assert _default_reply(RunProgress(state=None)) == []


async def test_a_stored_run_that_ended_stays_ended() -> None:
    g = GraphBuilder(input_type=int, output_type=int)
    g.add(g.edge_from(g.start_node).to(g.end_node))
    async with g.build().iter(inputs=1, persistence=FullStatePersistence()) as run:
        async for _ in run:
            pass
        with pytest.raises(StopAsyncIteration):
            await run.next()
    assert run.output == 1


def _progress_with_join(current: Any) -> dict[str, Any]:
    data = encode_progress(RunProgress(state=None))
    data['joins'] = [{'join': 'collect', 'run': 'map@task:1', 'current': current, 'stack': [], 'cancelled': False}]
    return data


def test_a_join_whose_type_changed_is_refused_naming_it() -> None:
    # `collect` starts from a list: a stored sum (the join was a `reduce_sum` when the run was stored) does not fit.
    with pytest.raises(PersistenceError, match=r"stored value of join 'collect' no longer fits the join: .* list"):
        decode_progress(_progress_with_join(14), None, graph().nodes)
    restored = decode_progress(_progress_with_join([1, 2]), None, graph().nodes)
    assert [state.current for state in restored.joins.values()] == [[1, 2]]


class _Opaque:
    pass


def test_a_join_without_a_describable_initial_value_is_not_checked() -> None:
    for initial in (None, _Opaque()):
        g = GraphBuilder(input_type=list[int], output_type=Any)

        @g.step
        async def one(ctx: StepContext[None, None, int]) -> int:  # pragma: no cover - never run
            return ctx.inputs

        first = g.join(lambda current, value: value, initial=initial, node_id='collect')
        g.add(g.edge_from(g.start_node).map().to(one), g.edge_from(one).to(first), g.edge_from(first).to(g.end_node))
        restored = decode_progress(_progress_with_join(14), None, g.build().nodes)
        assert [state.current for state in restored.joins.values()] == [14]
