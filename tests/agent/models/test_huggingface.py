"""`HuggingFaceModel` against a real HTTP server on 127.0.0.1 speaking the router's chat completions wire format."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelRateLimitError, UserError
from edgewise.agent.messages import ModelRequest, PartStartEvent, TextPart, ThinkingPart, ToolCallPart
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models.huggingface import HuggingFaceModel, HuggingFaceStreamedResponse
from edgewise.agent.providers.huggingface import HuggingFaceProvider
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.usage import RequestUsage

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

KEY = 'hf_secret_token_9012'
USAGE = {'prompt_tokens': 9, 'completion_tokens': 3, 'total_tokens': 12}


def completion(content: str | None = 'Hello.', tool_calls: Any = None, finish_reason: str = 'stop') -> Any:
    message = {'role': 'assistant', 'content': content, 'tool_calls': tool_calls}
    return {
        'id': 'hf-1', 'object': 'chat.completion', 'created': 1700000000, 'model': 'Qwen/Qwen3-32B',
        'choices': [{'index': 0, 'message': message, 'finish_reason': finish_reason}], 'usage': USAGE,
    }  # fmt: skip


def sse(*chunks: dict[str, Any]) -> Reply:
    common = {'id': 'hf-2', 'object': 'chat.completion.chunk', 'created': 1700000000, 'model': 'Qwen/Qwen3-32B'}
    data = [f'data: {json.dumps({**common, **c})}\n\n'.encode() for c in chunks]
    return Reply(200, headers={'content-type': 'text/event-stream'}, chunks=[*data, b'data: [DONE]\n\n'])


def delta(finish_reason: str | None = None, **fields: Any) -> dict[str, Any]:
    return {'choices': [{'index': 0, 'delta': fields, 'finish_reason': finish_reason}]}


@dataclass
class Api:
    """The local server, and models reaching it through one client (closed after the test)."""

    server: LocalServer
    client: httpx.AsyncClient

    def model(self, name: str = 'Qwen/Qwen3-32B', provider_name: str | None = None) -> HuggingFaceModel:
        provider = HuggingFaceProvider(api_key=KEY, base_url=self.server.url, http_client=self.client, max_retries=0)
        provider.provider_name = provider_name
        return HuggingFaceModel(name, provider=provider)


@pytest.fixture
async def api(local_server: LocalServer) -> AsyncIterator[Api]:
    async with httpx.AsyncClient() as client:
        yield Api(local_server, client)


def user(prompt: str) -> list[Any]:
    return [ModelRequest.user_text_prompt(prompt)]


def test_huggingface_names_resolve_to_the_model_and_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('HF_TOKEN', KEY)
    inferred = infer_model('huggingface:Qwen/Qwen3-32B')
    assert type(inferred) is HuggingFaceModel
    assert (inferred.system, inferred.model_name, inferred.base_url) == (
        'huggingface', 'Qwen/Qwen3-32B', 'https://router.huggingface.co/v1'
    )  # fmt: skip
    assert KEY not in repr(inferred)
    assert KEY not in repr(inferred.provider)
    assert HuggingFaceProvider(provider_name='together').provider_name == 'together'


def test_a_missing_token_names_the_variable_and_base_url_excludes_provider_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv('HF_TOKEN', raising=False)
    with pytest.raises(UserError, match=r'Set the `HF_TOKEN` environment variable or pass it via `HuggingFaceProvider'):
        HuggingFaceProvider()
    with pytest.raises(ValueError, match='Cannot provide both `base_url` and `provider_name`'):
        HuggingFaceProvider(api_key=KEY, base_url='http://x', provider_name='together')


def test_profiles_by_organization() -> None:
    assert HuggingFaceProvider.model_profile('mistralai/Mistral-Small') == {
        'tool_call_id_length': 9,
        'supports_inline_system_prompts': True,
    }
    qwen = HuggingFaceProvider.model_profile('Qwen/Qwen3-32B')
    assert qwen is not None
    assert qwen['supports_inline_system_prompts'] is True
    assert HuggingFaceProvider.model_profile('acme/model') is None
    assert HuggingFaceProvider.model_profile('gpt2') is None


async def test_a_text_answer_with_thinking_and_what_the_request_carried(api: Api) -> None:
    api.server.script(Reply(200, completion('<think>Easy.</think>Four.')))
    settings: Any = {'max_tokens': 30, 'temperature': 0.1, 'seed': 1, 'openai_user': 'u', 'service_tier': 'flex',
                     'thinking': True}  # fmt: skip
    response = await api.model(provider_name='together').request(user('2+2?'), settings, ModelRequestParameters())
    assert [type(p) for p in response.parts] == [ThinkingPart, TextPart]
    assert (response.parts[0].content, response.parts[1].content) == ('Easy.', 'Four.')  # type: ignore[union-attr]
    assert response.usage == RequestUsage(input_tokens=9, output_tokens=3)
    assert (response.finish_reason, response.provider_name, response.model_name) == (
        'stop', 'huggingface', 'Qwen/Qwen3-32B'
    )  # fmt: skip
    received = api.server.received[0]
    assert received['path'] == '/v1/chat/completions'
    assert received['headers']['authorization'] == f'Bearer {KEY}'
    assert received['body'] == {
        'model': 'Qwen/Qwen3-32B:together',
        'messages': [{'role': 'user', 'content': '2+2?'}],
        'max_tokens': 30,
        'temperature': 0.1,
        'seed': 1,
    }


async def test_tool_calls_and_a_rate_limit(api: Api) -> None:
    call = {'id': 'c1', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city": "Bern"}'}}
    api.server.script(
        Reply(200, completion(None, [call], 'tool_calls')),
        Reply(429, {'error': {'message': 'Too many requests', 'type': 'rate_limit_error'}}),
    )
    schema = {'type': 'object', 'properties': {'city': {'type': 'string'}}}
    params = ModelRequestParameters(function_tools=[ToolDefinition(name='get_weather', parameters_json_schema=schema)])
    model = api.model()
    response = await model.request(user('Weather?'), None, params)
    assert response.parts == [ToolCallPart('get_weather', '{"city": "Bern"}', 'c1')]
    assert response.finish_reason == 'tool_call'
    assert api.server.received[0]['body']['tools'][0]['function']['name'] == 'get_weather'
    with pytest.raises(ModelRateLimitError):
        await model.request(user('Again'), None, params)


class City(BaseModel):
    name: str


async def test_a_streamed_agent_run_with_structured_output(api: Api) -> None:
    call = {'index': 0, 'id': 'c9', 'function': {'name': 'final_result', 'arguments': '{"name": "Graz"}'}}
    api.server.script(
        sse(delta(tool_calls=[call]), delta('tool_calls'), {'choices': [], 'usage': USAGE}),
        sse(delta(content='Hi.'), delta('stop')),
    )
    async with Agent(api.model(), output_type=City).run_stream('A city?') as result:
        assert await result.get_output() == City(name='Graz')
    async with api.model().request_stream(user('Hi'), None, ModelRequestParameters()) as stream:
        assert isinstance(stream, HuggingFaceStreamedResponse)
        events = [e async for e in stream]
    assert isinstance(start := events[0], PartStartEvent)
    assert start.part == TextPart('Hi.')
    body = api.server.received[0]['body']
    assert (body['stream'], body['tool_choice']) == (True, 'required')
