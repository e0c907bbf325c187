"""Events of whole runs: `run_stream_events`, `event_stream_handler`, and node-level `node.stream` in `iter`."""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any

import pytest
from inline_snapshot import snapshot
from logfire.testing import CaptureLogfire

from edgewise.agent import (
    Agent,
    CallToolsNode,
    ModelRequestNode,
    ModelRetry,
    RunContext,
    Tool,
    UnexpectedModelBehavior,
    UserError,
)
from edgewise.agent.messages import (
    AgentStreamEvent,
    DeferredToolRequestsEvent,
    FinalResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelResponse,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import DeltaToolCall, FunctionModel
from edgewise.graph import End

from ._helpers import NOW
from ._streaming_helpers import kinds, streamed

pytestmark = pytest.mark.anyio


def _agent() -> Agent[None, str]:
    agent = Agent(
        streamed(
            ['Checking', {0: DeltaToolCall(name='double', json_args='{"x": 2}', tool_call_id='c1')}],
            ['It is ', '4'],
        )
    )

    @agent.tool_plain
    def double(x: int) -> int:
        return 2 * x

    return agent


async def test_run_stream_events_gives_every_event_of_the_run_then_the_result() -> None:
    async with _agent().run_stream_events('double 2') as events:
        seen = [event async for event in events]
    assert seen[:-1] == snapshot(
        [
            PartStartEvent(index=0, part=TextPart(content='Checking')),
            FinalResultEvent(tool_name=None, tool_call_id=None),
            PartEndEvent(index=0, part=TextPart(content='Checking'), next_part_kind='tool-call'),
            PartStartEvent(
                index=1,
                part=ToolCallPart(tool_name='double', args='{"x": 2}', tool_call_id='c1'),
                previous_part_kind='text',
            ),
            PartEndEvent(index=1, part=ToolCallPart(tool_name='double', args='{"x": 2}', tool_call_id='c1')),
            FunctionToolCallEvent(
                part=ToolCallPart(tool_name='double', args='{"x": 2}', tool_call_id='c1'), args_valid=True
            ),
            FunctionToolResultEvent(
                part=ToolReturnPart(tool_name='double', content=4, tool_call_id='c1', timestamp=NOW)
            ),
            PartStartEvent(index=0, part=TextPart(content='It is ')),
            FinalResultEvent(tool_name=None, tool_call_id=None),
            PartDeltaEvent(index=0, delta=TextPartDelta(content_delta='4')),
            PartEndEvent(index=0, part=TextPart(content='It is 4')),
        ]
    )
    assert repr(seen[-1]) == "AgentRunResultEvent(result=AgentRunResult(output='It is 4'))"


async def test_run_stream_events_cannot_be_entered_twice_and_an_unread_stream_never_starts_the_run() -> None:
    requests: list[str] = []

    def answer(messages: list[Any], info: Any) -> ModelResponse:
        requests.append('sent')  # pragma: no cover - the run never starts
        return ModelResponse(parts=[TextPart('x')])  # pragma: no cover

    stream = Agent(FunctionModel(answer)).run_stream_events('hi')
    async with stream:
        with pytest.raises(
            RuntimeError, match=r'^`run_stream_events\(\)` context manager cannot be entered more than once'
        ):
            await stream.__aenter__()

    assert requests == []


async def test_run_stream_events_can_be_iterated_directly_with_a_deprecation_warning() -> None:
    stream = _agent().run_stream_events('double 2')
    with pytest.warns(DeprecationWarning, match='Iterating `AgentEventStream` directly'):
        seen = [event async for event in stream]
    assert kinds(seen)[-3:] == ['part_delta', 'part_end', 'agent_run_result']
    async with stream:  # closed at the end: nothing more
        assert [event async for event in stream] == []


async def test_an_event_stream_handler_receives_the_events_of_each_streamed_node() -> None:
    received: list[tuple[int, list[str]]] = []

    async def handler(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        received.append((ctx.run_step, kinds([e async for e in events])))

    result = await _agent().run('double 2', event_stream_handler=handler)
    assert result.output == 'It is 4'
    assert received == snapshot(
        [
            (1, ['part_start', 'final_result', 'part_end', 'part_start', 'part_end']),
            (1, ['function_tool_call', 'function_tool_result']),
            (2, ['part_start', 'final_result', 'part_delta', 'part_end']),
            (2, []),
        ]
    )


async def test_an_event_stream_handler_that_reads_nothing_still_gets_every_node_run_in_full() -> None:
    calls: list[int] = []

    async def handler(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        calls.append(ctx.run_step)

    result = await _agent().run('double 2', event_stream_handler=handler)
    assert result.output == 'It is 4'
    assert calls == [1, 1, 2, 2]
    assert [m.kind for m in result.all_messages()] == ['request', 'response', 'request', 'response']


async def test_run_stream_events_gives_its_result_once_the_run_has_ended(capfire: CaptureLogfire) -> None:
    # The run (and its span) is closed before the result event is handed out, as when `run` returns.
    ended_at: list[tuple[str, list[str]]] = []
    async with _agent().run_stream_events('double 2') as stream:
        async for event in stream:
            ended = [s['attributes']['logfire.msg'] for s in capfire.exporter.exported_spans_as_dict()]
            ended_at.append((event.event_kind, [m for m in ended if m == 'agent run']))
    assert ended_at[-2:] == [('part_end', []), ('agent_run_result', ['agent run'])]


async def test_nodes_stream_in_iter_and_running_them_afterwards_does_not_repeat_their_work() -> None:
    calls: list[int] = []
    agent = _agent()

    @agent.tool_plain
    def spy() -> None:  # makes the tool list differ from the default, to check the request is not re-sent
        calls.append(1)  # pragma: no cover

    streamed_kinds: list[list[str]] = []
    async with agent.iter('double 2') as run:
        node: Any = run.next_node
        while not isinstance(node, End):
            if isinstance(node, ModelRequestNode | CallToolsNode):
                async with node.stream(run.ctx) as events:
                    streamed_kinds.append(kinds([e async for e in events]))
            node = await run.next(node)
    assert streamed_kinds == snapshot(
        [
            ['part_start', 'final_result', 'part_end', 'part_start', 'part_end'],
            ['function_tool_call', 'function_tool_result'],
            ['part_start', 'final_result', 'part_delta', 'part_end'],
            [],
        ]
    )
    assert run.result is not None
    assert run.result.output == 'It is 4'
    assert [m.kind for m in run.all_messages()] == ['request', 'response', 'request', 'response']


async def test_a_node_stream_left_unread_still_records_the_whole_response() -> None:
    async with _agent().iter('double 2') as run:
        first = await run.next()
        assert isinstance(first, ModelRequestNode)
        async with first.stream(run.ctx):
            pass
        assert run.all_messages()[-1].parts[0].content == 'Checking'  # type: ignore[union-attr]
        with pytest.raises(UserError, match='already been streamed'):
            async with first.stream(run.ctx):
                pass  # pragma: no cover
        tools = await run.next(first)
        assert isinstance(tools, CallToolsNode)
        async with tools.stream(run.ctx):
            pass
        with pytest.raises(UserError, match='already been streamed'):
            async with tools.stream(run.ctx):
                pass  # pragma: no cover
        assert isinstance(await run.next(tools), ModelRequestNode)


async def test_a_streamed_run_is_persisted_like_any_run() -> None:
    from edgewise.graph.persistence.in_mem import FullStatePersistence

    persistence = FullStatePersistence()
    async with _agent().run_stream('double 2', persistence=persistence) as result:
        assert await result.get_output() == 'It is 4'
    assert [s.status for s in persistence.history if s.kind == 'node'] == ['success'] * 5
    assert b'_edgewise' not in persistence.dump_json()


async def test_a_streamed_run_has_the_spans_of_a_plain_run(capfire: CaptureLogfire) -> None:
    async with _agent().run_stream('double 2') as result:
        assert [t async for t in result.stream_text(debounce_by=None)][-1] == 'It is 4'
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    assert [s['attributes']['logfire.msg'] for s in spans] == [
        'agent run',
        'chat function::stream',
        'running tool: double',
        'chat function::stream',
    ]


def test_event_reprs_leave_out_fields_at_their_default() -> None:
    assert repr(PartStartEvent(index=0, part=TextPart('a'))) == "PartStartEvent(index=0, part=TextPart(content='a'))"
    assert repr(PartDeltaEvent(index=2, delta=TextPartDelta('b', provider_name='p'))) == (
        "PartDeltaEvent(index=2, delta=TextPartDelta(content_delta='b', provider_name='p'))"
    )


def test_function_tool_result_event_takes_result_as_a_deprecated_alias_of_part() -> None:
    part = ToolReturnPart(tool_name='get', content='ok', tool_call_id='c1')
    with pytest.warns(DeprecationWarning, match=r'`result=\.\.\.` to `FunctionToolResultEvent` is deprecated'):
        event = FunctionToolResultEvent(result=part)
    assert event == FunctionToolResultEvent(part)
    with pytest.warns(DeprecationWarning, match=r'`result` is deprecated, use `part` instead'):
        assert event.result is part
    with pytest.raises(TypeError, match='either `part` or `result`'):
        FunctionToolResultEvent(part=part, result=part)
    with pytest.raises(TypeError, match="missing required argument 'part'"):
        FunctionToolResultEvent()


async def test_tool_call_events_tell_whether_the_arguments_validated_and_validation_runs_once() -> None:
    checks: list[int] = []

    def small(ctx: RunContext[None], x: int) -> None:
        checks.append(x)
        if x > 10:
            raise ModelRetry('x must be at most 10')

    def double(x: int) -> int:
        return x * 2

    agent = Agent(
        streamed(
            [
                {0: DeltaToolCall(name='double', json_args='{"x": 2}', tool_call_id='ok')},
                {1: DeltaToolCall(name='double', json_args='{"x": "two"}', tool_call_id='bad')},
                {2: DeltaToolCall(name='double', json_args='{"x": 20}', tool_call_id='big')},
            ],
            [{0: DeltaToolCall(name='final_result', json_args='{"response": 1}', tool_call_id='out')}],
        ),
        tools=[Tool(double, args_validator=small)],
        output_type=int,
    )
    events: list[Any] = []

    async def handler(ctx: RunContext[None], stream: AsyncIterable[Any]) -> None:
        events.extend([e async for e in stream if e.event_kind in ('function_tool_call', 'output_tool_call')])

    assert (await agent.run('go', event_stream_handler=handler)).output == 1
    assert [(e.event_kind, e.tool_call_id, e.args_valid) for e in events] == [
        ('function_tool_call', 'ok', True),
        ('function_tool_call', 'bad', False),
        ('function_tool_call', 'big', False),
        ('output_tool_call', 'out', True),
    ]
    assert sorted(checks) == [2, 20]  # the tool's own validator ran once per call with valid arguments


async def test_the_call_events_of_unknown_tools_come_in_response_order_with_args_valid_false() -> None:
    def double(x: int) -> int:
        return x * 2

    agent = Agent(
        streamed(
            [
                {0: DeltaToolCall(name='nope', json_args='{}', tool_call_id='u')},
                {1: DeltaToolCall(name='double', json_args='{"x": 1}', tool_call_id='k')},
            ],
            ['done'],
        ),
        tools=[Tool(double)],
    )
    events: list[Any] = []

    async def handler(ctx: RunContext[None], stream: AsyncIterable[Any]) -> None:
        events.extend([e async for e in stream if e.event_kind == 'function_tool_call'])

    assert (await agent.run('go', event_stream_handler=handler)).output == 'done'
    assert [(e.tool_call_id, e.args_valid) for e in events] == [('u', False), ('k', True)]


async def test_no_call_events_follow_an_unknown_tool_call_that_ends_the_run() -> None:
    def double(x: int) -> int:
        return x * 2

    calls = [
        {0: DeltaToolCall(name='nope', json_args='{}', tool_call_id='u1')},
        {1: DeltaToolCall(name='double', json_args='{"x": 1}', tool_call_id='k1')},
    ]
    again = [
        {0: DeltaToolCall(name='nope', json_args='{}', tool_call_id='u2')},
        {1: DeltaToolCall(name='double', json_args='{"x": 2}', tool_call_id='k2')},
    ]
    agent = Agent(streamed(calls, again), tools=[Tool(double)])
    events: list[Any] = []

    async def handler(ctx: RunContext[None], stream: AsyncIterable[Any]) -> None:
        async for event in stream:  # kept one by one: the stream of the failing step ends with the error
            if event.event_kind in ('function_tool_call', 'function_tool_result'):
                events.append(event)

    with pytest.raises(UnexpectedModelBehavior, match="Tool 'nope' exceeded max retries count of 1"):
        await agent.run('go', event_stream_handler=handler)
    assert [(e.event_kind, e.tool_call_id) for e in events] == [
        ('function_tool_call', 'u1'),
        ('function_tool_call', 'k1'),
        ('function_tool_result', 'u1'),
        ('function_tool_result', 'k1'),
        ('function_tool_call', 'u2'),
    ]


async def test_an_args_validator_asking_for_approval_is_called_once_and_defers_a_streamed_call() -> None:
    from edgewise.agent import ApprovalRequired, DeferredToolRequests

    seen: list[tuple[int, bool]] = []

    def needs_approval(ctx: RunContext[None], x: int) -> None:
        seen.append((x, ctx.partial_output))
        raise ApprovalRequired()

    def double(x: int) -> int:
        raise NotImplementedError  # pragma: no cover - the call waits for approval

    output_types: list[Any] = [str, DeferredToolRequests]
    agent = Agent(
        streamed(
            [
                {0: DeltaToolCall(name='double', json_args='{"x":', tool_call_id='c1')},
                {0: DeltaToolCall(json_args=' 2}')},
            ]
        ),
        tools=[Tool(double, args_validator=needs_approval)],
        output_type=output_types,
    )
    async with agent.run_stream_events('go') as stream:
        events = [event async for event in stream]

    call = ToolCallPart(tool_name='double', args='{"x": 2}', tool_call_id='c1')
    assert seen == [(2, False)]
    assert [e for e in events if e.event_kind in ('function_tool_call', 'deferred_tool_requests')] == [
        FunctionToolCallEvent(part=call, args_valid=True),
        DeferredToolRequestsEvent(requests=DeferredToolRequests(approvals=[call])),
    ]
