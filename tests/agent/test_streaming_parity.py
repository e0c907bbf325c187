"""Streaming as pydantic-ai 1.107 has it: `cancel()`, response states, `stream_response`, `validate_response_output`,
`run_stream(event_stream_handler=)`, `AgentEventStream` as iterator and context manager, positional
`DeltaToolCall`, and token limits checked in the middle of a stream."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pydantic
import pytest
from inline_snapshot import snapshot

from edgewise.agent import Agent, ModelRetry, RunContext, UnexpectedModelBehavior, UsageLimitExceeded
from edgewise.agent.messages import (
    AgentStreamEvent,
    ModelMessage,
    ModelResponse,
    PartStartEvent,
    TextPart,
    ToolCallPart,
)
from edgewise.agent.models import ModelRequestParameters, StreamedResponse
from edgewise.agent.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.result import AgentEventStream
from edgewise.agent.settings import ModelSettings
from edgewise.agent.usage import UsageLimits

from ._streaming_helpers import kinds, streamed

pytestmark = pytest.mark.anyio


class Point(pydantic.BaseModel):
    x: int
    label: str


def test_delta_types_take_name_and_arguments_positionally() -> None:
    assert DeltaToolCall('f', '{"a": 1}', tool_call_id='c') == DeltaToolCall(
        name='f', json_args='{"a": 1}', tool_call_id='c'
    )
    with pytest.raises(TypeError):
        DeltaToolCall('f', '{}', 'c')  # type: ignore[call-arg]  # the id is keyword-only, as in pydantic-ai
    with pytest.raises(TypeError):
        DeltaThinkingPart('x')  # type: ignore[call-arg]


async def test_a_stream_function_yielding_nothing_is_a_value_error() -> None:
    async def nothing(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        return
        yield  # pragma: no cover

    agent = Agent(FunctionModel(stream_function=nothing))
    with pytest.raises(ValueError, match='Stream function must return at least one item'):
        async with agent.run_stream('go') as result:
            await result.get_output()


async def test_cancel_keeps_the_cut_response_as_interrupted_and_ends_the_stream() -> None:
    log: list[str] = []
    agent = Agent(streamed(['one ', 'two ', 'three'], log=log))
    async with agent.run_stream('go') as result:
        assert not result.cancelled
        seen: list[str] = []
        async for piece in result.stream_text(delta=True, debounce_by=None):
            seen.append(piece)
            assert result.response.state == 'incomplete'
            await result.cancel()  # the loop goes on: the next read ends it
        assert seen == ['one ']
        assert result.cancelled
        assert log == ['closed 1']  # the model's stream is closed at once
    assert result.response.state == 'interrupted'
    assert result.response.parts == [TextPart('one ')]
    assert [(m.kind, getattr(m, 'state', None)) for m in result.all_messages()] == [
        ('request', 'complete'),
        ('response', 'interrupted'),
    ]
    assert result.all_messages()[-1].run_id == result.run_id
    await result.cancel()  # a second call does nothing
    assert not result.is_complete


async def test_cancel_after_the_run_is_complete_only_sets_cancelled() -> None:
    agent = Agent(TestModel(custom_output_text='hello world'))
    async with agent.run_stream('go') as result:
        assert await result.get_output() == 'hello world'
        await result.cancel()
        assert result.cancelled
    assert result.response.state == 'complete'
    assert result.response.text == 'hello world'


async def test_cancel_right_after_entering_keeps_the_final_response_started_as_interrupted() -> None:
    # `run_stream` enters its block once the final result starts: the response is under way when cancelled
    agent = Agent(TestModel())
    async with agent.run_stream('go') as result:
        await result.cancel()
        assert result.response.state == 'interrupted'
    assert [(m.kind, getattr(m, 'state', None)) for m in result.all_messages()] == [
        ('request', 'complete'),
        ('response', 'interrupted'),
    ]


async def test_stream_response_gives_incomplete_snapshots_then_the_complete_response() -> None:
    agent = Agent(TestModel(custom_output_text='hello big world'))
    async with agent.run_stream('go') as result:
        responses = [r async for r in result.stream_response(debounce_by=None)]
    states = [(r.text, r.state) for r in responses]
    assert states == snapshot(
        [('hello ', 'incomplete'), ('hello big ', 'incomplete'), ('hello big world', 'incomplete'),
         ('hello big world', 'incomplete'), ('hello big world', 'complete')]
    )  # fmt: skip
    # The snapshots are the response as received; the complete one is as the run recorded it, with its ids.
    assert [r.run_id for r in responses[:-1]] == [None] * 4
    recorded = result.all_messages()[-1]
    assert (responses[-1].run_id, responses[-1].conversation_id) == (recorded.run_id, recorded.conversation_id)
    assert responses[-1].run_id is not None


async def test_stream_response_ends_when_the_stream_is_cancelled() -> None:
    agent = Agent(streamed(['one ', 'two ', 'three']))
    async with agent.run_stream('go') as result:
        seen: list[tuple[str | None, str]] = []
        async for response in result.stream_response(debounce_by=None):
            seen.append((response.text, response.state))
            await result.cancel()
    assert seen == [('one ', 'incomplete')]


async def test_validate_response_output_validates_partial_and_whole_responses() -> None:
    calls: list[bool] = []
    chunks = [{0: DeltaToolCall('final_result', '{"x": 1, "label": "la')}, {0: DeltaToolCall(None, 'b"}')}]
    agent = Agent(streamed(chunks), output_type=Point)

    @agent.output_validator
    def check(ctx: RunContext[None], value: Point) -> Point:
        calls.append(ctx.partial_output)
        return value

    async with agent.run_stream('go') as result:
        values = [
            await result.validate_response_output(r, allow_partial=r.state == 'incomplete')
            async for r in result.stream_response(debounce_by=None)
        ]
    # a snapshot after each event of the response (its delta, its end), then the complete response
    assert values == [Point(x=1, label='la'), Point(x=1, label='lab'), Point(x=1, label='lab'), Point(x=1, label='lab')]
    assert calls == [True, True, True, False, False]  # the run's own validation of the output included


async def test_validate_response_output_of_text_and_of_invalid_answers() -> None:
    agent = Agent(TestModel(custom_output_text='hi'))
    async with agent.run_stream('go') as result:
        assert await result.validate_response_output(ModelResponse([TextPart('some text')])) == 'some text'
        with pytest.raises(UnexpectedModelBehavior, match='unable to find output'):
            await result.validate_response_output(ModelResponse([]))

    structured = Agent(TestModel(), output_type=Point)
    async with structured.run_stream('go') as result:
        call = ModelResponse([ToolCallPart('final_result', '{"x": "not a number"}')])
        with pytest.raises(UnexpectedModelBehavior, match='retries are not supported in `run_stream\\(\\)`'):
            await result.validate_response_output(call)
        with pytest.raises(pydantic.ValidationError):
            await result.validate_response_output(call, allow_partial=True)
        with pytest.raises(UnexpectedModelBehavior, match='unable to process text output'):
            await result.validate_response_output(ModelResponse([TextPart('{"x": 1, "label": "a"}')]))

    native = Agent(TestModel(), output_type=pydantic_native(Point))
    async with native.run_stream('go') as result:
        assert await result.validate_response_output(ModelResponse([TextPart('{"x": 2, "label": "b"}')])) == Point(
            x=2, label='b'
        )
        with pytest.raises(pydantic.ValidationError):
            await result.validate_response_output(ModelResponse([TextPart('{"x": "two"')]), allow_partial=True)


def pydantic_native(tp: Any) -> Any:
    from edgewise.agent import NativeOutput

    return NativeOutput(tp)


async def test_run_stream_passes_each_nodes_events_to_the_event_stream_handler() -> None:
    agent = Agent(TestModel())

    @agent.tool_plain
    def double(x: int) -> int:
        return 2 * x

    received: list[tuple[int, list[str]]] = []

    async def handler(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        received.append((ctx.run_step, kinds([event async for event in events])))

    async with agent.run_stream('go', event_stream_handler=handler) as result:
        assert await result.get_output() == '{"double":0}'
    # as pydantic-ai's: the handler gets the events up to the final result, none after
    assert received == [
        (1, ['part_start', 'part_end']),
        (1, ['function_tool_call', 'function_tool_result']),
        (2, ['part_start', 'final_result']),
    ]


async def test_an_event_stream_handler_that_reads_nothing_changes_nothing() -> None:
    async def handler(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        return None

    agent = Agent(TestModel(custom_output_text='a long answer'))
    async with agent.run_stream('go', event_stream_handler=handler) as result:
        assert [t async for t in result.stream_text(debounce_by=None)][-1] == 'a long answer'


async def test_agent_event_stream_works_as_context_manager_and_async_iterator() -> None:
    agent = Agent(TestModel(custom_output_text='hello world'))
    async with agent.run_stream_events('go') as stream:
        first = await anext(stream)
        assert isinstance(first, PartStartEvent)
        rest = [event async for event in stream]
    assert kinds(rest)[-1] == 'agent_run_result'
    assert [event async for event in stream] == []  # done: nothing more
    with pytest.raises(RuntimeError, match='cannot be entered more than once'):  # as in pydantic-ai 2.x
        await stream.__aenter__()
    await stream.aclose()


async def test_leaving_a_managed_event_stream_early_closes_its_generator() -> None:
    closed: list[str] = []

    async def events() -> AsyncGenerator[AgentStreamEvent]:
        try:
            yield PartStartEvent(index=0, part=TextPart('a'))
            yield PartStartEvent(index=1, part=TextPart('b'))  # pragma: no cover
        finally:
            closed.append('closed')

    async with AgentEventStream[str](events()) as stream:
        async for _ in stream:
            break
        assert closed == []
    assert closed == ['closed']


async def test_iterating_an_event_stream_directly_is_deprecated_and_closes_it_when_done() -> None:
    closed: list[str] = []

    async def events() -> AsyncGenerator[AgentStreamEvent]:
        try:
            yield PartStartEvent(index=0, part=TextPart('a'))
        finally:
            closed.append('closed')

    stream = AgentEventStream[str](events())
    with pytest.warns(DeprecationWarning, match='Iterating `AgentEventStream` directly'):
        assert len([event async for event in stream]) == 1
    assert closed == ['closed']


class _SlowCleanupModel(TestModel):
    """A model whose stream takes a while (several scheduler turns) to clean up once left."""

    def __init__(self, cleaned: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cleaned = cleaned

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        async with super().request_stream(messages, model_settings, model_request_parameters, run_context) as stream:
            try:
                yield stream
            finally:
                with anyio.CancelScope(shield=True):
                    for _ in range(5):
                        await anyio.lowlevel.checkpoint()
                self.cleaned.append('model')


async def test_cancelling_a_managed_event_stream_waits_for_the_model_and_tool_clean_up() -> None:
    cleaned: list[str] = []
    agent = Agent(_SlowCleanupModel(cleaned, custom_output_text='hello'))
    seen = anyio.Event()

    async def consume() -> None:
        async with agent.run_stream_events('go') as stream:
            await anext(stream)
            seen.set()
            await anyio.sleep_forever()

    with anyio.fail_after(10):  # a hang guard only: the test ends as soon as the clean-up is done
        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await seen.wait()
            tg.cancel_scope.cancel()
    assert cleaned == ['model']

    tool_agent = Agent(TestModel())
    started = anyio.Event()

    @tool_agent.tool_plain
    async def slow() -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.lowlevel.checkpoint()
            cleaned.append('tool')
        return 'never'  # pragma: no cover

    async def consume_tool_run() -> None:
        async with tool_agent.run_stream_events('go') as stream:
            async for _ in stream:
                pass

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(consume_tool_run)
            await started.wait()
            tg.cancel_scope.cancel()
    assert cleaned == ['model', 'tool']


async def _read_text(agent: Agent[None, str], limits: UsageLimits, pieces: list[str]) -> None:
    async with agent.run_stream('go', usage_limits=limits) as result:
        async for piece in result.stream_text(delta=True, debounce_by=None):
            pieces.append(piece)


async def _read_events(agent: Agent[None, str], limits: UsageLimits) -> None:
    async with agent.run_stream_events('go', usage_limits=limits) as stream:
        async for _ in stream:
            pass


async def test_an_output_token_limit_stops_a_stream_in_the_middle() -> None:
    pieces: list[str] = []
    with pytest.raises(UsageLimitExceeded, match=r'Exceeded the output_tokens_limit of 2 \(output_tokens=3\)'):
        await _read_text(Agent(streamed(['one', 'two', 'three', 'four'])), UsageLimits(output_tokens_limit=2), pieces)
    assert pieces == ['one', 'two']
    words = Agent(TestModel(custom_output_text='a b c d e'))
    with pytest.raises(UsageLimitExceeded, match='output_tokens_limit of 3'):
        await _read_events(words, UsageLimits(output_tokens_limit=3))
    # The streamed usage is the count of the chunks as they came, as pydantic-ai's FunctionModel counts it.
    async with Agent(streamed(['one', 'two'])).run_stream('go') as result:
        await result.get_output()
        assert result.usage.output_tokens == 2


async def test_stream_text_passes_each_text_so_far_through_the_output_validators() -> None:
    calls: list[tuple[str, bool]] = []
    agent = Agent(streamed(['Hello', ' ', 'world', '!']))

    @agent.output_validator
    def shout(ctx: RunContext[None], text: str) -> str:
        calls.append((text, ctx.partial_output))
        if text.endswith(' '):
            raise ModelRetry('not at a space')  # skips this partial text only
        return text.upper()

    async with agent.run_stream('go') as result:
        texts = [text async for text in result.stream_text(debounce_by=None)]
    assert texts == ['HELLO', 'HELLO WORLD', 'HELLO WORLD!']
    assert await result.get_output() == 'HELLO WORLD!'
    assert calls == [
        ('Hello', True),
        ('Hello ', True),
        ('Hello world', True),
        ('Hello world!', True),
        ('Hello world!', False),
    ]
    calls.clear()
    deltas_agent = Agent(streamed(['a', 'b']))
    deltas_agent.output_validator(shout)
    async with deltas_agent.run_stream('go') as result:
        assert [piece async for piece in result.stream_text(delta=True, debounce_by=None)] == ['a', 'b']
    assert calls == [('ab', False)]  # pieces are not validated


async def test_a_stream_function_failing_before_its_first_item_is_closed_and_its_error_raised() -> None:
    closed: list[str] = []

    async def failing(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        try:
            raise RuntimeError('no connection')
            yield 'never'  # pragma: no cover
        finally:
            closed.append('closed')

    agent = Agent(FunctionModel(stream_function=failing))
    with pytest.raises(RuntimeError, match='no connection'):
        async with agent.run_stream('go') as result:
            await result.get_output()
    assert closed == ['closed']


async def test_validate_response_output_of_partial_arguments_given_as_a_dict() -> None:
    agent = Agent(TestModel(), output_type=list[int])
    async with agent.run_stream('go') as result:
        call = ModelResponse([ToolCallPart('final_result', {'response': [1, 2]})])
        assert await result.validate_response_output(call, allow_partial=True) == [1, 2]
        assert await result.validate_response_output(call) == [1, 2]
