"""Anthropic's own tool search (`ToolSearchTool`) over a real local HTTP server: the search tool and the
`defer_loading` function tools in the request, its `server_tool_use` / `tool_search_tool_result` blocks read as
native tool parts (streamed or not) and sent back in the next request; models without tool search refuse it."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from dirty_equals import IsDatetime

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.native_tools import (
    NATIVE_TOOLS_REQUIRING_CONFIG,
    SUPPORTED_NATIVE_TOOLS,
    AbstractNativeTool,
    WebSearchTool,
)
from edgewise.agent.native_tools._tool_search import TOOL_SEARCH_FUNCTION_TOOL_NAME, ToolSearchTool
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.tools import ToolDefinition

from ._helpers import validate_anthropic_body
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {'type': 'object', 'properties': {'city': {'type': 'string'}}}
FUNCTIONS = [
    ToolDefinition(name='get_time', parameters_json_schema=SCHEMA, description='The time in a city.'),
    ToolDefinition(
        name='get_weather', parameters_json_schema=SCHEMA, description='The weather in a city.', defer_loading=True
    ),
]
QUESTION: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('Weather in Paris?')])]


def _model(server: LocalServer) -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return AnthropicModel('claude-sonnet-4-5', provider=provider)


def _params(tool: AbstractNativeTool) -> ModelRequestParameters:
    return ModelRequestParameters(native_tools=[tool], function_tools=list(FUNCTIONS))


def _answer(*content: dict[str, Any], stop_reason: str = 'tool_use') -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': list(content),
        'stop_reason': stop_reason,
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


def _search_blocks(name: str, query: dict[str, str], result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {'type': 'server_tool_use', 'id': 'srvtoolu_1', 'name': name, 'input': query},
        {'type': 'tool_search_tool_result', 'tool_use_id': 'srvtoolu_1', 'content': result},
    ]


FOUND = {
    'type': 'tool_search_tool_search_result',
    'tool_references': [{'type': 'tool_reference', 'tool_name': 'get_weather'}],
}
CALL = {'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather', 'input': {'city': 'Paris'}}


async def _two_turns(server: LocalServer, tool: ToolSearchTool, first: ModelResponse) -> list[dict[str, Any]]:
    """Send the question, then the history with `first` and the answer of its function call; the bodies sent."""
    history: list[ModelMessage] = [
        *QUESTION,
        first,
        ModelRequest(parts=[ToolReturnPart('get_weather', 'sunny', 'toolu_1')]),
    ]
    server.script(Reply(body=_answer({'type': 'text', 'text': 'Sunny.'}, stop_reason='end_turn')))
    async with _model(server) as model:
        await model.request(history, None, _params(tool))
    bodies = [r['body'] for r in server.received]
    for body in bodies:
        validate_anthropic_body(body)
    return bodies


async def test_bm25_search_goes_out_with_the_deferred_tools_and_comes_back_as_native_parts(
    local_server: LocalServer,
) -> None:
    local_server.script(
        Reply(body=_answer(*_search_blocks('tool_search_tool_bm25', {'query': 'weather'}, FOUND), CALL))
    )
    async with _model(local_server) as model:
        response = await model.request(QUESTION, None, _params(ToolSearchTool()))

    tools = local_server.received[0]['body']['tools']
    assert [(t['name'], t.get('type'), t.get('defer_loading')) for t in tools] == [
        ('get_time', None, None),
        ('get_weather', None, True),
        ('tool_search_tool_bm25', 'tool_search_tool_bm25_20251119', None),
    ]
    assert response.parts == [
        NativeToolCallPart(
            'tool_search',
            {'queries': ['weather']},
            'srvtoolu_1',
            provider_name='anthropic',
            provider_details={'strategy': 'bm25'},
            tool_kind='tool-search',
        ),
        NativeToolReturnPart(
            'tool_search',
            {'discovered_tools': [{'name': 'get_weather'}]},
            'srvtoolu_1',
            provider_name='anthropic',
            timestamp=IsDatetime(),  # type: ignore[arg-type]
            tool_kind='tool-search',
        ),
        ToolCallPart('get_weather', {'city': 'Paris'}, 'toolu_1'),
    ]

    bodies = await _two_turns(local_server, ToolSearchTool(), response)
    assert bodies[1]['messages'][1] == {
        'role': 'assistant',
        'content': [*_search_blocks('tool_search_tool_bm25', {'query': 'weather'}, FOUND), CALL],
    }


async def test_regex_search_and_its_error_are_sent_back_as_anthropic_made_them(local_server: LocalServer) -> None:
    error = {'type': 'tool_search_tool_result_error', 'error_code': 'invalid_tool_input', 'error_message': 'bad'}
    local_server.script(Reply(body=_answer(*_search_blocks('tool_search_tool_regex', {'pattern': 'wea.*'}, error))))
    async with _model(local_server) as model:
        response = await model.request(QUESTION, None, _params(ToolSearchTool(strategy='regex')))

    assert local_server.received[0]['body']['tools'][-1] == {
        'name': 'tool_search_tool_regex',
        'type': 'tool_search_tool_regex_20251119',
    }
    call, result = response.parts
    assert isinstance(call, NativeToolCallPart)
    assert isinstance(result, NativeToolReturnPart)
    assert (call.args, call.provider_details) == ({'queries': ['wea.*']}, {'strategy': 'regex'})
    assert (result.content, result.provider_details) == (
        {'discovered_tools': []},
        {'error_code': 'invalid_tool_input', 'error_message': 'bad'},
    )

    bodies = await _two_turns(local_server, ToolSearchTool(strategy='regex'), response)
    assert bodies[1]['messages'][1]['content'] == _search_blocks('tool_search_tool_regex', {'pattern': 'wea.*'}, error)


async def test_stored_search_parts_are_sent_back_in_anthropic_shapes(local_server: LocalServer) -> None:
    """Parts stored without a known variant go back as BM25 searches; an error without a message has none; a result
    whose content is not a tool search's answer is left out."""
    stored = ModelResponse(
        parts=[
            NativeToolCallPart('tool_search', {'queries': []}, 'a', provider_name='anthropic'),
            NativeToolReturnPart(
                'tool_search', {}, 'a', provider_name='anthropic', provider_details={'error_code': 'unavailable'}
            ),
            NativeToolReturnPart('tool_search', 'not an answer', 'b', provider_name='anthropic'),
            NativeToolCallPart('tool_search', {'queries': ['x']}, 'c', provider_name='openai'),
        ],
        provider_name='anthropic',
    )
    local_server.script(Reply(body=_answer({'type': 'text', 'text': 'ok'}, stop_reason='end_turn')))
    async with _model(local_server) as model:
        await model.request(
            [*QUESTION, stored, ModelRequest(parts=[UserPromptPart('go on')])], None, _params(ToolSearchTool())
        )
    body = local_server.received[0]['body']
    validate_anthropic_body(body)
    assert body['messages'][1]['content'] == [
        {'type': 'server_tool_use', 'id': 'a', 'name': 'tool_search_tool_bm25', 'input': {'query': ''}},
        {
            'type': 'tool_search_tool_result',
            'tool_use_id': 'a',
            'content': {'type': 'tool_search_tool_result_error', 'error_code': 'unavailable'},
        },
    ]


