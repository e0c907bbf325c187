"""`GitHubCopilotModel` and `GitHubCopilotProvider` against a real HTTP server on 127.0.0.1 speaking Copilot's Chat
Completions API: the editor headers and the token, Copilot's envelope without `object` or `index`, where Claude's
reasoning comes, the token and base URL from the environment, and the profiles of the model families."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelRequest, TextPart, ThinkingPart
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models.github_copilot import GitHubCopilotModel
from edgewise.agent.profiles.openai import OpenAIJsonSchemaTransformer
from edgewise.agent.providers import infer_provider, infer_provider_class
from edgewise.agent.providers.github_copilot import GitHubCopilotProvider

from ._chat import completion
from .conftest import LocalServer, Reply, validate_chat_body

pytestmark = pytest.mark.anyio

TOKEN = 'ghu_copilot-secret-2468'
ENV = (
    'GITHUB_COPILOT_API_KEY',
    'GITHUB_COPILOT_API_TOKEN',
    'COPILOT_GITHUB_TOKEN',
    'GITHUB_COPILOT_BASE_URL',
    'COPILOT_API_URL',
    'GITHUB_COPILOT_API_BASE',
    'GITHUB_COPILOT_INTEGRATION_ID',
    'GITHUB_TOKEN',
    'GH_TOKEN',
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def copilot_answer(**message: Any) -> dict[str, Any]:
    """A Copilot answer: OpenAI's envelope without `object` and the choice's `index`, as Copilot sends it."""
    body = completion(**message)
    del body['object']
    for choice in body['choices']:
        del choice['index']
    return body


async def test_a_request_carries_the_editor_headers_the_integration_id_and_the_token(
    local_server: LocalServer,
) -> None:
    local_server.script(Reply(body=copilot_answer(content='hi there')))
    provider = GitHubCopilotProvider(api_key=TOKEN, base_url=local_server.url, integration_id='my-app')
    model = GitHubCopilotModel('gpt-5.4', provider=provider)
    async with provider:
        response = await model.request(
            [ModelRequest.user_text_prompt('hello')], {'max_tokens': 50}, ModelRequestParameters()
        )
    assert response.parts == [TextPart('hi there')]
    assert response.provider_name == 'github-copilot'
    [sent] = local_server.received
    assert sent['path'] == '/v1/chat/completions'
    headers = {k.lower(): v for k, v in sent['headers'].items()}
    assert {k: headers[k] for k in (
        'authorization', 'copilot-integration-id', 'editor-version', 'editor-plugin-version', 'openai-intent',
        'x-github-api-version',
    )} == {
        'authorization': f'Bearer {TOKEN}',
        'copilot-integration-id': 'my-app',
        'editor-version': 'vscode/1.95.0',
        'editor-plugin-version': 'copilot-chat/0.26.7',
        'openai-intent': 'conversation-panel',
        'x-github-api-version': '2025-04-01',
    }  # fmt: skip
    validate_chat_body(sent['body'])
    assert sent['body']['model'] == 'gpt-5.4'
    assert sent['body']['max_completion_tokens'] == 50
    assert 'max_tokens' not in sent['body']


async def test_claude_reasoning_comes_in_reasoning_text(local_server: LocalServer) -> None:
    local_server.script(Reply(body=copilot_answer(content='4', reasoning_text='2 plus 2')))
    provider = GitHubCopilotProvider(api_key=TOKEN, base_url=local_server.url)
    model = GitHubCopilotModel('claude-sonnet-4.5', provider=provider)
    async with provider:
        response = await model.request([ModelRequest.user_text_prompt('2+2?')], None, ModelRequestParameters())
    assert [type(part) for part in response.parts] == [ThinkingPart, TextPart]
    assert [part.content for part in response.parts] == ['2 plus 2', '4']  # type: ignore[union-attr]


def test_the_token_and_base_url_come_from_the_environment_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COPILOT_GITHUB_TOKEN', 'third')
    monkeypatch.setenv('GITHUB_COPILOT_API_TOKEN', 'second')
    assert GitHubCopilotProvider().request_headers()['authorization'] == 'Bearer second'
    monkeypatch.setenv('GITHUB_COPILOT_API_KEY', 'first')
    monkeypatch.setenv('GITHUB_COPILOT_API_BASE', 'https://third.example')
    monkeypatch.setenv('COPILOT_API_URL', 'https://second.example/')
    monkeypatch.setenv('GITHUB_COPILOT_INTEGRATION_ID', 'from-env')
    provider = GitHubCopilotProvider()
    assert (provider.request_headers()['authorization'], provider.base_url, provider.integration_id) == (
        'Bearer first',
        'https://second.example',
        'from-env',
    )
    monkeypatch.delenv('COPILOT_API_URL')
    monkeypatch.delenv('GITHUB_COPILOT_API_BASE')
    monkeypatch.delenv('GITHUB_COPILOT_INTEGRATION_ID')
    defaults = GitHubCopilotProvider(api_key='k')
    assert (defaults.base_url, defaults.integration_id) == ('https://api.githubcopilot.com', 'vscode-chat')


def test_a_missing_token_is_a_user_error_and_github_tokens_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('GITHUB_TOKEN', 'gh-api-token')
    monkeypatch.setenv('GH_TOKEN', 'gh-api-token')
    with pytest.raises(UserError) as caught:
        GitHubCopilotProvider()
    assert str(caught.value) == (
        'Set the `GITHUB_COPILOT_API_KEY` environment variable or pass it via `GitHubCopilotProvider(api_key=...)` '
        'to use the GitHub Copilot provider.'
    )


def test_the_token_is_not_in_the_repr() -> None:
    provider = GitHubCopilotProvider(api_key=TOKEN)
    model = GitHubCopilotModel('gpt-5.4', provider=provider)
    assert repr(provider) == 'GitHubCopilotProvider(name=github-copilot, base_url=https://api.githubcopilot.com)'
    assert TOKEN not in repr(model)


def test_names_make_the_copilot_provider_and_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('GITHUB_COPILOT_API_KEY', TOKEN)
    assert infer_provider_class('github-copilot') is GitHubCopilotProvider
    assert isinstance(infer_provider('github-copilot'), GitHubCopilotProvider)
    model = infer_model('github-copilot:claude-haiku-4.5')
    assert isinstance(model, GitHubCopilotModel)
    assert (model.model_name, model.system) == ('claude-haiku-4.5', 'github-copilot')


def test_profiles_follow_the_family_with_copilots_gateway_on_top() -> None:
    profile = GitHubCopilotProvider.model_profile
    gemini = profile('gemini-3.7-flash') or {}
    assert gemini['json_schema_transformer'] is OpenAIJsonSchemaTransformer
    assert gemini['openai_chat_thinking_field'] == 'reasoning_text'  # type: ignore[typeddict-item]
    gpt = profile('copilot/GPT-5.4') or {}
    assert gpt['supports_thinking'] is True
    assert 'openai_chat_thinking_field' not in gpt
    assert gpt['openai_chat_supports_max_completion_tokens'] is True  # type: ignore[typeddict-item]
    unknown = profile('some-new-model') or {}
    assert unknown.get('supports_thinking', False) is False
    assert unknown['json_schema_transformer'] is OpenAIJsonSchemaTransformer


def test_the_newest_claude_models_get_no_sampling_settings() -> None:
    opus = GitHubCopilotProvider.model_profile('claude-opus-4.7') or {}
    assert opus['openai_unsupported_model_settings'] == ('temperature', 'top_p')  # type: ignore[typeddict-item]
    assert 'openai_unsupported_model_settings' not in (GitHubCopilotProvider.model_profile('claude-haiku-4.5') or {})
