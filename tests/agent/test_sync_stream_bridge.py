"""`SyncStreamBridge` and `run_stream_sync`: an async stream read from synchronous code.

Plain synchronous tests (no event loop in the test's thread): the bridge runs its own loop in a thread of its own.
"""

from __future__ import annotations as _annotations

import gc
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import anyio
import pytest

from edgewise.agent import Agent
from edgewise.agent._streaming.sync_bridge import SyncStreamBridge
from edgewise.agent._sync_stream import SyncStreamBridge as RootSyncStreamBridge
from edgewise.agent.capabilities import Instrumentation
from edgewise.agent.models.instrumented import InstrumentationSettings
from edgewise.agent.models.test import TestModel

REQUEST_ID: ContextVar[str] = ContextVar('REQUEST_ID', default='unset')


class Recorded:
    """What a test context manager saw: the tasks it ran in, how it was exited, what its generators did."""

    def __init__(self) -> None:
        self.tasks: list[int] = []
        self.exit: tuple[Any, ...] | None = None
        self.closed_sources = 0
        self.context_values: list[str] = []


def stream_context(recorded: Recorded, *, items: int = 3, fail_at: int | None = None) -> Any:
    """A context manager yielding a function that makes an async generator of `items` numbers."""

    @asynccontextmanager
    async def cm() -> AsyncIterator[Any]:
        recorded.tasks.append(anyio.get_current_task().id)
        recorded.context_values.append(REQUEST_ID.get())

        async def numbers() -> AsyncIterator[int]:
            try:
                for number in range(items):
                    recorded.tasks.append(anyio.get_current_task().id)
                    if number == fail_at:
                        raise ValueError(f'failed at {number}')
                    yield number
            finally:
                recorded.closed_sources += 1

        with anyio.CancelScope():  # entered while entering, exited while exiting: one task required
            try:
                yield numbers
            except BaseException as exc:
                recorded.exit = (type(exc),)
                raise
            else:
                recorded.exit = (None,)
            finally:
                recorded.tasks.append(anyio.get_current_task().id)

    return cm()


def test_the_root_path_is_the_bridge() -> None:
    assert RootSyncStreamBridge is SyncStreamBridge


def test_a_whole_iteration_runs_in_the_task_that_entered_and_exits_cleanly() -> None:
    recorded = Recorded()
    threads_before = threading.active_count()
    bridge = SyncStreamBridge(stream_context(recorded), async_alternative='`stream`')
    assert not bridge.closed
    assert list(bridge.stream_sync(bridge.stream)) == [0, 1, 2]
    bridge.shutdown()
    assert bridge.closed
    assert recorded.exit == (None,)
    assert recorded.closed_sources == 1
    assert len(set(recorded.tasks)) == 1
    assert threading.active_count() == threads_before
    bridge.shutdown()  # a second shutdown does nothing
    with pytest.raises(RuntimeError, match='already closed'):
        bridge.call(lambda: None)


def test_leaving_the_loop_early_closes_the_source_in_the_owner_task() -> None:
    recorded = Recorded()
    bridge = SyncStreamBridge(stream_context(recorded, items=10), async_alternative='`stream`')
    for number in bridge.stream_sync(bridge.stream):
        if number == 1:
            break
    assert recorded.closed_sources == 1
    assert bridge.call(lambda: 'still open') == 'still open'
    bridge.shutdown()
    assert recorded.exit == (None,)
    assert len(set(recorded.tasks)) == 1


def test_an_error_in_the_stream_reaches_the_caller_and_the_bridge_stays_usable() -> None:
    recorded = Recorded()
    bridge = SyncStreamBridge(stream_context(recorded, fail_at=1), async_alternative='`stream`')
    seen: list[int] = []
    numbers = bridge.stream_sync(bridge.stream)
    seen.append(next(numbers))
    with pytest.raises(ValueError, match='failed at 1'):
        next(numbers)
    assert seen == [0]

    async def awaited(value: int) -> int:
        await anyio.lowlevel.checkpoint()
        return value * 2

    assert bridge.call(awaited, 21) == 42
    bridge.shutdown(exit_info=(KeyError, KeyError('boom'), None))
    assert recorded.exit == (KeyError,)


