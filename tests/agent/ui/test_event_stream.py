"""`UIEventStream`: which hooks and handlers a run's events reach, in order, and how an error ends the stream."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.messages import (
    BinaryContent,
    DeferredToolRequestsEvent,
    DeferredToolResultsEvent,
    FilePart,
    FinalResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    NativeToolCallPart,
    NativeToolReturnPart,
    OutputToolCallEvent,
    OutputToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
)
from edgewise.agent.result import AgentRunResult
from edgewise.agent.tools import DeferredToolRequests, DeferredToolResults
from edgewise.agent.ui import SSE_CONTENT_TYPE, NativeEvent, UIEventStream

from ._scripts import call, streamed_agent

pytestmark = pytest.mark.anyio


@dataclass
class Recorder(UIEventStream[None, str, None, Any]):
    """Records each hook and handler as a string event."""

    seen: list[str] = field(default_factory=list)

    def encode_event(self, event: str) -> str:
        return f'<{event}>'

    async def before_stream(self) -> AsyncIterator[str]:
        yield 'before_stream'

    async def after_stream(self) -> AsyncIterator[str]:
        yield 'after_stream'

    async def before_request(self) -> AsyncIterator[str]:
        yield 'before_request'

    async def after_request(self) -> AsyncIterator[str]:
        yield 'after_request'

    async def before_response(self) -> AsyncIterator[str]:
        yield 'before_response'

    async def after_response(self) -> AsyncIterator[str]:
        yield 'after_response'

    async def on_error(self, error: Exception) -> AsyncIterator[str]:
        yield f'error {error}'

    async def handle_text_start(self, part: TextPart, follows_text: bool = False) -> AsyncIterator[str]:
        yield f'text_start {part.content!r} follows={follows_text}'

    async def handle_text_delta(self, delta: TextPartDelta) -> AsyncIterator[str]:
        yield f'text_delta {delta.content_delta!r}'

    async def handle_text_end(self, part: TextPart, followed_by_text: bool = False) -> AsyncIterator[str]:
        yield f'text_end followed={followed_by_text}'

    async def handle_thinking_start(self, part: ThinkingPart, follows_thinking: bool = False) -> AsyncIterator[str]:
        yield 'thinking_start'

    async def handle_thinking_delta(self, delta: ThinkingPartDelta) -> AsyncIterator[str]:
        yield 'thinking_delta'

    async def handle_thinking_end(self, part: ThinkingPart, followed_by_thinking: bool = False) -> AsyncIterator[str]:
        yield 'thinking_end'

    async def handle_tool_call_start(self, part: ToolCallPart) -> AsyncIterator[str]:
        yield f'call_start {part.tool_name}'

    async def handle_tool_call_delta(self, delta: ToolCallPartDelta) -> AsyncIterator[str]:
        yield 'call_delta'

    async def handle_tool_call_end(self, part: ToolCallPart) -> AsyncIterator[str]:
        yield f'call_end {part.tool_name}'

    async def handle_builtin_tool_call_start(self, part: NativeToolCallPart) -> AsyncIterator[str]:
        yield 'native_start'

    async def handle_builtin_tool_call_end(self, part: NativeToolCallPart) -> AsyncIterator[str]:
        yield 'native_end'

    async def handle_builtin_tool_return(self, part: NativeToolReturnPart) -> AsyncIterator[str]:
        yield 'native_return'

    async def handle_file(self, part: FilePart) -> AsyncIterator[str]:
        yield 'file'

    async def handle_final_result(self, event: FinalResultEvent) -> AsyncIterator[str]:
        yield 'final_result'

    async def handle_function_tool_call(self, event: FunctionToolCallEvent) -> AsyncIterator[str]:
        yield f'function_call {event.part.tool_call_id}'

    async def handle_function_tool_result(self, event: FunctionToolResultEvent) -> AsyncIterator[str]:
        yield f'function_result {event.part.tool_call_id} {getattr(event.part, "outcome", "retry")}'

    async def handle_output_tool_call(self, event: OutputToolCallEvent) -> AsyncIterator[str]:
        yield 'output_call'

    async def handle_output_tool_result(self, event: OutputToolResultEvent) -> AsyncIterator[str]:
        yield f'output_result {getattr(event.part, "outcome", "retry")}'

    async def handle_run_result(self, event: Any) -> AsyncIterator[str]:
        yield f'run_result {event.result.output!r}'


async def collect(stream: AsyncIterator[str]) -> list[str]:
    return [e async for e in stream]


async def native_events(agent: Agent[Any, Any], prompt: str) -> list[NativeEvent]:
    async with agent.run_stream_events(prompt) as events:
        collected: list[NativeEvent] = [e async for e in events]
    return collected


async def test_a_run_with_a_tool_call_reaches_each_hook_in_order() -> None:
    agent = streamed_agent(['Hi', ' there', call('echo', {'x': 1}, 'c1')], ['bye'])

    @agent.tool_plain
    def echo(x: int) -> int:
        return x

    events = await native_events(agent, 'go')
    assert await collect(Recorder().transform_stream(_iterate(events))) == [
        'before_stream',
        'before_response',
        "text_start 'Hi' follows=False",
        'final_result',  # text is output: a candidate for the final result until a tool call follows
        "text_delta ' there'",
        'text_end followed=False',
        'call_start echo',
        'call_end echo',
        'after_response',
        'before_request',
        'function_call c1',
        'function_result c1 success',
        'after_request',
        'before_response',
        "text_start 'bye' follows=False",
        'final_result',
        'text_end followed=False',
        'after_response',
        "run_result 'bye'",
        'after_stream',
    ]


async def _iterate(events: list[NativeEvent]) -> AsyncIterator[NativeEvent]:
    for event in events:
        yield event


async def _failing(events: list[NativeEvent], error: Exception) -> AsyncIterator[NativeEvent]:
    for event in events:
        yield event
    raise error


async def test_an_error_closes_the_open_part_and_fails_the_running_tool_calls_before_on_error() -> None:
    call_part = ToolCallPart('lookup', {'q': 'x'}, 'c9')
    events: list[NativeEvent] = [
        PartStartEvent(index=0, part=TextPart('Looking')),
        PartEndEvent(index=0, part=TextPart('Looking'), next_part_kind='tool-call'),
        PartStartEvent(index=1, part=call_part, previous_part_kind='text'),
        PartEndEvent(index=1, part=call_part),
        FunctionToolCallEvent(call_part),
        PartStartEvent(index=0, part=TextPart('half')),
    ]
    seen = await collect(Recorder().transform_stream(_failing(events, RuntimeError('model went away'))))
    assert seen[-11:-1] == [
        'function_call c9',
        'after_request',
        'before_response',
        "text_start 'half' follows=False",
        'text_end followed=False',  # the open part is closed first: it belongs to the response
        'after_response',
        'before_request',
        'function_result c9 failed',  # then the call still running is failed
        'error model went away',
        'after_request',
    ]
    assert seen[-1] == 'after_stream'


async def test_an_error_after_a_final_result_event_fails_its_output_tool_call() -> None:
    events: list[NativeEvent] = [FinalResultEvent(tool_name='final_result', tool_call_id='o1')]
    seen = await collect(Recorder().transform_stream(_failing(events, ValueError('bad output'))))
    assert seen == [
        'before_stream',
        'final_result',
        'before_request',
        'output_result failed',
        'error bad output',
        'after_request',
        'after_stream',
    ]


async def test_an_output_tool_call_is_no_longer_pending_once_its_result_came() -> None:
    part = ToolCallPart('final_result', {'a': 1}, 'o2')
    events: list[NativeEvent] = [
        FinalResultEvent(tool_name='final_result', tool_call_id='o2'),
        OutputToolCallEvent(part),
        OutputToolResultEvent(ToolReturnPart('final_result', 'ok', 'o2')),
    ]
    seen = await collect(Recorder().transform_stream(_failing(events, ValueError('late'))))
    assert seen == [
        'before_stream',
        'final_result',
        'before_request',
        'output_call',
        'output_result success',
        'error late',
        'after_request',
        'after_stream',
    ]


async def test_thinking_native_tool_and_file_parts_reach_their_handlers() -> None:
    native = NativeToolCallPart('web_search', {'q': 'x'}, 'n1', provider_name='p')
    events: list[NativeEvent] = [
        PartStartEvent(index=0, part=ThinkingPart('hmm')),
        PartDeltaEvent(index=0, delta=ThinkingPartDelta(content_delta='more')),
        PartEndEvent(index=0, part=ThinkingPart('hmm more')),
        PartStartEvent(index=1, part=native),
        PartDeltaEvent(index=1, delta=ToolCallPartDelta(args_delta='{}', tool_call_id='n1')),
        PartEndEvent(index=1, part=native),
        PartStartEvent(index=2, part=NativeToolReturnPart('web_search', 'found', 'n1')),
        PartEndEvent(index=2, part=NativeToolReturnPart('web_search', 'found', 'n1')),
        PartStartEvent(index=3, part=FilePart(BinaryContent(b'\x89PNG', media_type='image/png'))),
    ]
    seen = await collect(Recorder().transform_stream(_iterate(events)))
    assert seen == [
        'before_stream',
        'before_response',
        'thinking_start',
        'thinking_delta',
        'thinking_end',
        'native_start',
        'call_delta',
        'native_end',
        'native_return',
        'file',
        'after_response',
        'after_stream',
    ]


@pytest.mark.parametrize('kind', ['plain', 'async', 'generator', 'returns_generator'])
async def test_on_complete_is_called_with_the_result_in_each_form(kind: str) -> None:
    agent = streamed_agent(['ok'])
    events = await native_events(agent, 'go')
    got: list[str] = []

    def plain(result: AgentRunResult[Any]) -> None:
        got.append(f'plain {result.output}')

    async def asynchronous(result: AgentRunResult[Any]) -> None:
        got.append(f'async {result.output}')

    async def generator(result: AgentRunResult[Any]) -> AsyncIterator[str]:
        yield f'extra {result.output}'

    def returns_generator(result: AgentRunResult[Any]) -> AsyncIterator[str]:
        return generator(result)

    callback: Any = {'plain': plain, 'async': asynchronous, 'generator': generator}.get(kind, returns_generator)
    seen = await collect(Recorder().transform_stream(_iterate(events), on_complete=callback))
    extra = [e for e in seen if e.startswith('extra')]
    assert got + extra == {'plain': ['plain ok'], 'async': ['async ok']}.get(kind, ['extra ok'])
    assert seen[-1] == 'after_stream'


async def test_the_base_stream_encodes_as_server_sent_events_by_default() -> None:
    stream = Recorder()
    assert stream.content_type == SSE_CONTENT_TYPE
    assert stream.response_headers is None
    assert stream.cancelled is None
    assert await collect(stream.encode_stream(_strings('a', 'b'))) == ['<a>', '<b>']
    old = stream.message_id
    assert stream.new_message_id() == stream.message_id != old


async def _strings(*items: str) -> AsyncIterator[str]:
    for item in items:
        yield item


async def test_a_stream_without_overrides_sends_nothing_of_its_own() -> None:
    @dataclass
    class Bare(UIEventStream[None, str, None, Any]):
        def encode_event(self, event: str) -> str:
            return event

    agent = streamed_agent(['thinking', call('echo', {'x': 1}, 'c1')], ['bye'])

    @agent.tool_plain
    def echo(x: int) -> int:
        return x

    events = await native_events(agent, 'go')
    assert await collect(Bare().transform_stream(_iterate(events))) == []


async def test_the_events_of_calls_that_wait_say_nothing_by_default() -> None:
    # The protocols show waiting calls from the run's output (approval requests); a step's deferred events add none.
    call_part = ToolCallPart('refund', {'order': 'A-1'}, 'r1')
    events: list[NativeEvent] = [
        DeferredToolRequestsEvent(DeferredToolRequests(approvals=[call_part])),
        DeferredToolResultsEvent(DeferredToolResults(approvals={'r1': True})),
    ]

    assert await collect(Recorder().transform_stream(_iterate(events))) == ['before_stream', 'after_stream']
