"""`AzureProvider` (Azure OpenAI, Azure AI Foundry) and the deprecated `GitHubProvider` (GitHub Models): their
configuration, errors and profiles, and the URLs, headers and bodies they send to a real server on 127.0.0.1."""

from __future__ import annotations

import warnings
from typing import Any, cast

import pytest

from edgewise.agent import Agent
from edgewise.agent.embeddings import infer_embedding_model
from edgewise.agent.embeddings.openai import OpenAIEmbeddingModel
from edgewise.agent.exceptions import UserError
from edgewise.agent.models import infer_model
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.profiles import InlineDefsJsonSchemaTransformer, ModelProfile
from edgewise.agent.profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile
from edgewise.agent.providers import infer_provider, infer_provider_class
from edgewise.agent.providers.azure import AzureProvider

from ._chat import completion
from ._provider_specs import RESPONSES
from .conftest import LocalServer, Reply

SECRET = 'azure-secret-key-1'
RESOURCE = 'https://my-resource.openai.azure.com'
ENV = (
    'AZURE_OPENAI_ENDPOINT',
    'AZURE_OPENAI_API_KEY',
    'OPENAI_API_VERSION',
    'AZURE_VOICELIVE_ENDPOINT',
    'AZURE_VOICELIVE_API_KEY',
    'AZURE_VOICELIVE_API_VERSION',
    'GITHUB_API_KEY',
    'OPENAI_API_KEY',
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def _openai(profile: ModelProfile | None) -> OpenAIModelProfile:
    assert profile is not None
    return cast(OpenAIModelProfile, profile)


def _root(local_server: LocalServer) -> str:
    """The local server's URL without the `/v1` the fixture gives it: an Azure resource endpoint."""
    return local_server.url.removesuffix('/v1')


# Configuration and errors


def test_a_missing_endpoint_key_or_version_names_its_variable_and_never_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(
        UserError, match=r'Set the `AZURE_OPENAI_ENDPOINT` environment variable .*azure_endpoint=\.\.\.'
    ):
        AzureProvider(api_key=SECRET, api_version='2024-10-21')
    with pytest.raises(UserError, match=r'Set the `AZURE_OPENAI_API_KEY` environment variable .*api_key=\.\.\.'):
        AzureProvider(azure_endpoint=RESOURCE, api_version='2024-10-21')
    with pytest.raises(UserError, match=r'`OPENAI_API_VERSION`.*api_version=\.\.\..*/openai/v1') as missing:
        AzureProvider(azure_endpoint=RESOURCE, api_key=SECRET)
    assert SECRET not in str(missing.value)
    with pytest.raises(UserError, match='`AZURE_OPENAI_ENDPOINT`'):
        infer_provider('azure')
    monkeypatch.setenv('AZURE_OPENAI_ENDPOINT', RESOURCE + '/')
    monkeypatch.setenv('AZURE_OPENAI_API_KEY', SECRET)
    monkeypatch.setenv('OPENAI_API_VERSION', '2024-10-21')
    provider = infer_provider('azure')
    assert isinstance(provider, AzureProvider)
    assert (provider.name, provider.base_url, provider.azure_endpoint) == ('azure', RESOURCE + '/openai', RESOURCE)
    assert (provider.api_version, provider.api_key) == ('2024-10-21', SECRET)
    assert provider.request_headers() == {'api-key': SECRET}
    assert SECRET not in repr(provider)


def test_a_resource_endpoint_puts_the_deployment_and_the_version_in_the_url() -> None:
    provider = AzureProvider(azure_endpoint=RESOURCE, api_version='2025-04-01-preview', api_key=SECRET)
    assert provider.endpoint_url('/chat/completions', 'my gpt/4o') == (
        f'{RESOURCE}/openai/deployments/my%20gpt%2F4o/chat/completions?api-version=2025-04-01-preview'
    )
    assert provider.endpoint_url('/embeddings', 'emb') == (
        f'{RESOURCE}/openai/deployments/emb/embeddings?api-version=2025-04-01-preview'
    )
    # The Responses API is served once for the resource: the deployment is named in the body.
    assert (
        provider.endpoint_url('/responses', 'my-gpt') == f'{RESOURCE}/openai/responses?api-version=2025-04-01-preview'
    )


@pytest.mark.parametrize(
    ('endpoint', 'base_url'),
    [
        (f'{RESOURCE}/openai/v1/', f'{RESOURCE}/openai/v1'),
        ('https://my-project.services.ai.azure.com/openai/v1', 'https://my-project.services.ai.azure.com/openai/v1'),
        ('https://my-llama.eastus2.models.ai.azure.com', 'https://my-llama.eastus2.models.ai.azure.com/v1'),
    ],
)
def test_the_v1_api_and_serverless_endpoints_take_no_version_and_a_bearer_key(
    endpoint: str, base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('OPENAI_API_VERSION', '2024-10-21')  # read for resource endpoints only
    provider = AzureProvider(azure_endpoint=endpoint, api_key=SECRET)
    assert (provider.base_url, provider.api_version) == (base_url, None)
    assert provider.endpoint_url('/chat/completions', 'm') == f'{base_url}/chat/completions'
    assert provider.request_headers() == {'authorization': f'Bearer {SECRET}'}
    with pytest.raises(UserError, match=r'`AzureProvider\(api_version=\.\.\.\)` must not be given') as given:
        AzureProvider(azure_endpoint=endpoint, api_key=SECRET, api_version='2024-10-21')
    assert SECRET not in str(given.value)


def test_voice_live_settings_fall_back_to_the_resource_and_configure_a_voice_live_only_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider = AzureProvider(azure_endpoint=RESOURCE, api_key=SECRET, api_version='v')
    assert (provider.voice_live_endpoint, provider.voice_live_api_key) == (RESOURCE, SECRET)
    assert provider.voice_live_api_version == '2026-07-15'
    monkeypatch.setenv('AZURE_VOICELIVE_ENDPOINT', 'https://voice.cognitiveservices.azure.com/')
    monkeypatch.setenv('AZURE_VOICELIVE_API_KEY', 'voice-key')
    monkeypatch.setenv('AZURE_VOICELIVE_API_VERSION', '2025-10-01')
    own = AzureProvider(azure_endpoint=RESOURCE, api_key=SECRET, api_version='v')
    assert (own.voice_live_endpoint, own.voice_live_api_key, own.voice_live_api_version) == (
        'https://voice.cognitiveservices.azure.com',
        'voice-key',
        '2025-10-01',
    )
    assert (own.api_key, own.api_version) == (SECRET, 'v')  # never mixed with the resource's own
    voice_only = AzureProvider()
    assert voice_only.azure_endpoint == 'https://voice.cognitiveservices.azure.com'
    assert (voice_only.api_key, voice_only.api_version) == ('voice-key', '2025-10-01')
    # Part of an Azure OpenAI resource configured: Voice Live fills no gap.
    with pytest.raises(UserError, match='`AZURE_OPENAI_ENDPOINT`'):
        AzureProvider(api_key=SECRET)


# Profiles


def test_profiles_by_model_family() -> None:
    gpt = _openai(AzureProvider.model_profile('gpt-4o'))
    assert gpt['json_schema_transformer'] is OpenAIJsonSchemaTransformer
    assert gpt['openai_chat_supports_document_input'] is False
    assert _openai(AzureProvider.model_profile('o3-mini'))['openai_supports_reasoning'] is True
    llama = _openai(AzureProvider.model_profile('Llama-3.3-70B-Instruct'))
    assert llama['json_schema_transformer'] is InlineDefsJsonSchemaTransformer  # Meta's family
    assert _openai(AzureProvider.model_profile('Meta-Llama-3.1-405B'))['json_schema_transformer'] is (
        InlineDefsJsonSchemaTransformer
    )
    deepseek = _openai(AzureProvider.model_profile('DeepSeek-R1'))
    assert deepseek['json_schema_transformer'] is OpenAIJsonSchemaTransformer
    assert deepseek['openai_chat_supports_document_input'] is False
    for name in ('mistral-large-2411', 'Mistral-small', 'Ministral-3B', 'mistralai-Mistral-Nemo'):
        assert _openai(AzureProvider.model_profile(name)) == _openai(AzureProvider.model_profile('mistral-large'))
    assert _openai(AzureProvider.model_profile('magistral-medium'))['supports_thinking'] is True  # Mistral's family
    assert _openai(AzureProvider.model_profile('mistral-large'))['openai_chat_supports_max_completion_tokens'] is False
    assert 'openai_chat_supports_max_completion_tokens' not in _openai(AzureProvider.model_profile('gpt-4o'))
    assert 'supports_json_schema_output' not in _openai(AzureProvider.model_profile('cohere-command-a'))
    grok = _openai(AzureProvider.model_profile('grok-3'))
    assert grok['supports_json_schema_output'] is True  # Grok's own family keys
    assert grok['json_schema_transformer'] not in (OpenAIJsonSchemaTransformer, InlineDefsJsonSchemaTransformer)


def test_grok_on_azure_gets_definitions_inlined_unless_they_are_recursive() -> None:
    transformer = cast(Any, _openai(AzureProvider.model_profile('grok-4'))['json_schema_transformer'])
    nested = {
        'type': 'object',
        'properties': {'point': {'$ref': '#/$defs/Point'}},
        'required': ['point'],
        '$defs': {'Point': {'type': 'object', 'properties': {'x': {'type': 'integer'}}, 'required': ['x']}},
    }
    walker = transformer(nested, strict=True)
    assert walker.walk() == {
        'type': 'object',
        'properties': {
            'point': {
                'type': 'object',
                'properties': {'x': {'type': 'integer'}},
                'required': ['x'],
                'additionalProperties': False,
            }
        },
        'required': ['point'],
        'additionalProperties': False,
    }
    assert walker.is_strict_compatible is True
    recursive = {
        'type': 'object',
        'properties': {'next': {'$ref': '#/$defs/Node'}},
        '$defs': {'Node': {'type': 'object', 'properties': {'next': {'$ref': '#/$defs/Node'}}}},
    }
    walked = transformer(recursive, strict=True).walk()
    assert walked == OpenAIJsonSchemaTransformer(recursive, strict=True).walk()
    assert walked['$defs']['Node']['additionalProperties'] is False  # converted, not the raw definition


# Model names


def test_azure_model_names_are_chat_and_azure_responses_the_responses_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('AZURE_OPENAI_ENDPOINT', RESOURCE)
    monkeypatch.setenv('AZURE_OPENAI_API_KEY', SECRET)
    monkeypatch.setenv('OPENAI_API_VERSION', '2024-10-21')
    chat = infer_model('azure:my-gpt-4o')
    assert type(chat) is OpenAIChatModel
    assert (chat.model_name, type(chat.provider)) == ('my-gpt-4o', AzureProvider)
    responses = infer_model('azure-responses:my-gpt-5')
    assert type(responses) is OpenAIResponsesModel
    assert (responses.model_name, responses.provider.name) == ('my-gpt-5', 'azure')
    assert infer_provider_class('azure') is infer_provider_class('azure-responses') is AzureProvider
    embedder = infer_embedding_model('azure:my-embedder')
    assert isinstance(embedder, OpenAIEmbeddingModel)
    assert (embedder.system, embedder.base_url) == ('azure', f'{RESOURCE}/openai')


# Requests to a real server


@pytest.mark.anyio
async def test_chat_through_a_resource_endpoint(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('from azure')))
    provider = AzureProvider(azure_endpoint=_root(local_server), api_version='2024-10-21', api_key=SECRET)
    async with Agent(OpenAIChatModel('my-gpt-4o', provider=provider)) as agent:
        result = await agent.run('hi')
    assert result.output == 'from azure'
    assert result.all_messages()[-1].provider_name == 'azure'  # type: ignore[union-attr]
    (request,) = local_server.received
    assert request['path'] == '/openai/deployments/my-gpt-4o/chat/completions?api-version=2024-10-21'
    headers = {name.lower(): value for name, value in request['headers'].items()}
    assert headers['api-key'] == SECRET
    assert 'authorization' not in headers
    assert request['body']['model'] == 'my-gpt-4o'
    assert request['body']['messages'] == [{'role': 'user', 'content': 'hi'}]


@pytest.mark.anyio
async def test_responses_through_a_resource_endpoint_named_by_the_environment(
    local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('AZURE_OPENAI_ENDPOINT', _root(local_server))
    monkeypatch.setenv('AZURE_OPENAI_API_KEY', SECRET)
    monkeypatch.setenv('OPENAI_API_VERSION', '2025-04-01-preview')
    local_server.script(Reply(200, RESPONSES.reply))
    async with Agent('azure-responses:my-gpt-5') as agent:
        result = await agent.run('hi')
    assert result.output == 'hello'
    (request,) = local_server.received
    assert request['path'] == '/openai/responses?api-version=2025-04-01-preview'
    assert request['headers']['api-key'] == SECRET
    assert request['body']['model'] == 'my-gpt-5'


@pytest.mark.anyio
async def test_max_tokens_goes_to_mistral_deployments_as_the_older_field(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('from mistral')), Reply(200, completion('from gpt')))
    provider = AzureProvider(azure_endpoint=_root(local_server), api_version='2024-10-21', api_key=SECRET)
    for name in ('Mistral-Large-2411', 'my-gpt-4o'):
        async with Agent(OpenAIChatModel(name, provider=provider), model_settings={'max_tokens': 64}) as agent:
            await agent.run('hi')
    mistral, gpt = (request['body'] for request in local_server.received)
    assert (mistral['max_tokens'], 'max_completion_tokens' in mistral) == (64, False)
    assert (gpt['max_completion_tokens'], 'max_tokens' in gpt) == (64, False)


@pytest.mark.anyio
async def test_chat_through_the_v1_api(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('from v1')))
    provider = AzureProvider(azure_endpoint=f'{_root(local_server)}/openai/v1', api_key=SECRET)
    async with Agent(OpenAIChatModel('gpt-4.1', provider=provider)) as agent:
        assert (await agent.run('hi')).output == 'from v1'
    (request,) = local_server.received
    assert request['path'] == '/openai/v1/chat/completions'
    headers = {name.lower(): value for name, value in request['headers'].items()}
    assert headers['authorization'] == f'Bearer {SECRET}'
    assert 'api-key' not in headers
    assert request['body']['model'] == 'gpt-4.1'


