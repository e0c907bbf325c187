"""Native (provider-run) tools: the tool classes and their old `builtin_tools` home, the native tool parts of
messages, and how an agent hands the tools to its model (pydantic-ai 1.107's names, spellings and errors)."""

from __future__ import annotations

import importlib
from typing import Any

import pydantic
import pytest
from inline_snapshot import snapshot

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    ToolCallPartDelta,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.native_tools import (
    DEPRECATED_NATIVE_TOOLS,
    NATIVE_TOOL_TYPES,
    SUPPORTED_NATIVE_TOOLS,
    AbstractNativeTool,
    CodeExecutionTool,
    MCPServerTool,
    UrlContextTool,
    WebFetchTool,
    WebSearchTool,
    XSearchTool,
)

pytestmark = pytest.mark.anyio

_TOOLS = pydantic.TypeAdapter(list[AbstractNativeTool])
_AGENT_BUILTIN = r'`Agent\(builtin_tools=...\)` is deprecated, use `capabilities=\[NativeTool\(...\)\]` instead'
_RUN_BUILTIN = r'`agent.run\(builtin_tools=...\)` is deprecated'


# --- the tool classes --------------------------------------------------------------------------------------------


def test_tools_load_by_kind_and_serialize_with_it() -> None:
    tools = _TOOLS.validate_python(
        [
            {'kind': 'web_search', 'max_uses': 2, 'user_location': {'city': 'Utrecht', 'country': 'NL'}},
            {'kind': 'code_execution'},
            {'kind': 'mcp_server', 'id': 'wiki', 'url': 'https://mcp.example/mcp'},
        ]
    )
    assert tools == [
        WebSearchTool(max_uses=2, user_location={'city': 'Utrecht', 'country': 'NL'}),
        CodeExecutionTool(),
        MCPServerTool(id='wiki', url='https://mcp.example/mcp'),
    ]
    assert _TOOLS.validate_json(_TOOLS.dump_json(tools)) == tools
    assert _TOOLS.dump_python([CodeExecutionTool()]) == [{'kind': 'code_execution', 'optional': False}]


def test_unique_ids_and_labels() -> None:
    mcp = MCPServerTool(id='wiki', url='https://mcp.example/mcp')
    assert (WebSearchTool().unique_id, WebSearchTool().label) == ('web_search', 'Web Search')
    assert (mcp.unique_id, mcp.label) == ('mcp_server:wiki', 'MCP: wiki')


def test_an_mcp_server_tool_repr_hides_its_token_and_headers() -> None:
    tool = MCPServerTool(id='s', url='https://x', authorization_token='sk-secret', headers={'X-Key': 'hidden'})
    assert 'sk-secret' not in repr(tool)
    assert 'hidden' not in repr(tool)
    assert "id='s'" in repr(tool)


def test_x_search_handles_are_checked() -> None:
    with pytest.raises(ValueError, match='Cannot specify both allowed_x_handles and excluded_x_handles'):
        XSearchTool(allowed_x_handles=['a'], excluded_x_handles=['b'])
    with pytest.raises(ValueError, match='allowed_x_handles cannot contain more than 10 handles'):
        XSearchTool(allowed_x_handles=[str(i) for i in range(11)])


def test_url_context_tool_is_a_deprecated_web_fetch_tool_of_its_own_kind() -> None:
    with pytest.warns(DeprecationWarning, match='Use `WebFetchTool` instead.'):
        tool = UrlContextTool()  # pyright: ignore[reportDeprecated]
    assert isinstance(tool, WebFetchTool)
    assert tool.kind == 'url_context'
    assert NATIVE_TOOL_TYPES['url_context'] is UrlContextTool  # pyright: ignore[reportDeprecated]
    assert UrlContextTool not in SUPPORTED_NATIVE_TOOLS  # pyright: ignore[reportDeprecated]
    assert {UrlContextTool} == DEPRECATED_NATIVE_TOOLS  # pyright: ignore[reportDeprecated]


