"""`MCP`: a remote MCP server as a capability, native where the model can call it, connected from here otherwise.

These tests build the capability and look at what it gives; runs against a real server are in
tests/agent/mcp/test_mcp_capability_runs.py.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import CAPABILITY_TYPES, MCP
from edgewise.agent.exceptions import UserError
from edgewise.agent.mcp import (
    MCPServerSSE,
    MCPServerStreamableHTTP,
    MCPToolset,
    StdioTransport,
)
from edgewise.agent.models.test import TestModel
from edgewise.agent.native_tools import MCPServerTool
from edgewise.agent.toolsets import FilteredToolset, FunctionToolset, PreparedToolset
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.filterwarnings('error')


def _ctx() -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage())


def test_the_native_tool_carries_the_server_settings() -> None:
    capability: MCP[None] = MCP(
        'https://mcp.example.com/api', native=True, authorization_token='Bearer t', headers={'X-A': '1'},
        allowed_tools=['search'], description='docs search',
    )  # fmt: skip
    expected = MCPServerTool(
        id='mcp.example.com-api', url='https://mcp.example.com/api', authorization_token='Bearer t',
        headers={'X-A': '1'}, allowed_tools=['search'], description='docs search',
    )  # fmt: skip
    assert capability.get_native_tools() == [expected]


@pytest.mark.parametrize(
    ('url', 'expected'),
    [
        ('https://mcp.example.com/api', 'mcp.example.com-api'),
        ('https://server1.example.com/sse/', 'server1.example.com-sse'),
        ('https://mcp.example.com', 'mcp.example.com'),
        ('x-openai-connector:deepwiki', 'x-openai-connector-deepwiki'),
        ('local-mcp-server', 'local-mcp-server'),
    ],
)
def test_the_id_comes_from_the_url(url: str, expected: str) -> None:
    assert MCP(url, native=True, local=False).id == expected


def test_an_explicit_id_or_the_native_tool_id_wins() -> None:
    assert MCP('https://a.example/x', native=True, id='mine').id == 'mine'
    native = MCPServerTool(id='theirs', url='https://a.example/x')
    assert MCP('https://a.example/x', native=native).id == 'theirs'


@pytest.mark.parametrize(
    ('url', 'server_type'),
    [('https://mcp.example.com/api', MCPServerStreamableHTTP), ('https://mcp.example.com/sse', MCPServerSSE)],
)
def test_the_local_connection_follows_the_url(url: str, server_type: type[Any]) -> None:
    capability: MCP[None] = MCP(url, native=True, authorization_token='Bearer t', headers={'X-A': '1'})
    local = capability.local
    assert isinstance(local, MCPToolset)
    assert isinstance(local.transport, server_type)
    assert isinstance(local.transport, MCPServerSSE | MCPServerStreamableHTTP)
    assert local.transport.url == url
    assert local.transport.headers == {'X-A': '1', 'Authorization': 'Bearer t'}
    assert local.include_instructions is True


@pytest.mark.anyio
async def test_the_local_tools_stand_in_for_the_native_tool() -> None:
    def lookup() -> str:
        return 'found'  # pragma: no cover - listed, not called

    native = MCPServerTool(id='custom', url='https://a.example/x')
    explicit: MCP[None] = MCP('https://a.example/x', native=native, local=lookup)
    toolset = explicit.get_toolset()
    assert isinstance(toolset, PreparedToolset)
    assert (await toolset.get_tools(_ctx()))['lookup'].tool_def.unless_native == 'mcp_server:custom'

    async def per_request(ctx: RunContext[None]) -> MCPServerTool:
        return MCPServerTool(id='dynamic', url='https://a.example/x')  # pragma: no cover - not called here

    dynamic: MCP[None] = MCP('https://a.example/x', id='dynamic', native=per_request, local=lookup)
    toolset = dynamic.get_toolset()
    assert toolset is not None
    assert (await toolset.get_tools(_ctx()))['lookup'].tool_def.unless_native == 'mcp_server:dynamic'


@pytest.mark.anyio
async def test_allowed_tools_filter_the_local_tools_too() -> None:
    local: FunctionToolset[None] = FunctionToolset()

    @local.tool_plain
    def search() -> str:
        return 'x'  # pragma: no cover - listed, not called

    @local.tool_plain
    def delete() -> str:
        return 'x'  # pragma: no cover - listed, not called

    capability: MCP[None] = MCP('https://a.example/x', native=True, local=local, allowed_tools=['search'])
    toolset = capability.get_toolset()
    assert isinstance(toolset, FilteredToolset)
    assert list(await toolset.get_tools(_ctx())) == ['search']


def test_native_false_connects_from_here_only_and_local_false_never_does() -> None:
    local_only: MCP[None] = MCP('https://a.example/x', native=False)
    assert local_only.get_native_tools() == []
    assert isinstance(local_only.get_toolset(), MCPToolset)
    native_only: MCP[None] = MCP('https://a.example/x', native=True, local=False)
    assert native_only.get_toolset() is None
    with pytest.raises(UserError, match='both `native` and `local` cannot be False'):
        MCP('https://a.example/x', native=False, local=False)


def test_local_takes_another_url_or_a_toolset_of_your_own() -> None:
    other: MCP[None] = MCP('https://a.example/x', native=True, local='https://b.example/mcp')
    assert isinstance(other.local, MCPToolset)
    assert isinstance(other.local.transport, MCPServerStreamableHTTP)
    assert other.local.transport.url == 'https://b.example/mcp'
    same = MCP('https://a.example/x', native=True, local=True).local
    assert isinstance(same, MCPToolset)
    assert isinstance(same.transport, MCPServerStreamableHTTP)
    assert same.transport.url == 'https://a.example/x'
    stdio = StdioTransport('server', [])
    assert MCP('https://a.example/x', native=True, local=stdio).local is stdio


def test_a_local_that_is_no_url_or_toolset_is_refused() -> None:
    with pytest.raises(UserError, match=r"MCP\(local='./server.py'\) must be an `http\(s\)://` URL"):
        MCP('https://a.example/x', native=True, local='./server.py')
    with pytest.raises(UserError, match=r'MCP\(local=3\): give a URL'):
        MCP('https://a.example/x', native=True, local=3)  # type: ignore[arg-type]


def test_a_url_only_the_provider_reaches_has_no_local_fallback() -> None:
    assert MCP('x-openai-connector:deepwiki', native=True).get_toolset() is None


def test_leaving_out_native_connects_from_here_as_in_pydantic_ai_2() -> None:
    capability: MCP[None] = MCP('https://a.example/x')
    assert capability.get_native_tools() == []
    assert isinstance(capability.local, MCPToolset)
    assert capability.local.max_retries is None  # the agent's tool retries, 2.x's default
    assert MCP.from_spec('https://a.example/x').get_native_tools() == []


@pytest.mark.parametrize(
    'make',
    [
        lambda: MCP('https://a.example/x'),
        lambda: MCP('https://a.example/x', native=True),
        lambda: MCP('https://a.example/x', native=True, local=True),
        lambda: MCP('https://a.example/x', native=True, local='https://b.example/mcp'),
    ],
)
def test_without_the_mcp_extra_a_local_connection_is_refused(monkeypatch: pytest.MonkeyPatch, make: Any) -> None:
    monkeypatch.setitem(sys.modules, 'edgewise.agent.mcp', None)  # importing it now raises ImportError
    with pytest.raises(UserError, match=r'^MCP\(\.\.\.\) connects to the server from here with the MCP SDK, an extra'):
        make()


def test_without_the_mcp_extra_native_only_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, 'edgewise.agent.mcp', None)
    capability: MCP[None] = MCP('https://a.example/x', native=True, local=False)
    assert capability.get_toolset() is None
    assert len(capability.get_native_tools()) == 1


def test_the_repr_hides_the_token_and_headers() -> None:
    shown = repr(MCP('https://a.example/x', native=True, authorization_token='Bearer secret', headers={'K': 'v'}))
    assert 'secret' not in shown
    assert "'v'" not in shown
    assert "url='https://a.example/x'" in shown


def test_mcp_from_a_spec() -> None:
    assert CAPABILITY_TYPES['MCP'] is MCP
    spec = {'model': 'test', 'capabilities': [{'MCP': {'url': 'https://a.example/x', 'allowed_tools': ['s']}}]}
    agent = Agent.from_spec(spec)
    [capability] = agent.root_capability.capabilities
    assert isinstance(capability, MCP)
    assert capability.allowed_tools == ['s']
    assert capability.native is False  # a spec connects from here by default, as in pydantic-ai 2.x


def test_without_a_url_the_native_tool_given_says_where_the_server_is() -> None:
    native = MCPServerTool(id='wiki', url='https://mcp.example/mcp')
    capability: MCP[None] = MCP(native=native, local=False)
    assert (capability.url, capability.id) == (None, 'wiki')
    assert capability.get_native_tools() == [native]


def test_without_a_url_a_toolset_given_as_local_is_used() -> None:
    toolset = FunctionToolset[None]()
    capability: MCP[None] = MCP(local=toolset)
    assert (capability.url, capability.id, capability.local) == (None, None, toolset)
    assert capability.get_native_tools() == []


def test_without_a_url_there_is_no_local_connection_to_make() -> None:
    capability: MCP[None] = MCP(native=MCPServerTool(id='wiki', url='https://mcp.example/mcp'))
    assert capability.local is None


@pytest.mark.parametrize(
    ('make', 'message'),
    [
        (lambda: MCP(native=True, local=False), r'^MCP\(native=True\) requires `url=`: the provider needs'),
        (lambda: MCP(local=True), r'^MCP\(local=True\) requires `url=` to connect to'),
    ],
)
def test_without_a_url_native_true_or_local_true_is_refused(make: Any, message: str) -> None:
    with pytest.raises(UserError, match=message):
        make()