@pytest.mark.anyio
async def test_embeddings_go_to_the_deployment(local_server: LocalServer) -> None:
    local_server.script(Reply(200, {'data': [{'index': 0, 'embedding': [0.5, 0.25]}], 'usage': {'prompt_tokens': 2}}))
    provider = AzureProvider(azure_endpoint=_root(local_server), api_version='2024-10-21', api_key=SECRET)
    async with provider:
        result = await OpenAIEmbeddingModel('my-embedder', provider=provider).embed(['a text'], input_type='document')
    assert result.embeddings == [[0.5, 0.25]]
    (request,) = local_server.received
    assert request['path'] == '/openai/deployments/my-embedder/embeddings?api-version=2024-10-21'
    assert request['headers']['api-key'] == SECRET
    assert request['body']['input'] == ['a text']


# GitHub Models (retired, deprecated)


def _github(**kwargs: Any) -> Any:
    from edgewise.agent.providers.github import GitHubProvider

    with pytest.warns(DeprecationWarning, match='`GitHubProvider` is deprecated .*retired GitHub Models'):
        return GitHubProvider(**kwargs)


def test_github_provider_warns_and_needs_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match=r'`GITHUB_API_KEY`.*`GitHubProvider\(api_key=\.\.\.\)`'):
        _github()
    monkeypatch.setenv('GITHUB_API_KEY', 'gh-secret')
    provider = _github()
    assert (provider.name, provider.base_url) == ('github', 'https://models.github.ai/inference')
    assert provider.request_headers() == {'authorization': 'Bearer gh-secret'}
    assert 'gh-secret' not in repr(provider)
    with pytest.warns(DeprecationWarning, match='`GitHubProvider` is deprecated'):
        model = infer_model('github:xai/grok-3')
    assert type(model) is OpenAIChatModel
    assert model.provider.name == 'github'


