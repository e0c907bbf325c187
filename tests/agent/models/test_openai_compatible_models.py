"""`CerebrasModel`, `ZaiModel`, `OllamaModel` and `CrusoeModel` against a real HTTP server on 127.0.0.1: the Chat
Completions body each sends for its settings, and the response each reads."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from edgewise.agent import Agent
from edgewise.agent._warnings import PydanticAIDeprecationWarning
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelRequest, ModelResponse, TextPart, ThinkingPart
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models.cerebras import CerebrasModel, CerebrasModelSettings
from edgewise.agent.models.crusoe import CrusoeModel
from edgewise.agent.models.ollama import OllamaModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.zai import ZaiModel, ZaiStreamedResponse
from edgewise.agent.output import NativeOutput
from edgewise.agent.providers.cerebras import CerebrasProvider
from edgewise.agent.providers.crusoe import CrusoeProvider
from edgewise.agent.providers.ollama import OllamaProvider
from edgewise.agent.providers.zai import ZaiProvider
from edgewise.agent.usage import RequestUsage

from ._chat import completion, delta, sse
from .conftest import LocalServer, Reply, validate_chat_body

pytestmark = pytest.mark.anyio

KEY = 'compatible-secret-key-2468'
PARAMS = ModelRequestParameters()


class City(BaseModel):
    name: str


@dataclass
class Api:
    """The local server, and models reaching it through one client (closed after the test)."""

    server: LocalServer
    client: httpx.AsyncClient

    def cerebras(self, name: str = 'gpt-oss-120b', **kwargs: Any) -> CerebrasModel:
        provider = CerebrasProvider(api_key=KEY, base_url=self.server.url, http_client=self.client, max_retries=0)
        return CerebrasModel(name, provider=provider, **kwargs)

    def zai(self, name: str = 'glm-4.7', **kwargs: Any) -> ZaiModel:
        provider = ZaiProvider(api_key=KEY, base_url=self.server.url, http_client=self.client, max_retries=0)
        return ZaiModel(name, provider=provider, **kwargs)

    def ollama(self, name: str = 'qwen3') -> OllamaModel:
        provider = OllamaProvider(base_url=self.server.url, http_client=self.client, max_retries=0)
        return OllamaModel(name, provider=provider)

    def crusoe(self, name: str = 'openai/gpt-oss-120b') -> CrusoeModel:
        provider = CrusoeProvider(api_key=KEY, base_url=self.server.url, http_client=self.client, max_retries=0)
        return CrusoeModel(name, provider=provider)

    def body(self, index: int = -1) -> dict[str, Any]:
        """The body of a request the server received, checked against the OpenAI SDK's request types."""
        received = self.server.received[index]
        assert received['path'] == '/v1/chat/completions'
        body: dict[str, Any] = received['body']
        validate_chat_body(body)
        return body


@pytest.fixture
async def api(local_server: LocalServer) -> AsyncIterator[Api]:
    async with httpx.AsyncClient() as client:
        yield Api(local_server, client)


def user(prompt: str = 'Hi') -> list[Any]:
    return [ModelRequest.user_text_prompt(prompt)]


def streamed(*chunks: dict[str, Any]) -> Reply:
    return Reply(200, headers={'content-type': 'text/event-stream'}, chunks=[sse(*chunks)])


def test_names_resolve_to_the_model_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    for env in ('CEREBRAS_API_KEY', 'ZAI_API_KEY', 'CRUSOE_API_KEY'):
        monkeypatch.setenv(env, KEY)
    monkeypatch.setenv('OLLAMA_BASE_URL', 'http://127.0.0.1:11434/v1')
    expected = {
        'cerebras:gpt-oss-120b': (CerebrasModel, 'cerebras', 'https://api.cerebras.ai/v1'),
        'zai:glm-4.7': (ZaiModel, 'zai', 'https://api.z.ai/api/paas/v4'),
        'crusoe:openai/gpt-oss-120b': (CrusoeModel, 'crusoe', 'https://api.inference.crusoecloud.com/v1'),
        'ollama:qwen3': (OllamaModel, 'ollama', 'http://127.0.0.1:11434/v1'),
    }
    for name, (cls, system, base_url) in expected.items():
        model = infer_model(name)
        assert type(model) is cls
        assert isinstance(model, OpenAIChatModel)
        assert (model.system, model.model_name, model.base_url) == (system, name.partition(':')[2], base_url)
        assert KEY not in repr(model)


