"""MCP Apps (SEP-1865, as pydantic-ai 2.68's `MCPToolset` serves them) against the FastMCP test server: a tool that
names a UI page keeps an `MCPAppToolResult` for the application, tools only the page calls are hidden from the
model, and the page's tool calls and resource reads are relayed."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.exceptions import MCPError
from edgewise.agent.mcp import MCPAppToolResult, MCPToolset
from edgewise.agent.messages import ModelRequest, ToolReturnPart
from edgewise.agent.models.test import TestModel

from .conftest import fastmcp_stdio

pytestmark = pytest.mark.anyio

DASHBOARD = 'ui://dashboard/page.html'


def _returns(result: Any) -> dict[str, ToolReturnPart]:
    parts = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts]
    return {p.tool_name: p for p in parts if isinstance(p, ToolReturnPart)}


async def test_an_app_tools_return_keeps_the_app_record_and_the_model_gets_the_result() -> None:
    toolset = MCPToolset(fastmcp_stdio(), id='stats')
    agent = Agent(TestModel(call_tools=['dashboard', 'add']), toolsets=[toolset])
    async with agent:
        result = await agent.run('show Oslo')
    returns = _returns(result)
    assert returns['dashboard'].content == {'city': 'a', 'visits': 3}
    record: MCPAppToolResult = returns['dashboard'].metadata['mcp_app']
    assert record == {
        'resource_uri': DASHBOARD,
        'tool_input': {'city': 'a'},
        'result': {
            'content': [{'type': 'text', 'text': '{\n  "city": "a",\n  "visits": 3\n}'}],
            'structuredContent': {'city': 'a', 'visits': 3},
            'isError': False,
        },
        'toolset_id': 'stats',
    }
    assert returns['add'].metadata is None  # a tool without a page keeps nothing


async def test_a_tool_only_the_page_calls_is_not_shown_to_the_model_but_the_page_can_call_it() -> None:
    toolset = MCPToolset(fastmcp_stdio())
    async with toolset:
        ctx = RunContext[None](deps=None, model=TestModel(), usage=_usage())
        names = set(await toolset.get_tools(ctx))
        assert {'dashboard', 'add'} <= names
        assert 'refresh_dashboard' not in names
        answer = await toolset.call_tool_for_app('refresh_dashboard', {'city': 'Oslo'})
        assert answer == {
            'content': [{'type': 'text', 'text': 'refreshed Oslo'}],
            'structuredContent': {'result': 'refreshed Oslo'},
            'isError': False,
        }
        failed = await toolset.call_tool_for_app('fail', {'reason': 'no'})
        assert failed['isError'] is True  # returned to the page as the server sent it, not raised
        with pytest.raises(MCPError, match="tool 'nope' is not available to apps"):
            await toolset.call_tool_for_app('nope')
        with pytest.raises(MCPError, match='must be an object'):
            await toolset.call_tool_for_app('add', ['not', 'an', 'object'])  # type: ignore[arg-type]
        page = await toolset.read_resource_for_app(DASHBOARD)
    assert page == {
        'contents': [
            {
                'uri': DASHBOARD,
                'mimeType': 'text/html;profile=mcp-app',
                '_meta': {'ui': {'prefersBorder': True}},
                'text': '<p>dashboard</p>',
            }
        ]
    }


async def test_a_hook_that_changes_the_result_keeps_the_raw_one_from_the_app() -> None:
    async def hide(ctx: RunContext[Any], call: Any, name: str, args: dict[str, Any]) -> Any:
        value = await call(name, args)
        return {**value, 'visits': 'hidden'} if name == 'dashboard' else value

    async def keep(ctx: RunContext[Any], call: Any, name: str, args: dict[str, Any]) -> Any:
        return await call(name, {**args, 'city': 'Bergen'})  # what the hook adds does not reach the app

    hidden = await Agent(
        TestModel(call_tools=['dashboard']), toolsets=[MCPToolset(fastmcp_stdio(), process_tool_call=hide)]
    ).run('x')
    assert _returns(hidden)['dashboard'].metadata is None
    kept = await Agent(
        TestModel(call_tools=['dashboard']), toolsets=[MCPToolset(fastmcp_stdio(), process_tool_call=keep)]
    ).run('x')
    record = _returns(kept)['dashboard'].metadata['mcp_app']
    assert record['tool_input'] == {'city': 'a'}
    assert record['result']['structuredContent'] == {'city': 'Bergen', 'visits': 3}


async def test_the_vercel_ai_stream_carries_the_app_record_as_data_of_the_tool_call() -> None:
    from edgewise.agent.ui.vercel_ai import VercelAIAdapter

    result = await Agent(TestModel(call_tools=['dashboard']), toolsets=[MCPToolset(fastmcp_stdio(), id='stats')]).run(
        'x'
    )
    parts = [p for m in VercelAIAdapter.dump_messages(result.all_messages()) for p in m.parts]
    call_id = _returns(result)['dashboard'].tool_call_id
    [data] = [p.model_dump(mode='json', by_alias=True, exclude_none=True) for p in parts if p.type == 'data-mcp-apps']
    assert data == {
        'type': 'data-mcp-apps',
        'id': call_id,
        'data': {
            'resourceUri': DASHBOARD,
            'toolInput': {'city': 'a'},
            'result': {
                'content': [{'type': 'text', 'text': '{\n  "city": "a",\n  "visits": 3\n}'}],
                'structuredContent': {'city': 'a', 'visits': 3},
                'isError': False,
            },
            'serverId': 'stats',
            'serverHash': 'stats',
        },
    }


async def test_the_ag_ui_stream_sends_the_app_record_as_an_activity_from_ag_ui_0_1_19() -> None:
    from edgewise.agent.messages import FunctionToolResultEvent
    from edgewise.agent.ui.ag_ui import AGUIEventStream

    record: MCPAppToolResult = {
        'resource_uri': DASHBOARD,
        'tool_input': {'city': 'Oslo'},
        'result': {'content': [], 'isError': False},
        'toolset_id': None,
    }
    event = FunctionToolResultEvent(part=ToolReturnPart('dashboard', 'shown', 'c1', metadata={'mcp_app': record}))
    sent = [e async for e in AGUIEventStream[None, Any]().handle_function_tool_result(event)]
    assert [e.type for e in sent] == ['TOOL_CALL_RESULT', 'ACTIVITY_SNAPSHOT']
    assert (sent[1].activity_type, sent[1].content) == (
        'mcp-apps',
        {'resourceUri': DASHBOARD, 'toolInput': {'city': 'Oslo'}, 'result': {'content': [], 'isError': False}},
    )
    older = AGUIEventStream[None, Any](ag_ui_version='0.1.18')
    assert [e.type for e in [e async for e in older.handle_function_tool_result(event)]] == ['TOOL_CALL_RESULT']
    broken = FunctionToolResultEvent(part=ToolReturnPart('dashboard', 'x', 'c2', metadata={'mcp_app': {'no': 1}}))
    assert [e.type for e in [e async for e in AGUIEventStream[None, Any]().handle_function_tool_result(broken)]] == [
        'TOOL_CALL_RESULT'
    ]


async def test_the_ag_ui_dump_writes_the_app_activity_after_the_tool_return_and_loads_it_back() -> None:
    import warnings

    from edgewise.agent.ui.ag_ui import AGUIAdapter

    result = await Agent(TestModel(call_tools=['dashboard']), toolsets=[MCPToolset(fastmcp_stdio(), id='stats')]).run(
        'x'
    )
    call_id = _returns(result)['dashboard'].tool_call_id
    dumped = AGUIAdapter.dump_messages(result.all_messages())
    roles = [m.role for m in dumped]
    at = next(i for i, m in enumerate(dumped) if m.role == 'tool' and m.tool_call_id == call_id)
    activity = dumped[at + 1]
    assert (activity.role, activity.activity_type) == ('activity', 'mcp-apps')
    assert activity.content['resourceUri'] == DASHBOARD
    assert activity.content['serverId'] == activity.content['serverHash'] == 'stats'
    assert roles.count('activity') == 1
    older = AGUIAdapter.dump_messages(result.all_messages(), ag_ui_version='0.1.18')
    assert [m.role for m in older] == [r for r in roles if r != 'activity']

    with warnings.catch_warnings():
        warnings.simplefilter('error')  # the app's activity is skipped without a warning
        loaded = AGUIAdapter.load_messages(dumped)
    assert [type(m).__name__ for m in loaded] == [type(m).__name__ for m in AGUIAdapter.load_messages(older)]


def _usage() -> Any:
    from edgewise.agent.usage import RunUsage

    return RunUsage()
