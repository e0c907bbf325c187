"""The MCP project's reference "everything" server (Node, from the npm registry) over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.mcp import MCPServerStdio
from edgewise.agent.messages import (
    BinaryImage,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def everything(script: Path, **kwargs: Any) -> MCPServerStdio:
    return MCPServerStdio('node', [str(script), 'stdio'], timeout=30, **kwargs)


async def test_tools_of_the_reference_server(everything_script: Path) -> None:
    async with everything(everything_script) as server:
        assert server.server_info.name == 'mcp-servers/everything'
        names = {tool.name for tool in await server.list_tools()}
        assert {'echo', 'get-sum', 'get-tiny-image', 'get-structured-content'} <= names
        assert await server.direct_call_tool('echo', {'message': 'hi'}) == 'Echo: hi'
        assert await server.direct_call_tool('get-sum', {'a': 2, 'b': 3}) == 'The sum of 2 and 3 is 5.'
        image = await server.direct_call_tool('get-tiny-image', {})
        weather = await server.direct_call_tool('get-structured-content', {'location': 'New York'})
    assert isinstance(image, list)
    assert len(image) == 3
    assert isinstance(image[1], BinaryImage)
    assert image[1].media_type == 'image/png'
    assert image[1].data.startswith(b'\x89PNG')
    assert isinstance(weather, dict)
    assert set(weather) >= {'temperature', 'conditions'}


async def test_an_agent_answers_the_reference_servers_sampling_request(everything_script: Path) -> None:
    sampled: list[str] = []

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not info.function_tools:  # the server's sampling request
            first = messages[0]
            assert isinstance(first, ModelRequest)
            sampled.append(str(first.parts[-1].content))
            return ModelResponse(parts=[TextPart('a sampled answer')])
        returned = [
            p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
        ]
        if returned:
            return ModelResponse(parts=[TextPart(str(returned))])
        return ModelResponse(parts=[ToolCallPart('trigger-sampling-request', {'prompt': 'Say hi', 'maxTokens': 20})])

    agent = Agent(FunctionModel(respond, model_name='sampler'), toolsets=[everything(everything_script)])
    async with agent:
        result = await agent.run('sample')
    assert len(sampled) == 1
    assert 'Say hi' in sampled[0]
    assert 'a sampled answer' in result.output
