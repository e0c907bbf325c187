"""`MCPServerStreamableHTTP` and `MCPServerSSE` against the FastMCP test server on 127.0.0.1."""

from __future__ import annotations

import socket

import httpx
import pytest

from edgewise.agent import Agent, ModelRetry
from edgewise.agent.exceptions import MCPError, UserError
from edgewise.agent.mcp import (
    SSETransport,
    StreamableHttpTransport,
)
from edgewise.agent.messages import ModelRequest, ToolReturnPart
from edgewise.agent.models.test import TestModel

pytestmark = [
    pytest.mark.anyio,
    # Under trio, the MCP SDK's HTTP transports drop httpx's response iterators without closing them; trio
    # reports each as a ResourceWarning when it is collected (asyncio finalizes them quietly).
    pytest.mark.filterwarnings('ignore:Async generator .* was garbage collected:ResourceWarning'),
    pytest.mark.filterwarnings('ignore:Exception ignored in. <async_generator:pytest.PytestUnraisableExceptionWarning'),
]


async def test_streamable_http_lists_and_calls_tools(streamable_http_url: str) -> None:
    async with StreamableHttpTransport(streamable_http_url, timeout=30) as server:
        assert server.server_info.name == 'edgewise-test-server'
        assert 'add' in [tool.name for tool in await server.list_tools()]
        assert await server.direct_call_tool('add', {'a': 20, 'b': 22}) == 42
        assert await server.direct_call_tool('weather', {'city': 'Oslo'}) == {'city': 'Oslo', 'celsius': 21.5}
        with pytest.raises(ModelRetry, match='Error executing tool fail: over http'):
            await server.direct_call_tool('fail', {'reason': 'over http'})


async def test_streamable_http_with_an_http_client_in_an_agent_run(streamable_http_url: str) -> None:
    async with httpx.AsyncClient(timeout=30) as client:
        server = StreamableHttpTransport(streamable_http_url, http_client=client, tool_prefix='web', timeout=30)
        agent = Agent(TestModel(call_tools=['web_greet']), toolsets=[server])
        async with agent:
            result = await agent.run('greet')
    parts = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts]
    assert [(p.tool_name, p.content) for p in parts if isinstance(p, ToolReturnPart)] == [('web_greet', 'Hello, a!')]


async def test_sse_lists_and_calls_tools(sse_url: str) -> None:
    async with SSETransport(sse_url, timeout=30, headers={'X-Test': '1'}) as server:
        assert 'greet' in [tool.name for tool in await server.list_tools()]
        assert await server.direct_call_tool('greet', {'name': 'SSE'}) == 'Hello, SSE!'


async def test_a_server_that_is_not_there_is_an_error_naming_it() -> None:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port any more: the connection is refused.
    server = StreamableHttpTransport(f'http://127.0.0.1:{port}/mcp', timeout=10)
    with pytest.raises(MCPError, match=rf"MCP server StreamableHttpTransport\(url='http://127.0.0.1:{port}/mcp'\)"):
        async with server:
            pass


def test_headers_and_http_client_exclude_each_other() -> None:
    with pytest.raises(UserError, match='`http_client` and `headers` exclude each other'):
        SSETransport('http://127.0.0.1:1/sse', headers={'a': 'b'}, http_client=httpx.AsyncClient())


def test_repr_leaves_the_headers_out() -> None:
    server = StreamableHttpTransport('http://127.0.0.1:1/mcp', headers={'Authorization': 'Bearer secret'}, id='web')
    assert repr(server) == "StreamableHttpTransport(url='http://127.0.0.1:1/mcp', id='web')"
