"""`MCPToolset`: the transport inferred from its argument, pydantic-ai 2.x's defaults, `load_mcp_toolsets`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent.mcp import (
    MCPServerSSE,
    MCPServerStdio,
    MCPServerStreamableHTTP,
    MCPToolset,
    load_mcp_toolsets,
)
from edgewise.agent.messages import ModelRequest, ToolReturnPart
from edgewise.agent.models.test import TestModel
from edgewise.agent.toolsets import PrefixedToolset
from edgewise.agent.usage import RunUsage

from .conftest import fastmcp_stdio

pytestmark = [
    pytest.mark.anyio,
    # As in test_http.py: the MCP SDK's HTTP transports leave httpx's response iterators to the collector.
    pytest.mark.filterwarnings('ignore:Async generator .* was garbage collected:ResourceWarning'),
    pytest.mark.filterwarnings('ignore:Exception ignored in. <async_generator:pytest.PytestUnraisableExceptionWarning'),
]


def test_the_transport_is_inferred_from_the_argument(tmp_path: Path) -> None:
    assert isinstance(MCPToolset('http://127.0.0.1:1/mcp').transport, MCPServerStreamableHTTP)
    assert isinstance(MCPToolset('https://example.com/sse/').transport, MCPServerSSE)
    script = MCPToolset(tmp_path / 'server.py').transport
    assert isinstance(script, MCPServerStdio)
    assert (script.command, list(script.args)) == (sys.executable, [str(tmp_path / 'server.py')])
    node = MCPToolset('server.js').transport
    assert isinstance(node, MCPServerStdio)
    assert (node.command, list(node.args)) == ('node', ['server.js'])
    given = fastmcp_stdio()
    assert MCPToolset(given).transport is given


def test_2x_defaults_and_repr() -> None:
    toolset = MCPToolset('http://127.0.0.1:1/mcp', id='web')
    assert (toolset.max_retries, toolset.init_timeout, toolset.read_timeout) == (None, 5, 300)
    assert repr(toolset) == "MCPToolset(StreamableHttpTransport(url='http://127.0.0.1:1/mcp'), id='web')"
    assert toolset == MCPToolset('http://127.0.0.1:1/mcp', id='web')
    assert toolset != MCPToolset('http://127.0.0.1:1/sse', id='web')


def test_what_cannot_be_a_transport_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r"`MCPToolset` cannot tell how to reach the MCP server 'server\.txt'"):
        MCPToolset('server.txt')
    with pytest.raises(UserError, match=r'`headers`, `http_client` and `auth` apply to an MCP server given by its URL'):
        MCPToolset('server.py', headers={'a': 'b'})


async def test_a_toolset_over_a_given_transport_in_an_agent_run_retries_as_the_agent() -> None:
    toolset = MCPToolset(fastmcp_stdio(), tool_prefix='local', init_timeout=30)
    agent = Agent(TestModel(call_tools=['local_add']), toolsets=[toolset], retries=4)
    async with agent:
        result = await agent.run('add')
        tools = await toolset.get_tools(RunContext(deps=None, model=TestModel(), usage=RunUsage(), max_retries=4))
    parts = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts]
    assert [(p.tool_name, p.content) for p in parts if isinstance(p, ToolReturnPart)] == [('local_add', 0)]
    assert tools['local_add'].max_retries == 4


async def test_a_toolset_by_url(streamable_http_url: str) -> None:
    async with MCPToolset(streamable_http_url, init_timeout=30, headers={'X-Test': '1'}) as toolset:
        assert await toolset.direct_call_tool('add', {'a': 20, 'b': 22}) == 42


async def test_load_mcp_toolsets_prefixes_each_server(tmp_path: Path) -> None:
    config = tmp_path / 'mcp.json'
    config.write_text(
        json.dumps(
            {
                'mcpServers': {
                    'local': {'command': sys.executable, 'args': ['server.py', 'stdio']},
                    'web': {'url': 'http://127.0.0.1:1/sse', 'headers': {'X-Test': '1'}},
                }
            }
        )
    )
    local, web = load_mcp_toolsets(config)
    assert isinstance(local, PrefixedToolset)
    assert isinstance(web, PrefixedToolset)
    assert local.prefix == 'local'
    assert isinstance(local.wrapped, MCPToolset)
    assert local.wrapped.id == 'local'
    assert local.wrapped.tool_prefix is None
    assert isinstance(web.wrapped, MCPToolset)
    assert isinstance(web.wrapped.transport, MCPServerSSE)


def test_the_sdk_streams_are_the_transports() -> None:
    transport = fastmcp_stdio()
    opened = MCPToolset(transport).client_streams()
    assert type(opened) is type(transport.client_streams())


def test_the_1x_classes_warn_naming_mcp_toolset_and_their_transport() -> None:
    with pytest.warns(
        DeprecationWarning, match=r'`MCPServerStdio` is deprecated: use `MCPToolset`.*`StdioTransport\(\.\.\.\)`'
    ):
        stdio = MCPServerStdio('server', [])
    with pytest.warns(DeprecationWarning, match=r'`MCPServerStreamableHTTP` is deprecated.*`StreamableHttpTransport'):
        http = MCPServerStreamableHTTP('http://127.0.0.1:1/mcp')
    with pytest.warns(DeprecationWarning, match=r'`MCPServerSSE` is deprecated.*`SSETransport'):
        sse = MCPServerSSE('http://127.0.0.1:1/sse')
    assert (stdio.command, http.url, sse.url) == ('server', 'http://127.0.0.1:1/mcp', 'http://127.0.0.1:1/sse')
    assert MCPToolset(stdio).transport is stdio