async def test_streamed_search_builds_its_arguments_from_the_input_deltas(local_server: LocalServer) -> None:
    events: list[dict[str, Any]] = [
        {'type': 'message_start', 'message': _answer()},
        {'type': 'content_block_start', 'index': 0,
         'content_block': {'type': 'server_tool_use', 'id': 'srvtoolu_1', 'name': 'tool_search_tool_bm25',
                           'input': {}}},
        {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': '{"que'}},
        {'type': 'content_block_delta', 'index': 0,
         'delta': {'type': 'input_json_delta', 'partial_json': 'ry": "weather"}'}},
        {'type': 'content_block_stop', 'index': 0},
        {'type': 'content_block_start', 'index': 1,
         'content_block': {'type': 'tool_search_tool_result', 'tool_use_id': 'srvtoolu_1', 'content': FOUND}},
        {'type': 'content_block_stop', 'index': 1},
        {'type': 'content_block_start', 'index': 2,
         'content_block': {'type': 'server_tool_use', 'id': 'srvtoolu_2', 'name': 'tool_search_tool_regex',
                           'input': {}}},
        {'type': 'content_block_delta', 'index': 2, 'delta': {'type': 'input_json_delta', 'partial_json': '{"pat'}},
        {'type': 'content_block_stop', 'index': 2},
        {'type': 'content_block_start', 'index': 3,
         'content_block': {'type': 'server_tool_use', 'id': 'srvtoolu_3', 'name': 'tool_search_tool_bm25',
                           'input': {'query': 'time'}}},
        {'type': 'content_block_stop', 'index': 3},
        {'type': 'message_delta', 'delta': {'stop_reason': 'end_turn'}, 'usage': {'output_tokens': 3}},
        {'type': 'message_stop'},
    ]  # fmt: skip
    chunks = [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]
    local_server.script(Reply(headers={'content-type': 'text/event-stream'}, chunks=chunks))
    async with _model(local_server) as model, model.request_stream(QUESTION, None, _params(ToolSearchTool())) as s:
        async for _ in s:
            pass
    parts = s.get().parts
    assert [
        (type(p).__name__, p.tool_call_id, p.args if isinstance(p, NativeToolCallPart) else p.content)
        for p in parts
        if isinstance(p, NativeToolCallPart | NativeToolReturnPart)
    ] == [
        ('NativeToolCallPart', 'srvtoolu_1', {'queries': ['weather']}),
        ('NativeToolReturnPart', 'srvtoolu_1', {'discovered_tools': [{'name': 'get_weather'}]}),
        # A cut-off input is no query.
        ('NativeToolCallPart', 'srvtoolu_2', {'queries': []}),
        ('NativeToolCallPart', 'srvtoolu_3', {'queries': ['time']}),
    ]


async def test_a_search_function_of_the_agent_is_refused(local_server: LocalServer) -> None:
    async with _model(local_server) as model:
        with pytest.raises(UserError, match=r"ToolSearchTool\(strategy='custom'\)"):
            await model.request(QUESTION, None, _params(ToolSearchTool(strategy='custom')))
    assert local_server.received == []


async def test_models_without_tool_search_refuse_it_unless_optional(local_server: LocalServer) -> None:
    local_server.script(Reply(body={'id': 'c', 'object': 'chat.completion', 'created': 0, 'model': 'gpt-4o',
                                    'choices': [{'index': 0, 'finish_reason': 'stop',
                                                 'message': {'role': 'assistant', 'content': 'hi'}}]}))  # fmt: skip
    provider = OpenAIProvider(api_key='sk-test', base_url=local_server.url)
    assert ToolSearchTool in AnthropicModel.supported_native_tools()
    assert ToolSearchTool in OpenAIResponsesModel.supported_native_tools()
    assert ToolSearchTool not in OpenAIChatModel.supported_native_tools()
    async with OpenAIChatModel('gpt-4o', provider=provider) as model:
        with pytest.raises(UserError, match=r"\['ToolSearchTool'\] not supported by this model"):
            await model.request(QUESTION, None, _params(ToolSearchTool()))
        await model.request(QUESTION, None, _params(ToolSearchTool(optional=True)))
    assert len(local_server.received) == 1
    assert 'tools' not in local_server.received[0]['body'] or all(
        t.get('function', {}).get('name') != 'tool_search' for t in local_server.received[0]['body']['tools']
    )


async def test_claude_models_before_tool_search_refuse_it(local_server: LocalServer) -> None:
    provider = AnthropicProvider(api_key='sk-test', base_url=local_server.url.removesuffix('/v1'), max_retries=0)
    async with AnthropicModel('claude-sonnet-4-0', provider=provider) as model:
        assert model.tool_deferral_mode is None
        with pytest.raises(UserError, match=r"\['ToolSearchTool'\] not supported by this model"):
            await model.request(QUESTION, None, _params(ToolSearchTool()))
    assert local_server.received == []


def test_tool_search_tool_is_a_serializable_native_tool() -> None:
    adapter = pydantic.TypeAdapter(list[AbstractNativeTool])
    tools = [ToolSearchTool(strategy='regex'), WebSearchTool()]
    dumped = adapter.dump_python(tools, mode='json')
    assert dumped[0] == {'kind': 'tool_search', 'optional': False, 'strategy': 'regex'}
    assert adapter.validate_python(dumped) == tools
    assert ToolSearchTool().label == 'Tool Search'
    assert ToolSearchTool in SUPPORTED_NATIVE_TOOLS
    assert ToolSearchTool in NATIVE_TOOLS_REQUIRING_CONFIG
    assert TOOL_SEARCH_FUNCTION_TOOL_NAME == 'search_tools'
