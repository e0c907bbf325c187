"""Runs with the `MCP` capability against the FastMCP test server on 127.0.0.1 (streamable HTTP and SSE)."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent
from edgewise.agent.capabilities import MCP
from edgewise.agent.mcp import MCPServer
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.native_tools import MCPServerTool
from edgewise.agent.profiles import ModelProfile

pytestmark = [
    pytest.mark.anyio,
    # As in test_http.py: the MCP SDK's HTTP transports leave httpx response iterators to the collector on trio.
    pytest.mark.filterwarnings('ignore:Async generator .* was garbage collected:ResourceWarning'),
    pytest.mark.filterwarnings('ignore:Exception ignored in. <async_generator:pytest.PytestUnraisableExceptionWarning'),
]

NO_NATIVE_TOOLS = ModelProfile(supported_native_tools=frozenset())


def _returns(messages: list[ModelMessage]) -> dict[str, object]:
    return {p.tool_name: p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}


async def test_a_model_without_native_mcp_calls_the_server_from_here(streamable_http_url: str) -> None:
    model = TestModel(call_tools=['add'], profile=NO_NATIVE_TOOLS)
    agent = Agent(model, capabilities=[MCP(streamable_http_url, native=True, allowed_tools=['add', 'greet'])])
    result = await agent.run('add')
    assert _returns(result.all_messages()) == {'add': 0}
    params = model.last_model_request_parameters
    assert params is not None
    assert params.native_tools == []
    assert sorted(t.name for t in params.function_tools) == ['add', 'greet']  # only the allowed ones


async def test_an_sse_url_is_reached_over_sse(sse_url: str) -> None:
    agent = Agent(TestModel(call_tools=['greet'], profile=NO_NATIVE_TOOLS), capabilities=[MCP(sse_url, native=False)])
    result = await agent.run('greet')
    assert _returns(result.all_messages()) == {'greet': 'Hello, a!'}


async def test_a_model_with_native_mcp_is_sent_the_server_and_not_the_local_tools(streamable_http_url: str) -> None:
    seen: list[AgentInfo] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart('done')])

    capability: MCP[None] = MCP(streamable_http_url, native=True, id='test-server')
    await Agent(FunctionModel(answer), capabilities=[capability]).run('hi')
    [info] = seen
    assert info.function_tools == []
    assert info.model_request_parameters.native_tools == [MCPServerTool(id='test-server', url=streamable_http_url)]


async def test_entering_the_agent_keeps_the_connection_open_across_runs(streamable_http_url: str) -> None:
    capability: MCP[None] = MCP(streamable_http_url, native=False)
    server = capability.local
    assert isinstance(server, MCPServer)
    agent = Agent(TestModel(call_tools=['add']), capabilities=[capability])
    async with agent:
        assert server.is_running
        for _ in range(2):
            assert _returns((await agent.run('add')).all_messages()) == {'add': 0}
        assert server.is_running
    assert not server.is_running
