"""`CohereModel` against a real HTTP server on 127.0.0.1 speaking Cohere's v2 chat wire format."""

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
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelRateLimitError,
    UnexpectedModelBehavior,
    UserError,
)
from edgewise.agent.messages import (
    BinaryContent,
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
from edgewise.agent.models.cohere import CohereModel, CohereStreamedResponse
from edgewise.agent.output import PromptedOutput
from edgewise.agent.providers import infer_provider
from edgewise.agent.providers.cohere import CohereProvider
from edgewise.agent.settings import ToolOrOutput
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.usage import RequestUsage

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

KEY = 'cohere-secret-key-5678'
USAGE = {
    'billed_units': {'input_tokens': 10, 'output_tokens': 4, 'search_units': 0},
    'tokens': {'input_tokens': 210.0, 'output_tokens': 4.0},
    'cached_tokens': 200,
}


def chat(content: list[dict[str, Any]] | None = None, *, tool_calls: Any = None, finish: str = 'COMPLETE') -> Any:
    message: dict[str, Any] = {'role': 'assistant'}
    if content is not None:
        message['content'] = content
    if tool_calls is not None:
        message['tool_calls'] = tool_calls
    return {'id': 'chat-1', 'finish_reason': finish, 'message': message, 'usage': USAGE}


def text(value: str) -> list[dict[str, Any]]:
    return [{'type': 'text', 'text': value}]


def call(name: str, arguments: dict[str, Any], call_id: str = 'get_weather_abc') -> dict[str, Any]:
    return {'id': call_id, 'type': 'function', 'function': {'name': name, 'arguments': json.dumps(arguments)}}


def sse(*events: dict[str, Any]) -> Reply:
    chunks = [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]
    return Reply(200, headers={'content-type': 'text/event-stream'}, chunks=[*chunks, b'data: [DONE]\n\n'])


def args(piece: str) -> dict[str, Any]:
    """A `tool-call-delta` event of the first call, with a piece of its arguments."""
    return {
        'type': 'tool-call-delta',
        'index': 0,
        'delta': {'message': {'tool_calls': {'function': {'arguments': piece}}}},
    }


@dataclass
class Api:
    """The local server, and models reaching it through one client (closed after the test)."""

    server: LocalServer
    client: httpx.AsyncClient

    def model(self, name: str = 'command-a-03-2025') -> CohereModel:
        base_url = self.server.url.removesuffix('/v1')
        provider = CohereProvider(api_key=KEY, base_url=base_url, http_client=self.client, max_retries=0)
        return CohereModel(name, provider=provider)


@pytest.fixture
async def api(local_server: LocalServer) -> AsyncIterator[Api]:
    async with httpx.AsyncClient() as client:
        yield Api(local_server, client)


def user(prompt: str, instructions: str | None = None) -> list[Any]:
    return [ModelRequest.user_text_prompt(prompt, instructions=instructions)]


def tool(name: str = 'get_weather', kind: Any = 'function') -> ToolDefinition:
    schema = {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}
    return ToolDefinition(name=name, description='Weather of a city', parameters_json_schema=schema, kind=kind)


def test_cohere_names_resolve_to_the_model_and_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('CO_API_KEY', KEY)
    monkeypatch.delenv('CO_BASE_URL', raising=False)
    inferred = infer_model('cohere:command-a-03-2025')
    assert type(inferred) is CohereModel
    assert (inferred.system, inferred.model_name, inferred.base_url) == (
        'cohere', 'command-a-03-2025', 'https://api.cohere.com'
    )  # fmt: skip
    assert KEY not in repr(inferred)
    assert KEY not in repr(inferred.provider)
    monkeypatch.setenv('CO_BASE_URL', 'https://cohere.example.com/')
    assert infer_provider('cohere').base_url == 'https://cohere.example.com'


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('CO_API_KEY', raising=False)
    with pytest.raises(UserError, match=r'Set the `CO_API_KEY` environment variable or pass it via `CohereProvider'):
        CohereProvider()


def test_reasoning_models_can_be_switched_off_on_cohere() -> None:
    reasoning = CohereProvider.model_profile('command-a-reasoning-08-2025')
    assert (reasoning['supports_thinking'], reasoning['thinking_always_enabled']) == (True, False)
    assert CohereProvider.model_profile('command-r') == {'supports_inline_system_prompts': True}


async def test_a_text_answer_and_what_the_request_carried(api: Api) -> None:
    api.server.script(Reply(200, chat(text('Hello.'))))
    settings: Any = {'max_tokens': 20, 'temperature': 0.5, 'top_p': 0.8, 'top_k': 5, 'seed': 3,
                     'stop_sequences': ['END'], 'presence_penalty': 0.1, 'frequency_penalty': 0.2,
                     'logit_bias': {'1': 1}, 'parallel_tool_calls': True}  # fmt: skip
    response = await api.model().request(user('Hi', instructions='Be brief.'), settings, ModelRequestParameters())
    assert response.parts == [TextPart('Hello.')]
    assert response.usage == RequestUsage(
        input_tokens=210, output_tokens=4, cache_read_tokens=200, details={'input_tokens': 10, 'output_tokens': 4}
    )
    assert (response.model_name, response.provider_name, response.provider_response_id) == (
        'command-a-03-2025', 'cohere', 'chat-1'
    )  # fmt: skip
    assert (response.finish_reason, response.provider_details) == ('stop', {'finish_reason': 'COMPLETE'})
    received = api.server.received[0]
    assert received['path'] == '/v2/chat'
    assert received['headers']['authorization'] == f'Bearer {KEY}'
    assert received['body'] == {
        'model': 'command-a-03-2025',
        'messages': [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Hi'}],
        'stream': False,
        'max_tokens': 20, 'temperature': 0.5, 'p': 0.8, 'k': 5, 'seed': 3, 'stop_sequences': ['END'],
        'presence_penalty': 0.1, 'frequency_penalty': 0.2,
    }  # fmt: skip


async def test_tool_calls_come_back_and_their_history_is_sent(api: Api) -> None:
    api.server.script(
        Reply(200, chat(tool_calls=[call('get_weather', {'city': 'Oslo'})], finish='TOOL_CALL')),
        Reply(200, chat(text('Cold.'))),
    )
    cohere = api.model()
    params = ModelRequestParameters(function_tools=[tool()])
    first = await cohere.request(user('Weather?'), None, params)
    assert first.parts == [ToolCallPart('get_weather', '{"city": "Oslo"}', 'get_weather_abc')]
    assert first.finish_reason == 'tool_call'
    body = api.server.received[0]['body']
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
    assert 'tool_choice' not in body
    history = [
        *user('Weather?'),
        ModelResponse(parts=[ThinkingPart('Look it up.'), TextPart('Checking.'), *first.parts]),
        ModelRequest(
            parts=[
                ToolReturnPart('get_weather', '-5C', 'get_weather_abc'),
                RetryPromptPart('Try again', tool_name='get_weather', tool_call_id='c2'),
                RetryPromptPart('Answer in text'),
            ]
        ),
        ModelResponse(parts=[]),
    ]
    await cohere.request(history, None, params)
    messages = api.server.received[1]['body']['messages']
    assert messages[1] == {
        'role': 'assistant',
        'content': [{'type': 'thinking', 'thinking': 'Look it up.'}, {'type': 'text', 'text': 'Checking.'}],
        'tool_calls': [call('get_weather', {'city': 'Oslo'})],
    }
    assert messages[2] == {'role': 'tool', 'tool_call_id': 'get_weather_abc', 'content': '-5C'}
    assert messages[3]['tool_call_id'] == 'c2'
    assert 'Try again' in messages[3]['content']
    assert messages[4]['role'] == 'user'
    assert 'Answer in text' in messages[4]['content']
    assert len(messages) == 5  # the empty response is left out


@pytest.mark.parametrize(
    ('settings', 'allow_text', 'tools', 'choice'),
    [
        ({}, False, ['get_weather', 'get_time', 'final_result'], 'REQUIRED'),
        ({'tool_choice': 'none'}, True, ['final_result'], None),
        (
            {'tool_choice': ToolOrOutput(function_tools=['get_weather'])},
            False,
            ['get_weather', 'final_result'],
            'REQUIRED',
        ),
        ({'tool_choice': ['get_weather']}, True, ['get_weather'], 'REQUIRED'),
    ],
)
async def test_tool_choice(api: Api, settings: Any, allow_text: bool, tools: list[str], choice: str | None) -> None:
    api.server.script(Reply(200, chat(text('x'))))
    params = ModelRequestParameters(
        function_tools=[tool(), tool('get_time')], output_tools=[tool('final_result', 'output')],
        allow_text_output=allow_text,
    )  # fmt: skip
    await api.model().request(user('Hi'), settings, params)
    body = api.server.received[0]['body']
    assert [t['function']['name'] for t in body['tools']] == tools
    assert body.get('tool_choice') == choice


async def test_tool_choice_none_keeps_the_tools(api: Api) -> None:
    api.server.script(Reply(200, chat(text('x'))))
    await api.model().request(user('Hi'), {'tool_choice': 'none'}, ModelRequestParameters(function_tools=[tool()]))
    body = api.server.received[0]['body']
    assert (len(body['tools']), body['tool_choice']) == (1, 'NONE')


@pytest.mark.parametrize(
    ('thinking', 'expected'),
    [
        (True, {'type': 'enabled'}),
        (False, {'type': 'disabled'}),
        ('low', {'type': 'enabled', 'token_budget': 2048}),
        ('xhigh', {'type': 'enabled', 'token_budget': 31000}),
    ],
)
async def test_thinking_becomes_cohere_thinking(api: Api, thinking: Any, expected: dict[str, Any]) -> None:
    content = [{'type': 'thinking', 'thinking': 'Hmm.'}, {'type': 'text', 'text': '4'}]
    api.server.script(Reply(200, chat(content)))
    response = await api.model('command-a-reasoning-08-2025').request(
        user('2+2?'), {'thinking': thinking}, ModelRequestParameters()
    )
    assert response.parts == [ThinkingPart('Hmm.'), TextPart('4')]
    assert api.server.received[0]['body']['thinking'] == expected


async def test_files_are_refused_before_any_request(api: Api) -> None:
    prompt = UserPromptPart(['See', ImageUrl('https://example.com/a.png')])
    with pytest.raises(UserError, match=r"Model 'command-a-03-2025' cannot take ImageUrl in user prompts"):
        await api.model().request([ModelRequest(parts=[prompt])], None, ModelRequestParameters())
    returned = ToolReturnPart('get_weather', BinaryContent(b'\x89PNG', media_type='image/png'), 'c1')
    with pytest.raises(UserError, match=r"cannot take files in tool results \(tool 'get_weather'\)"):
        await api.model().request([ModelRequest(parts=[returned])], None, ModelRequestParameters())
    assert api.server.received == []


async def test_errors_are_their_categories(api: Api) -> None:
    api.server.script(
        Reply(400, {'message': 'too many tokens: size limit exceeded by 1200 tokens'}),
        Reply(429, {'message': f'slow down {KEY}'}),
        Reply(200, {'id': 'x'}),
    )
    cohere = api.model()
    with pytest.raises(ModelContextWindowExceededError):
        await cohere.request(user('Hi'), None, ModelRequestParameters())
    with pytest.raises(ModelRateLimitError) as limited:
        await cohere.request(user('Hi'), None, ModelRequestParameters())
    assert isinstance(limited.value, ModelHTTPError)
    assert KEY not in repr(limited.value.body)
    with pytest.raises(UnexpectedModelBehavior, match='expected a chat response with a message'):
        await cohere.request(user('Hi'), None, ModelRequestParameters())


async def test_a_streamed_answer_with_thinking_text_a_tool_call_and_usage(api: Api) -> None:
    api.server.script(
        sse(
            {'type': 'message-start', 'id': 'chat-2', 'delta': {'message': {'role': 'assistant'}}},
            {'type': 'content-start', 'index': 0,
             'delta': {'message': {'content': {'type': 'thinking', 'thinking': ''}}}},
            {'type': 'content-delta', 'index': 0, 'delta': {'message': {'content': {'thinking': 'Hmm.'}}}},
            {'type': 'content-delta', 'index': 1, 'delta': {'message': {'content': {'text': 'Looking '}}}},
            {'type': 'content-delta', 'index': 1, 'delta': {'message': {'content': {'text': 'up.'}}}},
            {'type': 'tool-plan-delta', 'delta': {'message': {'tool_plan': 'I will call the tool.'}}},
            {'type': 'tool-call-start', 'index': 0, 'delta': {'message': {'tool_calls': {
                'id': 'call-9', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': ''}}}}},
            args('{"city": '),
            args('"Rome"}'),
            {'type': 'tool-call-end', 'index': 0},
            {'type': 'message-end', 'delta': {'finish_reason': 'TOOL_CALL', 'usage': USAGE}},
        )
    )  # fmt: skip
    params = ModelRequestParameters(function_tools=[tool()])
    async with api.model().request_stream(user('Weather?'), None, params) as stream:
        assert isinstance(stream, CohereStreamedResponse)
        async for _ in stream:
            pass
    response = stream.get()
    assert response.parts == [
        ThinkingPart('Hmm.'),
        TextPart('Looking up.'),
        ToolCallPart('get_weather', '{"city": "Rome"}', 'call-9'),
    ]
    assert response.usage.input_tokens == 210
    assert (response.finish_reason, response.provider_response_id) == ('tool_call', 'chat-2')
    assert response.provider_details == {'finish_reason': 'TOOL_CALL'}
    assert api.server.received[0]['body']['stream'] is True


class City(BaseModel):
    name: str
    population: int


async def test_structured_output_through_the_output_tool_and_prompted(api: Api) -> None:
    answer = call('final_result', {'name': 'Lima', 'population': 10000000})
    api.server.script(
        Reply(200, chat(tool_calls=[answer], finish='TOOL_CALL')),
        Reply(200, chat(text('{"name": "Quito", "population": 2800000}'))),
    )
    result = await Agent(api.model(), output_type=City).run('A city?')
    assert result.output == City(name='Lima', population=10000000)
    assert api.server.received[0]['body']['tool_choice'] == 'REQUIRED'
    prompted = await Agent(api.model(), output_type=PromptedOutput(City)).run('A city?')
    assert prompted.output == City(name='Quito', population=2800000)
    assert '"population"' in api.server.received[1]['body']['messages'][0]['content']


async def test_a_streamed_agent_run(api: Api) -> None:
    api.server.script(
        sse(
            {'type': 'message-start', 'id': 'chat-3'},
            {'type': 'content-delta', 'index': 0, 'delta': {'message': {'content': {'text': 'Hi '}}}},
            {'type': 'content-delta', 'index': 0, 'delta': {'message': {'content': {'text': 'there.'}}}},
            {'type': 'message-end', 'delta': {'finish_reason': 'COMPLETE'}},
        )
    )
    async with Agent(api.model()).run_stream('Hello') as result:
        assert await result.get_output() == 'Hi there.'


async def test_a_mixed_history_and_odd_answers(api: Api) -> None:
    odd = {
        'message': {
            'content': [{'type': 'citation'}, {'type': 'thinking', 'thinking': 'Hm.'}],
            'tool_calls': [{'id': 'x', 'function': {}}, {'function': {'name': 'get_time', 'arguments': '{}'}}],
        },
        'usage': 'not counted',
    }
    api.server.script(Reply(200, odd))
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart('Be terse.'), UserPromptPart(['Hello', 'there'])]),
        ModelResponse(parts=[TextPart('Hi.')]),
        ModelResponse(parts=[NativeToolCallPart('web_search', {}, 'n1'), ToolCallPart('get_time', {}, 't1')]),
    ]
    params = ModelRequestParameters(
        function_tools=[ToolDefinition(name='get_time', parameters_json_schema={'type': 'object'})]
    )
    response = await api.model().request(history, None, params)
    assert [p.part_kind for p in response.parts] == ['thinking', 'tool-call']
    call_part = response.parts[1]
    assert isinstance(call_part, ToolCallPart)
    assert call_part.tool_call_id  # generated
    assert (response.usage, response.finish_reason, response.provider_details) == (RequestUsage(), None, None)
    body = api.server.received[0]['body']
    assert body['tools'] == [{'type': 'function', 'function': {'name': 'get_time', 'parameters': {'type': 'object'}}}]
    messages = body['messages']
    assert messages[0] == {'role': 'system', 'content': 'Be terse.'}
    assert messages[1] == {
        'role': 'user',
        'content': [{'type': 'text', 'text': 'Hello'}, {'type': 'text', 'text': 'there'}],
    }
    assert messages[2] == {'role': 'assistant', 'content': [{'type': 'text', 'text': 'Hi.'}]}
    assert messages[3] == {'role': 'assistant', 'tool_calls': [call('get_time', {}, 't1')]}


async def test_a_stream_with_bare_events(api: Api) -> None:
    api.server.script(
        sse(
            {'type': 'message-start'},
            {'type': 'content-delta', 'index': 0, 'delta': {'message': {'content': {}}}},
            {'type': 'content-delta', 'index': 0, 'delta': {'message': {'content': {'text': 'Hi'}}}},
            {'type': 'message-end', 'delta': {}},
        )
    )
    async with api.model().request_stream(user('Hi'), None, ModelRequestParameters()) as stream:
        async for _ in stream:
            pass
    response = stream.get()
    assert (response.parts, response.provider_response_id, response.finish_reason) == ([TextPart('Hi')], None, None)
