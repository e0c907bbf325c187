"""Protocol corner cases against a hand-written JSON-RPC server over stdio (`raw_server.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from edgewise.agent.exceptions import MCPError
from edgewise.agent.mcp import MCPServerStdio

pytestmark = pytest.mark.anyio

RAW = Path(__file__).with_name('raw_server.py')


def raw(mode: str) -> MCPServerStdio:
    return MCPServerStdio(sys.executable, [str(RAW), mode], timeout=30)


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