def test_the_builtin_tools_module_is_the_old_home_and_warns() -> None:
    builtin_tools: Any = importlib.import_module('edgewise.agent.builtin_tools')
    with pytest.warns(DeprecationWarning, match='import it from `edgewise.agent.native_tools` instead'):
        assert builtin_tools.WebSearchTool is WebSearchTool
    with pytest.warns(DeprecationWarning, match=r'builtin_tools\.AbstractBuiltinTool` is deprecated, use'):
        assert builtin_tools.AbstractBuiltinTool is AbstractNativeTool
    with pytest.warns(DeprecationWarning, match='NATIVE_TOOL_TYPES'):
        assert builtin_tools.BUILTIN_TOOL_TYPES is NATIVE_TOOL_TYPES
    with pytest.raises(AttributeError):
        _ = builtin_tools.NotATool


# --- message parts -----------------------------------------------------------------------------------------------


def _searched() -> ModelResponse:
    return ModelResponse(
        [
            NativeToolCallPart('web_search', {'query': 'weather'}, 'ws_1', provider_name='openai'),
            NativeToolReturnPart('web_search', {'status': 'completed'}, 'ws_1', provider_name='openai'),
            NativeToolCallPart('code_execution', {'code': '1+1'}, 'ci_1', provider_name='openai'),
            TextPart('Sunny.'),
        ],
        provider_name='openai',
    )


def test_native_parts_have_pydantic_ais_part_kinds_and_round_trip() -> None:
    response = _searched()
    assert [p.part_kind for p in response.parts] == snapshot(
        ['builtin-tool-call', 'builtin-tool-return', 'builtin-tool-call', 'text']
    )
    history: list[ModelMessage] = [ModelRequest.user_text_prompt('weather?'), response]
    loaded = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history))
    assert loaded == history


def test_native_tool_calls_pair_calls_with_their_results() -> None:
    response = _searched()
    assert response.native_tool_calls == [(response.parts[0], response.parts[1])]
    assert response.tool_calls == []  # the agent runs none of them
    with pytest.warns(DeprecationWarning, match='use `ModelResponse.native_tool_calls` instead'):
        assert response.builtin_tool_calls == response.native_tool_calls


def test_old_part_names_still_import_with_a_warning() -> None:
    messages: Any = importlib.import_module('edgewise.agent.messages')
    with pytest.warns(DeprecationWarning, match='use `edgewise.agent.messages.NativeToolCallPart` instead'):
        assert messages.BuiltinToolCallPart is NativeToolCallPart
    with pytest.warns(DeprecationWarning, match='NativeToolReturnPart'):
        assert messages.BuiltinToolReturnPart is NativeToolReturnPart


def test_old_top_level_names_still_import_with_a_warning() -> None:
    agent_package: Any = importlib.import_module('edgewise.agent')
    with pytest.warns(DeprecationWarning, match='use `edgewise.agent.NativeToolReturnPart` instead'):
        assert agent_package.BuiltinToolReturnPart is NativeToolReturnPart
    with pytest.warns(DeprecationWarning, match='use `edgewise.agent.AgentNativeTool` instead'):
        assert agent_package.AgentBuiltinTool is agent_package.AgentNativeTool
    tools: Any = importlib.import_module('edgewise.agent.tools')
    with pytest.warns(DeprecationWarning, match='use `edgewise.agent.tools.NativeToolFunc` instead'):
        assert tools.BuiltinToolFunc is tools.NativeToolFunc
    with pytest.raises(AttributeError):
        _ = tools.NotAName


def test_the_old_native_tool_events_are_deprecated() -> None:
    from edgewise.agent.messages import BuiltinToolCallEvent, BuiltinToolResultEvent

    call = NativeToolCallPart('web_search')
    with pytest.warns(DeprecationWarning, match='with `NativeToolCallPart` instead'):
        assert BuiltinToolCallEvent(call).event_kind == 'builtin_tool_call'  # pyright: ignore[reportDeprecated]
    with pytest.warns(DeprecationWarning, match='with `NativeToolReturnPart` instead'):
        event = BuiltinToolResultEvent(NativeToolReturnPart('web_search', None))  # pyright: ignore[reportDeprecated]
    assert event.event_kind == 'builtin_tool_result'


