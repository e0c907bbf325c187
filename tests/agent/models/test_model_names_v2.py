"""Model names and renamed classes of pydantic-ai 2.x, and the 1.x spellings that still work and warn."""

from __future__ import annotations

import importlib

import httpx
import pytest

from edgewise.agent import models
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelResponse, TextPart
from edgewise.agent.models import (
    CompletedStreamedResponse,
    ModelRequestParameters,
    create_async_http_client,
    infer_model,
)
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.models.xai import XaiModel
from edgewise.agent.providers import infer_provider_class
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.xai import XaiProvider
from edgewise.agent.usage import RequestUsage


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ('OPENAI_API_KEY', 'GOOGLE_API_KEY', 'XAI_API_KEY', 'GROK_API_KEY'):
        monkeypatch.setenv(name, 'k')


def test_openai_means_the_responses_api_and_openai_chat_chat_completions() -> None:
    for name in ('openai:gpt-5', 'openai-responses:gpt-5'):
        model = infer_model(name)
        assert type(model) is OpenAIResponsesModel
        assert model.model_name == 'gpt-5'
    chat = infer_model('openai-chat:gpt-4o')
    assert type(chat) is OpenAIChatModel
    assert chat.model_name == 'gpt-4o'


def test_xai_is_the_xai_model_on_the_responses_api() -> None:
    model = infer_model('xai:grok-4')
    assert type(model) is XaiModel
    assert isinstance(model, OpenAIResponsesModel)
    assert type(model.provider) is XaiProvider


@pytest.mark.parametrize(('old', 'new'), [('google-gla', 'google'), ('grok', 'xai')])
def test_1x_prefixes_warn_naming_the_2x_prefix(old: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"The '{old}:' model name prefix is deprecated; use '{new}:' instead"):
        model = infer_model(f'{old}:m')
    assert model.model_name == 'm'
    if new == 'google':
        assert type(model) is GoogleModel
    else:  # 'grok:' keeps its 1.x provider (GROK_API_KEY)
        assert type(model) is OpenAIChatModel
        assert type(model.provider).__name__ == 'GrokProvider'


@pytest.mark.parametrize('old', ['google-vertex', 'vertexai'])
def test_vertex_prefixes_warn_naming_google_cloud(old: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"The '{old}:' model name prefix is deprecated; use 'google-cloud:'"):
        model = infer_model(f'{old}:m')
    assert type(model) is GoogleModel
    assert (model.model_name, model.provider.name) == ('m', 'google-cloud')


def test_a_name_without_a_provider_prefix_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r"Unknown model: 'gpt-5'\. A model name needs its provider: .*'openai:gpt-5'"):
        infer_model('gpt-5')


def test_renamed_classes_warn_and_are_the_new_ones() -> None:
    from edgewise.agent.models.gemini import GeminiModel
    from edgewise.agent.providers.google import GoogleGLAProvider
    from edgewise.agent.providers.grok import GrokProvider

    with pytest.warns(DeprecationWarning, match='use `GoogleProvider`'):
        gla = GoogleGLAProvider(api_key='k')
    assert isinstance(gla, GoogleProvider)
    with pytest.warns(DeprecationWarning, match='use `GoogleModel`'):
        gemini = GeminiModel('gemini-2.5-flash', provider=GoogleProvider(api_key='k'))
    assert isinstance(gemini, GoogleModel)
    with pytest.warns(DeprecationWarning, match='use `XaiProvider`'):
        grok = GrokProvider()
    assert grok.name == 'grok'


@pytest.mark.anyio
async def test_create_async_http_client_makes_a_new_client_each_call() -> None:
    first, second = create_async_http_client(), create_async_http_client(timeout=30, connect=2)
    assert first is not second
    assert isinstance(first, httpx.AsyncClient)
    assert second.timeout == httpx.Timeout(30, connect=2)
    with pytest.warns(DeprecationWarning, match=r'use `create_async_http_client\(\)`'):
        cached = models.cached_async_http_client
    third = cached(provider='openai')
    assert isinstance(third, httpx.AsyncClient)
    for client in (first, second, third):
        await client.aclose()
    with pytest.raises(AttributeError, match='no attribute'):
        models.nothing_here  # noqa: B018


@pytest.mark.anyio
async def test_streamed_response_usage_is_a_property_and_calling_it_warns() -> None:
    response = ModelResponse([TextPart('hi')], usage=RequestUsage(input_tokens=3, output_tokens=1), model_name='m')
    stream = CompletedStreamedResponse(response, model_request_parameters=ModelRequestParameters())
    usage = stream.usage
    assert usage == RequestUsage(input_tokens=3, output_tokens=1)
    assert repr(usage) == repr(RequestUsage(input_tokens=3, output_tokens=1))
    assert usage != object()
    with pytest.warns(DeprecationWarning, match='`StreamedResponse.usage` is a property'):
        assert usage() is usage  # type: ignore[operator]


def test_the_google_gla_provider_name_warns_naming_google() -> None:
    with pytest.warns(DeprecationWarning, match=r"The 'google-gla' provider name is deprecated; use 'google' instead"):
        assert infer_provider_class('google-gla') is GoogleProvider


@pytest.mark.parametrize(
    ('module', 'names'),
    [
        ('azure', ('AzureProvider',)),
        ('github', ('GitHubProvider',)),
        ('google_cloud', ('GoogleCloudProvider',)),
        ('gateway', ('gateway_provider', 'is_gateway_provider', 'normalize_gateway_provider', 'UpstreamProvider')),
    ],
)
def test_the_provider_modules_of_pydantic_ai_2_68_are_at_its_paths(module: str, names: tuple[str, ...]) -> None:
    imported = importlib.import_module(f'edgewise.agent.providers.{module}')
    assert set(names) <= set(imported.__all__)
    assert all(hasattr(imported, name) for name in names)
