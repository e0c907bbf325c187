"""A finished run leaves no reference cycle of its own objects: its history, usage and deps are freed as soon as
the caller lets go of the result, not when the garbage collector next runs (each step's tool manager and run
context hold each other while the step goes on)."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


class Answer(BaseModel):
    value: int


@contextmanager
def cyclic_garbage() -> Iterator[list[str]]:
    """Within: the garbage collector off; at the end, the names of the Edgewise objects that only it could free."""
    found: list[str] = []
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield found
        gc.collect()
        found += sorted(type(o).__qualname__ for o in gc.garbage if type(o).__module__.startswith('edgewise.'))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def two_tool_steps(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls = sum(isinstance(p, ToolCallPart) for m in messages if isinstance(m, ModelResponse) for p in m.parts)
    if calls < 2:
        return ModelResponse(parts=[ToolCallPart('add', {'x': calls})])
    return ModelResponse(parts=[TextPart('done')])


def _plain() -> Callable[[], Awaitable[Any]]:
    agent = Agent(TestModel())
    return lambda: agent.run('hi')


def _tools() -> Callable[[], Awaitable[Any]]:
    agent = Agent(FunctionModel(two_tool_steps))

    @agent.tool_plain
    def add(x: int) -> int:
        return x + 1

    return lambda: agent.run('hi')


def _structured() -> Callable[[], Awaitable[Any]]:
    agent = Agent(TestModel(), output_type=Answer)
    return lambda: agent.run('hi')


def _iterated() -> Callable[[], Awaitable[Any]]:
    agent = Agent(FunctionModel(two_tool_steps), instructions='Be brief.')

    @agent.tool_plain
    def add(x: int) -> int:
        return x + 1

    async def run() -> Any:
        async with agent.iter('hi') as agent_run:
            async for _ in agent_run:
                pass
        return agent_run.result

    return run


def _streamed_text() -> Callable[[], Awaitable[Any]]:
    agent = Agent(TestModel())

    async def run() -> Any:
        async with agent.run_stream('hi') as result:
            return [text async for text in result.stream_text(debounce_by=None)]

    return run


def _streamed_output() -> Callable[[], Awaitable[Any]]:
    agent = Agent(TestModel(), output_type=Answer)

    async def run() -> Any:
        async with agent.run_stream('hi') as result:
            return [output async for output in result.stream_output(debounce_by=None)]

    return run


def _streamed_tools() -> Callable[[], Awaitable[Any]]:
    agent = Agent(FunctionModel(stream_function=two_tool_steps_streamed))

    @agent.tool_plain
    def add(x: int) -> int:
        return x + 1

    async def run() -> Any:
        async with agent.run_stream('hi') as result:
            return await result.get_output()

    return run


def _events() -> Callable[[], Awaitable[Any]]:
    agent = Agent(TestModel())

    async def run() -> Any:
        async with agent.run_stream_events('hi') as events:
            return [event async for event in events]

    return run


def _handled_events() -> Callable[[], Awaitable[Any]]:
    agent = Agent(TestModel())
    seen: list[Any] = []

    async def handler(ctx: Any, events: AsyncIterable[Any]) -> None:
        seen.extend([event async for event in events])

    return lambda: agent.run('hi', event_stream_handler=handler)


async def two_tool_steps_streamed(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    response = two_tool_steps(messages, info)
    part = response.parts[0]
    if isinstance(part, ToolCallPart):
        yield {0: DeltaToolCall(name=part.tool_name, json_args=part.args_as_json_str())}
    else:
        yield 'done'


RUNS = [
    _plain,
    _tools,
    _structured,
    _iterated,
    _streamed_text,
    _streamed_output,
    _streamed_tools,
    _events,
    _handled_events,
]


@pytest.mark.parametrize('make_run', RUNS, ids=lambda f: f.__name__.strip('_'))
async def test_a_finished_run_leaves_no_cycle(make_run: Callable[[], Callable[[], Awaitable[Any]]]) -> None:
    run = make_run()
    assert await run() is not None  # (the first run loads what it needs)

    with cyclic_garbage() as found:
        result = await run()
        assert result is not None
        del result

    assert found == []
