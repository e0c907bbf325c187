"""Cancellation of streamed runs: leaving early or cancelling stops the model and the tools at once. Leaving early
drops the half response; a cancellation keeps what was done, as pydantic-ai 2.x does (the half response, the
results of the tools that finished, marked `'interrupted'`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from inline_snapshot import snapshot

from edgewise.agent import Agent, capture_run_messages
from edgewise.agent.messages import ModelMessage
from edgewise.agent.models import StreamedResponse
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, FunctionModel

from ._streaming_helpers import streamed

pytestmark = pytest.mark.anyio


def _shape(messages: list[ModelMessage]) -> list[tuple[str, list[tuple[str, Any]]]]:
    return [
        (m.kind, [(p.part_kind, getattr(p, 'content', getattr(p, 'tool_name', None))) for p in m.parts])
        for m in messages
    ]


async def test_leaving_run_stream_in_the_middle_of_a_response_closes_the_model_stream_and_drops_the_half_response() -> (
    None
):
    log: list[str] = []
    agent = Agent(streamed(['one ', 'two ', 'three'], log=log))
    async with agent.run_stream('go') as result:
        async for text in result.stream_text(debounce_by=None):
            assert text == 'one '
            break
        assert log == []
    assert log == ['closed 1']
    assert _shape(result.all_messages()) == snapshot([('request', [('user-prompt', 'go')])])
    assert not result.is_complete


async def test_leaving_after_text_and_before_its_tool_calls_stops_the_run_there() -> None:
    log: list[str] = []
    agent = Agent(
        streamed(['Let me look', {0: DeltaToolCall(name='look', json_args='{}', tool_call_id='c1')}], log=log)
    )
    ran: list[str] = []

    @agent.tool_plain
    def look() -> str:
        ran.append('look')  # pragma: no cover - the run is left before the call is read
        return 'seen'  # pragma: no cover

    async with agent.run_stream('go') as result:
        async for _ in result.stream_text(debounce_by=None):
            break
    assert (log, ran) == (['closed 1'], [])
    assert _shape(result.all_messages()) == snapshot([('request', [('user-prompt', 'go')])])


async def test_cancelling_the_task_while_a_tool_runs_stops_the_tool_and_keeps_the_finished_results() -> None:
    events: list[str] = []
    started = anyio.Event()
    agent = Agent(
        streamed(
            [
                {0: DeltaToolCall(name='slow', json_args='{}', tool_call_id='c1')},
                {1: DeltaToolCall(name='fast', json_args='{}', tool_call_id='c2')},
            ],
        )
    )

    @agent.tool_plain
    async def slow() -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            events.append('slow stopped')
        return 'never'  # pragma: no cover

    @agent.tool_plain
    async def fast() -> str:
        return 'done'

    with capture_run_messages() as messages, anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_when_started() -> None:
                await started.wait()
                scope.cancel()

            tg.start_soon(cancel_when_started)
            # the tools run while `run_stream` looks for the final result, before its block is entered
            async with agent.run_stream('go') as result:  # pragma: no cover
                await result.get_output()
    assert scope.cancelled_caught
    assert events == ['slow stopped']
    assert _shape(messages) == snapshot(
        [
            ('request', [('user-prompt', 'go')]),
            ('response', [('tool-call', 'slow'), ('tool-call', 'fast')]),
            ('request', [('tool-return', 'done')]),
        ]
    )
    assert [m.state for m in messages] == ['complete', 'complete', 'interrupted']


async def test_cancelling_while_the_model_waits_closes_its_stream_and_keeps_the_half_response() -> None:
    log: list[str] = []
    waiting = anyio.Event()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        try:
            yield 'first'
            waiting.set()
            await anyio.sleep_forever()
            yield 'never'  # pragma: no cover
        finally:
            log.append('closed')

    agent = Agent(FunctionModel(stream_function=stream))
    texts: list[str] = []
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_when_waiting() -> None:
                await waiting.wait()
                scope.cancel()

            tg.start_soon(cancel_when_waiting)
            async with agent.run_stream('go') as result:
                async for text in result.stream_text(debounce_by=None):
                    texts.append(text)
    assert (texts, log) == (['first'], ['closed'])
    messages = result.all_messages()
    assert _shape(messages) == snapshot([('request', [('user-prompt', 'go')]), ('response', [('text', 'first')])])
    assert messages[-1].state == 'interrupted'


async def test_leaving_run_stream_events_early_stops_the_run() -> None:
    log: list[str] = []
    agent = Agent(streamed(['a', 'b'], log=log))
    async with agent.run_stream_events('go') as events:
        async for event in events:
            assert event.event_kind == 'part_start'
            break
    assert log == ['closed 1']


async def test_an_error_in_an_event_stream_handler_closes_the_model_stream() -> None:
    log: list[str] = []
    agent = Agent(streamed(['a', 'b'], log=log))

    async def handler(ctx: Any, events: Any) -> None:
        async for _ in events:
            raise RuntimeError('handler failed')

    with pytest.raises(RuntimeError, match='handler failed'):
        await agent.run('go', event_stream_handler=handler)
    assert log == ['closed 1']


class _WatchedModel(FunctionModel):
    """A `FunctionModel` noting the exception that leaves each of its streamed requests."""

    def __init__(self, seen: list[str]) -> None:
        super().__init__(stream_function=streamed(['a', 'b']).stream_function)
        self.seen = seen

    @asynccontextmanager
    async def request_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[StreamedResponse]:
        try:
            async with super().request_stream(*args, **kwargs) as response:
                yield response
        except BaseException as exc:
            self.seen.append(type(exc).__name__)
            raise


async def test_an_error_in_an_event_stream_handler_reaches_the_model_stream_as_itself() -> None:
    # Not as a GeneratorExit: a model may clean up differently after an error or a cancellation.
    seen: list[str] = []

    async def handler(ctx: Any, events: Any) -> None:
        async for _ in events:
            raise RuntimeError('handler failed')

    with pytest.raises(RuntimeError, match='handler failed'):
        await Agent(_WatchedModel(seen)).run('go', event_stream_handler=handler)
    assert seen == ['RuntimeError']


async def test_a_cancellation_in_an_event_stream_handler_reaches_the_model_stream_as_itself() -> None:
    seen: list[str] = []

    async def handler(ctx: Any, events: Any) -> None:
        async for _ in events:
            scope.cancel()
            await anyio.sleep_forever()

    with anyio.CancelScope() as scope:
        await Agent(_WatchedModel(seen)).run('go', event_stream_handler=handler)
    assert scope.cancelled_caught
    assert seen == [anyio.get_cancelled_exc_class().__name__]
