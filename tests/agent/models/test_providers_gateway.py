"""The Pydantic AI Gateway (`gateway_provider`, `'gateway/<upstream>:<model>'` names): its key and URL, its routes,
and the requests each upstream's model sends through it to a real server on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.embeddings import infer_embedding_model
from edgewise.agent.embeddings.bedrock import BedrockEmbeddingModel
from edgewise.agent.embeddings.openai import OpenAIEmbeddingModel
from edgewise.agent.exceptions import UserError
from edgewise.agent.models import infer_model
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.bedrock import BedrockConverseModel
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.groq import GroqModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.providers import infer_provider, infer_provider_class
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.gateway import gateway_provider, is_gateway_provider, normalize_gateway_provider
from edgewise.agent.providers.groq import GroqProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import completion
from ._provider_specs import ANTHROPIC, GOOGLE, RESPONSES
from .conftest import LocalServer, Reply

KEY = 'pylf_v1_us_gateway-secret-1'
ENV = ('PYDANTIC_AI_GATEWAY_API_KEY', 'PAIG_API_KEY', 'PYDANTIC_AI_GATEWAY_BASE_URL', 'PAIG_BASE_URL')


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def test_the_key_is_required_and_names_the_region_of_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match=r'Set the `PYDANTIC_AI_GATEWAY_API_KEY` environment variable .*api_key=\.\.\.'):
        gateway_provider('openai')
    assert gateway_provider('openai', api_key=KEY).base_url == 'https://gateway-us.pydantic.dev/proxy/openai'
    staging = gateway_provider('openai', api_key='pylf_v2_staging_abc')
    assert staging.base_url == 'https://gateway.pydantic.info/proxy/openai'
    with pytest.raises(UserError, match='`PYDANTIC_AI_GATEWAY_BASE_URL`') as no_region:
        gateway_provider('openai', api_key='not-a-gateway-key')
    assert 'not-a-gateway-key' not in str(no_region.value)
    monkeypatch.setenv('PAIG_API_KEY', 'older-key')
    monkeypatch.setenv('PAIG_BASE_URL', 'https://paig.example/proxy/')
    older = gateway_provider('chat')
    assert (older.base_url, older.request_headers()['authorization']) == (
        'https://paig.example/proxy/openai',
        'Bearer older-key',
    )
    monkeypatch.setenv('PYDANTIC_AI_GATEWAY_API_KEY', KEY)
    monkeypatch.setenv('PYDANTIC_AI_GATEWAY_BASE_URL', 'https://gw.example/proxy')
    provider = infer_provider('gateway/openai')
    assert (type(provider), provider.base_url) == (OpenAIProvider, 'https://gw.example/proxy/openai')
    assert provider.request_headers()['authorization'] == f'Bearer {KEY}'
    assert KEY not in repr(provider)


def test_routes_of_each_upstream() -> None:
    def base(upstream: str, **kwargs: Any) -> str:
        return gateway_provider(upstream, api_key=KEY, base_url='https://gw.example/proxy', **kwargs).base_url

    assert base('responses') == base('openai-responses') == base('openai-chat') == 'https://gw.example/proxy/openai'
    assert base('anthropic') == 'https://gw.example/proxy/anthropic'
    assert base('groq') == 'https://gw.example/proxy/groq/openai/v1'
    assert base('openai', route='/my-openai-route') == 'https://gw.example/proxy/my-openai-route'
    assert base('google') == base('google-cloud') == 'https://gw.example/proxy/google-vertex'
    assert base('bedrock') == base('converse') == 'https://gw.example/proxy/bedrock'
    with pytest.raises(UserError, match='Unknown upstream provider: nowhere'):
        base('nowhere')
    assert [normalize_gateway_provider(n) for n in ('gateway/chat', 'responses', 'google', 'groq')] == [
        'openai-chat',
        'openai-responses',
        'google-cloud',
        'groq',
    ]


def test_gateway_providers_are_known_as_such() -> None:
    provider = gateway_provider('anthropic', api_key=KEY)
    assert is_gateway_provider(provider)
    assert isinstance(provider, AnthropicProvider)
    assert provider.request_headers() == {'authorization': f'Bearer {KEY}', 'anthropic-version': '2023-06-01'}
    assert not is_gateway_provider(OpenAIProvider(api_key='k'))

    class Unhashable(OpenAIProvider):
        __hash__ = None  # type: ignore[assignment]

    assert not is_gateway_provider(Unhashable(api_key='k'))


def test_gateway_model_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('PYDANTIC_AI_GATEWAY_API_KEY', KEY)
    assert infer_provider_class('gateway/chat') is OpenAIProvider
    assert infer_provider_class('gateway/anthropic') is AnthropicProvider
    assert infer_provider_class('gateway/groq') is GroqProvider
    for name, cls in [
        ('gateway/openai:gpt-5', OpenAIResponsesModel),
        ('gateway/responses:gpt-5', OpenAIResponsesModel),
        ('gateway/chat:gpt-4o', OpenAIChatModel),
        ('gateway/anthropic:claude-sonnet-4-5', AnthropicModel),
        ('gateway/groq:llama-3.3-70b-versatile', GroqModel),
        ('gateway/google:gemini-2.5-flash', GoogleModel),
        ('gateway/converse:amazon.nova-pro-v1:0', BedrockConverseModel),
    ]:
        model = infer_model(name)
        assert type(model) is cls
        assert model.model_name == name.partition(':')[2]
        assert is_gateway_provider(model.provider)
    with pytest.raises(UserError, match='Unknown upstream provider: nowhere'):
        infer_model('gateway/nowhere:model')
    embedder = infer_embedding_model('gateway/openai:text-embedding-3-small')
    assert isinstance(embedder, OpenAIEmbeddingModel)
    assert embedder.base_url == 'https://gateway-us.pydantic.dev/proxy/openai'
    with pytest.raises(UserError, match="Embedding models of 'gateway/google' are not available"):
        infer_embedding_model('gateway/google:gemini-embedding-001')
    titan = infer_embedding_model('gateway/bedrock:amazon.titan-embed-text-v2:0')
    assert isinstance(titan, BedrockEmbeddingModel)
    assert titan.base_url == 'https://gateway-us.pydantic.dev/proxy/bedrock'
    # The model classes take `provider='gateway'` for their own API.
    chat = OpenAIChatModel('gpt-4o', provider='gateway')
    assert chat.provider.base_url == 'https://gateway-us.pydantic.dev/proxy/openai'
    assert AnthropicModel('claude-sonnet-4-5', provider='gateway').provider.base_url.endswith('/proxy/anthropic')


@pytest.mark.anyio
async def test_requests_through_the_gateway(local_server: LocalServer) -> None:
    local_server.script(
        Reply(200, completion('from openai')),
        Reply(200, RESPONSES.reply),
        Reply(200, ANTHROPIC.reply),
        Reply(200, completion('from groq')),
        Reply(200, GOOGLE.reply),
        Reply(
            200,
            {
                'output': {'message': {'role': 'assistant', 'content': [{'text': 'from bedrock'}]}},
                'stopReason': 'end_turn',
                'usage': {'inputTokens': 3, 'outputTokens': 2, 'totalTokens': 5},
            },
        ),
    )
    gw: dict[str, Any] = {'api_key': KEY, 'base_url': local_server.url}
    models = [
        OpenAIChatModel('gpt-4o', provider=gateway_provider('openai', **gw)),
        OpenAIResponsesModel('gpt-5', provider=gateway_provider('responses', **gw)),
        AnthropicModel('claude-sonnet-4-5', provider=gateway_provider('anthropic', **gw)),
        GroqModel('llama-3.3-70b-versatile', provider=gateway_provider('groq', **gw)),
        GoogleModel('gemini-2.5-flash', provider=gateway_provider('google', **gw)),
        BedrockConverseModel('amazon.nova-pro-v1:0', provider=gateway_provider('bedrock', **gw)),
    ]
    outputs = []
    for model in models:
        async with Agent(model) as agent:
            outputs.append((await agent.run('hi')).output)
    assert outputs == ['from openai', 'hello', 'hello', 'from groq', 'hello', 'from bedrock']
    paths = [request['path'] for request in local_server.received]
    assert paths == [
        '/v1/openai/chat/completions',
        '/v1/openai/responses',
        '/v1/anthropic/v1/messages',
        '/v1/groq/openai/v1/chat/completions',
        '/v1/google-vertex/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent',
        '/v1/bedrock/model/amazon.nova-pro-v1%3A0/converse',
    ]
    for request in local_server.received:
        headers = {name.lower(): value for name, value in request['headers'].items()}
        assert headers['authorization'] == f'Bearer {KEY}'
        assert 'x-api-key' not in headers
    assert local_server.received[4]['headers']['x-goog-api-key'] == KEY
    anthropic = local_server.received[2]
    assert anthropic['body']['model'] == 'claude-sonnet-4-5'
    assert {k.lower(): v for k, v in anthropic['headers'].items()}['anthropic-version'] == '2023-06-01'
