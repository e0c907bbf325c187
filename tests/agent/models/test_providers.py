"""Providers: base URLs, API keys from the environment, profiles, and the life of their HTTP client."""

from __future__ import annotations

import subprocess
import sys
from typing import cast

import httpx
import pytest

from edgewise.agent import Agent
from edgewise.agent.agent._run_setup import resolve_model
from edgewise.agent.exceptions import UserError
from edgewise.agent.models import infer_model
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.profiles.openai import OpenAIModelProfile
from edgewise.agent.providers import Provider, infer_provider, infer_provider_class
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.cerebras import CerebrasProvider
from edgewise.agent.providers.groq import GroqProvider
from edgewise.agent.providers.heroku import HerokuProvider
from edgewise.agent.providers.litellm import LiteLLMProvider
from edgewise.agent.providers.ollama import OllamaProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import completion, mock_model
from .conftest import LocalServer, Reply

KEYED = [
    ('openai', 'OPENAI_API_KEY', 'https://api.openai.com/v1'),
    ('openrouter', 'OPENROUTER_API_KEY', 'https://openrouter.ai/api/v1'),
    ('groq', 'GROQ_API_KEY', 'https://api.groq.com/openai/v1'),
    ('deepseek', 'DEEPSEEK_API_KEY', 'https://api.deepseek.com'),
    ('together', 'TOGETHER_API_KEY', 'https://api.together.xyz/v1'),
    ('fireworks', 'FIREWORKS_API_KEY', 'https://api.fireworks.ai/inference/v1'),
    ('cerebras', 'CEREBRAS_API_KEY', 'https://api.cerebras.ai/v1'),
    ('vercel', 'VERCEL_AI_GATEWAY_API_KEY', 'https://ai-gateway.vercel.sh/v1'),
    ('grok', 'GROK_API_KEY', 'https://api.x.ai/v1'),
    ('xai', 'XAI_API_KEY', 'https://api.x.ai/v1'),
    ('moonshotai', 'MOONSHOTAI_API_KEY', 'https://api.moonshot.ai/v1'),
    ('heroku', 'HEROKU_INFERENCE_KEY', 'https://us.inference.heroku.com/v1'),
]
ALL_ENV = [env for _, env, _ in KEYED] + [
    'VERCEL_OIDC_TOKEN',
    'OPENAI_BASE_URL',
    'OLLAMA_BASE_URL',
    'GROQ_BASE_URL',
    'HEROKU_INFERENCE_URL',
    'LITELLM_BASE_URL',
    'OLLAMA_API_KEY',
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ALL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(('name', 'env', 'base_url'), KEYED)
def test_a_provider_reads_its_key_and_knows_its_url(
    name: str, env: str, base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UserError, match=f'Set the `{env}`'):
        infer_provider(name)
    monkeypatch.setenv(env, 'sk-from-env')
    provider = infer_provider(name)
    assert (provider.name, provider.base_url) == (name, base_url)
    assert provider.request_headers()['authorization'] == 'Bearer sk-from-env'
    assert 'sk-from-env' not in repr(provider)
    assert isinstance(provider.model_profile('some-model'), dict)


def test_base_urls_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('OPENAI_BASE_URL', 'http://localhost:8000/v1/')
    assert OpenAIProvider(api_key='k').base_url == 'http://localhost:8000/v1'
    monkeypatch.setenv('GROQ_BASE_URL', 'https://groq.example')
    assert GroqProvider(api_key='k').base_url == 'https://groq.example/openai/v1'
    monkeypatch.setenv('HEROKU_INFERENCE_URL', 'https://eu.inference.heroku.com')
    assert HerokuProvider(api_key='k').base_url == 'https://eu.inference.heroku.com/v1'


def test_a_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    assert OpenAIProvider(base_url='http://localhost:8000/v1').request_headers() == {}
    with pytest.raises(UserError, match=r'Set the `OLLAMA_BASE_URL` environment variable or pass it via `Ollama'):
        OllamaProvider()
    monkeypatch.setenv('OLLAMA_BASE_URL', 'http://localhost:11434/v1')
    ollama = infer_provider('ollama')
    assert (ollama.base_url, ollama.request_headers()) == ('http://localhost:11434/v1', {})
    assert LiteLLMProvider(api_base='http://proxy:4000').base_url == 'http://proxy:4000'


def test_vercel_takes_either_variable_and_cerebras_sends_its_header(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match='Set the `VERCEL_AI_GATEWAY_API_KEY` or `VERCEL_OIDC_TOKEN` environment'):
        infer_provider('vercel')
    monkeypatch.setenv('VERCEL_OIDC_TOKEN', 'oidc')
    assert infer_provider('vercel').request_headers() == {'authorization': 'Bearer oidc'}
    headers = CerebrasProvider(api_key='k').request_headers()
    assert headers['X-Cerebras-3rd-Party-Integration'] == 'edgewise'


def test_profiles_per_provider() -> None:
    deepseek = infer_provider_class('deepseek').model_profile('deepseek-reasoner')
    deepseek = cast(OpenAIModelProfile, deepseek)
    assert (
        deepseek.get('openai_chat_thinking_field', None),
        deepseek.get('openai_chat_send_back_thinking_parts', 'auto'),
    ) == (
        'reasoning_content',
        'field',
    )
    grok = infer_provider_class('grok').model_profile('grok-4')
    grok = cast(OpenAIModelProfile, grok)
    assert grok.get('openai_supports_strict_tool_definition', True) is False
    routed = infer_provider_class('openrouter').model_profile('openai/o3-mini')
    routed = cast(OpenAIModelProfile, routed)
    assert routed.get('openai_supports_reasoning', False) is True
    assert cast(OpenAIModelProfile, OpenAIProvider.model_profile('o1-mini'))['openai_system_prompt_role'] == 'user'


def test_unknown_providers() -> None:
    with pytest.raises(ValueError, match='Unknown provider: nope'):
        infer_provider('nope')


@pytest.mark.parametrize(
    ('model_name', 'provider_class'),
    [
        ('openai-chat:gpt-4o', 'OpenAIProvider'),
        ('ollama:llama3.2', 'OllamaProvider'),
        ('groq:llama-3.3-70b', 'GroqProvider'),
        ('deepseek:deepseek-chat', 'DeepSeekProvider'),
    ],
)
def test_infer_model_for_openai_compatible_names(
    model_name: str, provider_class: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ('OPENAI_API_KEY', 'GROQ_API_KEY', 'DEEPSEEK_API_KEY'):
        monkeypatch.setenv(name, 'k')
    monkeypatch.setenv('OLLAMA_BASE_URL', 'http://localhost:11434/v1')
    model = infer_model(model_name)
    assert isinstance(model, OpenAIChatModel)
    assert model.model_name == model_name.partition(':')[2]
    assert type(model.provider).__name__ == provider_class


def test_apis_not_here_yet_are_a_clear_error() -> None:
    with pytest.raises(UserError, match=r'is not available in edgewise\.agent yet'):
        infer_model('typesafe:claude-sonnet-4-5')


@pytest.mark.anyio
async def test_the_agent_closes_the_client_its_provider_made(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('one')), Reply(200, completion('two')))
    provider = OpenAIProvider(base_url=local_server.url)
    agent = Agent(OpenAIChatModel('m', provider=provider))
    async with agent:
        assert (await agent.run('a')).output == 'one'
        client = provider.client
        assert (await agent.run('b')).output == 'two'
        assert provider.client is client  # one pool for every run
    assert client.is_closed
    # Used again, the provider makes a new client (closed again by the next `async with`).
    async with agent:
        assert not provider.client.is_closed
    assert provider.client is not client


@pytest.mark.anyio
async def test_the_client_a_provider_owns_is_closed_by_its_last_exit_and_made_again_on_reentry() -> None:
    provider = AnthropicProvider(api_key='k')
    first = provider._own_http_client  # pydantic-ai's private name: made on first reading
    assert first is not None
    assert first is provider.client
    await provider.__aexit__(None, None, None)  # an exit without an entry does nothing
    assert not first.is_closed
    async with provider:
        async with provider:
            assert provider._own_http_client is first
        assert not first.is_closed  # the outer `async with` still holds it
    assert first.is_closed
    assert provider._own_http_client is first  # closed, until the provider is entered or used again
    async with provider:
        second = provider._own_http_client
        assert second is not None
        assert second is not first
        assert not second.is_closed
    assert second.is_closed


@pytest.mark.anyio
async def test_a_provider_given_a_client_owns_none() -> None:
    client = httpx.AsyncClient()
    provider = OpenAIProvider(api_key='k', http_client=client)
    assert provider._own_http_client is None
    async with provider:
        assert provider.client is client
    assert not client.is_closed
    await client.aclose()


@pytest.mark.anyio
async def test_a_users_client_is_used_as_given_and_left_open() -> None:
    model, recorder = mock_model(lambda _: httpx.Response(200, json=completion('ok')))
    client = model.provider.client
    async with Agent(model) as agent:
        assert (await agent.run('q')).output == 'ok'
    assert model.provider.client is client
    assert not client.is_closed
    assert len(recorder.requests) == 1
    await client.aclose()


@pytest.mark.anyio
async def test_an_agent_named_by_string_reuses_one_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('OPENAI_API_KEY', 'k')
    agent = Agent('openai:gpt-4o')
    first = resolve_model(agent, None)
    assert resolve_model(agent, None) is first
    async with agent:
        assert isinstance(first.provider, Provider)


def test_importing_the_agent_package_imports_no_provider_module() -> None:
    code = (
        'import sys, edgewise.agent; '
        "print(sorted(m for m in sys.modules if m.startswith(('edgewise.agent.providers', 'edgewise.agent.profiles',"
        " 'edgewise.agent.models.openai', 'edgewise.agent.models._http'))))"
    )
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == '[]'


def test_importing_the_provider_models_leaves_httpx_to_the_first_client() -> None:
    # httpx is imported when a provider makes its client (or a request is sent), not by the modules.
    code = (
        'import sys\n'
        'import edgewise.agent.models.openai, edgewise.agent.models.anthropic, edgewise.agent.models.google\n'
        'import edgewise.agent.providers.anthropic, edgewise.agent.providers.google, edgewise.agent.providers.ollama\n'
        'from edgewise.agent.providers.openai import OpenAIProvider\n'
        "provider = OpenAIProvider(api_key='k')\n"
        "print('httpx' in sys.modules)\n"
        'client = provider.client\n'
        "print('httpx' in sys.modules, type(client).__name__)\n"
    )
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    assert out.split('\n') == ['False', 'True AsyncClient', '']


def test_a_providers_own_client_reads_long_and_connects_quickly() -> None:
    client = OpenAIProvider(api_key='k').client
    assert isinstance(client, httpx.AsyncClient)
    assert client.timeout == httpx.Timeout(600.0, connect=5.0)


def test_model_families_behind_compatible_providers() -> None:
    from edgewise.agent.profiles import InlineDefsJsonSchemaTransformer
    from edgewise.agent.profiles.openai import OpenAIJsonSchemaTransformer

    llama = OllamaProvider.model_profile('llama3.2')
    llama = cast(OpenAIModelProfile, llama)
    assert llama.get('json_schema_transformer', None) is InlineDefsJsonSchemaTransformer
    assert llama.get('openai_chat_thinking_field', None) == 'reasoning'
    together = infer_provider_class('together').model_profile('meta-llama/Llama-3-70b')
    assert together is not None
    assert together['json_schema_transformer'] is InlineDefsJsonSchemaTransformer
    unknown = infer_provider_class('fireworks').model_profile('accounts/fireworks/models/unknown')
    assert unknown is not None
    assert unknown.get('json_schema_transformer', None) is OpenAIJsonSchemaTransformer
    litellm = LiteLLMProvider.model_profile('gpt-4o')
    litellm = cast(OpenAIModelProfile, litellm)
    assert litellm.get('supports_json_schema_output', False) is True
