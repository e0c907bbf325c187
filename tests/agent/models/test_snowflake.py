"""`SnowflakeModel` and `SnowflakeProvider` against a real HTTP server on 127.0.0.1 speaking Cortex's Chat
Completions API: Claude's reasoning object, `reasoning_details` both ways, empty finish reasons, the profiles."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, cast

import httpx
import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelRequest, ModelResponse, TextPart, ThinkingPart, ToolCallPart
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models.snowflake import SnowflakeModel, SnowflakeModelSettings, SnowflakeStreamedResponse
from edgewise.agent.providers import infer_provider
from edgewise.agent.providers.snowflake import SnowflakeProvider, snowflake_model_profile
from edgewise.agent.tools import ToolDefinition

from ._chat import completion, delta, sse
from .conftest import LocalServer, Reply, validate_chat_body

pytestmark = pytest.mark.anyio

TOKEN = 'snowflake-secret-pat-1357'
PARAMS = ModelRequestParameters()
DETAIL = {'type': 'reasoning.text', 'text': 'Think first.', 'signature': 'sig-1', 'format': 'anthropic', 'index': 0}
WEATHER = ToolDefinition(
    name='weather',
    description='Weather of a city',
    parameters_json_schema={'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']},
)


@dataclass
class Api:
    server: LocalServer
    client: httpx.AsyncClient

    def model(self, name: str = 'claude-sonnet-4-6', **kwargs: Any) -> SnowflakeModel:
        provider = SnowflakeProvider(token=TOKEN, base_url=self.server.url, http_client=self.client, max_retries=0)
        return SnowflakeModel(name, provider=provider, **kwargs)

    def body(self) -> dict[str, Any]:
        received = self.server.received[-1]
        assert received['path'] == '/v1/chat/completions'
        assert received['headers']['authorization'] == f'Bearer {TOKEN}'
        body: dict[str, Any] = received['body']
        validate_chat_body(body)
        return body


@pytest.fixture
async def api(local_server: LocalServer) -> AsyncIterator[Api]:
    async with httpx.AsyncClient() as client:
        yield Api(local_server, client)


def user(prompt: str = 'Hi') -> list[Any]:
    return [ModelRequest.user_text_prompt(prompt)]


def test_snowflake_names_resolve_and_the_account_gives_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('SNOWFLAKE_ACCOUNT', 'https://myorg-acct.snowflakecomputing.com/')
    monkeypatch.setenv('SNOWFLAKE_TOKEN', TOKEN)
    model = infer_model('snowflake:claude-sonnet-4-6')
    assert type(model) is SnowflakeModel
    assert (model.system, model.model_name) == ('snowflake', 'claude-sonnet-4-6')
    assert model.base_url == 'https://myorg-acct.snowflakecomputing.com/api/v2/cortex/v1'
    assert TOKEN not in repr(model)
    assert TOKEN not in repr(model.provider)
    assert type(infer_provider('snowflake')) is SnowflakeProvider
    assert (
        SnowflakeProvider(account='myorg-other').base_url
        == 'https://myorg-other.snowflakecomputing.com/api/v2/cortex/v1'
    )


def test_snowflake_provider_errors_name_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('SNOWFLAKE_ACCOUNT', raising=False)
    monkeypatch.delenv('SNOWFLAKE_TOKEN', raising=False)
    with pytest.raises(UserError, match=r'Set the `SNOWFLAKE_ACCOUNT` environment variable .*account=\.\.\.'):
        SnowflakeProvider(token=TOKEN)
    with pytest.raises(UserError, match=r'Set the `SNOWFLAKE_TOKEN` environment variable .*token=\.\.\.'):
        SnowflakeProvider(account='myorg-acct')
    with pytest.raises(UserError, match=r"Invalid Snowflake account identifier 'evil.example/x'") as raised:
        SnowflakeProvider(account='evil.example/x', token=TOKEN)
    assert TOKEN not in str(raised.value)


def test_snowflake_profiles_say_what_cortex_takes_from_each_family() -> None:
    claude = snowflake_model_profile('claude-sonnet-4-6') or {}
    assert claude['supports_thinking'] is True
    assert (claude['supports_json_schema_output'], claude['supports_json_object_output']) == (True, False)
    assert claude['snowflake_supports_reasoning'] is True  # type: ignore[typeddict-item]
    assert claude['openai_supports_strict_tool_definition'] is False  # type: ignore[typeddict-item]
    gpt = snowflake_model_profile('openai-gpt-5.6-luna') or {}
    assert gpt.get('supports_tools', True) is True
    assert 'snowflake_supports_reasoning' not in gpt
    llama = snowflake_model_profile('llama3.3-70b') or {}
    assert (llama['supports_tools'], llama['supports_json_schema_output']) == (False, False)
    assert llama['default_structured_output_mode'] == 'prompted'


@pytest.mark.parametrize(
    ('settings', 'expected'),
    [
        ({'thinking': True}, {'reasoning': {'effort': 'medium'}, 'temperature': 1}),
        ({'thinking': 'xhigh', 'temperature': 0.2}, {'reasoning': {'effort': 'high'}, 'temperature': 0.2}),
        (
            {'thinking': 'minimal', 'snowflake_reasoning': {'max_tokens': 2048}},
            {'reasoning': {'max_tokens': 2048}, 'temperature': 1},
        ),
        ({'thinking': False}, {}),
        (
            {'openai_reasoning_effort': 'low', 'thinking': True},
            {'reasoning': {'effort': 'medium'}, 'temperature': 1, 'reasoning_effort': 'low'},
        ),
    ],
)  # fmt: skip
async def test_claude_thinks_through_the_reasoning_object(
    api: Api, settings: dict[str, Any], expected: dict[str, Any]
) -> None:
    api.server.script(Reply(200, completion()))
    await api.model().request(user(), cast(SnowflakeModelSettings, settings), PARAMS)
    body = api.body()
    assert {key: body[key] for key in ('reasoning', 'temperature', 'reasoning_effort') if key in body} == expected
    assert not any(key.startswith('snowflake') for key in body)


async def test_other_families_use_reasoning_effort(api: Api) -> None:
    api.server.script(Reply(200, completion()))
    await api.model('openai-gpt-5.6-luna').request(user(), SnowflakeModelSettings(thinking='high'), PARAMS)
    body = api.body()
    assert 'reasoning' not in body
    assert body['reasoning_effort'] == 'high'
    api.server.script(Reply(200, completion()))
    explicit = SnowflakeModelSettings(snowflake_reasoning={'effort': 'low'})
    await api.model('openai-gpt-5.6-luna').request(user(), explicit, PARAMS)
    assert api.body()['reasoning'] == {'effort': 'low'}
    assert 'temperature' not in api.body()  # only Claude needs temperature 1 to reason


async def test_reasoning_details_are_read_and_sent_back_as_they_came(api: Api) -> None:
    call = {'id': 'call_1', 'type': 'function', 'function': {'name': 'weather', 'arguments': '{"city": "Oslo"}'}}
    api.server.script(
        Reply(
            200,
            completion(
                None, tool_calls=[call], finish_reason='', reasoning='Think first.', reasoning_details=[DETAIL]
            ),
        ),
        Reply(200, completion('Sunny.', finish_reason='')),
    )  # fmt: skip
    model = api.model()
    params = ModelRequestParameters(function_tools=[WEATHER])
    first = await model.request(user('Weather in Oslo?'), None, params)
    assert first.parts == [
        ThinkingPart(
            'Think first.', signature='sig-1', provider_name='snowflake',
            provider_details={'format': 'anthropic', 'index': 0, 'type': 'reasoning.text'},
        ),
        ToolCallPart('weather', '{"city": "Oslo"}', 'call_1'),
    ]  # fmt: skip
    assert first.finish_reason == 'tool_call'  # Cortex sends no finish reason for Claude
    second = await model.request([*user('Weather in Oslo?'), first, *user('And?')], None, params)
    assert second.finish_reason == 'stop'
    assistant = api.body()['messages'][1]
    assert assistant['reasoning_details'] == [{'id': None, **DETAIL}]
    assert 'reasoning' not in assistant


async def test_streamed_reasoning_details_and_a_missing_finish_reason(api: Api) -> None:
    chunks = sse(
        delta(reasoning_details=[{**DETAIL, 'text': 'Think', 'signature': None}]),
        delta(reasoning_details=[{**DETAIL, 'text': ' first.'}]),
        delta(content='Sunny.'),
        delta(''),
    )
    api.server.script(Reply(200, headers={'content-type': 'text/event-stream'}, chunks=[chunks]))
    async with api.model().request_stream(user(), SnowflakeModelSettings(thinking='low'), PARAMS) as stream:
        assert isinstance(stream, SnowflakeStreamedResponse)
        async for _ in stream:
            pass
    body = api.body()
    assert (body['stream'], body['reasoning'], body['temperature']) == (True, {'effort': 'low'}, 1)
    response: ModelResponse = stream.get()
    assert response.finish_reason == 'stop'
    thinking, text = response.parts
    assert isinstance(thinking, ThinkingPart)
    assert (thinking.content, thinking.signature, thinking.provider_name) == ('Think first.', 'sig-1', 'snowflake')
    assert text == TextPart('Sunny.')
    assert json.loads(json.dumps(thinking.provider_details)) == {
        'format': 'anthropic',
        'index': 0,
        'type': 'reasoning.text',
    }
