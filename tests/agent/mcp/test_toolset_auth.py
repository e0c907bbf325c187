"""`MCPToolset`'s `auth` and `headers` (pydantic-ai 2.68): fixed, or functions of the run context that give each run
a connection of its own, checked by what the FastMCP test server on 127.0.0.1 receives (its `caller` tool)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import anyio
import httpx
import pytest
from pydantic import AnyUrl

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent.mcp import MCPAuthFunc, MCPHeadersFunc, MCPToolset, SSETransport, StreamableHttpTransport
from edgewise.agent.messages import ModelRequest, ToolReturnPart
from edgewise.agent.models.test import TestModel
from edgewise.agent.usage import RunUsage

pytestmark = [
    pytest.mark.anyio,
    # As in test_http.py: the MCP SDK's HTTP transports leave httpx's response iterators to the collector.
    pytest.mark.filterwarnings('ignore:Async generator .* was garbage collected:ResourceWarning'),
    pytest.mark.filterwarnings('ignore:Exception ignored in. <async_generator:pytest.PytestUnraisableExceptionWarning'),
]


def _caller_seen(result: Any) -> list[Any]:
    """What the server's `caller` tool saw, for each of its calls in a run."""
    parts = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts]
    return [p.content for p in parts if isinstance(p, ToolReturnPart) and p.tool_name == 'caller']


class _Signed(httpx.Auth):
    def __init__(self, who: str) -> None:
        self.who = who

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers['Authorization'] = f'Signed {self.who}'
        yield request


async def test_each_run_connects_with_the_auth_and_headers_its_functions_give(streamable_http_url: str) -> None:
    def token(ctx: RunContext[str]) -> str:
        return f'token-{ctx.deps}'

    async def headers(ctx: RunContext[str]) -> dict[str, str]:
        await anyio.lowlevel.checkpoint()
        return {'X-User': ctx.deps}

    auth_func: MCPAuthFunc[str] = token
    headers_func: MCPHeadersFunc[str] = headers
    toolset = MCPToolset(streamable_http_url, auth=auth_func, headers=headers_func, init_timeout=30)
    agent = Agent(TestModel(call_tools=['caller']), deps_type=str, toolsets=[toolset])
    results: dict[str, Any] = {}

    async def run(user: str) -> None:
        results[user] = await agent.run('who am I?', deps=user)

    async with agent:  # entering the template connects nothing: each run connects with its own copy
        assert not toolset.is_running
        async with anyio.create_task_group() as group:
            group.start_soon(run, 'ann')
            group.start_soon(run, 'bob')
    assert _caller_seen(results['ann']) == [{'authorization': 'Bearer token-ann', 'user': 'ann'}]
    assert _caller_seen(results['bob']) == [{'authorization': 'Bearer token-bob', 'user': 'bob'}]
    assert not toolset.is_running


async def test_an_auth_function_may_give_an_httpx_auth_or_nothing(streamable_http_url: str) -> None:
    async def auth(ctx: RunContext[str]) -> httpx.Auth | None:
        return _Signed(ctx.deps) if ctx.deps else None

    toolset = MCPToolset(streamable_http_url, auth=auth, headers={'X-User': 'fixed'}, init_timeout=30)
    agent = Agent(TestModel(call_tools=['caller']), deps_type=str, toolsets=[toolset])
    assert _caller_seen(await agent.run('hi', deps='cy')) == [{'authorization': 'Signed cy', 'user': 'fixed'}]
    assert _caller_seen(await agent.run('hi', deps='')) == [{'authorization': None, 'user': 'fixed'}]


async def test_a_fixed_auth_goes_with_every_request(streamable_http_url: str, sse_url: str) -> None:
    async with MCPToolset(AnyUrl(streamable_http_url), auth='s3cret', init_timeout=30) as toolset:
        assert await toolset.direct_call_tool('caller', {}) == {'authorization': 'Bearer s3cret', 'user': None}
    async with SSETransport(sse_url, auth=_Signed('dee'), timeout=30) as server:
        assert await server.direct_call_tool('caller', {}) == {'authorization': 'Signed dee', 'user': None}
    assert 's3cret' not in repr(MCPToolset(streamable_http_url, auth='s3cret'))
    assert repr(StreamableHttpTransport(streamable_http_url, auth='s3cret').auth) == 'BearerToken(***)'


