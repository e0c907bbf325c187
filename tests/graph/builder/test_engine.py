"""How the engine runs steps: a lone step in the caller's task, behaving as a task of its own would."""

from __future__ import annotations

from collections.abc import Generator
from contextvars import ContextVar, copy_context
from functools import partial
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from edgewise.graph.builder import GraphBuilder, GraphRuntimeError, StepContext, reduce_list_append
from edgewise.graph.builder._engine import _InContext
from edgewise.graph.builder._progress import EndMarker, GraphTask, Outcomes, TaskOutcome
from edgewise.graph.builder.id_types import NodeID, TaskID
from edgewise.graph.persistence.in_mem import FullStatePersistence

pytestmark = pytest.mark.anyio

seen: ContextVar[str] = ContextVar('seen', default='unset')


def chain(call: Any) -> Any:
    """`start -> call -> end`."""
    g = GraphBuilder(input_type=int, output_type=int)
    step = g.step(call, node_id='only')
    g.add(g.edge_from(g.start_node).to(step), g.edge_from(step).to(g.end_node))
    return g.build()


async def test_a_step_sees_the_callers_context_and_its_changes_stay_in_the_step() -> None:
    observed: list[str] = []

    async def only(ctx: StepContext[None, None, int]) -> int:
        observed.append(seen.get())
        seen.set('set by the step')
        await anyio.lowlevel.checkpoint()
        observed.append(seen.get())
        return ctx.inputs

    token = seen.set('set by the caller')
    try:
        assert await chain(only).run(inputs=3) == 3
        assert seen.get() == 'set by the caller'
    finally:
        seen.reset(token)
    assert observed == ['set by the caller', 'set by the step']


async def test_steps_that_never_wait_still_let_other_tasks_run_and_cancel_the_run() -> None:
    g = GraphBuilder(input_type=int, output_type=int)
    third = anyio.Event()

    @g.step
    async def count(ctx: StepContext[None, None, int]) -> int:
        if ctx.inputs == 3:
            third.set()
        return ctx.inputs + 1

    # A loop without end: only a cancellation from another task stops it.
    g.add(g.edge_from(g.start_node).to(count), g.edge_from(count).to(count))
    graph = g.build(validate_graph_structure=False)
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:

            async def stop() -> None:
                await third.wait()
                scope.cancel()

            group.start_soon(stop)
            await graph.run(inputs=0)
    assert scope.cancelled_caught


async def test_a_waiting_step_is_cancelled_with_its_run_and_cleans_up() -> None:
    started = anyio.Event()
    cleaned: list[bool] = []

    async def only(ctx: StepContext[None, None, int]) -> int:
        try:
            started.set()
            await anyio.sleep_forever()
        finally:
            cleaned.append(True)
        raise AssertionError('not reached')  # pragma: no cover

    graph = chain(only)
    async with anyio.create_task_group() as group:
        group.start_soon(graph.run)
        await started.wait()
        group.cancel_scope.cancel()
    assert cleaned == [True]


async def test_a_step_receives_what_it_waits_for() -> None:
    send, receive = anyio.create_memory_object_stream[int](1)

    async def only(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs + await receive.receive()

    async with anyio.create_task_group() as group, send, receive:

        async def feed() -> None:
            await send.send(10)

        group.start_soon(feed)
        assert await chain(only).run(inputs=1) == 11


class _Ready:
    """An awaitable that is not a coroutine, done at once."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, Any, int]:
        return self.value
        yield  # pragma: no cover - makes this a generator


async def test_a_step_function_may_return_any_awaitable() -> None:
    def only(ctx: StepContext[None, None, int]) -> _Ready:
        return _Ready(ctx.inputs * 2)

    assert await chain(only).run(inputs=4) == 8


async def test_an_error_of_a_step_run_in_the_callers_task_reaches_the_caller() -> None:
    async def only(ctx: StepContext[None, None, int]) -> int:
        raise ValueError(f'bad {ctx.inputs}')

    with pytest.raises(ValueError, match='bad 5'):
        await chain(only).run(inputs=5)


async def test_a_step_started_beside_a_running_one_runs_in_a_task_of_its_own() -> None:
    # `first` waits while its sibling `later` is started alone (after `hop`): `later` must not run in the
    # caller's task, or the caller would wait for it and `first` could not finish before `later` needs it.
    g = GraphBuilder(output_type=list[str])
    first_done = anyio.Event()
    order: list[str] = []

    @g.step
    async def first(ctx: StepContext[None, None, None]) -> str:
        await anyio.lowlevel.checkpoint()
        order.append('first')
        first_done.set()
        return 'first'

    @g.step
    async def hop(ctx: StepContext[None, None, None]) -> None:
        return None

    @g.step
    async def later(ctx: StepContext[None, None, None]) -> str:
        await first_done.wait()
        order.append('later')
        return 'later'

    collect = g.join(reduce_list_append, initial_factory=list[str])
    g.add(
        g.edge_from(g.start_node).to(first, hop),
        g.edge_from(hop).to(later),
        g.edge_from(first, later).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    with anyio.fail_after(30):  # a bound on a hang, not a timing assertion
        assert sorted(await g.build().run()) == ['first', 'later']
    assert order == ['first', 'later']


async def test_iterating_hands_out_events_while_a_lone_step_is_started_in_its_own_task() -> None:
    g = GraphBuilder(output_type=int)
    ran: list[str] = []

    @g.step
    async def one(ctx: StepContext[None, None, None]) -> int:
        ran.append('one')
        return 1

    @g.step
    async def two(ctx: StepContext[None, None, int]) -> int:
        ran.append('two')
        return ctx.inputs + 1

    g.add(g.edge_from(g.start_node).to(one), g.edge_from(one).to(two), g.edge_from(two).to(g.end_node))
    events: list[Any] = []
    async with g.build().iter() as run:
        async for event in run:
            events.append(event)
    assert [type(e).__name__ for e in events] == ['list', 'list', 'list', 'EndMarker']
    assert events[-1] == EndMarker(2)
    assert ran == ['one', 'two']


class _HeldCheckpoints(FullStatePersistence[Any, Any]):
    """Stores in memory; the second join step's store waits until the run is cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.holding = anyio.Event()
        self.join_steps = 0

    async def checkpoint(self, state: Any, node: Any) -> None:
        self.join_steps += 1
        if self.join_steps == 2:
            self.holding.set()
            await anyio.sleep_forever()


async def test_a_run_cancelled_while_a_join_step_is_stored_runs_nothing_more() -> None:
    g = GraphBuilder(input_type=list[int], output_type=int)
    ran: list[int] = []

    @g.step
    async def square(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs * ctx.inputs

    @g.step
    async def after(ctx: StepContext[None, None, list[int]]) -> int:  # pragma: no cover - never started
        ran.append(1)
        return sum(ctx.inputs)

    collect = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).map().to(square),
        g.edge_from(square).to(collect),
        g.edge_from(collect).to(after),
        g.edge_from(after).to(g.end_node),
    )
    persistence = _HeldCheckpoints()
    graph = g.build()
    async with anyio.create_task_group() as group:
        group.start_soon(partial(graph.run, inputs=[1, 2], persistence=persistence))
        await persistence.holding.wait()
        group.cancel_scope.cancel()
    assert ran == []
    assert persistence.join_steps == 2


