"""`Graph.stream`: typed events of a run, a bounded buffer that pauses it, cancellation that leaves it resumable."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from edgewise.graph import (
    BaseNode,
    End,
    FullStatePersistence,
    Graph,
    GraphRunContext,
    GraphRuntimeError,
    SimpleStatePersistence,
    _runs,
)
from edgewise.graph.events import (
    CustomEvent,
    NodeFailedEvent,
    NodeFinishedEvent,
    NodeStartedEvent,
    RunEndEvent,
    StateEvent,
)
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

pytestmark = pytest.mark.anyio


@dataclass
class Count:
    ran: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class Tick(BaseNode[Count, None, int]):
    left: int

    async def run(self, ctx: GraphRunContext[Count]) -> Tick | End[int]:
        ctx.state.ran += 1
        await ctx.emit(f'tick {self.left}')
        return Tick(self.left - 1) if self.left > 1 else End(ctx.state.ran)


@dataclass
class Boom(BaseNode[Count, None, int]):
    async def run(self, ctx: GraphRunContext[Count]) -> End[int]:
        raise ValueError('no more ticks')


@dataclass
class Gate(BaseNode[Count, None, int]):
    """Waits on an event the test sets: the run is in the middle of a node when the consumer leaves."""

    async def run(self, ctx: GraphRunContext[Count]) -> Tick:
        ctx.state.notes.append('gate entered')
        await ctx.emit('at the gate')
        await anyio.sleep_forever()
        raise AssertionError('unreachable')  # pragma: no cover


@dataclass
class Opened(BaseNode[Count, None, int]):
    async def run(self, ctx: GraphRunContext[Count]) -> Tick:
        ctx.state.notes.append('opened')
        return Tick(1)


@dataclass
class Wait(BaseNode[Count, anyio.Event, int]):
    async def run(self, ctx: GraphRunContext[Count, anyio.Event]) -> End[int]:
        await ctx.deps.wait()
        await ctx.emit('released')
        return End(0)


ticks = Graph(nodes=(Tick, Boom))
waiting = Graph(nodes=(Wait,))
gated = Graph(nodes=(Gate, Tick))
opened = Graph(nodes=(Opened, Tick), name='gated')


async def test_events_of_each_step_in_order() -> None:
    async with ticks.stream(Tick(2), state=Count(), state_snapshots=True) as events:
        seen = [event async for event in events]
    assert [type(e).__name__ for e in seen] == [
        'NodeStartedEvent',
        'CustomEvent',
        'NodeFinishedEvent',
        'StateEvent',
        'NodeStartedEvent',
        'CustomEvent',
        'NodeFinishedEvent',
        'StateEvent',
        'RunEndEvent',
    ]
    started, custom, finished, state = seen[:4]
    assert isinstance(started, NodeStartedEvent)
    assert started.node == Tick(2)
    assert started.path == ()
    assert custom == CustomEvent(data='tick 2', node_id='Tick')
    assert isinstance(finished, NodeFinishedEvent)
    assert finished.node == Tick(2)
    assert finished.next_node == Tick(1)
    assert finished.duration >= 0
    assert state == StateEvent(state=Count(ran=1))
    end = seen[-1]
    assert isinstance(end, RunEndEvent)
    assert end.output == 2
    assert end.state == Count(ran=2)
    assert events.end is end


async def test_state_events_are_copies() -> None:
    async with ticks.stream(Tick(3), state=Count(), state_snapshots=True) as events:
        states = [e.state.ran for e in [event async for event in events] if isinstance(e, StateEvent)]
    assert states == [1, 2, 3]


async def test_no_state_events_unless_asked_for() -> None:
    async with ticks.stream(Tick(2), state=Count()) as events:
        seen = [event async for event in events]
    assert [e.kind for e in seen] == [
        'node_started',
        'custom',
        'node_finished',
        'node_started',
        'custom',
        'node_finished',
        'run_end',
    ]


async def test_stream_from_persistence_sends_state_events_when_asked(tmp_path: Path) -> None:
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'resumed') as persistence:
        await ticks.initialize(Tick(1), persistence, state=Count(ran=5))
        persistence.set_graph_types(ticks)
        async with ticks.stream_from_persistence(persistence, state_snapshots=True) as events:
            states = [e.state for e in [event async for event in events] if isinstance(e, StateEvent)]
    assert states == [Count(ran=6)]


async def test_a_failing_node_is_an_event_then_the_error() -> None:
    seen: list[Any] = []

    async def consume() -> None:
        async with ticks.stream(Boom(), state=Count()) as events:
            async for event in events:
                seen.append(event)

    with pytest.raises(ValueError, match='no more ticks'):
        await consume()
    assert [type(e) for e in seen] == [NodeStartedEvent, NodeFailedEvent]
    failed = seen[1]
    assert failed.node == Boom()
    assert isinstance(failed.error, ValueError)


async def test_a_consumer_that_stops_reading_pauses_the_run() -> None:
    state = Count()
    async with ticks.stream(Tick(50), state=state, buffer_size=4) as events:
        first = await events.__anext__()
        assert isinstance(first, NodeStartedEvent)
        await anyio.wait_all_tasks_blocked()
        # At most 4 events wait (a step adds 3), and the run waits for the consumer to take them.
        paused_at = state.ran
        assert paused_at <= 6
        await anyio.wait_all_tasks_blocked()
        assert state.ran == paused_at
        rest = [event async for event in events]
    assert state.ran == 50
    assert isinstance(rest[-1], RunEndEvent)


async def test_leaving_cancels_the_run_and_a_durable_run_resumes(tmp_path: Path) -> None:
    state = Count()
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'streamed') as persistence:
        async with gated.stream(Gate(), state=state, persistence=persistence) as events:
            async for event in events:
                if isinstance(event, CustomEvent):
                    break
        assert state.notes == ['gate entered']
        history = await persistence.load_all()
        assert [(type(s.node).__name__, getattr(s, 'status', None)) for s in history] == [('Gate', 'created')]
    # The node the consumer left in goes back to 'created': another process resumes there.
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'streamed') as persistence:
        persistence.set_graph_types(opened)
        info = await persistence.info()
        assert info is not None
        assert info.status == 'waiting'


async def test_stream_from_persistence_resumes_a_run(tmp_path: Path) -> None:
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'resumed') as persistence:
        await ticks.initialize(Tick(2), persistence, state=Count(ran=5))
    async with (
        SqliteStatePersistence(tmp_path / 'runs.db', 'resumed') as persistence,
        ticks.stream_from_persistence(persistence) as events,
    ):
        seen = [event async for event in events]
    end = seen[-1]
    assert isinstance(end, RunEndEvent)
    assert end.output == 7


async def test_a_run_that_cannot_start_ends_the_stream_with_its_error() -> None:
    persistence = SimpleStatePersistence[Count, int]()
    async with ticks.stream_from_persistence(persistence) as events:
        with pytest.raises(GraphRuntimeError):
            await events.__anext__()


async def test_a_consumer_that_looks_lazily_gets_every_event(monkeypatch: pytest.MonkeyPatch) -> None:
    # A consumer that has caught up with a busy run looks again after `LAZY_LOOK` seconds; with no delay, its
    # looks find nothing while the node waits, and it goes back to waiting to be woken by the run.
    monkeypatch.setattr(_runs, 'LAZY_LOOK', 0)
    release = anyio.Event()

    async def release_when_all_wait() -> None:
        await anyio.wait_all_tasks_blocked()
        release.set()

    seen: list[str] = []
    async with anyio.create_task_group() as tg, waiting.stream(Wait(), state=Count(), deps=release) as events:
        async for event in events:
            seen.append(event.kind)
            if event.kind == 'node_started':
                tg.start_soon(release_when_all_wait)
    assert seen == ['node_started', 'custom', 'node_finished', 'run_end']


@dataclass
class Yielding(BaseNode[Count, None, int]):
    left: int

    async def run(self, ctx: GraphRunContext[Count]) -> Yielding | End[int]:
        await anyio.lowlevel.checkpoint()  # lets the consumer run between steps, as a node doing I/O does
        ctx.state.ran += 1
        return Yielding(self.left - 1) if self.left > 1 else End(ctx.state.ran)


yielding = Graph(nodes=(Yielding,))


async def test_a_lazy_consumer_is_woken_by_a_full_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    # The consumer's own looks never come (an hour apart): the run wakes it when it fills the buffer, and at
    # the end.
    monkeypatch.setattr(_runs, 'LAZY_LOOK', 3600)
    state = Count()
    async with yielding.stream(Yielding(20), state=state, buffer_size=2) as events:
        kinds = [event.kind async for event in events]
    assert kinds == ['node_started', 'node_finished'] * 20 + ['run_end']
    assert state.ran == 20


async def test_emit_outside_a_stream_does_nothing() -> None:
    result = await ticks.run(Tick(2), state=Count())
    assert result.output == 2


async def test_stream_keeps_the_history_of_a_full_persistence() -> None:
    persistence = FullStatePersistence[Count, int]()
    async with ticks.stream(Tick(2), state=Count(), persistence=persistence) as events:
        async for _ in events:
            pass
    assert [s.kind for s in persistence.history] == ['node', 'node', 'end']


async def test_negative_buffer_size_is_refused() -> None:
    with pytest.raises(ValueError, match='buffer_size'):
        async with ticks.stream(Tick(1), buffer_size=-1):
            pass  # pragma: no cover


async def test_step_events_equal_what_their_constructors_make() -> None:
    """The run makes a step's two events without their `__init__`: every field must still be set."""
    async with ticks.stream(Tick(1), state=Count()) as events:
        started, _custom, finished, _end = [event async for event in events]
    assert isinstance(finished, NodeFinishedEvent)
    assert started == NodeStartedEvent(Tick(1))
    assert finished == NodeFinishedEvent(Tick(1), finished.next_node, finished.duration)
    assert repr(started) == 'NodeStartedEvent(node=Tick(left=1), path=())'


async def test_leaving_at_an_event_closes_the_event_iterator() -> None:
    # Left at an event by `break`, the iterator is closed by the block's exit, not by the garbage collector (which
    # trio reports as a ResourceWarning, an error in this suite).
    async with gated.stream(Gate(), state=Count()) as events:
        async for event in events:
            if isinstance(event, CustomEvent):
                break
    assert getattr(events._events, 'ag_frame', True) is None  # closed