async def test_a_per_run_toolset_connects_only_for_a_run(streamable_http_url: str) -> None:
    toolset = MCPToolset(streamable_http_url, headers=lambda ctx: {'X-User': 'eve'}, init_timeout=30)
    with pytest.raises(UserError, match='connects only during an agent run'):
        await toolset.list_tools()
    ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage())
    for_run = await toolset.for_run(ctx)
    assert for_run is not toolset
    async with for_run:
        assert await for_run.direct_call_tool('caller', {}) == {'authorization': None, 'user': 'eve'}
    plain = MCPToolset(streamable_http_url)
    assert await plain.for_run(ctx) is plain


def test_what_auth_and_per_run_functions_cannot_be_given_with() -> None:
    def per_run(ctx: RunContext[None]) -> str:
        return 'x'

    with pytest.raises(UserError, match='only for a server given by its URL'):
        MCPToolset('server.py', auth=per_run)
    with pytest.raises(UserError, match='`http_client` and `headers` exclude each other, a `headers` function too'):
        MCPToolset('http://127.0.0.1:1/mcp', headers=lambda ctx: {}, http_client=httpx.AsyncClient())
    with pytest.raises(UserError, match=r"`auth='oauth'` \(FastMCP's browser sign-in\) is not supported"):
        MCPToolset('http://127.0.0.1:1/mcp', auth='oauth')
    with pytest.raises(UserError, match='`headers`, `http_client` and `auth` apply to an MCP server given by its URL'):
        MCPToolset('server.py', auth='t')


@pytest.mark.parametrize(
    ('given', 'returned', 'message'),
    [
        ('auth', '', r'`auth` function .* returned str: it must return an `httpx.Auth`, a non-empty bearer token'),
        ('auth', {'token': 'x-SECRET'}, r'`auth` function .* returned dict'),
        ('headers', ['X-User', 'eve'], r'`headers` function .* returned list: it must return a mapping'),
        ('headers', {'X-Count': 3}, r'`headers` function .* returned dict'),
    ],
)
async def test_a_per_run_function_giving_the_wrong_thing_is_refused_before_connecting(
    given: str, returned: Any, message: str
) -> None:
    options: dict[str, Any] = {given: lambda ctx: returned}
    toolset = MCPToolset('http://127.0.0.1:9/mcp', **options)
    ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage())
    with pytest.raises(UserError, match=message) as raised:
        await toolset.for_run(ctx)
    assert 'SECRET' not in str(raised.value)


async def test_a_borrowed_client_sends_the_auth_and_stays_open(streamable_http_url: str, sse_url: str) -> None:
    """`http_client` with `auth` (pydantic-ai 2.68): each request through the caller's client authenticates with the
    auth, the client's own headers go too, and the toolset never closes the client: it connects through it again."""
    async with httpx.AsyncClient(headers={'X-User': 'pooled'}, timeout=30) as client:
        toolset = MCPToolset(streamable_http_url, http_client=client, auth='t0ken', init_timeout=30)
        for _ in range(2):  # connected twice through the same client
            async with toolset:
                assert await toolset.direct_call_tool('caller', {}) == {
                    'authorization': 'Bearer t0ken',
                    'user': 'pooled',
                }
        async with SSETransport(sse_url, http_client=client, auth=_Signed('sse'), timeout=30) as server:
            assert await server.direct_call_tool('caller', {}) == {'authorization': 'Signed sse', 'user': 'pooled'}
        async with SSETransport(sse_url, http_client=client, timeout=30) as server:  # the client left open by SSE too
            assert await server.direct_call_tool('caller', {}) == {'authorization': None, 'user': 'pooled'}
        assert not client.is_closed
        plain = await client.get(streamable_http_url.rsplit('/', 1)[0] + '/nowhere')
        assert plain.request.headers.get('authorization') is None  # the client itself was not given the auth


async def test_each_run_authenticates_through_a_shared_client(streamable_http_url: str) -> None:
    async with httpx.AsyncClient(timeout=30) as client:
        toolset = MCPToolset(
            streamable_http_url, http_client=client, auth=lambda ctx: f'run-{ctx.deps}', init_timeout=30
        )
        agent = Agent(TestModel(call_tools=['caller']), deps_type=str, toolsets=[toolset])
        ann = await agent.run('who?', deps='ann')
        bob = await agent.run('who?', deps='bob')
        assert not client.is_closed
    assert _caller_seen(ann) == [{'authorization': 'Bearer run-ann', 'user': None}]
    assert _caller_seen(bob) == [{'authorization': 'Bearer run-bob', 'user': None}]