def test_the_default_provider_is_the_models_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('CEREBRAS_API_KEY', KEY)
    monkeypatch.setenv('ZAI_API_KEY', KEY)
    monkeypatch.setenv('CRUSOE_API_KEY', KEY)
    monkeypatch.setenv('OLLAMA_BASE_URL', 'http://127.0.0.1:11434/v1')
    assert CerebrasModel('gpt-oss-120b').system == 'cerebras'
    assert ZaiModel('glm-4.7').system == 'zai'
    assert CrusoeModel('zai-org/GLM-5.3').system == 'crusoe'
    assert OllamaModel('qwen3').system == 'ollama'


# Cerebras


async def test_cerebras_thinking_false_turns_glm_reasoning_off_and_keeps_earlier_reasoning(api: Api) -> None:
    api.server.script(Reply(200, completion('Hello.', reasoning='Greet back.')))
    response = await api.cerebras('zai-glm-4.7').request(user(), {'thinking': False, 'temperature': 0.5}, PARAMS)
    body = api.body()
    assert body['reasoning_effort'] == 'none'
    assert body['clear_thinking'] is False  # GLM's earlier reasoning goes back in <think> tags: keep it
    assert body['temperature'] == 0.5
    assert not any(key.startswith('cerebras') for key in body)
    assert response.parts == [
        ThinkingPart('Greet back.', id='reasoning', provider_name='cerebras'),
        TextPart('Hello.'),
    ]
    assert response.provider_name == 'cerebras'
    assert response.usage == RequestUsage(input_tokens=10, output_tokens=2)


async def test_cerebras_sends_glm_reasoning_back_in_think_tags(api: Api) -> None:
    api.server.script(Reply(200, completion('Fine.')))
    history = [
        *user('Hi'),
        ModelResponse(parts=[ThinkingPart('Greet back.', provider_name='cerebras'), TextPart('Hello.')]),
        *user('How are you?'),
    ]
    await api.cerebras('zai-glm-4.7').request(history, None, PARAMS)
    body = api.body()
    assert body['messages'][1] == {'role': 'assistant', 'content': '<think>\nGreet back.\n</think>\n\nHello.'}
    assert body['clear_thinking'] is False
    assert 'reasoning_effort' not in body


async def test_cerebras_models_that_always_reason_go_as_low_as_they_can(api: Api) -> None:
    api.server.script(Reply(200, completion()), Reply(200, completion()), Reply(200, completion()))
    model = api.cerebras('gpt-oss-120b')
    await model.request(user(), {'thinking': False}, PARAMS)
    assert api.body()['reasoning_effort'] == 'low'
    await model.request(user(), {'thinking': 'high'}, PARAMS)  # other levels: Cerebras reasons by default
    assert 'reasoning_effort' not in api.body()
    explicit = CerebrasModelSettings(thinking=False, openai_reasoning_effort='medium')  # type: ignore[typeddict-unknown-key]
    await model.request(user(), explicit, PARAMS)
    assert api.body()['reasoning_effort'] == 'medium'
    assert 'clear_thinking' not in api.body()  # not a GLM model


async def test_cerebras_own_settings_and_their_deprecated_spelling(api: Api) -> None:
    api.server.script(Reply(200, completion()), Reply(200, completion()))
    defaults: dict[str, Any] = {'cerebras_clear_thinking': True, 'extra_body': {'x_custom': 1}}
    model = api.cerebras('zai-glm-4.7', settings=defaults)
    with pytest.warns(PydanticAIDeprecationWarning, match='`cerebras_disable_reasoning` is deprecated'):
        await model.request(user(), CerebrasModelSettings(cerebras_disable_reasoning=True), PARAMS)
    body = api.body()
    assert (body['reasoning_effort'], body['clear_thinking'], body['x_custom']) == ('none', True, 1)
    await model.request(user(), None, PARAMS)
    body = api.body()
    assert (body['clear_thinking'], body['x_custom']) == (True, 1)
    assert 'reasoning_effort' not in body
    assert defaults == {'cerebras_clear_thinking': True, 'extra_body': {'x_custom': 1}}  # the model's own, untouched