def test_github_profiles_by_vendor() -> None:
    from edgewise.agent.providers.github import GitHubProvider

    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        profile = GitHubProvider.model_profile
    assert _openai(profile('gpt-4o'))['json_schema_transformer'] is OpenAIJsonSchemaTransformer
    # A tag after `:` is not part of the family's name.
    meta = _openai(profile('meta/Llama-4-Scout-17B:latest'))
    assert meta['json_schema_transformer'] is InlineDefsJsonSchemaTransformer
    assert _openai(profile('xai/grok-3'))['supports_json_schema_output'] is True
    assert _openai(profile('microsoft/Phi-4'))['supports_json_schema_output'] is True
    assert _openai(profile('mistral-ai/Codestral-2501')) == _openai(profile('mistral-ai/mistral-small'))
    assert _openai(profile('acme/model')) == {'json_schema_transformer': OpenAIJsonSchemaTransformer}


@pytest.mark.anyio
async def test_github_sends_a_bearer_key_to_its_chat_completions(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('from github')))
    provider = _github(api_key='gh-secret', base_url=local_server.url)
    async with Agent(OpenAIChatModel('openai/gpt-4.1', provider=provider)) as agent:
        assert (await agent.run('hi')).output == 'from github'
    (request,) = local_server.received
    assert request['path'] == '/v1/chat/completions'
    assert request['headers']['authorization'] == 'Bearer gh-secret'
    assert request['body']['model'] == 'openai/gpt-4.1'
