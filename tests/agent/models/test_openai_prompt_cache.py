"""OpenAI's explicit prompt cache breakpoints (GPT-5.6 and later) on both APIs, over a real HTTP server: the exact
request bodies `CachePoint`, `openai_cache_instructions`, `openai_prompt_cache_options` and the unified `cache`
setting give."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast

import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    CachePoint,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIPromptCacheOptions, OpenAIResponsesModel
from edgewise.agent.models.openrouter import OpenRouterModel
from edgewise.agent.profiles.openai import openai_model_profile
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.providers.openrouter import OpenRouterProvider
from edgewise.agent.settings import ModelSettings

from ._chat import completion, delta, sse
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

PARAMS = ModelRequestParameters()
BREAK = {'mode': 'explicit'}


def _settings(**values: Any) -> ModelSettings:
    return cast(ModelSettings, values)


def _provider(server: LocalServer) -> OpenAIProvider:
    return OpenAIProvider(base_url=server.url, api_key='sk-local-secret')


def _answer() -> dict[str, Any]:
    return {
        'id': 'resp_1',
        'object': 'response',
        'model': 'gpt-5.6',
        'status': 'completed',
        'output': [
            {
                'type': 'message',
                'id': 'msg_1',
                'role': 'assistant',
                'status': 'completed',
                'content': [{'type': 'output_text', 'text': 'ok', 'annotations': []}],
            }
        ],
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


async def _chat_body(
    server: LocalServer, messages: list[ModelMessage], settings: ModelSettings | None, model_name: str = 'gpt-5.6'
) -> dict[str, Any]:
    server.script(Reply(200, completion('ok')))
    async with OpenAIChatModel(model_name, provider=_provider(server)) as model:
        await model.request(messages, settings, PARAMS)
    body: dict[str, Any] = server.received[-1]['body']
    return body


async def _responses_body(
    server: LocalServer, messages: list[ModelMessage], settings: ModelSettings | None, model_name: str = 'gpt-5.6'
) -> dict[str, Any]:
    server.script(Reply(200, _answer()))
    async with OpenAIResponsesModel(model_name, provider=_provider(server)) as model:
        await model.request(messages, settings, PARAMS)
    body: dict[str, Any] = server.received[-1]['body']
    return body


def _conversation() -> list[ModelMessage]:
    return [
        ModelRequest(
            parts=[SystemPromptPart('You are terse.'), UserPromptPart(['Long document.', CachePoint(), 'Summarize.'])],
            instructions='Answer in French.',
        )
    ]


def test_the_profile_and_provider_mark_the_models_with_breakpoints() -> None:
    assert openai_model_profile('gpt-5.6').get('openai_supports_prompt_cache_breakpoints') is True
    assert openai_model_profile('gpt-6-sol').get('openai_supports_prompt_cache_breakpoints') is True
    assert openai_model_profile('gpt-5.5').get('openai_supports_prompt_cache_breakpoints') is False
    responses = OpenAIResponsesModel('gpt-5.6', provider=OpenAIProvider(api_key='sk-x'))
    assert responses.profile.get('supports_cache') is True
    assert responses.profile.get('supported_cache_retentions') == ('30m', '12h')
    # Chat Completions rejects `ttl='12h'`: its profile leaves that tier out.
    chat = OpenAIChatModel('gpt-5.6', provider=OpenAIProvider(api_key='sk-x'))
    assert chat.profile.get('supported_cache_retentions') == ('30m',)
    assert OpenAIChatModel('gpt-4o', provider=OpenAIProvider(api_key='sk-x')).profile.get('supports_cache') is False


async def test_chat_sends_breakpoints_and_options_as_set(local_server: LocalServer) -> None:
    options: OpenAIPromptCacheOptions = {'mode': 'explicit', 'ttl': '30m'}
    settings: dict[str, Any] = {'openai_cache_instructions': True, 'openai_prompt_cache_options': options}
    body = await _chat_body(local_server, _conversation(), _settings(**settings))
    assert body == {
        'model': 'gpt-5.6',
        'messages': [
            {'role': 'system', 'content': 'You are terse.'},
            {
                'role': 'system',
                'content': [{'type': 'text', 'text': 'Answer in French.', 'prompt_cache_breakpoint': BREAK}],
            },
            {
                'role': 'user',
                'content': [
                    {'type': 'text', 'text': 'Long document.', 'prompt_cache_breakpoint': BREAK},
                    {'type': 'text', 'text': 'Summarize.'},
                ],
            },
        ],
        'prompt_cache_options': {'mode': 'explicit', 'ttl': '30m'},
    }


async def test_responses_moves_the_instructions_into_the_input_to_close_them(local_server: LocalServer) -> None:
    options: OpenAIPromptCacheOptions = {'ttl': '12h'}
    settings: dict[str, Any] = {'openai_cache_instructions': True, 'openai_prompt_cache_options': options}
    body = await _responses_body(local_server, _conversation(), _settings(**settings))
    assert body == {
        'model': 'gpt-5.6',
        'input': [
            {'role': 'system', 'content': 'You are terse.'},
            {
                'role': 'system',
                'content': [{'type': 'input_text', 'text': 'Answer in French.', 'prompt_cache_breakpoint': BREAK}],
            },
            {
                'role': 'user',
                'content': [
                    {'type': 'input_text', 'text': 'Long document.', 'prompt_cache_breakpoint': BREAK},
                    {'type': 'input_text', 'text': 'Summarize.'},
                ],
            },
        ],
        'prompt_cache_options': {'ttl': '12h'},
        'include': ['reasoning.encrypted_content'],
    }


async def test_responses_keeps_the_instructions_field_when_continuing_a_stored_response(
    local_server: LocalServer,
) -> None:
    settings: dict[str, Any] = {'openai_cache_instructions': True, 'openai_previous_response_id': 'resp_0'}
    messages: list[ModelMessage] = [ModelRequest.user_text_prompt('Next.', instructions='Answer in French.')]
    body = await _responses_body(local_server, messages, _settings(**settings))
    assert body['instructions'] == 'Answer in French.'
    assert body['input'] == [{'role': 'user', 'content': 'Next.'}]
    assert 'prompt_cache_options' not in body


@pytest.mark.parametrize('api', ['chat', 'responses'])
async def test_the_unified_cache_setting_maps_onto_the_options(local_server: LocalServer, api: str) -> None:
    messages: list[ModelMessage] = [ModelRequest.user_text_prompt('Hi.', instructions='Be kind.')]
    send = _chat_body if api == 'chat' else _responses_body
    text_type = 'text' if api == 'chat' else 'input_text'
    marked = {'role': 'system', 'content': [{'type': text_type, 'text': 'Be kind.', 'prompt_cache_breakpoint': BREAK}]}

    body = await send(local_server, messages, ModelSettings(cache=True))
    assert body['prompt_cache_options'] == {'mode': 'implicit', 'ttl': '30m'}
    key = 'messages' if api == 'chat' else 'input'
    assert body[key] == [marked, {'role': 'user', 'content': 'Hi.'}]
    assert 'instructions' not in body

    # `'12h'` on Chat Completions snaps down to `'30m'`, the only tier it takes.
    body = await send(local_server, messages, ModelSettings(cache={'retention': '12h', 'messages': False}))
    ttl = '30m' if api == 'chat' else '12h'
    assert body['prompt_cache_options'] == {'mode': 'explicit', 'ttl': ttl}
    assert body[key][0] == marked

    # Without instructions nothing carries a breakpoint: the implicit one is kept so the request still caches.
    body = await send(local_server, [ModelRequest.user_text_prompt('Hi.')], ModelSettings(cache={'messages': False}))
    assert body['prompt_cache_options'] == {'mode': 'implicit', 'ttl': '30m'}
    assert body[key] == [{'role': 'user', 'content': 'Hi.'}]

    # OpenAI's own settings win over the unified one, even when they look like what it maps to.
    own: dict[str, Any] = {'cache': True, 'openai_prompt_cache_options': {'mode': 'explicit', 'ttl': '30m'}}
    body = await send(local_server, [ModelRequest.user_text_prompt('Hi.')], _settings(**own))
    assert body['prompt_cache_options'] == {'mode': 'explicit', 'ttl': '30m'}
    assert body[key] == [{'role': 'user', 'content': 'Hi.'}]


async def test_a_leading_cache_point_closes_the_message_before(local_server: LocalServer) -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('First question.')]),
        ModelResponse(parts=[TextPart('First answer.')]),
        ModelRequest(parts=[UserPromptPart([CachePoint(), 'Second question.'])]),
    ]
    chat = await _chat_body(local_server, messages, None)
    assert chat['messages'] == [
        {'role': 'user', 'content': 'First question.'},
        {'role': 'assistant', 'content': [{'type': 'text', 'text': 'First answer.', 'prompt_cache_breakpoint': BREAK}]},
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Second question.'}]},
    ]
    # A Responses assistant message is output text, which takes no breakpoint: the user turn before it gets it.
    responses = await _responses_body(local_server, messages, None)
    assert responses['input'][0] == {
        'role': 'user',
        'content': [{'type': 'input_text', 'text': 'First question.', 'prompt_cache_breakpoint': BREAK}],
    }
    assert responses['input'][2] == {'role': 'user', 'content': [{'type': 'input_text', 'text': 'Second question.'}]}


async def test_a_cache_point_alone_in_the_last_message_is_dropped_with_it(local_server: LocalServer) -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('Question.'), UserPromptPart([CachePoint()])]),
    ]
    body = await _chat_body(local_server, messages, None)
    assert body['messages'] == [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Question.', 'prompt_cache_breakpoint': BREAK}]}
    ]


@pytest.mark.parametrize('api', ['chat', 'responses'])
async def test_a_cache_point_with_nothing_before_it_is_an_error(local_server: LocalServer, api: str) -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart([CachePoint(), 'Question.'])])]
    send = _chat_body if api == 'chat' else _responses_body
    with pytest.raises(UserError, match='CachePoint'):
        await send(local_server, messages, None)
    assert local_server.received == []


async def test_earlier_models_drop_cache_points_and_ignore_the_breakpoint_settings(local_server: LocalServer) -> None:
    settings: dict[str, Any] = {'cache': True, 'openai_cache_instructions': True}
    body = await _chat_body(local_server, _conversation(), _settings(**settings), model_name='gpt-4o')
    assert body == {
        'model': 'gpt-4o',
        'messages': [
            {'role': 'system', 'content': 'You are terse.'},
            {'role': 'system', 'content': 'Answer in French.'},
            {
                'role': 'user',
                'content': [{'type': 'text', 'text': 'Long document.'}, {'type': 'text', 'text': 'Summarize.'}],
            },
        ],
    }


async def test_a_dynamic_system_prompt_gets_no_instruction_breakpoint(local_server: LocalServer) -> None:
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart('It is noon.', dynamic_ref='clock'), UserPromptPart('Hi.')],
            instructions='Be kind.',
        )
    ]
    settings: dict[str, Any] = {'openai_cache_instructions': True}
    chat = await _chat_body(local_server, messages, _settings(**settings))
    assert chat['messages'][1] == {'role': 'system', 'content': 'Be kind.'}
    responses = await _responses_body(local_server, messages, _settings(**settings))
    assert responses['instructions'] == 'Be kind.'


async def test_without_instructions_the_last_system_prompt_is_closed(local_server: LocalServer) -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[SystemPromptPart('Rules.'), UserPromptPart('Hi.')])]
    settings: dict[str, Any] = {'openai_cache_instructions': True}
    body = await _responses_body(local_server, messages, _settings(**settings))
    assert body['input'] == [
        {'role': 'system', 'content': [{'type': 'input_text', 'text': 'Rules.', 'prompt_cache_breakpoint': BREAK}]},
        {'role': 'user', 'content': 'Hi.'},
    ]


def test_the_retention_the_settings_ask_for() -> None:
    chat = OpenAIChatModel('gpt-5.6', provider=OpenAIProvider(api_key='sk-x'))
    responses = OpenAIResponsesModel('gpt-5.6', provider=OpenAIProvider(api_key='sk-x'))
    assert chat.resolve_cache_retention(None) is None
    assert chat.resolve_cache_retention(ModelSettings(cache=True)) == timedelta(minutes=30)
    assert chat.resolve_cache_retention(ModelSettings(cache='12h')) == timedelta(minutes=30)
    assert responses.resolve_cache_retention(ModelSettings(cache='12h')) == timedelta(hours=12)
    explicit: dict[str, Any] = {'cache': '12h', 'openai_prompt_cache_options': {'mode': 'explicit'}}
    assert responses.resolve_cache_retention(_settings(**explicit)) is None
    with_instructions: dict[str, Any] = {**explicit, 'openai_cache_instructions': True}
    assert responses.resolve_cache_retention(_settings(**with_instructions)) == timedelta(minutes=30)
    long: dict[str, Any] = {'openai_prompt_cache_options': {'ttl': '12h'}}
    assert responses.resolve_cache_retention(_settings(**long)) == timedelta(hours=12)
    # `prompt_cache_retention` is a floor only before GPT-5.6.
    legacy: dict[str, Any] = {'openai_prompt_cache_retention': '24h'}
    assert chat.resolve_cache_retention(_settings(**legacy)) is None
    earlier = OpenAIChatModel('gpt-4o', provider=OpenAIProvider(api_key='sk-x'))
    assert earlier.resolve_cache_retention(_settings(**legacy)) == timedelta(hours=24)
    assert earlier.resolve_cache_retention(ModelSettings(cache=True)) is None
    assert chat._caching_not_enabled(None) is False


async def test_a_leading_cache_point_marks_the_last_part_of_a_list_before(local_server: LocalServer) -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(['Part one.', 'Part two.']), UserPromptPart([CachePoint(), 'Then.'])]),
    ]
    body = await _responses_body(local_server, messages, None)
    assert body['input'] == [
        {
            'role': 'user',
            'content': [
                {'type': 'input_text', 'text': 'Part one.'},
                {'type': 'input_text', 'text': 'Part two.', 'prompt_cache_breakpoint': BREAK},
            ],
        },
        {'role': 'user', 'content': [{'type': 'input_text', 'text': 'Then.'}]},
    ]


async def test_openrouter_drops_cache_points_for_openai_routes(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('ok')))
    provider = OpenRouterProvider(api_key='or-test', base_url=local_server.url)
    async with OpenRouterModel('openai/gpt-5.6', provider=provider) as model:
        await model.request(_conversation(), None, PARAMS)
    assert local_server.received[-1]['body']['messages'][2] == {
        'role': 'user',
        'content': [{'type': 'text', 'text': 'Long document.'}, {'type': 'text', 'text': 'Summarize.'}],
    }


async def test_a_streamed_chat_request_carries_the_same_cache_fields(local_server: LocalServer) -> None:
    body = sse(delta(role='assistant', content='ok'), delta('stop'))
    local_server.script(Reply(200, chunks=[body], headers={'content-type': 'text/event-stream'}))
    messages: list[ModelMessage] = [ModelRequest.user_text_prompt('Hi.', instructions='Be kind.')]
    model = OpenAIChatModel('gpt-5.6', provider=_provider(local_server))
    async with model, model.request_stream(messages, ModelSettings(cache=True), PARAMS) as stream:
        assert [event async for event in stream]
    sent = local_server.received[-1]['body']
    assert sent['stream'] is True
    assert sent['prompt_cache_options'] == {'mode': 'implicit', 'ttl': '30m'}
    assert sent['messages'][0] == {
        'role': 'system',
        'content': [{'type': 'text', 'text': 'Be kind.', 'prompt_cache_breakpoint': BREAK}],
    }