async def test_cerebras_streams(api: Api) -> None:
    api.server.script(
        streamed(delta(reasoning='Hmm.'), delta(content='Hel'), delta('stop', content='lo'), {'choices': [], 'usage': {
            'prompt_tokens': 5, 'completion_tokens': 3, 'total_tokens': 8}}),
    )  # fmt: skip
    async with api.cerebras('zai-glm-4.7').request_stream(user(), {'thinking': False}, PARAMS) as stream:
        async for _ in stream:
            pass
    body = api.body()
    assert (body['stream'], body['reasoning_effort'], body['clear_thinking']) == (True, 'none', False)
    response = stream.get()
    assert response.parts == [ThinkingPart('Hmm.', id='reasoning', provider_name='cerebras'), TextPart('Hello')]
    assert (response.finish_reason, response.usage) == ('stop', RequestUsage(input_tokens=5, output_tokens=3))


# Z.AI


@pytest.mark.parametrize(
    ('model_name', 'thinking', 'expected'),
    [
        ('glm-4.7', True, {'thinking': {'type': 'enabled', 'clear_thinking': False}}),
        ('glm-4.7', 'high', {'thinking': {'type': 'enabled', 'clear_thinking': False}}),
        ('glm-4.7', False, {'thinking': {'type': 'disabled', 'clear_thinking': False}}),
        ('glm-4.7', None, {'thinking': {'clear_thinking': False}}),
        ('glm-5.2', 'medium', {'thinking': {'type': 'enabled', 'clear_thinking': False}, 'reasoning_effort': 'medium'}),
        ('glm-5.3', 'medium', {'thinking': {'type': 'enabled', 'clear_thinking': False}, 'reasoning_effort': 'high'}),
        ('glm-5.3', False, {'thinking': {'type': 'enabled', 'clear_thinking': False}, 'reasoning_effort': 'low'}),
        ('glm-5.3', 'xhigh', {'thinking': {'type': 'enabled', 'clear_thinking': False}, 'reasoning_effort': 'max'}),
        ('charglm-3', True, {}),  # a model that does not think gets no thinking fields
    ],
)
async def test_zai_unified_thinking_becomes_the_thinking_object(
    api: Api, model_name: str, thinking: Any, expected: dict[str, Any]
) -> None:
    api.server.script(Reply(200, completion()))
    settings: Any = None if thinking is None else {'thinking': thinking}
    await api.zai(model_name).request(user(), settings, PARAMS)
    body = api.body()
    assert {key: body[key] for key in ('thinking', 'reasoning_effort') if key in body} == expected


async def test_zai_clear_thinking_setting_and_no_openai_effort(api: Api) -> None:
    api.server.script(Reply(200, completion()))
    settings: Any = {'zai_clear_thinking': True, 'thinking': False, 'openai_reasoning_effort': 'high', 'seed': 3}
    await api.zai('glm-4.7').request(user(), settings, PARAMS)
    body = api.body()
    assert body['thinking'] == {'type': 'disabled', 'clear_thinking': True}
    assert 'reasoning_effort' not in body
    assert body['seed'] == 3
    assert not any(key.startswith('zai') for key in body)


async def test_zai_reads_and_sends_back_reasoning_content(api: Api) -> None:
    api.server.script(Reply(200, completion('Hello.', reasoning_content='Greet.')), Reply(200, completion()))
    model = api.zai()
    first = await model.request(user(), None, PARAMS)
    assert first.parts == [ThinkingPart('Greet.', id='reasoning_content', provider_name='zai'), TextPart('Hello.')]
    await model.request([*user(), first, *user('More')], None, PARAMS)
    assistant = api.body()['messages'][1]
    assert (assistant['role'], assistant['reasoning_content'], assistant['content']) == (
        'assistant',
        'Greet.',
        'Hello.',
    )