def test_an_error_while_entering_is_raised_by_the_constructor_without_a_leaked_thread() -> None:
    @asynccontextmanager
    async def failing() -> AsyncIterator[None]:
        raise LookupError('no stream')
        yield  # pragma: no cover

    threads_before = threading.active_count()
    with pytest.raises(LookupError, match='no stream'):
        SyncStreamBridge(failing(), async_alternative='`stream`')
    assert threading.active_count() == threads_before


def test_an_error_while_exiting_is_raised_by_shutdown() -> None:
    @asynccontextmanager
    async def failing_exit() -> AsyncIterator[int]:
        yield 1
        raise OSError('exit failed')

    bridge = SyncStreamBridge(failing_exit(), async_alternative='`stream`')
    with pytest.raises(OSError, match='exit failed'):
        bridge.shutdown()
    assert bridge.closed


def test_shutdown_during_a_call_from_another_thread_cancels_it() -> None:
    recorded = Recorded()
    bridge = SyncStreamBridge(stream_context(recorded), async_alternative='`stream`')
    started = threading.Event()
    outcome: list[BaseException] = []

    async def wait_forever() -> None:
        started.set()
        await anyio.sleep_forever()

    def waiter() -> None:
        try:
            bridge.call(wait_forever)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=waiter)
    thread.start()
    assert started.wait(timeout=30)
    bridge.shutdown()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert len(outcome) == 1
    assert isinstance(outcome[0], RuntimeError)
    assert 'closed while this call was running' in str(outcome[0])
    assert recorded.exit == (None,)


def test_a_bridge_dropped_unclosed_is_shut_down_when_collected() -> None:
    recorded = Recorded()
    threads_before = threading.active_count()
    bridge = SyncStreamBridge(stream_context(recorded), async_alternative='`stream`')
    del bridge
    gc.collect()
    assert recorded.exit == (None,)
    assert threading.active_count() == threads_before


def test_the_callers_context_variables_reach_the_async_side() -> None:
    recorded = Recorded()
    token = REQUEST_ID.set('request-7')
    try:
        bridge = SyncStreamBridge(stream_context(recorded), async_alternative='`stream`')
    finally:
        REQUEST_ID.reset(token)
    assert recorded.context_values == ['request-7']
    assert bridge.call(REQUEST_ID.get) == 'request-7'
    token = REQUEST_ID.set('request-8')
    try:
        assert bridge.call(REQUEST_ID.get) == 'request-8'
    finally:
        REQUEST_ID.reset(token)
    bridge.shutdown()


def test_a_variable_the_run_set_while_entering_wins_over_the_callers_later_change() -> None:
    @asynccontextmanager
    async def sets_the_variable() -> AsyncIterator[None]:
        REQUEST_ID.set('set by the run')
        yield

    bridge = SyncStreamBridge(sets_the_variable(), async_alternative='`stream`')
    token = REQUEST_ID.set('changed by the caller')
    try:
        assert bridge.call(REQUEST_ID.get) == 'set by the run'
    finally:
        REQUEST_ID.reset(token)
    bridge.shutdown()


@pytest.mark.anyio
async def test_inside_an_event_loop_the_async_method_is_named() -> None:
    recorded = Recorded()
    with pytest.raises(RuntimeError, match='use `stream` instead'):
        SyncStreamBridge(stream_context(recorded), async_alternative='`stream`')