def test_a_tool_call_delta_applies_to_a_native_call() -> None:
    part = NativeToolCallPart('mcp_server:wiki', '{"a":', 'id_1', provider_name='anthropic')
    applied = ToolCallPartDelta(args_delta='1}').apply(part)
    assert applied == NativeToolCallPart('mcp_server:wiki', '{"a":1}', 'id_1', provider_name='anthropic')
    with pytest.raises(ValueError, match='Cannot apply a ToolCallPartDelta to TextPart'):
        ToolCallPartDelta(args_delta='x').apply(TextPart('t'))


def test_request_parameters_take_the_old_builtin_tools_name() -> None:
    with pytest.warns(DeprecationWarning, match='`builtin_tools` is deprecated, use `native_tools` instead.'):
        params = ModelRequestParameters(builtin_tools=[WebSearchTool()])  # type: ignore[call-arg]
    assert params.native_tools == [WebSearchTool()]
    with pytest.warns(DeprecationWarning, match='use `ModelRequestParameters.native_tools` instead'):
        assert params.builtin_tools == [WebSearchTool()]


# --- the agent ---------------------------------------------------------------------------------------------------


def _recording() -> tuple[FunctionModel, list[list[AbstractNativeTool]]]:
    seen: list[list[AbstractNativeTool]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.model_request_parameters.native_tools)
        return ModelResponse([TextPart('ok')])

    return FunctionModel(answer), seen


async def test_agent_builtin_tools_reach_the_model_with_a_deprecation_warning() -> None:
    model, seen = _recording()
    with pytest.warns(DeprecationWarning, match=_AGENT_BUILTIN):
        agent = Agent(model, builtin_tools=[WebSearchTool(max_uses=1)])
    await agent.run('hi')
    assert seen == [[WebSearchTool(max_uses=1)]]


async def test_run_builtin_tools_add_to_the_agents_and_functions_build_them_per_step() -> None:
    model, seen = _recording()
    with pytest.warns(DeprecationWarning, match=_AGENT_BUILTIN):
        agent = Agent(model, builtin_tools=[WebSearchTool()], deps_type=bool)

    def code_if_asked(ctx: RunContext[bool]) -> AbstractNativeTool | None:
        return CodeExecutionTool() if ctx.deps else None

    async def fetch(ctx: RunContext[bool]) -> AbstractNativeTool:
        return WebFetchTool(max_uses=ctx.run_step)

    with pytest.warns(DeprecationWarning, match=_RUN_BUILTIN):
        await agent.run('hi', deps=True, builtin_tools=[code_if_asked, fetch])  # type: ignore[call-overload]
    with pytest.warns(DeprecationWarning, match=_RUN_BUILTIN):
        await agent.run('hi', deps=False, builtin_tools=[code_if_asked])  # type: ignore[call-overload]
    assert seen == [[WebSearchTool(), CodeExecutionTool(), WebFetchTool(max_uses=1)], [WebSearchTool()]]


async def test_text_before_a_native_call_is_not_the_output() -> None:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            [
                TextPart('Let me search. '),
                NativeToolCallPart('web_search', {'query': 'x'}, 'ws', provider_name='function'),
                NativeToolReturnPart('web_search', {'status': 'completed'}, 'ws', provider_name='function'),
                TextPart('It is sunny.'),
            ]
        )

    result = await Agent(FunctionModel(answer)).run('weather?')
    assert result.output == 'It is sunny.'


async def test_override_replaces_the_agents_native_tools() -> None:
    model, seen = _recording()
    with pytest.warns(DeprecationWarning, match=_AGENT_BUILTIN):
        agent = Agent(model, builtin_tools=[WebSearchTool()])
    with agent.override(native_tools=[CodeExecutionTool()]):
        await agent.run('hi')
    with (
        pytest.warns(DeprecationWarning, match='`builtin_tools=` is deprecated, use `native_tools=` instead'),
        agent.override(builtin_tools=[]),
    ):
        await agent.run('hi')
    await agent.run('hi')
    assert seen == [[CodeExecutionTool()], [], [WebSearchTool()]]
    with pytest.raises(UserError, match='Unknown keyword arguments: `bogus`'), agent.override(bogus=1):
        pass


