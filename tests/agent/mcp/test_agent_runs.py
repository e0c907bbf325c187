"""Agent runs that call the tools of a real MCP server (the FastMCP test server over stdio)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.exceptions import MCPError, UnexpectedModelBehavior, UserError
from edgewise.agent.mcp import CallToolFunc, StdioTransport
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.usage import RunUsage

from .conftest import fastmcp_stdio

pytestmark = pytest.mark.anyio


def calling(*calls: tuple[str, dict[str, Any]], final: str = 'done') -> FunctionModel:
    """A model that makes these tool calls, one per request, then answers `final` with the last tool return."""
    remaining = list(calls)

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if remaining:
            name, args = remaining.pop(0)
            return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f'call-{len(remaining)}')])
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        returned = [p.content for p in last.parts if isinstance(p, (ToolReturnPart, RetryPromptPart))]
        return ModelResponse(parts=[TextPart(f'{final}: {returned}')])

    return FunctionModel(respond)


async def test_test_model_calls_an_mcp_tool() -> None:
    agent = Agent(TestModel(call_tools=['add']), toolsets=[fastmcp_stdio()])
    async with agent:
        result = await agent.run('add two numbers')
    assert result.output == '{"add":0}'
    returns = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts]
    assert [(p.tool_name, p.content) for p in returns if isinstance(p, ToolReturnPart)] == [('add', 0)]


async def test_concurrent_runs_in_sibling_tasks_share_the_server() -> None:
    # Each run enters the server; the first run to end opened it, and waits for the other before closing it.
    server = fastmcp_stdio()
    agent = Agent(calling(('add', {'a': 1, 'b': 2}), ('add', {'a': 3, 'b': 4})), toolsets=[server])
    quick = Agent(calling(('greet', {'name': 'Ada'})), toolsets=[server])
    outputs: dict[str, str] = {}

    async def run(name: str, runner: Agent[None, str], prompt: str) -> None:
        outputs[name] = (await runner.run(prompt)).output

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, 'quick', quick, 'greet Ada')
        tg.start_soon(run, 'slow', agent, 'add twice')
    assert outputs == {'quick': "done: ['Hello, Ada!']", 'slow': 'done: [7]'}
    assert not server.is_running


async def test_a_run_without_async_with_agent_starts_and_stops_the_server() -> None:
    server = fastmcp_stdio()
    agent = Agent(calling(('greet', {'name': 'Ada'})), toolsets=[server])
    result = await agent.run('greet Ada')
    assert result.output == "done: ['Hello, Ada!']"
    assert not server.is_running


async def test_the_model_sees_the_servers_tools_with_the_prefix() -> None:
    seen: list[str] = []

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not seen:
            seen.extend(t.name for t in info.function_tools)
            return ModelResponse(parts=[ToolCallPart('calc_add', {'a': 1, 'b': 2})])
        return ModelResponse(parts=[TextPart('ok')])

    agent = Agent(FunctionModel(respond), toolsets=[fastmcp_stdio(tool_prefix='calc')])
    async with agent:
        result = await agent.run('add')
    assert {'calc_add', 'calc_weather'} <= set(seen)
    assert all(name.startswith('calc_') for name in seen)
    tool_returns = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts]
    assert [(p.tool_name, p.content) for p in tool_returns if isinstance(p, ToolReturnPart)] == [('calc_add', 3)]


async def test_a_tool_error_becomes_a_retry_prompt_to_the_model() -> None:
    agent = Agent(calling(('fail', {'reason': 'disk full'}), ('add', {'a': 1, 'b': 1})), toolsets=[fastmcp_stdio()])
    async with agent:
        result = await agent.run('try')
    retries = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts]
    assert [p.content for p in retries if isinstance(p, RetryPromptPart)] == ['Error executing tool fail: disk full']
    assert result.output == 'done: [2]'


async def test_max_retries_bounds_the_retries_of_a_failing_tool() -> None:
    calls = [('fail', {'reason': 'again'})] * 3
    agent = Agent(calling(*calls), toolsets=[fastmcp_stdio(max_retries=1)])
    async with agent:
        with pytest.raises(UnexpectedModelBehavior, match="Tool 'fail' exceeded max retries count of 1"):
            await agent.run('try')


async def test_a_server_crash_mid_run_is_an_error_naming_server_and_tool() -> None:
    agent = Agent(calling(('crash', {})), toolsets=[fastmcp_stdio()])
    async with agent:
        with pytest.raises(MCPError, match="closed the connection while calling tool 'crash'"):
            await agent.run('crash it')


async def test_process_tool_call_wraps_each_call() -> None:
    seen: list[tuple[str | None, str, dict[str, Any]]] = []

    async def double_a(ctx: RunContext[Any], call_tool: CallToolFunc, name: str, args: dict[str, Any]) -> Any:
        seen.append((ctx.tool_name, name, args))
        return await call_tool(name, {**args, 'a': args['a'] * 2}, {'trace': 'x1'})

    agent = Agent(
        calling(('m_add', {'a': 5, 'b': 1})), toolsets=[fastmcp_stdio(tool_prefix='m', process_tool_call=double_a)]
    )
    async with agent:
        result = await agent.run('add')
    assert seen == [('add', 'add', {'a': 5, 'b': 1})]
    assert result.output == 'done: [11]'


async def test_sampling_uses_the_runs_model() -> None:
    sampled: list[list[ModelMessage]] = []

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not info.function_tools:  # the server's sampling request: no tools
            sampled.append(messages)
            return ModelResponse(parts=[TextPart('short')])
        returned = [p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if _is_return(p)]  # type: ignore[union-attr]
        if returned:
            return ModelResponse(parts=[TextPart(str(returned))])
        return ModelResponse(parts=[ToolCallPart('summarize', {'text': 'a very long text'})])

    agent = Agent(FunctionModel(respond, model_name='writer'), toolsets=[fastmcp_stdio()])
    async with agent:
        result = await agent.run('summarize')
    assert result.output == "['summary: short (by writer)']"
    assert [len(messages) for messages in sampled] == [1]
    request = sampled[0][0]
    assert isinstance(request, ModelRequest)
    assert [(type(p).__name__, p.content) for p in request.parts] == [  # type: ignore[union-attr]
        ('SystemPromptPart', 'Summarize in a few words.'),
        ('UserPromptPart', 'a very long text'),
    ]


def _is_return(part: object) -> bool:
    return isinstance(part, ToolReturnPart)


async def test_a_sampling_model_answers_instead_of_the_runs_model() -> None:
    sampler = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart('tiny')]), model_name='sampler')
    agent = Agent(calling(('summarize', {'text': 'words'})), toolsets=[fastmcp_stdio(sampling_model=sampler)])
    async with agent:
        result = await agent.run('summarize')
    assert result.output == "done: ['summary: tiny (by sampler)']"


async def test_server_instructions_are_offered_when_asked() -> None:
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    async with fastmcp_stdio(include_instructions=True) as server:
        assert await server.get_instructions(ctx) == 'Numbers are added with `add`.'
    async with fastmcp_stdio() as server:
        assert await server.get_instructions(ctx) is None


async def test_two_servers_with_the_same_tools_clash_without_a_prefix() -> None:
    agent = Agent(TestModel(call_tools=[]), toolsets=[fastmcp_stdio(), fastmcp_stdio(id='second')])
    async with agent:
        with pytest.raises(UserError, match='Set the `tool_prefix` attribute to avoid name conflicts'):
            await agent.run('hi')


async def test_mcp_server_stdio_accepts_an_environment() -> None:
    server = StdioTransport(
        'python3', ['-c', 'import os, sys; sys.exit(0 if os.environ["MARK"] == "1" else 5)'], env={'MARK': '1'}
    )
    with pytest.raises(MCPError, match='closed the connection during the MCP handshake'):
        async with server:
            pass


async def test_set_mcp_sampling_model_sets_the_model_of_every_server() -> None:
    first, second = fastmcp_stdio(), fastmcp_stdio(tool_prefix='b')
    agent = Agent(TestModel(model_name='main'), toolsets=[first, second])
    agent.set_mcp_sampling_model()
    assert [server.sampling_model.model_name for server in (first, second) if server.sampling_model] == ['main'] * 2
    sampler = TestModel(model_name='sampler')
    agent.set_mcp_sampling_model(sampler)
    assert first.sampling_model is sampler
    assert second.sampling_model is sampler
    with pytest.raises(UserError, match='No sampling model was given and the agent has no model'):
        Agent(toolsets=[first]).set_mcp_sampling_model()
