"""Smaller behaviours of streaming: reprs, accessors, parts built from odd deltas, outputs without partials."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, ModelRequestNode, RunContext, TextOutput, ToolOutput
from edgewise.agent._message_flow.streamed_parts import PartsManager
from edgewise.agent._output.partial_json import IncrementalJsonParser
from edgewise.agent._output.partial_output import INVALID, PartialOutputBuilder
from edgewise.agent.messages import (
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    OutputToolCallEvent,
    OutputToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
)
from edgewise.agent.models.function import DeltaToolCall
from edgewise.agent.models.test import TestModel

from ._streaming_helpers import streamed

pytestmark = pytest.mark.anyio


class Pet(BaseModel):
    name: str


def test_tool_events_expose_the_id_of_their_call() -> None:
    call = ToolCallPart('t', {}, 'c1')
    returned = ToolReturnPart('t', 1, 'c1')
    assert [
        FunctionToolCallEvent(call).tool_call_id,
        FunctionToolResultEvent(returned).tool_call_id,
        OutputToolCallEvent(call).tool_call_id,
        OutputToolResultEvent(returned).tool_call_id,
    ] == ['c1'] * 4
    assert repr(INVALID) == 'INVALID'


def test_the_parts_manager_ignores_empty_deltas_and_waits_for_a_tool_name() -> None:
    manager = PartsManager()
    assert manager.text_delta('t', '') is None
    assert manager.thinking_delta('r') is None
    assert manager.tool_call_delta(0, args='{"a"') is None  # no name yet: nothing to start
    start = manager.tool_call_delta(0, tool_name='get')
    assert start is not None
    assert start.event_kind == 'part_start'
    assert manager.tool_call_delta(0) is None
    manager.thinking_delta('r', 'hm')
    assert manager.thinking_delta('r', signature='s') is not None
    manager.tool_call_delta(1, tool_name='d', args={'x': 1})
    manager.tool_call_delta(1, args={'y': 2})
    parts = manager.get_parts()
    assert parts[0] == ToolCallPart('get', '{"a"', parts[0].tool_call_id)  # type: ignore[union-attr]
    assert parts[1] == ThinkingPart('hm', signature='s')
    assert parts[2] == ToolCallPart('d', {'x': 1, 'y': 2}, parts[2].tool_call_id)  # type: ignore[union-attr]
    with pytest.raises(Exception, match='JSON text added to dict arguments'):
        manager.tool_call_delta(1, args='{')


async def test_the_streamed_response_of_a_node_tells_its_usage_and_time() -> None:
    agent = Agent(streamed(['a', 'b']))
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            [_ async for _ in stream]
            assert stream.response.parts == [TextPart('ab')]
            assert stream.usage.output_tokens == 2  # one per chunk, counted as they came, on the run's usage
            assert stream.usage.requests == 1
            assert stream.timestamp == stream.response.timestamp
            assert stream.response.provider_name is None
            assert stream.run_id == run.run_id
            with pytest.warns(DeprecationWarning, match='no longer a method'):
                assert stream.usage().output_tokens == 2
            with pytest.warns(DeprecationWarning, match='use the `response` property'):
                assert stream.get().parts == [TextPart('ab')]


async def test_output_functions_see_partial_values_with_partial_output_set_then_the_final_one() -> None:
    calls: list[tuple[str, bool]] = []

    def make_pet(ctx: RunContext[None], name: str) -> Pet:
        calls.append((name, ctx.partial_output))
        return Pet(name=name.upper())

    chunks = [{0: DeltaToolCall(name='final_result', json_args='{"name": "re')}, {0: DeltaToolCall(json_args='x"}')}]
    agent = Agent(streamed(chunks), output_type=ToolOutput(make_pet))
    async with agent.run_stream('go') as result:
        outputs = [o async for o in result.stream_output(debounce_by=None)]
    assert outputs == [Pet(name='RE'), Pet(name='REX'), Pet(name='REX')]
    assert calls == [('re', True), ('rex', True), ('rex', False)]

    def upper(ctx: RunContext[None], text: str) -> str:
        calls.append((text, ctx.partial_output))
        return text.upper()

    calls.clear()
    shout = Agent(streamed(['h', 'i']), output_type=TextOutput(upper))
    async with shout.run_stream('go') as shouted:
        assert [o async for o in shouted.stream_output(debounce_by=None)] == ['H', 'HI', 'HI']
    assert calls == [('h', True), ('hi', True), ('hi', False)]


async def test_arguments_that_are_not_json_give_no_partial_output_and_are_retried() -> None:
    agent = Agent(
        streamed(
            [{0: DeltaToolCall(name='final_result', json_args='{"name": ', tool_call_id='c1')},
             {0: DeltaToolCall(json_args='oops}')}],
            [{0: DeltaToolCall(name='final_result', json_args='{"name": "ok"}', tool_call_id='c2')}],
        ),
        output_type=Pet,
    )  # fmt: skip
    async with agent.run_stream('go') as result:
        # the partial value of the valid call, then the output (always last, even when equal)
        assert [o async for o in result.stream_output(debounce_by=None)] == [Pet(name='ok'), Pet(name='ok')]
    assert [p.part_kind for p in result.all_messages()[2].parts] == ['retry-prompt']


async def test_whole_dict_arguments_of_test_model_give_one_partial_value_then_the_output() -> None:
    agent = Agent(TestModel(custom_output_args={'name': 'tom'}), output_type=Pet)
    async with agent.run_stream('go') as result:
        assert [o async for o in result.stream_output(debounce_by=None)] == [Pet(name='tom'), Pet(name='tom')]


async def test_thinking_and_non_output_tool_parts_are_left_out_of_partial_outputs() -> None:
    from edgewise.agent.models.function import DeltaThinkingPart

    agent = Agent(
        streamed(
            [{0: DeltaThinkingPart(content='hmm')}, {0: DeltaThinkingPart(content='...')},
             {1: DeltaToolCall(name='note', json_args='{}', tool_call_id='n')}, {1: DeltaToolCall(json_args='')}],
            ['fine'],
        )
    )  # fmt: skip

    @agent.tool_plain
    def note() -> str:
        return 'noted'

    async with agent.run_stream('go') as result:
        assert [o async for o in result.stream_output(debounce_by=None)] == ['fine', 'fine']


@dataclass
class Needs:
    a: int

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError('negative')


def test_a_dataclass_that_refuses_its_fields_gives_no_partial_value() -> None:
    builder = PartialOutputBuilder(list[Needs])
    parser = IncrementalJsonParser(builder)
    parser.feed('[{"a": -1')
    assert builder.value(parser) == []
    parser.feed(', "b": 2')
    assert builder.value(parser) == []


def test_nested_raw_values_of_whole_validated_types_include_the_string_being_read() -> None:
    builder = PartialOutputBuilder(dict[str, dict[str, list[str]]])
    parser = IncrementalJsonParser(builder)
    parser.feed('{"a": {"b": ["x", "y')
    assert builder.value(parser) == {'a': {'b': ['x', 'y']}}
    parser.feed('"], "c": [["')
    # pydantic's partial validation leaves the invalid last item out
    assert builder.value(parser) == {'a': {'b': ['x', 'y'], 'c': []}}


async def test_an_event_stream_closed_before_it_is_read_stops_nothing() -> None:
    stream = Agent(streamed(['a'])).run_stream_events('go')
    await stream.aclose()
    async with Agent(streamed(['a'])).run_stream_events('go') as events:
        assert [e.event_kind async for e in events][-1] == 'agent_run_result'


@dataclass
class WithCallback:
    name: str
    callback: Callable[[], None] | None = None


def test_types_without_a_json_schema_still_stream_partial_values() -> None:
    builder = PartialOutputBuilder(list[WithCallback])
    parser = IncrementalJsonParser(builder)
    parser.feed('[{"name": "a"}, {"na')
    assert builder.value(parser) == [WithCallback(name='a')]


def test_a_tool_call_delta_without_arguments_changes_only_the_id() -> None:
    assert ToolCallPartDelta(tool_call_id='c2').apply(ToolCallPart('t', '{}', 'c1')) == ToolCallPart('t', '{}', 'c2')


async def test_each_argument_delta_of_a_streamed_call_names_the_call_it_adds_to() -> None:
    calls = [
        {0: DeltaToolCall(name='add')},
        {0: DeltaToolCall(json_args='{"x": 1,')},
        {0: DeltaToolCall(json_args=' "y": 2}')},
    ]
    agent = Agent(streamed(calls, ['done']))

    @agent.tool_plain
    def add(x: int, y: int) -> int:
        return x + y

    async with agent.iter('go') as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    events = [event async for event in stream]
                break
    (start,) = [event.part for event in events if isinstance(event, PartStartEvent)]
    deltas = [event.delta for event in events if isinstance(event, PartDeltaEvent)]
    assert isinstance(start, ToolCallPart)
    assert start.tool_call_id  # made by the parts manager: the model gave none
    assert [(delta.args_delta, delta.tool_call_id) for delta in deltas if isinstance(delta, ToolCallPartDelta)] == [
        ('{"x": 1,', start.tool_call_id),
        (' "y": 2}', start.tool_call_id),
    ]
