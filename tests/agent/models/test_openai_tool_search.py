"""OpenAI Responses' own tool search (`ToolSearchTool` as the `tool_search` tool) over a real local HTTP server:
the tool and the `defer_loading` function tools in the request, the `tool_search_call` / `tool_search_output`
items read as native tool parts (streamed or not) and sent back, the namespace of a loaded tool's call kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dirty_equals import IsDatetime

from edgewise.agent.exceptions import UnexpectedModelBehavior, UserError
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.openai import OpenAIResponsesModel
from edgewise.agent.native_tools._tool_search import ToolSearchTool
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.tools import ToolDefinition

from ._helpers import validate_responses_body
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {'type': 'object', 'properties': {'city': {'type': 'string'}}}
TIME = ToolDefinition(name='get_time', parameters_json_schema=SCHEMA, description='The time in a city.')
WEATHER = ToolDefinition(
    name='get_weather', parameters_json_schema=SCHEMA, description='The weather in a city.', defer_loading=True
)
QUESTION: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('Weather in Paris?')])]

SEARCH_CALL: dict[str, Any] = {
    'type': 'tool_search_call',
    'id': 'tsc_1',
    'call_id': 'call_s',
    'execution': 'server',
    'status': 'completed',
    'arguments': {'paths': ['get_weather']},
}
WEATHER_ON_WIRE: dict[str, Any] = {
    'type': 'function',
    'name': 'get_weather',
    'parameters': SCHEMA,
    'strict': False,
    'description': 'The weather in a city.',
    'defer_loading': True,
}
SEARCH_OUTPUT: dict[str, Any] = {
    'type': 'tool_search_output',
    'id': 'tso_1',
    'call_id': 'call_s',
    'execution': 'server',
    'status': 'completed',
    'tools': [WEATHER_ON_WIRE, {'type': 'web_search'}],
}
FUNCTION_CALL: dict[str, Any] = {
    'type': 'function_call',
    'id': 'fc_1',
    'call_id': 'call_w',
    'name': 'get_weather',
    'namespace': 'get_weather',
    'arguments': '{"city": "Paris"}',
    'status': 'completed',
}


def _model(server: LocalServer, name: str = 'gpt-5.4') -> OpenAIResponsesModel:
    return OpenAIResponsesModel(name, provider=OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0))


def _params(tool: ToolSearchTool | None = None) -> ModelRequestParameters:
    return ModelRequestParameters(native_tools=[tool or ToolSearchTool()], function_tools=[TIME, WEATHER])


def _answer(*output: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': 'resp_1',
        'object': 'response',
        'created_at': 0,
        'model': 'gpt-5.4',
        'status': 'completed',
        'output': list(output),
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


CALL_PART = NativeToolCallPart(
    'tool_search',
    {'queries': ['get_weather']},
    'call_s',
    id='tsc_1',
    provider_name='openai',
    provider_details={'call_id': 'call_s', 'execution': 'server', 'status': 'completed'},
    tool_kind='tool-search',
)
RETURN_PART = NativeToolReturnPart(
    'tool_search',
    {'discovered_tools': [{'name': 'get_weather'}]},
    'call_s',
    provider_name='openai',
    provider_details={'id': 'tso_1', 'call_id': 'call_s', 'execution': 'server', 'status': 'completed'},
    timestamp=IsDatetime(),  # type: ignore[arg-type]
    tool_kind='tool-search',
)
TOOL_CALL = ToolCallPart(
    'get_weather',
    '{"city": "Paris"}',
    'call_w',
    id='fc_1',
    provider_name='openai',
    provider_details={'namespace': 'get_weather'},
)


async def test_the_search_goes_out_with_the_deferred_tools_and_comes_back_as_native_parts(
    local_server: LocalServer,
) -> None:
    local_server.script(Reply(body=_answer(SEARCH_CALL, SEARCH_OUTPUT, FUNCTION_CALL)))
    async with _model(local_server) as model:
        response = await model.request(QUESTION, None, _params())

    body = local_server.received[0]['body']
    validate_responses_body(body)
    assert body['tools'] == [
        {'type': 'function', 'name': 'get_time', 'parameters': SCHEMA, 'strict': False,
         'description': 'The time in a city.'},
        WEATHER_ON_WIRE,
        {'type': 'tool_search'},
    ]  # fmt: skip
    assert response.parts == [CALL_PART, RETURN_PART, TOOL_CALL]


async def test_the_search_and_the_loaded_tools_call_go_back_as_the_same_items(local_server: LocalServer) -> None:
    history: list[ModelMessage] = [
        *QUESTION,
        ModelResponse(parts=[CALL_PART, RETURN_PART, TOOL_CALL], provider_name='openai'),
        ModelRequest(parts=[ToolReturnPart('get_weather', 'sunny', 'call_w')]),
    ]
    local_server.script(Reply(body=_answer()))
    async with _model(local_server) as model:
        await model.request(history, None, _params())

    body = local_server.received[0]['body']
    validate_responses_body(body)
    assert body['input'][1:] == [
        {'type': 'tool_search_call', 'call_id': 'call_s', 'execution': 'server', 'status': 'completed',
         'arguments': {'queries': ['get_weather']}, 'id': 'tsc_1'},
        {'type': 'tool_search_output', 'call_id': 'call_s', 'execution': 'server', 'status': 'completed',
         'tools': [WEATHER_ON_WIRE], 'id': 'tso_1'},
        {'type': 'function_call', 'name': 'get_weather', 'arguments': '{"city": "Paris"}', 'call_id': 'call_w',
         'id': 'fc_1', 'namespace': 'get_weather'},
        {'type': 'function_call_output', 'call_id': 'call_w', 'output': 'sunny'},
    ]  # fmt: skip


async def test_item_ids_stay_home_when_ids_are_not_sent(local_server: LocalServer) -> None:
    history: list[ModelMessage] = [*QUESTION, ModelResponse(parts=[CALL_PART, RETURN_PART], provider_name='openai')]
    local_server.script(Reply(body=_answer()))
    async with _model(local_server, 'gpt-4.1') as model:  # no encrypted reasoning: ids are not sent back
        await model.request(history, None, ModelRequestParameters(function_tools=[TIME]))

    items = local_server.received[0]['body']['input'][1:]
    assert [(i['type'], 'id' in i) for i in items] == [('tool_search_call', False), ('tool_search_output', False)]
    assert items[1]['tools'] == []  # the tool it loaded is not in this request


async def test_another_providers_search_or_an_output_without_its_id_is_not_sent(local_server: LocalServer) -> None:
    bare_return = NativeToolReturnPart(
        'tool_search', {'discovered_tools': [{'name': 'get_weather'}]}, 'call_s', provider_name='openai'
    )
    history: list[ModelMessage] = [
        *QUESTION,
        ModelResponse(parts=[CALL_PART, bare_return], provider_name='openai'),
        ModelResponse(
            parts=[
                NativeToolCallPart('tool_search', {'queries': ['x']}, 'a', provider_name='anthropic'),
                ToolCallPart('get_weather', {'city': 'Rome'}, 'b', provider_details={'namespace': 'get_weather'}),
            ],
            provider_name='anthropic',
        ),
    ]
    local_server.script(Reply(body=_answer()))
    async with _model(local_server) as model:
        await model.request(history, None, _params())

    items = local_server.received[0]['body']['input'][1:]
    assert [i['type'] for i in items] == ['tool_search_call', 'function_call']
    assert 'namespace' not in items[1]


def _call_id(part: object) -> str:
    assert isinstance(part, NativeToolCallPart | NativeToolReturnPart)
    return part.tool_call_id


async def test_a_call_and_an_output_without_call_ids_pair_when_there_is_one_of_each(local_server: LocalServer) -> None:
    call = {**SEARCH_CALL, 'call_id': None, 'arguments': {'queries': ['weather']}}
    output = {**SEARCH_OUTPUT, 'call_id': None, 'status': 'bogus'}
    local_server.script(
        Reply(body=_answer(call, output)), Reply(body=_answer(call, call, output)), Reply(body=_answer())
    )
    async with _model(local_server) as model:
        paired = await model.request(QUESTION, None, _params())
        unpaired = await model.request(QUESTION, None, _params())
        assert [_call_id(p) for p in paired.parts] == ['tsc_1', 'tsc_1']
        assert [_call_id(p) for p in unpaired.parts] == ['tsc_1', 'tsc_1', 'tso_1']
        # an unknown status goes back as completed
        await model.request([*QUESTION, paired], None, _params())
    assert local_server.received[2]['body']['input'][2]['status'] == 'completed'


async def test_a_search_streamed_comes_back_whole(local_server: LocalServer) -> None:
    added = {**FUNCTION_CALL, 'arguments': ''}
    events: list[dict[str, Any]] = [
        {'type': 'response.created', 'response': {'id': 'resp_1', 'model': 'gpt-5.4'}},
        {'type': 'response.output_item.added', 'output_index': 0, 'item': {**SEARCH_CALL, 'arguments': {}}},
        {'type': 'response.output_item.done', 'output_index': 0, 'item': SEARCH_CALL},
        {'type': 'response.output_item.done', 'output_index': 1, 'item': SEARCH_OUTPUT},
        {'type': 'response.output_item.added', 'output_index': 2, 'item': added},
        {'type': 'response.function_call_arguments.delta', 'item_id': 'fc_1', 'delta': '{"city": "Paris"}'},
        {'type': 'response.completed', 'response': _answer()},
    ]
    chunks = [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]
    local_server.script(Reply(headers={'content-type': 'text/event-stream'}, chunks=chunks))
    async with _model(local_server) as model, model.request_stream(QUESTION, None, _params()) as stream:
        async for _ in stream:
            pass
    assert stream.get().parts == [CALL_PART, RETURN_PART, TOOL_CALL]
    assert local_server.received[0]['body']['stream'] is True


@pytest.mark.parametrize('strategy', ['bm25', 'regex', 'custom'])
async def test_strategies_openai_does_not_run_are_user_errors(local_server: LocalServer, strategy: Any) -> None:
    match = 'client-executed' if strategy == 'custom' else 'Anthropic-native strategy'
    async with _model(local_server) as model:
        with pytest.raises(UserError, match=match):
            await model.request(QUESTION, None, _params(ToolSearchTool(strategy=strategy)))
    assert local_server.received == []


async def test_search_arguments_of_an_unknown_shape_are_unexpected(local_server: LocalServer) -> None:
    local_server.script(
        Reply(body=_answer({**SEARCH_CALL, 'arguments': '{"queries": ["a", 1]}'})),
        Reply(body=_answer({**SEARCH_CALL, 'arguments': {}}, {**SEARCH_CALL, 'arguments': ''})),
        Reply(body=_answer({**SEARCH_CALL, 'arguments': {'what': 'x'}})),
        Reply(body=_answer({**SEARCH_CALL, 'arguments': ['x']})),
    )
    async with _model(local_server) as model:
        response = await model.request(QUESTION, None, _params())
        assert response.parts[0].args == {'queries': ['a']}  # type: ignore[union-attr]
        response = await model.request(QUESTION, None, _params())
        assert [p.args for p in response.parts] == [{'queries': []}, {'queries': []}]  # type: ignore[union-attr]
        for _ in range(2):
            with pytest.raises(UnexpectedModelBehavior, match='Unrecognized tool_search arguments shape'):
                await model.request(QUESTION, None, _params())


async def test_without_the_search_a_hidden_tool_is_withheld(local_server: LocalServer) -> None:
    # as pydantic-ai 2.68: nothing could reveal it, so it is not sent at all (only `TIME` goes)
    text = {'type': 'output_text', 'text': 'hi', 'annotations': []}
    message = {'type': 'message', 'id': 'm', 'role': 'assistant', 'status': 'completed', 'content': [text]}
    local_server.script(Reply(body=_answer(message)))
    async with _model(local_server) as model:
        response = await model.request(QUESTION, None, ModelRequestParameters(function_tools=[TIME, WEATHER]))
    assert response.parts == [TextPart('hi', id='m', provider_name='openai')]
    assert [t['name'] for t in local_server.received[0]['body']['tools']] == ['get_time']
    assert 'defer_loading' not in local_server.received[0]['body']['tools'][0]