@pytest.mark.parametrize(
    ('raw', 'finish_reason'),
    [('sensitive', 'content_filter'), ('model_context_window_exceeded', 'length'), ('network_error', 'error'),
     ('stop', 'stop'), ('tool_calls', 'tool_call'), ('abort', None)],
)  # fmt: skip
async def test_zai_finish_reasons(api: Api, raw: str, finish_reason: str | None) -> None:
    api.server.script(Reply(200, completion('Hi', finish_reason=raw)), streamed(delta(content='Hi'), delta(raw)))
    model = api.zai()
    response = await model.request(user(), None, PARAMS)
    assert (response.finish_reason, response.provider_details) == (
        finish_reason, {'finish_reason': raw, 'timestamp': response.provider_details['timestamp']}  # type: ignore[index]
    )  # fmt: skip
    async with model.request_stream(user(), None, PARAMS) as stream:
        assert isinstance(stream, ZaiStreamedResponse)
        async for _ in stream:
            pass
    assert stream.get().finish_reason == finish_reason
    assert stream.get().parts == [TextPart('Hi')]


# Ollama


async def test_ollama_local_server_gets_the_json_schema(api: Api) -> None:
    api.server.script(Reply(200, completion('{"name": "Rome"}')))
    result = await Agent(api.ollama('qwen3'), output_type=NativeOutput(City)).run('A city?')
    assert result.output == City(name='Rome')
    body = api.body()
    assert body['response_format']['type'] == 'json_schema'
    assert body['response_format']['json_schema']['schema']['properties'] == {'name': {'type': 'string'}}
    assert 'authorization' not in {k.lower() for k in api.server.received[0]['headers']}  # no key, no header


async def test_ollama_cloud_models_refuse_native_output_before_any_request(api: Api) -> None:
    with pytest.raises(UserError, match='Native structured output is not supported by this model'):
        await Agent(api.ollama('gpt-oss:120b-cloud'), output_type=NativeOutput(City)).run('A city?')
    assert api.server.received == []
    api.server.script(Reply(200, completion('Rome')))  # plain text still works
    assert (await Agent(api.ollama('gpt-oss:120b-cloud')).run('A city?')).output == 'Rome'
    assert api.body()['model'] == 'gpt-oss:120b-cloud'


def test_ollama_cloud_by_base_url_and_an_explicit_profile_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    cloud = OllamaProvider(base_url='https://ollama.com/v1', api_key=KEY)
    assert OllamaModel('gpt-oss:120b', provider=cloud).profile['supports_json_schema_output'] is False
    regional = OllamaProvider(base_url='https://eu.ollama.com/v1', api_key=KEY)
    assert OllamaModel('gpt-oss:120b', provider=regional).profile['supports_json_schema_output'] is False
    local = OllamaProvider(base_url='http://127.0.0.1:11434/v1')
    assert OllamaModel('gpt-oss:120b', provider=local).profile['supports_json_schema_output'] is True
    own = OllamaModel('gpt-oss:120b', provider=cloud, profile={'supports_json_schema_output': True})
    assert own.profile['supports_json_schema_output'] is True
    monkeypatch.setenv('OLLAMA_BASE_URL', 'https://ollama.com')
    monkeypatch.setenv('OLLAMA_API_KEY', KEY)
    assert infer_model('ollama:qwen3').profile['supports_json_schema_output'] is False


# Crusoe


async def test_crusoe_native_output_and_reasoning(api: Api) -> None:
    api.server.script(Reply(200, completion('{"name": "Oslo"}', reasoning='A capital.')))
    result = await Agent(api.crusoe('zai-org/GLM-5.3'), output_type=NativeOutput(City)).run('A city?')
    assert result.output == City(name='Oslo')
    body = api.body()
    assert (body['model'], body['response_format']['type']) == ('zai-org/GLM-5.3', 'json_schema')
    assert api.server.received[0]['headers']['authorization'] == f'Bearer {KEY}'
    response = result.all_messages()[1]
    assert isinstance(response, ModelResponse)
    assert response.parts[0] == ThinkingPart('A capital.', id='reasoning', provider_name='crusoe')
    assert response.provider_name == 'crusoe'


async def test_crusoe_streams(api: Api) -> None:
    api.server.script(streamed(delta(content='Hel'), delta('length', content='lo')))
    async with api.crusoe().request_stream(user(), {'max_tokens': 2}, PARAMS) as stream:
        async for _ in stream:
            pass
    assert api.body()['max_completion_tokens'] == 2
    assert (stream.get().parts, stream.get().finish_reason) == ([TextPart('Hello')], 'length')
