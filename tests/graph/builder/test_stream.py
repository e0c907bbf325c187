"""`Graph.stream` of builder graphs: task, join and end events, in memory, stored, and resumed from a store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from edgewise.graph.builder import (
    BaseNode,
    End,
    EndMarker,
    GraphBuilder,
    GraphRunContext,
    GraphRuntimeError,
    JoinItem,
    StepContext,
    reduce_sum,
)
from edgewise.graph.builder.events import (
    JoinReleasedEvent,
    RunEndEvent,
    StateEvent,
    TaskFailedEvent,
    TaskFinishedEvent,
    TaskStartedEvent,
)
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

pytestmark = pytest.mark.anyio


@dataclass
class Log:
    squared: list[int] = field(default_factory=list)


def squares_graph() -> Any:
    g = GraphBuilder(state_type=Log, input_type=list[int], output_type=int)

    @g.step
    async def square(ctx: StepContext[Log, None, int]) -> int:
        if ctx.inputs < 0:
            raise ValueError(f'negative: {ctx.inputs}')
        ctx.state.squared.append(ctx.inputs)
        return ctx.inputs * ctx.inputs

    total = g.join(reduce_sum, initial=0, node_id='total')
    g.add(
        g.edge_from(g.start_node).map().to(square),
        g.edge_from(square).to(total),
        g.edge_from(total).to(g.end_node),
    )
    return g.build()


squares = squares_graph()


@dataclass
class Halve(BaseNode[None, None, str]):
    n: int

    async def run(self, ctx: GraphRunContext[None, None]) -> Halve | End[str]:
        return End(f'reached {self.n}') if self.n <= 1 else Halve(self.n // 2)


def routed_graph() -> Any:
    g = GraphBuilder(input_type=int, output_type=str)

    @g.step
    async def double(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs * 2

    route = (
        g.decision()
        .branch(g.match(int, matches=lambda n: n > 10).transform(lambda ctx: Halve(ctx.inputs)).to(Halve))
        .branch(g.match(int).transform(lambda ctx: f'small: {ctx.inputs}').to(g.end_node))
    )
    g.add(g.edge_from(g.start_node).to(double), g.edge_from(double).to(route), g.node(Halve))
    return g.build()


routed = routed_graph()


def described(event: Any) -> tuple[Any, ...]:
    """An event as plain values: its kind, the node of its task, and what it led to."""
    if isinstance(event, TaskStartedEvent):
        return ('started', event.task.node_id)
    if isinstance(event, TaskFinishedEvent):
        result = event.result
        if isinstance(result, EndMarker):
            led_to: Any = ('end', result.value)
        elif isinstance(result, JoinItem):
            led_to = ('join', result.join_id, result.inputs)
        else:
            led_to = [task.node_id for task in result]
        return ('finished', event.task.node_id, led_to)
    if isinstance(event, TaskFailedEvent):
        return ('failed', event.task.node_id, str(event.error))
    if isinstance(event, JoinReleasedEvent):
        return ('released', event.join_id, event.value, [task.node_id for task in event.tasks])
    if isinstance(event, StateEvent):
        return ('state', sorted(event.state.squared))
    assert isinstance(event, RunEndEvent)
    return ('run_end', event.output)


async def test_a_linear_run_streams_each_task_in_order() -> None:
    async with routed.stream(inputs=20) as events:
        seen = [described(event) async for event in events]
    assert seen == [
        ('started', '__start__'),
        ('finished', '__start__', ['double']),
        ('started', 'double'),
        ('finished', 'double', ['decision']),
        ('started', 'decision'),
        ('finished', 'decision', ['Halve']),
        ('started', 'Halve'),
        ('finished', 'Halve', ['Halve']),
        ('started', 'Halve'),
        ('finished', 'Halve', ['Halve']),
        ('started', 'Halve'),
        ('finished', 'Halve', ['Halve']),
        ('started', 'Halve'),
        ('finished', 'Halve', ['Halve']),
        ('started', 'Halve'),
        ('finished', 'Halve', ['Halve']),
        ('started', 'Halve'),
        ('finished', 'Halve', ('end', 'reached 1')),
        ('run_end', 'reached 1'),
    ]
    assert events.end is not None
    assert events.end.output == 'reached 1'


async def test_a_map_streams_its_fan_out_each_branch_the_join_and_the_end() -> None:
    state = Log()
    async with squares.stream(state=state, inputs=[1, 2, 3]) as events:
        seen = [event async for event in events]
    described_events = [described(event) for event in seen]
    assert described_events[:4] == [
        ('started', '__start__'),
        ('finished', '__start__', ['map']),
        ('started', 'map'),
        ('finished', 'map', ['square', 'square', 'square']),
    ]
    # The branches run in parallel: their order varies, what each does does not.
    branches = described_events[4:-4]
    assert sorted(e for e in branches if e[1] == 'square') == [
        ('finished', 'square', ['total']),
        ('finished', 'square', ['total']),
        ('finished', 'square', ['total']),
        ('started', 'square'),
        ('started', 'square'),
        ('started', 'square'),
    ]
    assert sorted(e for e in branches if e[1] == 'total') == [
        ('finished', 'total', ('join', 'total', 1)),
        ('finished', 'total', ('join', 'total', 4)),
        ('finished', 'total', ('join', 'total', 9)),
        ('started', 'total'),
        ('started', 'total'),
        ('started', 'total'),
    ]
    assert described_events[-4:] == [
        ('released', 'total', 14, ['__end__']),
        ('started', '__end__'),
        ('finished', '__end__', ('end', 14)),
        ('run_end', 14),
    ]
    # Each task starts before it finishes; a step's duration is measured, a routing node's is 0.
    started = [e.task.task_id for e in seen if isinstance(e, TaskStartedEvent)]
    finished = [e.task.task_id for e in seen if isinstance(e, TaskFinishedEvent)]
    assert sorted(started) == sorted(finished)
    assert all(started.index(task_id) <= finished.index(task_id) for task_id in started)
    durations = {str(e.task.node_id): e.duration for e in seen if isinstance(e, TaskFinishedEvent)}
    assert durations['map'] == 0.0
    assert durations['square'] >= 0.0
    fan_out = next(e for e in seen if isinstance(e, TaskFinishedEvent) and e.task.node_id == 'map')
    assert [task.inputs for task in fan_out.next_tasks] == [1, 2, 3]
    end = seen[-1]
    assert isinstance(end, RunEndEvent)
    assert end.state is state
    assert end.end.data == 14
    assert sorted(state.squared) == [1, 2, 3]


async def test_a_finished_event_of_an_end_or_a_join_item_has_no_next_tasks() -> None:
    async with squares.stream(state=Log(), inputs=[5]) as events:
        finished = [e for e in [event async for event in events] if isinstance(e, TaskFinishedEvent)]
    assert [(e.task.node_id, list(e.next_tasks)) for e in finished if not e.next_tasks] == [
        ('total', []),
        ('__end__', []),
    ]


async def test_state_snapshots_are_copies_after_each_step() -> None:
    state = Log()
    async with squares.stream(state=state, inputs=[2, 3], state_snapshots=True) as events:
        states = [e.state for e in [event async for event in events] if isinstance(e, StateEvent)]
    assert len(states) == 2  # one per step (the routing nodes send none)
    assert sorted(map(len, (s.squared for s in states))) == [1, 2]
    assert all(s is not state for s in states)
    assert sorted(states[-1].squared) == [2, 3]


async def test_a_step_that_raises_sends_its_failure_then_the_stream_raises_it() -> None:
    seen: list[Any] = []
    with pytest.raises(ValueError, match='negative: -1'):
        await collect(routed_negative().stream(inputs=-1), seen, described)
    assert seen == [
        ('started', '__start__'),
        ('finished', '__start__', ['check']),
        ('started', 'check'),
        ('failed', 'check', 'negative: -1'),
    ]


async def collect(stream: Any, into: list[Any], describe: Any) -> None:
    """Read a stream to its end (or its error), each event described into `into`."""
    async with stream as events:
        async for event in events:
            into.append(describe(event))


def routed_negative() -> Any:
    g = GraphBuilder(input_type=int, output_type=int)

    @g.step
    async def check(ctx: StepContext[None, None, int]) -> int:
        raise ValueError(f'negative: {ctx.inputs}')

    g.add(g.edge_from(g.start_node).to(check), g.edge_from(check).to(g.end_node))
    return g.build()


async def test_a_decision_without_a_branch_for_its_input_fails_in_the_stream() -> None:
    g = GraphBuilder(input_type=int, output_type=int)
    route = g.decision().branch(g.match(str).to(g.end_node))
    g.add(g.edge_from(g.start_node).to(route))
    picky = g.build()
    seen: list[Any] = []
    with pytest.raises(GraphRuntimeError, match='No branch matched inputs 3'):
        await collect(picky.stream(inputs=3), seen, lambda event: event.kind)
    assert seen == ['task_started', 'task_finished', 'task_started', 'task_failed']


async def test_a_stored_run_streams_and_is_stored_to_its_end(tmp_path: Path) -> None:
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'streamed') as store:
        async with squares.stream(state=Log(), inputs=[1, 2], persistence=store) as events:
            kinds = [event.kind async for event in events]
        history = await store.load_all()
    assert kinds[-2:] == ['task_finished', 'run_end']
    assert kinds.count('task_started') == kinds.count('task_finished') == 7
    assert history[-1].kind == 'end'
    assert history[-1].result.data == 5


async def test_a_stored_run_stopped_mid_map_is_resumed_as_a_stream(tmp_path: Path) -> None:
    store = FileStatePersistence(tmp_path / 'run.json')
    async with squares.iter(state=Log(), inputs=[1, 2, 3], persistence=store) as run:
        async for event in run:
            if isinstance(event, list) and len(event) == 3:
                break  # the three `square` tasks are stored, not run
    async with squares.stream_from_persistence(FileStatePersistence(tmp_path / 'run.json')) as events:
        seen = [described(event) async for event in events]
    assert [e for e in seen if e[0] == 'started'].count(('started', 'square')) == 3
    assert ('started', 'map') not in seen  # the map had run: it does not run again
    assert seen[-2:] == [('finished', '__end__', ('end', 14)), ('run_end', 14)]
    assert events.end is not None
    assert sorted(events.end.state.squared) == [1, 2, 3]


async def test_leaving_the_stream_early_cancels_a_stored_run_that_can_then_be_resumed(tmp_path: Path) -> None:
    entered = anyio.Event()
    g = GraphBuilder(input_type=int, output_type=int)

    @g.step
    async def slow(ctx: StepContext[None, None, int]) -> int:
        entered.set()
        await anyio.sleep_forever()
        raise AssertionError('never reached')  # pragma: no cover

    g.add(g.edge_from(g.start_node).to(slow), g.edge_from(slow).to(g.end_node))
    stuck = g.build()
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'left') as store:
        async with stuck.stream(inputs=4, persistence=store) as events:
            async for event in events:
                if isinstance(event, TaskStartedEvent) and event.task.node_id == 'slow':
                    await entered.wait()
                    break
        history = await store.load_all()
    assert history[-1].kind == 'node'
    assert history[-1].status == 'created'  # cancelled mid-step: it runs again on resume

    g = GraphBuilder(input_type=int, output_type=int)

    async def quick(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs + 1

    fixed_step = g.step(quick, node_id='slow')  # the same step, fixed
    g.add(g.edge_from(g.start_node).to(fixed_step), g.edge_from(fixed_step).to(g.end_node))
    fixed = g.build()
    seen: list[Any] = []
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'left') as store:
        await collect(fixed.stream_from_persistence(store), seen, described)
    assert seen == [('started', 'slow'), ('finished', 'slow', ['__end__']), *seen[2:]]
    assert seen[-1] == ('run_end', 5)


async def test_a_consumer_that_stops_reading_pauses_the_run() -> None:
    ran: list[int] = []
    g = GraphBuilder(input_type=int, output_type=int)

    @g.step
    async def count(ctx: StepContext[None, None, int]) -> int:
        ran.append(ctx.inputs)
        return ctx.inputs + 1

    route = g.decision().branch(g.match(int, matches=lambda n: n >= 50).to(g.end_node)).branch(g.match(int).to(count))
    g.add(g.edge_from(g.start_node).to(count), g.edge_from(count).to(route))
    counter = g.build()
    async with counter.stream(inputs=0, buffer_size=4) as events:
        async for event in events:
            if isinstance(event, TaskFinishedEvent) and event.task.node_id == 'count':
                break
        # Stopped reading after the first step: the run waits, at most a few events ahead of this consumer.
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert len(ran) < 5
    assert len(ran) < 5  # leaving the block cancelled the run


async def test_events_can_be_taken_one_at_a_time() -> None:
    async with routed.stream(inputs=3) as events:
        first = await events.__anext__()
        second = await events.__anext__()
        rest = [event async for event in events]
    assert (described(first), described(second)) == (('started', '__start__'), ('finished', '__start__', ['double']))
    assert described(rest[-1]) == ('run_end', 'small: 6')
    with pytest.raises(StopAsyncIteration):
        await events.__anext__()


async def test_a_step_is_seen_starting_while_it_runs() -> None:
    """The step waits for the reader to see it start: the event must come before the step's end (with no room
    in the buffer, the reader waits to be woken rather than looking again on its own)."""
    seen_starting = anyio.Event()
    g = GraphBuilder(input_type=int, output_type=int)

    @g.step
    async def patient(ctx: StepContext[None, None, int]) -> int:
        await seen_starting.wait()
        return ctx.inputs

    g.add(g.edge_from(g.start_node).to(patient), g.edge_from(patient).to(g.end_node))
    waiting = g.build()
    kinds: list[str] = []
    with anyio.fail_after(30):  # a bound on a hang, not a timing assertion
        async with waiting.stream(inputs=1, buffer_size=0) as events:
            async for event in events:
                kinds.append(event.kind)
                if isinstance(event, TaskStartedEvent) and event.task.node_id == 'patient':
                    seen_starting.set()
    assert kinds == [
        'task_started',
        'task_finished',
        'task_started',
        'task_finished',
        'task_started',
        'task_finished',
        'run_end',
    ]


async def test_a_wide_map_streams_to_a_reader_that_takes_one_event_at_a_time() -> None:
    """The parallel branches add events while the reader holds the run back (`buffer_size=0`)."""
    with anyio.fail_after(60):  # a bound on a hang, not a timing assertion
        async with squares.stream(state=Log(), inputs=list(range(30)), buffer_size=0) as events:
            count = 0
            async for _ in events:
                count += 1
                await anyio.lowlevel.checkpoint()
    assert events.end is not None
    assert events.end.output == sum(n * n for n in range(30))
    assert count == 2 + 2 + 30 * 4 + 1 + 2 + 1


async def test_a_negative_buffer_size_is_refused() -> None:
    with pytest.raises(ValueError, match='buffer_size must be a non-negative integer, got -1'):
        async with squares.stream(inputs=[1], buffer_size=-1):
            pass  # pragma: no cover


async def test_an_error_in_the_consumers_block_is_raised_as_it_is() -> None:
    def fail(event: Any) -> None:
        raise KeyError('mine')

    with pytest.raises(KeyError, match='mine'):
        await collect(squares.stream(state=Log(), inputs=[1]), [], fail)


async def test_a_map_over_an_async_iterable_streams_all_its_branches_in_one_finished_event() -> None:
    g = GraphBuilder(input_type=int, output_type=int)

    @g.stream
    async def numbers(ctx: StepContext[None, None, int]):
        for n in range(ctx.inputs):
            yield n

    @g.step
    async def plus_one(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs + 1

    total = g.join(reduce_sum, initial=0)
    g.add(
        g.edge_from(g.start_node).to(numbers),
        g.edge_from(numbers).map().to(plus_one),
        g.edge_from(plus_one).to(total),
        g.edge_from(total).to(g.end_node),
    )
    counted = g.build()
    async with counted.stream(inputs=3) as events:
        seen = [event async for event in events]
    fan_out = [e for e in seen if isinstance(e, TaskFinishedEvent) and e.task.node_id == 'map']
    assert [[task.inputs for task in e.next_tasks] for e in fan_out] == [[0, 1, 2]]
    assert isinstance(seen[-1], RunEndEvent)
    assert seen[-1].output == 6
