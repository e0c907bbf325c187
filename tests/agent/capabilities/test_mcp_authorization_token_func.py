"""`MCP(authorization_token=<function>)` and `headers=<function>` (pydantic-ai 2.68's `MCPAuthorizationTokenFunc`):
each run connects as its own user, on the native side (what Anthropic's API is sent, over a real local server) and
on the local side (what the MCP server is sent, a real local server too)."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import MCP, MCPAuthorizationTokenFunc
from edgewise.agent.exceptions import MCPError
from edgewise.agent.mcp import MCPToolset
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.usage import RunUsage

from ..models.conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio


def _answer() -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': [{'type': 'text', 'text': 'ok'}],
        'stop_reason': 'end_turn',
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


def token_of(ctx: RunContext[str]) -> str | None:
    return None if ctx.deps == 'nobody' else f'Bearer {ctx.deps}'


async def headers_of(ctx: RunContext[str]) -> dict[str, str]:
    return {'X-User': ctx.deps}


async def test_each_run_sends_the_provider_its_own_token(local_server: LocalServer) -> None:
    local_server.script(*(Reply(200, _answer()) for _ in range(3)))
    provider = AnthropicProvider(api_key='sk-test', base_url=local_server.url.removesuffix('/v1'), max_retries=0)
    func: MCPAuthorizationTokenFunc[str] = token_of
    capability: MCP[str] = MCP(
        'https://mcp.example.com/api', native=True, local=False, authorization_token=func, headers=headers_of
    )
    async with provider:
        agent = Agent(AnthropicModel('claude-sonnet-4-5', provider=provider), deps_type=str, capabilities=[capability])
        for user in ('alice', 'bob', 'nobody'):
            assert (await agent.run('hi', deps=user)).output == 'ok'
    servers = [received['body']['mcp_servers'][0] for received in local_server.received]
    assert [server.get('authorization_token') for server in servers] == ['Bearer alice', 'Bearer bob', None]
    assert capability.authorization_token is func  # the capability given keeps the function
    assert repr(capability).count('***') == 2


async def test_each_run_connects_to_the_server_with_its_own_token(local_server: LocalServer) -> None:
    capability: MCP[str] = MCP(local_server.url, authorization_token=token_of, headers={'X-App': 'demo'})
    unresolved = capability.get_toolset()
    assert unresolved is not None  # built without the token, which only a run gives
    ctx: RunContext[str] = RunContext(deps='carol', model=TestModel(), usage=RunUsage())
    for_carol = await capability.for_run(ctx)
    assert for_carol is not capability
    [local] = [t for t in _leaves(for_carol.get_toolset()) if isinstance(t, MCPToolset)]
    assert local.transport.headers == {'X-App': 'demo', 'Authorization': 'Bearer carol'}  # type: ignore[union-attr]

    local_server.script(Reply(500, {'error': 'down'}))
    agent = Agent(TestModel(), deps_type=str, capabilities=[capability])
    with pytest.raises(MCPError, match='answered HTTP 500'):
        await agent.run('hi', deps='dave')
    assert local_server.received[0]['headers']['Authorization'] == 'Bearer dave'
    assert local_server.received[0]['headers']['X-App'] == 'demo'


async def test_a_capability_without_functions_is_shared_by_runs() -> None:
    capability: MCP[None] = MCP('https://mcp.example.com/api', native=True, local=False, authorization_token='t')
    ctx: RunContext[None] = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    assert await capability.for_run(ctx) is capability
    only_headers: MCP[Any] = MCP('https://mcp.example.com/api', native=True, local=False, headers=headers_of)
    for_erin = await only_headers.for_run(RunContext(deps='erin', model=TestModel(), usage=RunUsage()))
    [native] = for_erin.get_native_tools()
    assert native.headers == {'X-User': 'erin'}  # type: ignore[union-attr]
    assert native.authorization_token is None  # type: ignore[union-attr]


def _leaves(toolset: Any) -> list[Any]:
    found = [toolset]
    for attribute in ('wrapped', 'toolsets'):
        inner = getattr(toolset, attribute, None)
        if isinstance(inner, list):
            found += [leaf for t in inner for leaf in _leaves(t)]
        elif inner is not None:
            found += _leaves(inner)
    return found
