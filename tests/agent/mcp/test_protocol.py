"""Protocol corner cases against a hand-written JSON-RPC server over stdio (`raw_server.py`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from edgewise.agent.exceptions import MCPError
from edgewise.agent.mcp import MCPServerStdio, StdioTransport
from edgewise.agent.mcp._connection import MCPConnectionClosed, MCPSession

pytestmark = pytest.mark.anyio

RAW = Path(__file__).with_name('raw_server.py')


def raw(mode: str) -> MCPServerStdio:
    return StdioTransport(sys.executable, [str(RAW), mode], timeout=30)


async def test_noise_string_ids_and_the_servers_requests() -> None:
    async with raw('quirks') as server:
        tools = [tool.name for tool in await server.list_tools()]
        replies = await server.direct_call_tool('replies', {})
    assert tools == ['first', 'second']  # both pages
    assert replies == [
        {'jsonrpc': '2.0', 'id': 'srv-1', 'result': {}},
        {
            'jsonrpc': '2.0',
            'id': 'srv-2',
            'error': {'code': -32601, 'message': "the client does not handle 'roots/list'"},
        },
    ]


async def test_a_refused_handshake_is_an_error() -> None:
    with pytest.raises(MCPError, match='refused the MCP handshake: go away') as info:
        await raw('refuse').list_tools()
    assert info.value.code == -32000


async def test_an_unknown_protocol_version_is_an_error() -> None:
    with pytest.raises(MCPError, match='speaks MCP protocol version 1999-01-01, which the client does not support'):
        async with raw('old'):
            pass


async def test_an_error_answer_to_tools_list_is_an_error() -> None:
    async with raw('list-error') as server:
        with pytest.raises(MCPError, match='answered `tools/list` with an error: no list today'):
            await server.list_tools()


class _ScriptedChannel:
    """A channel whose server sends the given messages, then closes."""

    def __init__(self, messages: list[dict[str, object]]) -> None:
        self._messages = list(messages)

    async def send(self, message: dict[str, object]) -> None:
        pass

    async def receive(self) -> dict[str, object]:
        await anyio.lowlevel.checkpoint()
        if not self._messages:
            raise MCPConnectionClosed('the scripted server is done')
        return self._messages.pop(0)


async def test_notifications_are_handled_in_the_order_they_came() -> None:
    # Each handler waits longer the earlier its notification came: handled concurrently, they would end in
    # reverse order; handled in turn, they end in order.
    count = 5
    handled: list[int] = []
    all_handled = anyio.Event()

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        for _ in range(count - params['n']):
            await anyio.lowlevel.checkpoint()
        handled.append(params['n'])
        if len(handled) == count:
            all_handled.set()

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError('no requests here')  # pragma: no cover

    messages: list[dict[str, object]] = [
        {'jsonrpc': '2.0', 'method': 'notifications/message', 'params': {'n': n}} for n in range(count)
    ]
    session = MCPSession(_ScriptedChannel(messages), on_request=on_request, on_notification=on_notification)
    async with anyio.create_task_group() as tg:
        session.start(tg)
        await all_handled.wait()
        tg.cancel_scope.cancel()
    assert handled == list(range(count))
