"""`MistralModel` against a real HTTP server on 127.0.0.1 speaking Mistral's chat completions wire format."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from edgewise.agent import Agent
from edgewise.agent.exceptions import (
    ModelAuthenticationError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    UnexpectedModelBehavior,
    UserError,
)
from edgewise.agent.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models._tool_call_ids import ToolCallIds
from edgewise.agent.models.mistral import MistralModel, MistralModelSettings, MistralStreamedResponse
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.output import NativeOutput, PromptedOutput
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.profiles.mistral import mistral_model_profile
from edgewise.agent.providers import infer_provider
from edgewise.agent.providers.mistral import MistralProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.settings import ToolOrOutput
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.usage import RequestUsage

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

KEY = 'mistral-secret-key-1234'
USAGE = {'prompt_tokens': 12, 'completion_tokens': 5, 'total_tokens': 17}


def completion(content: Any = 'Hello.', *, tool_calls: Any = None, finish_reason: str = 'stop', **extra: Any) -> Any:
    message: dict[str, Any] = {'role': 'assistant', 'content': content}
    if tool_calls is not None:
        message['tool_calls'] = tool_calls
    return {
        'id': 'cmpl-1', 'object': 'chat.completion', 'created': 1700000000, 'model': 'mistral-small-2603',
        'choices': [{'index': 0, 'message': message, 'finish_reason': finish_reason}], 'usage': USAGE, **extra,
    }  # fmt: skip


def call(name: str, arguments: dict[str, Any], call_id: str = 'Ab3dE6gH9') -> dict[str, Any]:
    return {'id': call_id, 'type': 'function', 'function': {'name': name, 'arguments': json.dumps(arguments)}}


def sse(*chunks: dict[str, Any]) -> Reply:
    common = {'id': 'cmpl-2', 'object': 'chat.completion.chunk', 'created': 1700000000, 'model': 'mistral-small-2603'}
    events = [f'data: {json.dumps({**common, **c})}\n\n' for c in chunks]
    data = [e.encode() for e in events] + [b'data: [DONE]\n\n']
    return Reply(200, headers={'content-type': 'text/event-stream'}, chunks=data)


def delta(finish_reason: str | None = None, usage: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    chunk: dict[str, Any] = {'choices': [{'index': 0, 'delta': fields, 'finish_reason': finish_reason}]}
    if usage is not None:
        chunk['usage'] = usage
    return chunk


@dataclass
class Api:
    """The local server, and models reaching it through one client (closed after the test)."""

    server: LocalServer
    client: httpx.AsyncClient

    def model(self, name: str = 'mistral-small-latest', **kwargs: Any) -> MistralModel:
        base_url = self.server.url.removesuffix('/v1')
        provider = MistralProvider(api_key=KEY, base_url=base_url, http_client=self.client, max_retries=0)
        return MistralModel(name, provider=provider, **kwargs)


@pytest.fixture
async def api(local_server: LocalServer) -> AsyncIterator[Api]:
    async with httpx.AsyncClient() as client:
        yield Api(local_server, client)


def user(text: str, instructions: str | None = None) -> list[Any]:
    return [ModelRequest.user_text_prompt(text, instructions=instructions)]


def tool(name: str = 'get_weather', kind: Any = 'function') -> ToolDefinition:
    schema = {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}
    return ToolDefinition(name=name, description='Weather of a city', parameters_json_schema=schema, kind=kind)


def test_mistral_names_resolve_to_the_model_and_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('MISTRAL_API_KEY', KEY)
    inferred = infer_model('mistral:mistral-large-latest')
    assert type(inferred) is MistralModel
    assert (inferred.system, inferred.model_name, inferred.base_url) == (
        'mistral', 'mistral-large-latest', 'https://api.mistral.ai'
    )  # fmt: skip
    assert type(infer_provider('mistral')) is MistralProvider
    assert KEY not in repr(inferred)
    assert KEY not in repr(inferred.provider)
    assert inferred.profile['tool_call_id_length'] == 9
    assert inferred.profile['supports_inline_system_prompts'] is True


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('MISTRAL_API_KEY', raising=False)
    with pytest.raises(
        UserError, match=r'Set the `MISTRAL_API_KEY` environment variable or pass it via `MistralProvider'
    ):
        MistralProvider()


def test_profiles_of_reasoning_models() -> None:
    adjustable = MistralProvider.model_profile('mistral-medium-latest')
    assert (adjustable['supports_thinking'], adjustable['thinking_always_enabled']) == (True, False)
    always = MistralProvider.model_profile('magistral-medium-2507')
    assert (always['supports_thinking'], always['thinking_always_enabled']) == (True, True)
    assert 'supports_thinking' not in MistralProvider.model_profile('mistral-small-2506')


async def test_a_text_answer_and_what_the_request_carried(api: Api) -> None:
    api.server.script(Reply(200, completion('Hello.')))
    response = await api.model().request(user('Hi', instructions='Be brief.'), None, ModelRequestParameters())
    assert response.parts == [TextPart('Hello.')]
    assert response.usage == RequestUsage(input_tokens=12, output_tokens=5)
    assert (response.model_name, response.provider_name, response.provider_response_id) == (
        'mistral-small-2603', 'mistral', 'cmpl-1'
    )  # fmt: skip
    assert response.finish_reason == 'stop'
    assert response.provider_details is not None
    assert response.provider_details['finish_reason'] == 'stop'
    assert response.provider_details['timestamp'].year == 2023
    assert response.provider_url == api.server.url.removesuffix('/v1')
    received = api.server.received[0]
    assert received['path'] == '/v1/chat/completions'
    assert received['headers']['authorization'] == f'Bearer {KEY}'
    assert received['body'] == {
        'model': 'mistral-small-latest',
        'messages': [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Hi'}],
        'stream': False,
        'n': 1,
        'top_p': 1,
    }


async def test_settings_go_out_under_mistral_names(api: Api) -> None:
    api.server.script(Reply(200, completion()))
    settings: MistralModelSettings = {
        'max_tokens': 50, 'temperature': 0.2, 'top_p': 0.9, 'seed': 7, 'presence_penalty': 0.1,
        'frequency_penalty': 0.3, 'stop_sequences': ['END'], 'parallel_tool_calls': False,
        'mistral_prompt_cache_key': 'conv-1', 'logit_bias': {'1': 2}, 'top_k': 3,
    }  # fmt: skip
    await api.model().request(user('Hi'), settings, ModelRequestParameters(function_tools=[tool()]))
    body = api.server.received[0]['body']
    assert {k: v for k, v in body.items() if k not in ('messages', 'tools')} == {
        'model': 'mistral-small-latest', 'stream': False, 'n': 1, 'tool_choice': 'auto', 'top_p': 0.9,
        'max_tokens': 50, 'temperature': 0.2, 'random_seed': 7, 'presence_penalty': 0.1, 'frequency_penalty': 0.3,
        'stop': ['END'], 'parallel_tool_calls': False, 'prompt_cache_key': 'conv-1',
    }  # fmt: skip
    assert body['tools'] == [
        {
            'type': 'function',
            'function': {
                'name': 'get_weather',
                'description': 'Weather of a city',
                'parameters': {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']},
            },
        }
    ]


async def test_tool_calls_come_back_and_their_history_is_sent_with_fitted_ids(api: Api) -> None:
    api.server.script(
        Reply(200, completion('', tool_calls=[call('get_weather', {'city': 'Paris'})], finish_reason='tool_calls')),
        Reply(200, completion('Sunny.')),
    )
    mistral = api.model()
    params = ModelRequestParameters(function_tools=[tool()])
    first = await mistral.request(user('Weather?'), None, params)
    assert first.parts == [ToolCallPart('get_weather', '{"city": "Paris"}', 'Ab3dE6gH9')]
    assert first.finish_reason == 'tool_call'
    history = [
        *user('Weather?'),
        ModelResponse(parts=[ToolCallPart('get_weather', {'city': 'Lyon'}, 'call_from_openai'), first.parts[0]]),
        ModelRequest(
            parts=[
                ToolReturnPart('get_weather', 'Rain', 'call_from_openai'),
                RetryPromptPart('Say the city', tool_name='get_weather', tool_call_id='Ab3dE6gH9'),
                UserPromptPart('And tomorrow?'),
            ]
        ),
    ]
    await mistral.request(history, None, params)
    messages = api.server.received[1]['body']['messages']
    fitted = messages[1]['tool_calls'][0]['id']
    assert len(fitted) == 9
    assert fitted.isalnum()
    assert fitted != 'call_from_openai'
    assert messages[1] == {
        'role': 'assistant',
        'content': [],
        'tool_calls': [
            {'id': fitted, 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city":"Lyon"}'}},
            {
                'id': 'Ab3dE6gH9',
                'type': 'function',
                'function': {'name': 'get_weather', 'arguments': '{"city": "Paris"}'},
            },
        ],
    }
    assert messages[2] == {'role': 'tool', 'tool_call_id': fitted, 'content': 'Rain'}
    assert messages[3]['role'] == 'tool'
    assert messages[3]['tool_call_id'] == 'Ab3dE6gH9'
    assert 'Say the city' in messages[3]['content']
    # Mistral takes no user message right after a tool message: an assistant 'OK' goes between.
    assert messages[4:] == [
        {'role': 'assistant', 'content': [{'type': 'text', 'text': 'OK'}]},
        {'role': 'user', 'content': 'And tomorrow?'},
    ]


@pytest.mark.parametrize(
    ('settings', 'expected_tools', 'expected_choice'),
    [
        ({}, ['get_weather', 'final_result'], 'any'),
        # Function tools off: the output tool is named, and every tool still goes out (the prefix stays cacheable).
        (
            {'tool_choice': 'none'},
            ['get_weather', 'final_result'],
            {'type': 'function', 'function': {'name': 'final_result'}},
        ),
        (
            {'tool_choice': ['get_weather']},
            ['get_weather', 'final_result'],
            {'type': 'function', 'function': {'name': 'get_weather'}},
        ),
    ],
)
async def test_tool_choice(api: Api, settings: dict[str, Any], expected_tools: list[str], expected_choice: Any) -> None:
    api.server.script(Reply(200, completion()))
    params = ModelRequestParameters(function_tools=[tool()], output_tools=[tool('final_result', 'output')],
                                    allow_text_output=False)  # fmt: skip
    await api.model().request(user('Hi'), settings, params)  # type: ignore[arg-type]
    body = api.server.received[0]['body']
    assert [t['function']['name'] for t in body['tools']] == expected_tools
    assert body['tool_choice'] == expected_choice


async def test_tool_choice_none_sends_no_tools(api: Api) -> None:
    api.server.script(Reply(200, completion()))
    await api.model().request(user('Hi'), {'tool_choice': 'none'}, ModelRequestParameters(function_tools=[tool()]))
    assert {'tools', 'tool_choice'}.isdisjoint(api.server.received[0]['body'])


async def test_thinking_chunks_both_ways_and_the_reasoning_effort(api: Api) -> None:
    content = [
        {'type': 'thinking', 'thinking': [{'type': 'text', 'text': 'Let me think.'}]},
        {'type': 'reference', 'reference_ids': [1]},
        {'type': 'text', 'text': 'It is '},
        {'type': 'text', 'text': '42.'},
    ]
    api.server.script(Reply(200, completion(content)), Reply(200, completion()), Reply(200, completion()))
    mistral = api.model('mistral-medium-latest')
    response = await mistral.request(user('Q'), {'thinking': 'low'}, ModelRequestParameters())
    assert response.parts == [ThinkingPart('Let me think.'), TextPart('It is 42.')]
    assert api.server.received[0]['body']['reasoning_effort'] == 'high'
    await mistral.request([*user('Q'), response, *user('Again')], {'thinking': False}, ModelRequestParameters())
    body = api.server.received[1]['body']
    assert body['reasoning_effort'] == 'none'
    assert body['messages'][1] == {
        'role': 'assistant',
        'content': [
            {'type': 'thinking', 'thinking': [{'type': 'text', 'text': 'Let me think.'}]},
            {'type': 'text', 'text': 'It is 42.'},
        ],
        'tool_calls': [],
    }
    # A model that always reasons is sent no effort.
    await api.model('magistral-medium-2507').request(user('Q'), {'thinking': False}, ModelRequestParameters())
    assert 'reasoning_effort' not in api.server.received[2]['body']


async def test_files_in_the_prompt(api: Api) -> None:
    api.server.script(Reply(200, completion()))
    prompt = UserPromptPart(
        [
            'Look:',
            ImageUrl('https://example.com/a.png', vendor_metadata={'detail': 'low'}),
            BinaryContent(b'\x89PNG', media_type='image/png'),
            DocumentUrl('https://example.com/doc.pdf'),
            BinaryContent(b'%PDF-1.4', media_type='application/pdf'),
            BinaryContent(b'a,b', media_type='text/csv', identifier='t1'),
        ]
    )
    await api.model().request([ModelRequest(parts=[prompt])], None, ModelRequestParameters())
    content = api.server.received[0]['body']['messages'][0]['content']
    assert content[:2] == [
        {'type': 'text', 'text': 'Look:'},
        {'type': 'image_url', 'image_url': {'url': 'https://example.com/a.png', 'detail': 'low'}},
    ]
    assert content[2] == {'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,iVBORw=='}}
    assert content[3] == {'type': 'document_url', 'document_url': 'https://example.com/doc.pdf'}
    assert content[4] == {'type': 'document_url', 'document_url': 'data:application/pdf;base64,JVBERi0xLjQ='}
    assert content[5]['type'] == 'text'
    assert 'a,b' in content[5]['text']
    assert 't1' in content[5]['text']


async def test_audio_is_refused_before_any_request(api: Api) -> None:
    prompt = UserPromptPart(['Hear', AudioUrl('https://example.com/a.mp3')])
    with pytest.raises(UserError, match=r"Model 'mistral-small-latest' cannot take AudioUrl in user prompts"):
        await api.model().request([ModelRequest(parts=[prompt])], None, ModelRequestParameters())
    assert api.server.received == []


async def test_a_context_window_overflow_and_a_bad_key_are_their_categories(api: Api) -> None:
    overflow = {'object': 'error', 'message': 'Prompt contains 40000 tokens, too large',
                'type': 'invalid_request_error', 'param': None, 'code': '3051'}  # fmt: skip
    api.server.script(Reply(400, overflow), Reply(401, {'message': f'Unauthorized key {KEY}', 'code': 1000}))
    mistral = api.model()
    with pytest.raises(ModelContextWindowExceededError) as too_long:
        await mistral.request(user('Hi'), None, ModelRequestParameters())
    assert isinstance(too_long.value, ModelHTTPError)
    assert (too_long.value.status_code, too_long.value.provider_error_code) == (400, '3051')
    assert too_long.value.provider_error_type == 'invalid_request_error'
    with pytest.raises(ModelAuthenticationError) as denied:
        await mistral.request(user('Hi'), None, ModelRequestParameters())
    assert isinstance(denied.value, ModelHTTPError)
    assert denied.value.provider_error_code == '1000'
    assert KEY not in str(denied.value)
    assert KEY not in repr(denied.value.body)


async def test_a_body_without_choices_is_unexpected(api: Api) -> None:
    api.server.script(Reply(200, {'id': 'x', 'choices': []}))
    with pytest.raises(UnexpectedModelBehavior, match='expected a chat completion with choices'):
        await api.model().request(user('Hi'), None, ModelRequestParameters())


async def test_a_streamed_answer_with_thinking_text_a_tool_call_and_usage(api: Api) -> None:
    api.server.script(
        sse(
            delta(role='assistant', content=''),
            delta(content=[{'type': 'thinking', 'thinking': [{'type': 'text', 'text': 'Hmm.'}]}]),
            delta(content='Checking '),
            delta(content='now.'),
            delta(
                tool_calls=[
                    {'id': 'Zz9Yy8Xx7', 'index': 0, 'function': {'name': 'get_weather', 'arguments': '{"city":'}}
                ]
            ),
            delta(tool_calls=[{'id': 'null', 'index': 0, 'function': {'name': '', 'arguments': ' "Oslo"}'}}]),
            delta('tool_calls', usage=USAGE),
        )
    )
    params = ModelRequestParameters(function_tools=[tool()])
    async with api.model().request_stream(user('Weather?'), None, params) as stream:
        assert isinstance(stream, MistralStreamedResponse)
        kinds = [type(event).__name__ for event in [e async for e in stream]]
    assert kinds.count('PartStartEvent') == 3
    response = stream.get()
    assert response.parts == [
        ThinkingPart('Hmm.'),
        TextPart('Checking now.'),
        ToolCallPart('get_weather', '{"city": "Oslo"}', 'Zz9Yy8Xx7'),
    ]
    assert response.usage == RequestUsage(input_tokens=12, output_tokens=5)
    assert (response.finish_reason, response.model_name, response.provider_response_id) == (
        'tool_call', 'mistral-small-2603', 'cmpl-2'
    )  # fmt: skip
    assert response.provider_details is not None
    assert response.provider_details['finish_reason'] == 'tool_calls'
    body = api.server.received[0]['body']
    assert (body['stream'], body['n'], body['top_p'], body['tool_choice']) == (True, 1, 1, 'auto')


async def test_a_streamed_request_without_tools_sends_no_n_nor_top_p(api: Api) -> None:
    api.server.script(sse(delta(content='Hi.'), delta('stop', usage=USAGE)))
    async with api.model().request_stream(user('Hi'), None, ModelRequestParameters()) as stream:
        async for _ in stream:
            pass
    assert stream.get().parts == [TextPart('Hi.')]
    assert {'n', 'top_p'}.isdisjoint(api.server.received[0]['body'])


class City(BaseModel):
    name: str
    population: int


async def test_streamed_json_text_becomes_the_output_tool_call(api: Api) -> None:
    api.server.script(sse(delta(content='{"name": "Oslo", '), delta(content='"population": 700000}'), delta('stop')))
    agent = Agent(api.model(), output_type=City)
    async with agent.run_stream('A city?') as result:
        output = await result.get_output()
    assert output == City(name='Oslo', population=700000)


async def test_structured_output_through_the_output_tool(api: Api) -> None:
    answer = call('final_result', {'name': 'Paris', 'population': 2100000})
    api.server.script(Reply(200, completion(None, tool_calls=[answer], finish_reason='tool_calls')))
    result = await Agent(api.model(), output_type=City).run('A city?')
    assert result.output == City(name='Paris', population=2100000)
    body = api.server.received[0]['body']
    assert body['tool_choice'] == 'any'
    assert body['tools'][0]['function']['name'] == 'final_result'


async def test_prompted_output_puts_the_schema_in_the_instructions(api: Api) -> None:
    api.server.script(Reply(200, completion('{"name": "Rome", "population": 2800000}')))
    result = await Agent(api.model(), output_type=PromptedOutput(City)).run('A city?')
    assert result.output == City(name='Rome', population=2800000)
    system = api.server.received[0]['body']['messages'][0]
    assert system['role'] == 'system'
    assert '"population"' in system['content']


async def test_native_output_is_refused(api: Api) -> None:
    with pytest.raises(UserError, match='Native structured output is not supported by this model'):
        await Agent(api.model(), output_type=NativeOutput(City)).run('A city?')
    assert api.server.received == []


async def test_a_custom_profile_keeps_tool_call_ids_as_they_are(api: Api) -> None:
    api.server.script(Reply(200, completion()))
    mistral = api.model(profile=ModelProfile(tool_call_id_length=None))
    history = [
        *user('Q'),
        ModelResponse(parts=[ToolCallPart('get_weather', {}, 'call_long_id')]),
        ModelRequest(parts=[ToolReturnPart('get_weather', 'ok', 'call_long_id')]),
    ]
    await mistral.request(history, None, ModelRequestParameters(function_tools=[tool()]))
    messages = api.server.received[0]['body']['messages']
    assert messages[1]['tool_calls'][0]['id'] == messages[2]['tool_call_id'] == 'call_long_id'
    assert MistralModel('m', provider=mistral.provider).json_mode_schema_prompt.startswith('Answer in JSON Object')


async def test_a_choice_among_some_tools_sends_only_those(api: Api) -> None:
    api.server.script(Reply(200, completion()), Reply(200, completion()))
    params = ModelRequestParameters(function_tools=[tool(), tool('get_time'), tool('get_date')])
    await api.model().request(user('Hi'), {'tool_choice': ['get_weather', 'get_time']}, params)
    await api.model().request(user('Hi'), {'tool_choice': ToolOrOutput(function_tools=['get_time'])}, params)
    first, second = (received['body'] for received in api.server.received)
    assert ([t['function']['name'] for t in first['tools']], first['tool_choice']) == (
        ['get_weather', 'get_time'],
        'any',
    )
    assert ([t['function']['name'] for t in second['tools']], second['tool_choice']) == (['get_time'], 'auto')


def test_fitted_tool_call_ids_are_stable_and_distinct() -> None:
    ids = ToolCallIds(9)
    assert ids('Abc123xyz') == 'Abc123xyz'
    first = ids('call_1')
    assert ids('call_1') == first == ToolCallIds(9)('call_1')
    assert len({ids(f'call_{n}') for n in range(200)}) == 200
    with pytest.raises(UserError, match='must be at least 1, got 0'):
        ToolCallIds(0)
    tiny = ToolCallIds(1)
    given = {tiny(f'id-{n}') for n in range(62)}
    assert len(given) == 62
    with pytest.raises(UserError, match='more distinct tool call ids than 1 letters and digits'):
        tiny('one-too-many')


class Trip(BaseModel):
    stops: list[str]
    nights: float
    pets: None = None
    booked: bool


async def test_streamed_text_that_does_not_fit_the_output_schema_is_no_call(api: Api) -> None:
    schema = Trip.model_json_schema()
    output = ToolDefinition(name='final_result', parameters_json_schema=schema, kind='output')
    params = ModelRequestParameters(output_tools=[output], allow_text_output=False)
    api.server.script(
        sse(delta(content='not json'), {'choices': []}),
        sse(delta(content='{"stops": ["a", 1], "nights": 2, "booked": true}')),
        sse(delta(content='{"stops": ["a"], "nights": 2.5, "booked": "yes"}')),
        sse(delta(content='["a list"]')),
        sse(delta(content='{"stops": ["a"], "nights": 2, "booked": false}')),
    )
    parts = []
    for _ in range(5):
        async with api.model().request_stream(user('Trip?'), None, params) as stream:
            async for _ in stream:
                pass
        parts.append(stream.get().parts)
    assert parts[:4] == [[], [], [], []]
    (call_part,) = parts[4]
    assert isinstance(call_part, ToolCallPart)
    assert (call_part.tool_name, call_part.args) == ('final_result', {'stops': ['a'], 'nights': 2, 'booked': False})


async def test_a_mixed_history_is_mapped_part_by_part(api: Api) -> None:
    api.server.script(Reply(200, {**completion([{'type': 'text', 'text': 'Done.'}]), 'created': None}))
    image = BinaryContent(b'\x89PNG', media_type='image/png')
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart('You are terse.'), UserPromptPart('Draw')]),
        ModelResponse(
            parts=[
                NativeToolCallPart('web_search', {'q': 'x'}, 'n1', provider_name='openai'),
                ToolCallPart('draw', {}, 'call_draw'),
            ]
        ),
        ModelRequest(parts=[ToolReturnPart('draw', ['Here:', image], 'call_draw')]),
        ModelResponse(parts=[]),
        ModelRequest(parts=[RetryPromptPart('Answer in words')]),
    ]
    response = await api.model().request(history, None, ModelRequestParameters())
    assert response.parts == [TextPart('Done.')]
    assert response.provider_details == {'finish_reason': 'stop'}
    messages = api.server.received[0]['body']['messages']
    assert [m['role'] for m in messages] == ['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'user']
    fitted = ToolCallIds(9)('call_draw')
    assert messages[2]['tool_calls'][0]['id'] == messages[3]['tool_call_id'] == fitted
    # The tool's file follows the tool message, framed with the id the call went out with.
    opening, file_chunk, closing = messages[5]['content']
    assert file_chunk['type'] == 'image_url'
    assert f'tool_call_id="{fitted}"' in opening['text']
    assert closing['type'] == 'text'
    assert 'Answer in words' in messages[6]['content']


async def test_binary_audio_is_refused(api: Api) -> None:
    prompt = UserPromptPart([BinaryContent(b'RIFF', media_type='audio/wav')])
    with pytest.raises(UserError, match=r'cannot take BinaryContent \(audio/wav\) in user prompts'):
        await api.model().request([ModelRequest(parts=[prompt])], None, ModelRequestParameters())


async def test_odd_content_chunks_and_bare_stream_chunks_are_skipped(api: Api) -> None:
    odd = [
        'not a chunk',
        {'type': 'thinking', 'thinking': ['bare', {'type': 'image'}, {'type': 'text', 'text': 'Real thought.'}]},
        {'type': 'image_url', 'image_url': 'https://example.com/i.png'},
    ]
    api.server.script(
        Reply(200, completion(odd)),
        Reply(
            200,
            headers={'content-type': 'text/event-stream'},
            chunks=[
                b'data: {"choices": [{"index": 0, "delta": {"content": [{"type": "thinking", "thinking": []}]}}]}\n\n',
                b'data: {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}\n\n',
                b'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": '
                b'{"arguments": "{}"}}]}}]}\n\n',
                b'data: [DONE]\n\n',
            ],
        ),
    )
    response = await api.model().request(user('Q'), None, ModelRequestParameters())
    assert response.parts == [ThinkingPart('Real thought.')]
    async with api.model().request_stream(user('Q'), None, ModelRequestParameters()) as stream:
        async for _ in stream:
            pass
    streamed = stream.get()
    assert streamed.parts == [TextPart('Hi')]  # a call whose name never came is left out
    assert (streamed.model_name, streamed.provider_response_id, streamed.provider_details) == (
        'mistral-small-latest', None, None
    )  # fmt: skip


async def test_output_schemas_without_types_or_with_arrays(api: Api) -> None:
    schema = {
        'type': 'object',
        'properties': {'tags': {'type': 'array', 'items': [{'type': 'string'}]}, 'extra': {}, 'ids': {'type': 'array'}},
        'required': ['tags', 'extra', 'ids'],
    }
    output = ToolDefinition(name='final_result', parameters_json_schema=schema, kind='output')
    params = ModelRequestParameters(output_tools=[output], allow_text_output=False)
    api.server.script(
        sse(delta(content='{"tags": ["a", 1], "extra": {"any": 1}, "ids": "no"}')),
        sse(delta(content='{"tags": ["a", 1], "extra": {"any": 1}, "ids": [1]}')),
    )
    results = []
    for _ in range(2):
        async with api.model().request_stream(user('Q'), None, params) as stream:
            async for _ in stream:
                pass
        results.append([p.part_kind for p in stream.get().parts])
    assert results == [[], ['tool-call']]


async def test_a_text_document_url_is_downloaded_and_sent_inline(api: Api) -> None:
    root = api.server.url.removesuffix('/v1')
    api.server.files['/notes.txt'] = (200, 'text/plain', b'Buy milk.')
    api.server.script(Reply(200, completion()))
    notes = DocumentUrl(f'{root}/notes.txt', force_download='allow-local')
    await api.model().request([ModelRequest(parts=[UserPromptPart(['Read', notes])])], None, ModelRequestParameters())
    assert api.server.downloads == ['/notes.txt']
    chunk = api.server.received[0]['body']['messages'][0]['content'][1]
    assert chunk['type'] == 'text'
    assert 'Buy milk.' in chunk['text']


async def test_an_agent_run_calls_a_tool_and_answers(api: Api) -> None:
    api.server.script(
        Reply(200, completion('', tool_calls=[call('get_weather', {'city': 'Nice'})], finish_reason='tool_calls')),
        Reply(200, completion('Sunny in Nice.')),
    )
    agent = Agent(api.model(), instructions='Answer briefly.')

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return f'Sunny in {city}'

    result = await agent.run('Weather in Nice?')
    assert result.output == 'Sunny in Nice.'
    assert result.usage.input_tokens == 24
    second = api.server.received[1]['body']['messages']
    assert [m['role'] for m in second] == ['system', 'user', 'assistant', 'tool']
    assert second[3] == {'role': 'tool', 'tool_call_id': 'Ab3dE6gH9', 'content': 'Sunny in Nice'}


async def test_a_chat_completions_model_with_the_mistral_profile_fits_its_ids_too(api: Api) -> None:
    api.server.script(Reply(200, completion()), Reply(200, completion()))
    provider = OpenAIProvider(base_url=api.server.url, api_key=KEY, http_client=api.client, max_retries=0)
    history: list[ModelMessage] = [
        *user('Q'),
        ModelResponse(parts=[ToolCallPart('get_weather', {'city': 'Metz'}, 'call_abc')]),
        ModelRequest(parts=[ToolReturnPart('get_weather', 'Fog', 'call_abc')]),
    ]
    params = ModelRequestParameters(function_tools=[tool()])
    await OpenAIChatModel('mistral-small', provider=provider, profile=mistral_model_profile('mistral-small')).request(
        history, None, params
    )
    await OpenAIChatModel('gpt-4o', provider=provider).request(history, None, params)
    fitted, plain = (received['body']['messages'] for received in api.server.received)
    assert fitted[1]['tool_calls'][0]['id'] == fitted[2]['tool_call_id'] == ToolCallIds(9)('call_abc')
    assert plain[1]['tool_calls'][0]['id'] == plain[2]['tool_call_id'] == 'call_abc'
