"""Static checks of the generics of streamed runs (type-checked by mypy, never run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_type

from edgewise.agent import Agent, AgentEventStream, StreamedRunResult
from edgewise.agent.models.test import TestModel


@dataclass
class City:
    name: str


async def check_run_stream() -> None:
    agent = Agent(TestModel(), output_type=City)
    async with agent.run_stream('x') as result:
        assert_type(result, StreamedRunResult[object, City])
        async for partial in result.stream_output():
            assert_type(partial, City)
        assert_type(await result.get_output(), City)
    plain = Agent(TestModel())
    async with plain.run_stream('x') as text_result:
        async for text in text_result.stream_text(delta=True):
            assert_type(text, str)
    assert_type(agent.run_stream_events('x'), AgentEventStream[City])
