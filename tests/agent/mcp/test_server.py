"""`MCPServerStdio` against the FastMCP test server: connection, tools, results, errors, server requests."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pytest
from mcp import types as mcp_types

from edgewise.agent import ModelRetry
from edgewise.agent.exceptions import MCPError
from edgewise.agent.mcp import MCPServer, StdioTransport
from edgewise.agent.mcp._connection import MCPConnectionClosed, MCPSession
from edgewise.agent.messages import BinaryContent, BinaryImage

from .conftest import fastmcp_stdio
from .fastmcp_server import PIXEL

pytestmark = pytest.mark.anyio


async def test_handshake_gives_server_info_capabilities_and_instructions() -> None:
    server = fastmcp_stdio()
    assert not server.is_running
    with pytest.raises(
        AttributeError,
        match=r'The `StdioTransport.server_info` is only instantiated after initialization \(enter the server first',
    ):
        server.server_info  # noqa: B018
    async with server:
        assert server.is_running
        assert server.server_info.name == 'edgewise-test-server'
        assert server.capabilities.tools
        assert server.capabilities.resources
        assert server.capabilities.prompts
        assert server.instructions == 'Numbers are added with `add`.'
    assert not server.is_running


async def test_tools_are_listed_with_their_schemas() -> None:
    async with fastmcp_stdio() as server:
        tools = {tool.name: tool for tool in await server.list_tools()}
    assert {'add', 'greet', 'weather', 'fail', 'summarize', 'ask_name', 'grow', 'crash', 'nap'} <= set(tools)
    assert tools['add'].description == 'Add two integers.'
    assert tools['add'].inputSchema['properties'] == {
        'a': {'title': 'A', 'type': 'integer'},
        'b': {'title': 'B', 'type': 'integer'},
    }


RESULTS: list[tuple[str, dict[str, Any], Any]] = [
    ('add', {'a': 2, 'b': 40}, 42),
    ('greet', {'name': 'Ada'}, 'Hello, Ada!'),
    ('weather', {'city': 'Paris'}, {'city': 'Paris', 'celsius': 21.5}),
    ('two_parts', {}, ['first', 'second']),
    ('as_json_text', {}, {'ok': True, 'items': [1, 2]}),
    ('picture', {}, BinaryImage(PIXEL, media_type='image/png')),
    ('picture_with_caption', {}, ['a pixel', BinaryImage(PIXEL, media_type='image/png')]),
    ('sound', {}, BinaryContent(b'RIFF0000WAVE', media_type='audio/wav')),
    ('embedded', {}, ['a note', BinaryImage(PIXEL, media_type='image/png')]),
    ('link', {}, 'This server is for tests.'),
]


async def test_results_map_to_tool_returns() -> None:
    async with fastmcp_stdio() as server:
        results = [(tool, args, await server.direct_call_tool(tool, args)) for tool, args, _ in RESULTS]
    assert results == RESULTS


async def test_binary_data_that_is_not_base64_is_an_error_naming_server_and_tool() -> None:
    async with fastmcp_stdio() as server:
        with pytest.raises(MCPError, match=r"answered tool 'bad_image' with content that is not valid: "):
            await server.direct_call_tool('bad_image', {})


async def test_a_resource_link_is_read_by_a_call_outside_async_with() -> None:
    server = fastmcp_stdio()
    assert await server.direct_call_tool('link', {}) == 'This server is for tests.'
    assert not server.is_running


async def test_a_call_outside_async_with_opens_and_closes_a_connection() -> None:
    server = fastmcp_stdio()
    assert await server.direct_call_tool('add', {'a': 1, 'b': 1}) == 2
    assert not server.is_running


async def test_a_tool_error_is_a_retry_with_the_servers_text() -> None:
    async with fastmcp_stdio() as server:
        with pytest.raises(ModelRetry, match=r'^Error executing tool fail: no luck$'):
            await server.direct_call_tool('fail', {'reason': 'no luck'})
        with pytest.raises(ModelRetry, match='Unknown tool: nope'):
            await server.direct_call_tool('nope', {})
        # The connection is still usable.
        assert await server.direct_call_tool('add', {'a': 1, 'b': 2}) == 3


async def test_a_server_that_exits_mid_call_is_an_error_naming_server_and_tool() -> None:
    async with fastmcp_stdio() as server:
        with pytest.raises(MCPError) as info:
            await server.direct_call_tool('crash', {})
        assert str(info.value) == (
            f"MCP server StdioTransport(command={sys.executable!r}, args=[{str(server.args[0])!r}, 'stdio']) "
            "closed the connection while calling tool 'crash': the server process closed its stdout (it exited)."
        )
        # Later calls fail at once, naming the tool.
        with pytest.raises(MCPError, match="closed the connection while calling tool 'add'"):
            await server.direct_call_tool('add', {'a': 1, 'b': 2})


class _ClosedSession:
    """A session whose connection another task has just closed: every request fails without a checkpoint."""

    async def request(self, method: str, params: dict[str, Any] | None, time_limit: float | None) -> Any:
        raise MCPConnectionClosed('the client closed the connection')


async def test_a_cancelled_caller_sees_its_cancellation_not_the_connection_its_sibling_closed() -> None:
    # The race seen on trio: a scope cancels two callers sharing one connection; the one that opened it closes it
    # first, and the other must end cancelled, not with an `MCPError`.
    server = fastmcp_stdio()
    session = cast(MCPSession, _ClosedSession())
    with anyio.CancelScope() as scope:
        scope.cancel()
        await server._request(session, 'tools/call', {'name': 'nap'}, 'nap')  # pyright: ignore[reportPrivateUsage]
    assert scope.cancelled_caught
    # Not cancelled, the same closed connection is an error naming the tool.
    with pytest.raises(MCPError, match="closed the connection while calling tool 'nap': the client closed"):
        await server._request(session, 'tools/call', {'name': 'nap'}, 'nap')  # pyright: ignore[reportPrivateUsage]


async def test_a_command_that_does_not_exist_is_an_error_naming_the_server() -> None:
    server = StdioTransport('/nonexistent/mcp-server', ['--stdio'])
    with pytest.raises(MCPError) as info:
        async with server:
            pass
    assert str(info.value).startswith(
        "MCP server StdioTransport(command='/nonexistent/mcp-server', args=['--stdio']) could not be started or "
        'reached: FileNotFoundError('
    )
    assert not server.is_running


async def test_a_server_that_exits_at_start_is_an_error() -> None:
    server = StdioTransport(sys.executable, ['-c', 'import sys; sys.exit(2)'], timeout=30)
    with pytest.raises(MCPError, match='closed the connection during the MCP handshake'):
        await server.list_tools()


async def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    server = StdioTransport(sys.executable, ['-c', 'import time; time.sleep(120)'], timeout=0.5)
    with pytest.raises(MCPError, match=r'did not complete the MCP handshake within 0.5 s \(raise `timeout`'):
        async with server:
            pass


async def test_read_timeout_bounds_a_call_and_asks_for_a_retry() -> None:
    async with fastmcp_stdio(read_timeout=0.2) as server:
        with pytest.raises(ModelRetry, match=r"did not answer tool 'nap' within 0.2 s \(`read_timeout`\)"):
            await server.direct_call_tool('nap', {'seconds': 30})
        assert await server.direct_call_tool('add', {'a': 1, 'b': 2}) == 3


async def test_nested_async_with_shares_one_connection() -> None:
    server = fastmcp_stdio()
    async with server:
        info = server.server_info
        async with server:
            assert server.server_info is info
        assert server.is_running
    assert not server.is_running
    with pytest.raises(ValueError, match='__aexit__ called more times than __aenter__'):
        await server.__aexit__(None, None, None)


async def test_sibling_tasks_enter_and_leave_in_any_order_over_one_connection() -> None:
    # The task that opens the connection leaves first; it waits for the others, and the last one out closes it.
    server = fastmcp_stdio()
    order: list[str] = []
    opened, entered, opener_left = anyio.Event(), anyio.Event(), anyio.Event()

    async def opener() -> None:
        async with server:
            order.append('opener in')
            opened.set()
            await entered.wait()
            assert await server.direct_call_tool('add', {'a': 1, 'b': 2}) == 3
        order.append('opener out')  # only once the sibling has left: it held the connection until then
        opener_left.set()

    async def sibling() -> None:
        await opened.wait()
        async with server:
            info = server.server_info
            entered.set()
            order.append('sibling in')
            await anyio.lowlevel.checkpoint()
            assert not opener_left.is_set()
            assert await server.direct_call_tool('add', {'a': 2, 'b': 2}) == 4
            assert server.server_info is info
        order.append('sibling out')

    async with anyio.create_task_group() as tg:
        tg.start_soon(opener)
        tg.start_soon(sibling)
    assert order == ['opener in', 'sibling in', 'sibling out', 'opener out']
    assert not server.is_running


async def test_a_sibling_entering_while_the_opener_waits_to_close_keeps_the_connection() -> None:
    server = fastmcp_stdio()
    opened, early_in, late_in, first_out = anyio.Event(), anyio.Event(), anyio.Event(), anyio.Event()
    connections: list[object] = []

    async def opener() -> None:
        async with server:
            connections.append(server.server_info)
            opened.set()
            await early_in.wait()
        first_out.set()

    async def early() -> None:
        await opened.wait()
        async with server:
            early_in.set()
            await late_in.wait()  # the opener is waiting to close, and a third task comes in meanwhile

    async def late() -> None:
        await early_in.wait()
        # Until the opener has left its block and waits to close (no event tells it: the server's own state does).
        while server._owner_depth:
            await anyio.lowlevel.checkpoint()
        assert server.is_running
        assert not first_out.is_set()
        async with server:
            late_in.set()
            connections.append(server.server_info)
            assert await server.direct_call_tool('add', {'a': 3, 'b': 4}) == 7

    async with anyio.create_task_group() as tg:
        tg.start_soon(opener)
        tg.start_soon(early)
        tg.start_soon(late)
    assert first_out.is_set()
    assert connections[0] is connections[1]  # one connection throughout
    assert not server.is_running


async def test_the_tool_list_is_cached_until_the_server_says_it_changed() -> None:
    async with fastmcp_stdio() as server:
        first = await server.list_tools()
        assert await server.list_tools() is first
        assert await server.direct_call_tool('grow', {'name': 'sprout'}) == 'added sprout'
        # The notification travels with the result: by the time the result is read the cache may
        # still hold the old list for a moment; the next listing after a call round trip sees the new one.
        assert await server.direct_call_tool('add', {'a': 0, 'b': 0}) == 0
        names = [tool.name for tool in await server.list_tools()]
        assert 'sprout' in names
        assert await server.direct_call_tool('sprout', {}) == 'I am sprout'


async def test_without_cache_tools_the_list_is_asked_each_time() -> None:
    async with fastmcp_stdio(cache_tools=False) as server:
        first = await server.list_tools()
        second = await server.list_tools()
    assert first is not second
    assert [t.name for t in first] == [t.name for t in second]


async def test_log_messages_go_to_the_log_handler_at_the_requested_level() -> None:
    received: list[mcp_types.LoggingMessageNotificationParams] = []

    async def handler(params: mcp_types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with fastmcp_stdio(log_level='warning', log_handler=handler) as server:
        assert await server.direct_call_tool('chatty', {'message': 'hi'}) == 'logged'
        # A second round trip: the notification is sent before the result, handled in a task of its own.
        await server.direct_call_tool('add', {'a': 0, 'b': 0})
    assert [(p.level, p.data) for p in received] == [('warning', 'warning: hi')]


async def test_without_a_log_handler_log_messages_go_to_the_logger(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger='edgewise.agent.mcp'):
        async with fastmcp_stdio(log_level='debug') as server:
            await server.direct_call_tool('chatty', {'message': 'hi'})
            await server.direct_call_tool('add', {'a': 0, 'b': 0})
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == 'edgewise.agent.mcp']
    assert records == [
        (logging.DEBUG, f'MCP server {server.label}: debug: hi'),
        (logging.WARNING, f'MCP server {server.label}: warning: hi'),
    ]


async def test_elicitation_requests_go_to_the_callback() -> None:
    asked: list[str] = []

    async def answer(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action='accept', content={'name': 'Grace'})

    async with fastmcp_stdio(elicitation_callback=answer) as server:
        assert await server.direct_call_tool('ask_name', {}) == 'Nice to meet you, Grace.'
    assert asked == ['What is your name?']


async def test_an_elicitation_callback_can_answer_with_an_error() -> None:
    async def refuse(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ErrorData:
        return mcp_types.ErrorData(code=-32000, message='no user here')

    async with fastmcp_stdio(elicitation_callback=refuse) as server:
        with pytest.raises(ModelRetry, match='no user here'):
            await server.direct_call_tool('ask_name', {})


async def test_sampling_without_a_model_and_elicitation_without_a_callback_are_refused() -> None:
    async with fastmcp_stdio() as server:
        with pytest.raises(ModelRetry, match='sampling is not available: no `sampling_model` is set'):
            await server.direct_call_tool('summarize', {'text': 'long text'})
        with pytest.raises(ModelRetry, match=r'Elicitation not supported \(no `elicitation_callback` is set\)'):
            await server.direct_call_tool('ask_name', {})


async def test_sampling_is_refused_when_not_allowed() -> None:
    async with fastmcp_stdio(allow_sampling=False) as server:
        with pytest.raises(ModelRetry, match=r'Sampling not supported \(`allow_sampling` is off\)'):
            await server.direct_call_tool('summarize', {'text': 'long text'})


def test_repr_leaves_the_environment_out() -> None:
    server = StdioTransport('server', ['--flag'], env={'API_KEY': 'secret'}, id='files')
    assert repr(server) == "StdioTransport(command='server', args=['--flag'], id='files')"
    assert server.label == repr(server)
    assert server.tool_name_conflict_hint == 'Set the `tool_prefix` attribute to avoid name conflicts.'


class _OverTheSDKsStdio(MCPServer):
    """A custom transport: only `client_streams`, here the MCP SDK's own stdio transport."""

    def __init__(self) -> None:
        super().__init__(timeout=30)

    @asynccontextmanager
    async def client_streams(self) -> AsyncIterator[tuple[Any, Any]]:
        async with fastmcp_stdio().client_streams() as streams:
            yield streams


async def test_a_subclass_with_its_own_client_streams_is_a_server() -> None:
    async with _OverTheSDKsStdio() as server:
        assert server.server_info.name == 'edgewise-test-server'
        assert 'add' in [tool.name for tool in await server.list_tools()]
        assert await server.direct_call_tool('add', {'a': 1, 'b': 2}) == 3
    assert not server.is_running
