"""Every MCP transport against the real FastMCP server, on asyncio and trio, many times over: concurrent tool
calls from several tasks on one connection, an agent run, and a call cancelled in the middle.

A scenario that hangs fails at its bound (`fail_after`) instead of hanging the suite; the bound is far above
what a run takes on a busy machine.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import MCPError
from edgewise.agent.mcp import MCPServer, SSETransport, StreamableHttpTransport
from edgewise.agent.models.test import TestModel

from .conftest import fastmcp_stdio

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings('ignore:Async generator .* was garbage collected:ResourceWarning'),
    pytest.mark.filterwarnings('ignore:Exception ignored in. <async_generator:pytest.PytestUnraisableExceptionWarning'),
]

BOUND = 60.0
"""Seconds one scenario may take before it counts as hung."""
ROUNDS = 10


async def _scenario(server: MCPServer) -> None:
    results: dict[int, object] = {}

    async def call(i: int) -> None:
        async with server:
            results[i] = await server.direct_call_tool('add', {'a': i, 'b': 1})

    async with server:
        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(call, i)
        assert results == {0: 1, 1: 2, 2: 3}
        with anyio.move_on_after(0.2) as halfway:  # cancelled in the middle of the call
            await server.direct_call_tool('nap', {'seconds': 30})
        assert halfway.cancelled_caught
        assert await server.direct_call_tool('greet', {'name': 'again'}) == 'Hello, again!'

    async def nap() -> None:
        async with server:
            await server.direct_call_tool('nap', {'seconds': 30})

    with anyio.move_on_after(0.3) as naps:  # every task in the server is cancelled, the one that opened it too
        async with anyio.create_task_group() as tg:
            tg.start_soon(nap)
            tg.start_soon(nap)
    assert naps.cancelled_caught
    assert not server.is_running
    agent = Agent(TestModel(call_tools=['greet']), toolsets=[server])
    result = await agent.run('greet')
    assert result.output == '{"greet":"Hello, a!"}'


@pytest.mark.parametrize('transport', ['stdio', 'sse', 'streamable-http'])
async def test_every_transport_serves_concurrent_calls_and_cancellation_again_and_again(
    transport: str, request: pytest.FixtureRequest
) -> None:
    make: Callable[[], MCPServer]
    if transport == 'stdio':
        make = fastmcp_stdio
    elif transport == 'sse':
        url = request.getfixturevalue('sse_url')
        make = lambda: SSETransport(url, timeout=30)  # noqa: E731
    else:
        url = request.getfixturevalue('streamable_http_url')
        make = lambda: StreamableHttpTransport(url, timeout=30)  # noqa: E731
    for _ in range(ROUNDS):
        with anyio.fail_after(BOUND):
            await _scenario(make())


async def test_an_http_error_answer_closes_the_connection_with_an_error_naming_the_server(
    streamable_http_url: str,
) -> None:
    url = streamable_http_url.replace('/mcp', '/not-mcp')
    with pytest.raises(MCPError, match=r'closed the connection during the MCP handshake: the server answered HTTP 404'):
        async with StreamableHttpTransport(url, timeout=30):
            pass
