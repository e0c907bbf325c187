"""The MCP project's reference "everything" server (Node, from the npm registry) over stdio, streamable HTTP and SSE."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.mcp import (
    EmbeddedResource,
    MCPServerStdio,
    PromptArgument,
    PromptMessage,
    SSETransport,
    StdioTransport,
    StreamableHttpTransport,
)
from edgewise.agent.messages import (
    BinaryContent,
    BinaryImage,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio

# Under trio, the MCP SDK's HTTP transports drop httpx's response iterators without closing them (see test_http.py).
HTTP_WARNINGS = pytest.mark.filterwarnings(
    'ignore:Async generator .* was garbage collected:ResourceWarning',
    'ignore:Exception ignored in. <async_generator:pytest.PytestUnraisableExceptionWarning',
)


def everything(script: Path, **kwargs: Any) -> MCPServerStdio:
    return StdioTransport('node', [str(script), 'stdio'], timeout=30, **kwargs)


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
            sampled.append(str(first.parts[-1].content))  # type: ignore[union-attr]
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


async def test_resources_and_prompts_of_the_reference_server(everything_script: Path) -> None:
    async with everything(everything_script) as server:
        assert server.capabilities.resources
        assert server.capabilities.prompts
        resources = await server.list_resources()
        templates = await server.list_resource_templates()
        prompts = {prompt.name: prompt for prompt in await server.list_prompts()}
        text = await server.read_resource('demo://resource/dynamic/text/1')
        blob = await server.read_resource('demo://resource/dynamic/blob/1')
        weather = await server.get_prompt('args-prompt', {'city': 'Oslo'})
        embedded = await server.get_prompt('resource-prompt', {'resourceType': 'Text', 'resourceId': '2'})
    assert resources
    assert {t.uri_template for t in templates} >= {
        'demo://resource/dynamic/text/{resourceId}',
        'demo://resource/dynamic/blob/{resourceId}',
    }
    assert prompts['args-prompt'].arguments == [
        PromptArgument(name='city', description='Name of the city', required=True),
        PromptArgument(name='state', required=False),
    ]
    assert isinstance(text, str)
    assert text.startswith('Resource 1: This is a plaintext resource')
    assert isinstance(blob, BinaryContent)
    assert weather.messages == [PromptMessage(role='user', content=TextContent("What's weather in Oslo?"))]
    second = embedded.messages[1].content
    assert isinstance(second, EmbeddedResource)
    assert (second.uri, second.mime_type) == ('demo://resource/dynamic/text/2', 'text/plain')
    assert isinstance(second.content, str)
    assert second.content.startswith('Resource 2: This is a plaintext resource')


async def test_resource_links_in_a_tool_result_are_read(everything_script: Path) -> None:
    async with everything(everything_script) as server:
        result = await server.direct_call_tool('get-resource-links', {'count': 2})
    assert isinstance(result, list)
    intro, first, second = result
    assert intro == 'Here are 2 resource links to resources available in this server:'
    assert isinstance(first, BinaryContent)  # resource 1: a blob
    assert isinstance(second, str)
    assert second.startswith('Resource 2: This is a plaintext resource')


@HTTP_WARNINGS
async def test_the_reference_server_over_streamable_http(everything_http_url: str) -> None:
    server = StreamableHttpTransport(everything_http_url, timeout=30, tool_prefix='everything')
    agent = Agent(TestModel(call_tools=['everything_echo']), toolsets=[server])
    async with agent:
        assert server.server_info.name == 'mcp-servers/everything'
        result = await agent.run('echo')
        prompt = await server.get_prompt('simple-prompt')
    returns = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts]
    assert [(p.tool_name, p.content) for p in returns if isinstance(p, ToolReturnPart)] == [
        ('everything_echo', 'Echo: a')
    ]
    assert prompt.messages == [
        PromptMessage(role='user', content=TextContent('This is a simple prompt without arguments.'))
    ]


@HTTP_WARNINGS
async def test_the_reference_server_over_sse(everything_sse_url: str) -> None:
    async with SSETransport(everything_sse_url, timeout=30) as server:
        assert server.server_info.name == 'mcp-servers/everything'
        assert await server.direct_call_tool('get-sum', {'a': 20, 'b': 22}) == 'The sum of 20 and 22 is 42.'
        image = await server.direct_call_tool('get-tiny-image', {})
        resource = await server.read_resource('demo://resource/dynamic/text/3')
    assert isinstance(image, list)
    assert isinstance(image[1], BinaryImage)
    assert isinstance(resource, str)
    assert resource.startswith('Resource 3: This is a plaintext resource')