async def test_capabilities_add_native_tools() -> None:
    class Searching(AbstractCapability[None]):
        def get_native_tools(self) -> list[AbstractNativeTool]:
            return [WebSearchTool(search_context_size='high')]

    model, seen = _recording()
    await Agent(model, capabilities=[Searching()]).run('hi')
    assert seen == [[WebSearchTool(search_context_size='high')]]


async def test_test_model_refuses_native_tools() -> None:
    with pytest.warns(DeprecationWarning, match=_AGENT_BUILTIN):
        agent = Agent(TestModel(), builtin_tools=[WebSearchTool()])
    with pytest.raises(UserError, match='TestModel does not support built-in tools'):
        await agent.run('hi')


async def test_function_model_streams_native_parts() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield {0: NativeToolCallPart('web_search', {'q': 'x'}, 'ws', provider_name='function')}
        yield {1: NativeToolReturnPart('web_search', ['result'], 'ws', provider_name='function')}
        yield 'Found it.'

    agent = Agent(FunctionModel(stream_function=stream))
    events: list[Any] = []
    async with agent.iter('hi') as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as parts:
                    events += [e async for e in parts if isinstance(e, PartStartEvent | PartDeltaEvent)]
    assert [type(e.part).__name__ for e in events if isinstance(e, PartStartEvent)] == [
        'NativeToolCallPart',
        'NativeToolReturnPart',
        'TextPart',
    ]
    assert run.result is not None
    assert run.result.output == 'Found it.'


async def test_a_model_without_the_tool_raises_unless_the_tool_is_optional() -> None:
    from edgewise.agent.models.openai import OpenAIChatModel
    from edgewise.agent.providers.openai import OpenAIProvider

    model = OpenAIChatModel('gpt-4o', provider=OpenAIProvider(api_key='sk-test'))
    params = ModelRequestParameters(native_tools=[CodeExecutionTool()])
    with pytest.raises(UserError) as exc_info:
        await model.request([ModelRequest.user_text_prompt('hi')], None, params)
    assert str(exc_info.value) == snapshot(
        "Native tool(s) ['CodeExecutionTool'] not supported by this model. Supported: []. Mark a tool "
        '`optional=True` to leave it out of requests to models that cannot run it, or give it a local fallback with '
        '`NativeOrLocalTool(native=..., local=...)` or the `local` argument of its capability (e.g. '
        '`WebSearch(local=my_search_function)`).'
    )


def test_native_tool_checks_drop_duplicates_and_optional_unsupported_tools() -> None:
    from edgewise.agent.models._native_support import check_native_tools

    params = ModelRequestParameters(
        native_tools=[WebSearchTool(max_uses=1), WebSearchTool(max_uses=2), CodeExecutionTool(optional=True)]
    )
    checked = check_native_tools(params, {WebSearchTool})
    assert checked.native_tools == [WebSearchTool(max_uses=2)]
    unchanged = ModelRequestParameters(native_tools=[WebSearchTool()])
    assert check_native_tools(unchanged, {WebSearchTool}) is unchanged


def test_supported_builtin_tools_is_the_deprecated_name() -> None:
    from edgewise.agent.models.anthropic import AnthropicModel
    from edgewise.agent.models.google import GoogleModel
    from edgewise.agent.models.openai import OpenAIResponsesModel

    assert {t.__name__ for t in AnthropicModel.supported_native_tools()} == snapshot(
        {
            'AdvisorTool',
            'CodeExecutionTool',
            'MCPServerTool',
            'MemoryTool',
            'ToolSearchTool',
            'WebFetchTool',
            'WebSearchTool',
        }
    )
    assert {t.__name__ for t in OpenAIResponsesModel.supported_native_tools()} == snapshot(
        {
            'CodeExecutionTool',
            'FileSearchTool',
            'ImageGenerationTool',
            'MCPServerTool',
            'ToolSearchTool',
            'WebSearchTool',
        }
    )
    assert {t.__name__ for t in GoogleModel.supported_native_tools()} == snapshot(
        {'CodeExecutionTool', 'FileSearchTool', 'WebFetchTool', 'WebSearchTool'}
    )
    with pytest.warns(DeprecationWarning, match='use `Model.supported_native_tools\\(\\)` instead'):
        assert GoogleModel.supported_builtin_tools() == GoogleModel.supported_native_tools()