class _Suspend:
    def __await__(self) -> Generator[str, Any, None]:
        yield 'suspended'


async def _step_body(log: list[str]) -> str:
    try:
        await _Suspend()
    except ValueError as error:
        log.append(f'caught {error}')
        return 'recovered'
    finally:
        log.append('finally')
    return 'resumed'  # pragma: no cover - only resumed by a throw here


def test_the_step_wrapper_passes_throws_in_and_closes_the_step_when_closed() -> None:
    log: list[str] = []
    waiting = _InContext(_step_body(log), copy_context()).__await__()
    assert next(waiting) == 'suspended'
    with pytest.raises(StopIteration) as stop:
        waiting.throw(ValueError('boom'))
    assert stop.value.value == 'recovered'
    assert log == ['caught boom', 'finally']

    log.clear()
    waiting = _InContext(_step_body(log), copy_context()).__await__()
    assert next(waiting) == 'suspended'
    waiting.close()  # e.g. the run's coroutine dropped while its step waits
    assert log == ['finally']


async def test_steps_run_without_spans_when_the_graph_is_not_instrumented() -> None:
    g = GraphBuilder(input_type=int, output_type=int, auto_instrument=False)

    @g.step
    async def only(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs + 1

    g.add(g.edge_from(g.start_node).to(only), g.edge_from(only).to(g.end_node))
    assert await g.build().run(inputs=1) == 2


def _outcome(n: int) -> TaskOutcome:
    return TaskOutcome(GraphTask(NodeID('x'), n, (), TaskID(f'task:{n}')), EndMarker(n))


def test_the_queue_of_outcomes_is_first_in_first_out_and_drops_what_it_handed_out() -> None:
    queue = Outcomes(_outcome(n) for n in range(3))
    assert len(queue) == 3
    assert queue.popleft().task.inputs == 0
    assert [o.task.inputs for o in queue] == [1, 2]
    assert bool(queue)
    for n in range(3, 200):
        queue.append(_outcome(n))
    taken = [queue.popleft().task.inputs for _ in range(150)]
    assert taken == list(range(1, 151))
    assert [o.task.inputs for o in queue] == list(range(151, 200))
    assert len(queue._items) < 150  # the taken ones were dropped on the way
    while queue:
        queue.popleft()
    assert len(queue) == 0
    assert repr(queue) == 'Outcomes([])'
    with pytest.raises(IndexError, match='empty queue of outcomes'):
        queue.popleft()


async def test_a_decision_without_a_matching_branch_still_fails_the_run() -> None:
    g = GraphBuilder(input_type=int, output_type=int)

    @g.step
    async def only(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs

    route = g.decision().branch(g.match(int, matches=lambda n: n > 10).to(g.end_node))
    g.add(g.edge_from(g.start_node).to(only), g.edge_from(only).to(route))
    with pytest.raises(GraphRuntimeError, match='No branch matched'):
        await g.build().run(inputs=1)


async def test_a_lone_step_runs_in_the_task_iterating_the_run_and_parallel_ones_in_their_own() -> None:
    g = GraphBuilder(output_type=list[int])
    tasks: dict[str, int] = {}

    @g.step
    async def lone(ctx: StepContext[None, None, None]) -> list[int]:
        tasks['lone'] = anyio.get_current_task().id
        return [1, 2]

    @g.step
    async def item(ctx: StepContext[None, None, int]) -> int:
        tasks[f'item {ctx.inputs}'] = anyio.get_current_task().id
        return ctx.inputs

    collect = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).to(lone),
        g.edge_from(lone).map().to(item),
        g.edge_from(item).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    assert sorted(await g.build().run()) == [1, 2]
    caller = anyio.get_current_task().id
    assert tasks['lone'] == caller
    assert len({tasks['item 1'], tasks['item 2'], caller}) == 3
