"""`AgentStream`: a model response streamed inside `agent.iter()` (`node.stream(run.ctx)`), read as text, output
or response snapshots, as pydantic-ai 1.107's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, DeferredToolRequests, ModelRequestNode, ModelRetry, RunContext, UserError
from edgewise.agent.messages import TextPart
from edgewise.agent.models.function import DeltaToolCall
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition

from ._streaming_helpers import streamed

pytestmark = pytest.mark.anyio


class City(BaseModel):
    name: str
    population: int | None = None


async def test_stream_text_yields_the_text_so_far_and_deltas_yield_each_piece() -> None:
    agent = Agent(streamed(['The ', 'sky ', 'is ', 'blue'], ['The ', 'sky']))
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            texts = [t async for t in stream.stream_text(debounce_by=None)]
        assert texts == ['The ', 'The sky ', 'The sky is ', 'The sky is blue']

    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            assert [t async for t in stream.stream_text(delta=True, debounce_by=None)] == ['The ', 'sky']


async def test_stream_text_runs_the_output_validators_on_the_partial_text() -> None:
    agent = Agent(streamed(['a', 'b']))
    seen: list[tuple[str, bool]] = []

    @agent.output_validator
    def shout(ctx: RunContext[None], text: str) -> str:
        seen.append((text, ctx.partial_output))
        return text.upper()

    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            assert [t async for t in stream.stream_text(debounce_by=None)] == ['A', 'AB']
            assert await stream.get_output() == 'AB'
            # once the output is known, the text stream gives it whole
            assert [t async for t in stream.stream_text(delta=True)] == ['AB']
    assert seen == [('a', True), ('ab', True), ('ab', False)]


def _paris_agent() -> Agent[None, City]:
    """An agent whose model streams a `City` output tool call in three chunks."""
    chunks = ['{"name": "Par', 'is", "popu', 'lation": 2100000}']
    return Agent(
        streamed([{0: DeltaToolCall(name='final_result' if i == 0 else None, json_args=chunk)}
                  for i, chunk in enumerate(chunks)]),
        output_type=City,
    )  # fmt: skip


async def test_stream_output_gives_validated_partial_values_then_the_output() -> None:
    agent = _paris_agent()
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            outputs = [o async for o in stream.stream_output(debounce_by=None)]
            assert await stream.get_output() == City(name='Paris', population=2100000)
    assert outputs[-1] == City(name='Paris', population=2100000)
    assert outputs[-2] == outputs[-1]  # the validated output always comes last, even when unchanged
    assert [o.name for o in outputs[:-1]] == ['Par', 'Paris', 'Paris']


async def test_stream_text_refuses_structured_output() -> None:
    agent = Agent(streamed([{0: DeltaToolCall(name='final_result', json_args='{"name": "x", "population": 1}')}]),
                  output_type=City)  # fmt: skip
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            with pytest.raises(UserError, match=r'stream_text\(\) can only be used with text responses'):
                [t async for t in stream.stream_text()]


async def test_stream_response_yields_incomplete_snapshots_then_the_complete_response() -> None:
    agent = Agent(streamed(['x', 'y']))
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            snapshots = [r async for r in stream.stream_response(debounce_by=None)]
    # a snapshot per event (the part's start, the final result event, the delta, the part's end), then the last
    assert (snapshots[0].state, snapshots[0].parts) == ('incomplete', [TextPart('x')])
    assert {r.state for r in snapshots[:-1]} == {'incomplete'}
    assert [r.parts for r in snapshots[1:-1]][-1] == [TextPart('xy')]
    assert (snapshots[-1].state, snapshots[-1].parts) == ('complete', [TextPart('xy')])


async def test_readers_share_one_pass_over_the_events() -> None:
    agent = Agent(streamed(['one ', 'two']))
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            first = await anext(aiter(stream))
            assert first.event_kind == 'part_start'
            rest = [t async for t in stream.stream_text(delta=True, debounce_by=None)]
            assert rest == ['two']
            assert stream.response.parts == [TextPart('one two')]
        assert stream.response.state == 'complete'


async def test_a_failing_partial_validation_is_skipped_but_the_final_one_raises() -> None:
    agent = Agent(streamed(['no']))

    @agent.output_validator
    def never(ctx: RunContext[None], text: str) -> str:
        raise ModelRetry('never good')

    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            with pytest.raises(ModelRetry):
                [t async for t in stream.stream_text(debounce_by=None)]


async def test_stream_output_starts_with_the_empty_text_a_text_part_starts_with() -> None:
    """`TestModel` starts its text part empty: one response's stream yields that empty text (through the output
    validators), then the text after each piece, then the output (pydantic-ai 2.33's `test_iter_stream_output`)."""
    agent = Agent(TestModel(custom_output_text='The cat sat on the mat.'))
    seen: list[tuple[str, bool]] = []

    @agent.output_validator
    def bat(ctx: RunContext[None], text: str) -> str:
        seen.append((text, ctx.partial_output))
        return text.replace('cat sat', 'bat sat')

    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            outputs = [o async for o in stream.stream_output(debounce_by=None)]
    assert outputs == [
        '',
        'The ',
        'The cat ',
        'The bat sat ',
        'The bat sat on ',
        'The bat sat on the ',
        'The bat sat on the mat.',
        'The bat sat on the mat.',
    ]
    assert seen[0] == ('', True)
    assert seen[-1] == ('The cat sat on the mat.', False)


async def test_stream_text_leaves_out_the_empty_start_of_a_text_part() -> None:
    agent = Agent(TestModel(custom_output_text='The cat'))
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            assert [t async for t in stream.stream_text(debounce_by=None)] == ['The ', 'The cat']


async def test_run_stream_output_does_not_yield_the_empty_start_of_the_text() -> None:
    """`run_stream` enters its block once the text part has started, so its first partial value is the first
    piece of text (as pydantic-ai's), where one response's stream starts with the empty text."""
    agent = Agent(TestModel(custom_output_text='The cat'))
    async with agent.run_stream('go') as result:
        assert [o async for o in result.stream_output(debounce_by=None)] == ['The ', 'The cat', 'The cat']


async def test_stream_output_started_after_other_reads_goes_on_from_the_text_received() -> None:
    agent = Agent(streamed(['The ', 'cat ', 'sat']))
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            first = await anext(aiter(stream))
            assert first.event_kind == 'part_start'
            outputs = [o async for o in stream.stream_output(debounce_by=None)]
    assert outputs == ['The ', 'The cat ', 'The cat sat', 'The cat sat']


async def test_stream_output_started_after_other_reads_goes_on_from_the_arguments_received() -> None:
    agent = _paris_agent()
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            events = aiter(stream)
            while (await anext(events)).event_kind != 'final_result':
                pass  # the call's start (its first chunk), then the final result event
            outputs = [o async for o in stream.stream_output(debounce_by=None)]
    assert outputs == [
        City(name='Par'),
        City(name='Paris'),
        City(name='Paris', population=2100000),
        City(name='Paris', population=2100000),
    ]


async def test_stream_output_after_every_event_was_read_gives_what_was_received_then_the_output() -> None:
    agent = Agent(streamed(['The ', 'cat']))
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            await stream.drain()
            assert [o async for o in stream.stream_output(debounce_by=None)] == ['The cat', 'The cat']


def _deferring_agent() -> Agent[None, Any]:
    """An agent whose `TestModel` calls an external tool and a tool that needs approval, in one response."""
    agent: Agent[None, Any] = Agent(TestModel(), output_type=[str, DeferredToolRequests])

    async def external(ctx: RunContext[object], tool_def: ToolDefinition) -> ToolDefinition:
        return replace(tool_def, kind='external')

    @agent.tool_plain(prepare=external)
    def outside(x: int) -> int:
        raise AssertionError('an external tool is not run')

    @agent.tool_plain(requires_approval=True)
    def guarded(x: int) -> int:
        raise AssertionError('not approved yet')

    return agent


async def test_stream_output_gives_the_deferred_tool_requests_as_they_grow() -> None:
    async with _deferring_agent().iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            outputs = [o async for o in stream.stream_output(debounce_by=None)]
    assert all(isinstance(o, DeferredToolRequests) for o in outputs)
    assert [([c.tool_name for c in o.calls], [c.tool_name for c in o.approvals]) for o in outputs] == [
        (['outside'], []),
        (['outside'], ['guarded']),
        (['outside'], ['guarded']),  # the output, always last
    ]


async def test_stream_output_after_the_events_were_read_gives_the_deferred_tool_requests_then_the_output() -> None:
    async with _deferring_agent().iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            await stream.drain()
            outputs = [o async for o in stream.stream_output(debounce_by=None)]
    assert len(outputs) == 2
    assert outputs[0] == outputs[1]
    assert isinstance(outputs[1], DeferredToolRequests)
    assert [c.tool_name for c in outputs[1].calls] == ['outside']
    assert [c.tool_name for c in outputs[1].approvals] == ['guarded']
