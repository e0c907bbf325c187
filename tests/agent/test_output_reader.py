"""The one reader of streamed output (`_loop/output_reader.py`), as `AgentStream` and `StreamedRunResult` use it:
the same partial values from both, debounced, skipped when a validator asks for a retry."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, ModelRequestNode, ModelRetry, RunContext
from edgewise.agent.models.function import DeltaToolCall

from ._streaming_helpers import streamed

pytestmark = pytest.mark.anyio


class City(BaseModel):
    name: str
    population: int | None = None


CHUNKS = ['{"name": "Par', 'is", "popu', 'lation": 2100000}']


def _city_agent() -> Agent[None, City]:
    calls = [
        {0: DeltaToolCall(name='final_result' if i == 0 else None, json_args=chunk)} for i, chunk in enumerate(CHUNKS)
    ]
    return Agent(streamed(calls, calls), output_type=City)


async def test_agent_stream_and_streamed_run_result_give_the_same_partial_values() -> None:
    agent = _city_agent()
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            from_node = [o async for o in stream.stream_output(debounce_by=None)]
    async with agent.run_stream('go') as result:
        from_run = [o async for o in result.stream_output(debounce_by=None)]
    assert from_node == from_run
    assert from_node[-1] == City(name='Paris', population=2100000)


async def test_agent_stream_output_debounced_ends_with_the_output() -> None:
    agent = _city_agent()
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            outputs = [o async for o in stream.stream_output()]
            # read again: the output, once
            again = [o async for o in stream.stream_output()]
    assert outputs[-1] == City(name='Paris', population=2100000)
    assert again == [outputs[-1]]


async def test_agent_stream_text_debounced_gives_the_whole_text_last() -> None:
    agent = Agent(streamed(['a', 'b', 'c']))
    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            texts = [t async for t in stream.stream_text()]
    assert texts[-1] == 'abc'


async def test_a_response_without_output_streams_no_output() -> None:
    agent = Agent(streamed([{0: DeltaToolCall(name='lookup', json_args='{}')}], ['done']))

    @agent.tool_plain
    def lookup() -> str:
        return 'found'

    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            assert [o async for o in stream.stream_output(debounce_by=None)] == []


async def test_a_partial_value_a_validator_retries_is_skipped_by_both_readers() -> None:
    agent = _city_agent()

    @agent.output_validator
    def complete_only(ctx: RunContext[None], city: City) -> City:
        if ctx.partial_output and city.population is None:
            raise ModelRetry('not yet')
        return city

    async with agent.iter('go') as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            from_node = [o async for o in stream.stream_output(debounce_by=None)]
    async with agent.run_stream('go') as result:
        from_run = [o async for o in result.stream_output(debounce_by=None)]
    assert from_node == from_run
    assert {o.population for o in from_node} == {2100000}
