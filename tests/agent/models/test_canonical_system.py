"""pydantic-ai 2.68's canonical systems: `Provider.canonical_system` and `compatible_systems`, the
`ModelResponse.canonical_system` a model records (over a real local HTTP server, streamed or not) and
`Model.accepts_stateless_artifacts`, which reads it."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ThinkingPart, UserPromptPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.google_cloud import GoogleCloudProvider
from edgewise.agent.providers.groq import GroqProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import completion, delta, sse
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

HISTORY: list[ModelMessage] = [ModelRequest([UserPromptPart('hi')])]


def test_a_providers_canonical_system_is_its_name_unless_it_says_otherwise() -> None:
    assert AnthropicProvider(api_key='k').canonical_system == 'anthropic'
    assert GroqProvider(api_key='k').canonical_system == 'groq'
    assert GoogleCloudProvider(api_key='k').canonical_system == 'google-cloud'
    assert OpenAIProvider(api_key='k').compatible_systems == frozenset()


@pytest.mark.parametrize('stream', [False, True])
async def test_an_openai_response_records_its_system_as_pydantic_ai_2_68_does(
    local_server: LocalServer, stream: bool
) -> None:
    if stream:
        body = sse(delta(role='assistant', content='hello'), delta('stop'))
        local_server.script(Reply(chunks=[body], headers={'content-type': 'text/event-stream'}))
    else:
        local_server.script(Reply(body=completion()))
    async with OpenAIChatModel('gpt-4o', provider=OpenAIProvider(api_key='k', base_url=local_server.url)) as model:
        if stream:
            async with model.request_stream(HISTORY, None, ModelRequestParameters()) as streamed:
                async for _ in streamed:
                    pass
            response = streamed.get()
        else:
            response = await model.request(HISTORY, None, ModelRequestParameters())
    # `openai` stands for OpenAI or Azure in pydantic-ai 2.68, so its responses always say which.
    assert (response.provider_name, response.canonical_system) == ('openai', 'openai')


async def test_a_response_whose_provider_name_tells_its_system_records_none(local_server: LocalServer) -> None:
    local_server.script(Reply(body=completion()))
    async with OpenAIChatModel('llama', provider=GroqProvider(api_key='k', base_url=local_server.url)) as model:
        response = await model.request(HISTORY, None, ModelRequestParameters())
    assert (response.provider_name, response.canonical_system) == ('groq', None)


def _signed(provider_name: str | None, **fields: Any) -> tuple[ModelResponse, ThinkingPart]:
    part = ThinkingPart('thought', signature='sig', provider_name=provider_name)
    return ModelResponse([part, TextPart('ok')], provider_name=provider_name, **fields), part


@pytest.mark.parametrize(
    ('provider_name', 'fields', 'accepted'),
    [
        pytest.param('anthropic', {}, True, id='same-system'),
        pytest.param('openai', {}, False, id='other-system'),
        pytest.param(None, {}, False, id='no-provider-name'),
        pytest.param('proxy', {'canonical_system': 'anthropic'}, True, id='recorded-system'),
        pytest.param('anthropic', {'canonical_system': 'bedrock'}, False, id='recorded-other-system'),
    ],
)
def test_anthropic_accepts_the_signed_data_its_own_system_verifies(
    provider_name: str | None, fields: dict[str, Any], accepted: bool
) -> None:
    model = AnthropicModel('claude-sonnet-4-5', provider=AnthropicProvider(api_key='k'))
    response, part = _signed(provider_name, **fields)
    assert model.accepts_stateless_artifacts(response, part) is accepted
    assert model.accepts_stateless_artifacts(response) is accepted


@pytest.mark.parametrize(
    ('provider_name', 'fields', 'accepted'),
    [
        pytest.param('google-vertex', {}, True, id='former-name'),
        pytest.param('google', {}, False, id='name-of-two-systems'),
        pytest.param(
            'google', {'provider_url': 'https://us-central1-aiplatform.googleapis.com/v1'}, True, id='cloud-url'
        ),
        pytest.param('google', {'provider_url': 'https://generativelanguage.googleapis.com'}, False, id='gemini-url'),
        pytest.param('google', {'provider_url': 'https://proxy.example'}, False, id='other-url'),
        pytest.param('google-cloud', {'canonical_system': 'google'}, False, id='recorded-system'),
    ],
)
def test_google_cloud_reads_former_names_and_google_urls(
    provider_name: str, fields: dict[str, Any], accepted: bool
) -> None:
    from edgewise.agent.models.google import GoogleModel

    model = GoogleModel('gemini-2.5-flash', provider=GoogleCloudProvider(api_key='k'))
    response, part = _signed(provider_name, **fields)
    assert model.accepts_stateless_artifacts(response, part) is accepted


def test_a_model_without_a_provider_is_its_own_system() -> None:
    model = TestModel()
    assert (model.canonical_system, model.compatible_systems, model._canonical_system_stamp) == (
        'test',
        frozenset(),
        None,
    )
    response, part = _signed('test')
    assert model.accepts_stateless_artifacts(response, part)


def test_the_gemini_api_provider_always_records_its_system() -> None:
    from edgewise.agent.models.google import GoogleModel

    model = GoogleModel('gemini-2.5-flash', provider=GoogleProvider(api_key='k'))
    assert model._canonical_system_stamp == 'google'


def test_a_part_from_another_provider_than_its_response_is_judged_by_its_own_name() -> None:
    model = AnthropicModel('claude-sonnet-4-5', provider=AnthropicProvider(api_key='k'))
    part = ThinkingPart('thought', signature='sig', provider_name='anthropic')
    response = ModelResponse([part], provider_name='openai', canonical_system='openai')
    assert model.accepts_stateless_artifacts(response, part)
    assert not model.accepts_stateless_artifacts(response)