def test_run_stream_sync_from_plain_threads() -> None:
    agent = Agent(TestModel(custom_output_text='hello there'))
    outputs: dict[int, list[str]] = {}
    # One run in this thread first: the agent's first run imports its lazy modules, which is not safe to race.
    assert agent.run_sync('warm up').output == 'hello there'
    threads_before = threading.active_count()

    def read(index: int) -> None:
        with agent.run_stream_sync(f'prompt {index}') as result:
            outputs[index] = list(result.stream_text(debounce_by=None))

    threads = [threading.Thread(target=read, args=(index,)) for index in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert {index: texts[-1] for index, texts in outputs.items()} == {
        0: 'hello there',
        1: 'hello there',
        2: 'hello there',
    }
    assert threading.active_count() == threads_before


def test_run_stream_sync_leaving_early_then_reading_the_output() -> None:
    agent = Agent(TestModel(custom_output_text='one two three four'))
    with agent.run_stream_sync('Hello') as result:
        for _ in result.stream_text(delta=True, debounce_by=None):
            break
        assert result.get_output() == 'one two three four'
        assert result.is_complete


def test_run_stream_sync_with_instrumentation_detaches_every_span_context(caplog: pytest.LogCaptureFixture) -> None:
    """The run's spans open and close in one task and `Context`: OpenTelemetry logs no failed detach."""
    agent = Agent(TestModel(), capabilities=[Instrumentation(InstrumentationSettings())])
    with caplog.at_level(logging.ERROR, logger='opentelemetry.context'):
        with agent.run_stream_sync('Hello') as result:
            assert list(result.stream_text(debounce_by=None))[-1] == 'success (no tool calls)'
        with agent.run_stream_sync('Hello') as result:
            assert result.get_output() == 'success (no tool calls)'
    assert [record.getMessage() for record in caplog.records] == []


REFUSED_IN_A_LOOP = (
    'A synchronous stream cannot be used or closed while an event loop is running; use `stream` in async code.'
)


@pytest.mark.parametrize('backend', ['asyncio', 'trio'])
def test_calls_streams_and_shutdown_are_refused_while_this_thread_runs_an_event_loop(backend: str) -> None:
    recorded = Recorded()
    bridge = SyncStreamBridge(stream_context(recorded), async_alternative='`stream`')
    errors: list[str] = []

    async def use_the_bridge() -> None:
        for attempt in (
            lambda: bridge.call(lambda: None),
            lambda: next(bridge.stream_sync(bridge.stream)),
            bridge.shutdown,
        ):
            with pytest.raises(RuntimeError) as info:
                attempt()
            errors.append(str(info.value))

    anyio.run(use_the_bridge, backend=backend)

    assert (errors, bridge.closed, recorded.exit) == ([REFUSED_IN_A_LOOP] * 3, False, None)
    bridge.shutdown()
    assert recorded.exit == (None,)


@pytest.mark.parametrize('backend', ['asyncio', 'trio'])
def test_an_iteration_dropped_inside_an_event_loop_leaves_its_source_to_the_shutdown(backend: str) -> None:
    recorded = Recorded()
    bridge = SyncStreamBridge(stream_context(recorded), async_alternative='`stream`')
    numbers = bridge.stream_sync(bridge.stream)
    assert next(numbers) == 0

    async def drop_the_iteration() -> None:
        numbers.close()

    anyio.run(drop_the_iteration, backend=backend)
    closed_before_shutdown = recorded.closed_sources
    bridge.shutdown()

    assert (closed_before_shutdown, recorded.closed_sources, recorded.exit) == (0, 1, (None,))


# -- the output once a stream was read to its end ----------------------------------------------------------------


@pytest.mark.parametrize('stream', ['stream_text', 'stream_output', 'stream_response'])
def test_get_output_after_a_stream_read_to_its_end_is_the_runs_output(stream: str) -> None:
    """Reading a stream to its end stops the run's loop; `get_output()` then gives the finished run's output (as
    pydantic-ai 2.x does), a copy each time."""
    agent = Agent(TestModel(custom_output_text='London'))
    result = agent.run_stream_sync('capital?')
    list(getattr(result, stream)())
    assert result.is_complete
    assert result._bridge.closed  # (the loop stopped with the stream: no thread is left behind)
    assert result.get_output() == 'London'
    assert result.get_output() == 'London'


def test_get_output_after_a_structured_stream_is_a_copy_each_time() -> None:
    agent = Agent(TestModel(custom_output_args={'names': ['a']}), output_type=dict[str, list[str]])
    with agent.run_stream_sync('names?') as result:
        assert list(result.stream_output())[-1] == {'names': ['a']}
        first = result.get_output()
        first['names'].append('changed')
        assert result.get_output() == {'names': ['a']}


def test_get_output_of_a_run_closed_before_its_end_is_refused() -> None:
    agent = Agent(TestModel(custom_output_text='London'))
    result = agent.run_stream_sync('capital?')
    result.close()  # stopped before its output was read
    assert not result.is_complete
    with pytest.raises(RuntimeError, match='already closed'):
        result.get_output()
