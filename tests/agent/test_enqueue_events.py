"""`EnqueuedMessagesEvent` (pydantic-ai 2.x): `enqueue` returns an id, and the delivery of what it queued is an event
of the model request node that sends it, before the model's response."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import pydantic
import pytest

from edgewise.agent import Agent, EnqueuedMessagesEvent, RunContext
from edgewise.agent.messages import (
    AgentStreamEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartStartEvent,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.graph import End

pytestmark = pytest.mark.anyio


def tool_then_text(*texts: str) -> FunctionModel:
    """A streaming model calling `inject` first, then answering each of `texts` in turn."""
    answers = iter(texts)

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if any(isinstance(message, ModelResponse) for message in messages):
            yield next(answers)
            return
        yield {0: DeltaToolCall(name='inject', json_args='{}')}

    return FunctionModel(stream_function=stream)


def index_of_text(events: list[AgentStreamEvent], text: str) -> int:
    return next(
        i for i, e in enumerate(events) if isinstance(e, PartStartEvent) and getattr(e.part, 'content', None) == text
    )


async def test_an_asap_delivery_is_an_event_before_the_response_that_reads_it() -> None:
    ids: list[str | None] = []
    agent = Agent(tool_then_text('done'))

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        ids.append(ctx.enqueue('first'))
        ids.append(ctx.enqueue('second', 'more'))
        ids.append(ctx.enqueue())  # nothing queued
        return 'ok'

    events: list[AgentStreamEvent] = []

    async def handler(_: RunContext[None], stream: AsyncIterable[AgentStreamEvent]) -> None:
        events.extend([event async for event in stream])

    result = await agent.run('hello', event_stream_handler=handler)

    first, second, nothing = ids
    assert nothing is None
    assert first is not None
    assert second is not None
    assert first != second
    messages = result.all_messages()
    delivered = [e for e in events if isinstance(e, EnqueuedMessagesEvent)]
    assert delivered == [
        EnqueuedMessagesEvent(enqueue_id=first, messages=(messages[3],)),
        EnqueuedMessagesEvent(enqueue_id=second, messages=(messages[4],)),
    ]
    assert delivered[1].messages[0] is messages[4]  # the history's own objects
    second_request = messages[4]
    assert isinstance(second_request, ModelRequest)
    (prompt,) = second_request.parts
    assert isinstance(prompt, UserPromptPart)
    assert prompt.content == ['second', 'more']
    assert second_request.run_id == result.run_id
    assert events.index(delivered[1]) < index_of_text(events, 'done')


async def test_a_when_idle_delivery_is_an_event_of_the_extra_request() -> None:
    count = 0

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        nonlocal count
        count += 1
        yield f'response {count}'

    agent = Agent(FunctionModel(stream_function=stream))
    events: list[AgentStreamEvent] = []
    async with agent.iter('hello') as run:
        enqueue_id = run.enqueue('follow-up', priority='when_idle')
        node = run.next_node
        while not isinstance(node, End):
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as model_stream:
                    events.extend([event async for event in model_stream])
            node = await run.next(node)

    assert enqueue_id is not None
    assert run.result is not None
    delivered = [e for e in events if isinstance(e, EnqueuedMessagesEvent)]
    assert delivered == [EnqueuedMessagesEvent(enqueue_id=enqueue_id, messages=(run.result.all_messages()[2],))]
    assert index_of_text(events, 'response 1') < events.index(delivered[0]) < index_of_text(events, 'response 2')


async def test_run_stream_events_gives_the_delivery() -> None:
    agent = Agent(tool_then_text('done'))
    ids: list[str | None] = []

    @agent.tool
    def inject(ctx: RunContext[Any]) -> str:
        ids.append(ctx.enqueue('queued'))
        return 'ok'

    async with agent.run_stream_events('hello') as stream:
        kinds = [event.event_kind async for event in stream]

    assert kinds.count('enqueued_messages') == 1
    assert kinds.index('enqueued_messages') < kinds.index('part_start', kinds.index('function_tool_result'))


def test_the_event_round_trips_in_the_event_union() -> None:
    adapter: pydantic.TypeAdapter[AgentStreamEvent] = pydantic.TypeAdapter(AgentStreamEvent)
    event = EnqueuedMessagesEvent(enqueue_id='e1', messages=(ModelRequest(parts=[UserPromptPart('hi')]),))
    loaded = adapter.validate_json(adapter.dump_json(event))
    assert loaded == event
    assert repr(loaded).startswith("EnqueuedMessagesEvent(enqueue_id='e1', messages=(ModelRequest(")
    assert isinstance(loaded, EnqueuedMessagesEvent)
    assert isinstance(loaded.messages, tuple)
