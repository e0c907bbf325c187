"""Prompt cache diagnostics over a real HTTP server on 127.0.0.1: when OpenAI's Responses API is sent
`prompt_cache_options.comparison_response_id` (`openai_prompt_cache_diagnostics`, the profile key
`openai_responses_supports_prompt_cache_diagnostics`) and Anthropic's Messages API `diagnostics`
(`anthropic_cache_diagnostics`), and how the answers' diagnostics land in `ModelResponse.provider_details`, streamed
or not."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

from edgewise.agent.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.openai import OpenAIResponsesModel
from edgewise.agent.profiles.openai import OpenAIModelProfile, openai_model_profile
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.providers.openai_chatgpt import OpenAIChatGPTProvider
from edgewise.agent.providers.openai_codex import OpenAICodexProvider
from edgewise.agent.settings import ModelSettings

from ._helpers import validate_anthropic_body, validate_responses_body
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

PARAMS = ModelRequestParameters()
SUPPORT_KEY = 'openai_responses_supports_prompt_cache_diagnostics'
MISS = {'type': 'cache_miss', 'reason': 'tools_changed', 'cache_missed_tokens': 1200, 'comparison_reusable_tokens': 800}


def _settings(**values: Any) -> ModelSettings:
    return cast(ModelSettings, values)


def _sse(*events: dict[str, Any]) -> Reply:
    chunks = [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]
    return Reply(headers={'content-type': 'text/event-stream'}, chunks=chunks)


def _question(text: str = 'What changed?') -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(text)])


# OpenAI Responses


def _openai(server: LocalServer, model_name: str = 'gpt-5.6') -> OpenAIResponsesModel:
    provider = OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0)
    return OpenAIResponsesModel(model_name, provider=provider)


def _responses_answer(response_id: str = 'resp_new', **fields: Any) -> dict[str, Any]:
    return {
        'id': response_id,
        'object': 'response',
        'model': 'gpt-5.6',
        'status': 'completed',
        'output': [
            {
                'type': 'message',
                'id': 'msg_out',
                'role': 'assistant',
                'status': 'completed',
                'content': [{'type': 'output_text', 'text': 'ok', 'annotations': []}],
            }
        ],
        'usage': {'input_tokens': 10, 'output_tokens': 2},
        **fields,
    }


def _openai_turn(response_id: str, **fields: Any) -> list[ModelMessage]:
    """A question and an answer of OpenAI's, as a history holds them."""
    answer = ModelResponse(
        parts=[TextPart('earlier answer')], provider_name='openai', provider_response_id=response_id, **fields
    )
    return [_question('Earlier question'), answer]


async def _responses_body(
    server: LocalServer, messages: list[ModelMessage], settings: ModelSettings | None, model_name: str = 'gpt-5.6'
) -> dict[str, Any]:
    server.script(Reply(body=_responses_answer()))
    async with _openai(server, model_name) as model:
        await model.request(messages, settings, PARAMS)
    body: dict[str, Any] = server.received[-1]['body']
    validate_responses_body(body)
    return body


def test_openai_provider_turns_diagnostics_on_for_the_models_with_cache_breakpoints_only() -> None:
    assert OpenAIProvider.model_profile('gpt-5.6').get(SUPPORT_KEY) is True  # type: ignore[union-attr]
    assert OpenAIProvider.model_profile('gpt-6.1-sol').get(SUPPORT_KEY) is True  # type: ignore[union-attr]
    assert OpenAIProvider.model_profile('gpt-5.5').get(SUPPORT_KEY) is False  # type: ignore[union-attr]
    # The family's profile, which OpenAI-compatible servers share, does not claim it; nor do the Codex and ChatGPT
    # plan backends, whose profiles build on OpenAI's own.
    assert SUPPORT_KEY not in openai_model_profile('gpt-5.6')
    assert OpenAICodexProvider.model_profile('gpt-5.6').get(SUPPORT_KEY) is False  # type: ignore[union-attr]
    assert OpenAIChatGPTProvider.model_profile('gpt-5.6').get(SUPPORT_KEY) is False  # type: ignore[union-attr]


async def test_openai_compares_with_the_latest_response_of_the_history_by_default(local_server: LocalServer) -> None:
    first = await _responses_body(local_server, [_question()], None)
    history = [*_openai_turn('resp_old'), *_openai_turn('resp_1'), _question()]
    later = await _responses_body(local_server, history, None)

    assert 'prompt_cache_options' not in first  # nothing to compare with yet
    assert later['prompt_cache_options'] == {'comparison_response_id': 'resp_1'}


async def test_openai_diagnostics_setting_false_leaves_the_comparison_out(local_server: LocalServer) -> None:
    history = [*_openai_turn('resp_1'), _question()]
    on = await _responses_body(local_server, history, _settings(openai_prompt_cache_diagnostics=True))
    off = await _responses_body(local_server, history, _settings(openai_prompt_cache_diagnostics=False))

    assert on['prompt_cache_options'] == {'comparison_response_id': 'resp_1'}
    assert 'prompt_cache_options' not in off


async def test_openai_sends_no_comparison_where_the_profile_lacks_support(local_server: LocalServer) -> None:
    history = [*_openai_turn('resp_1'), _question()]
    settings = _settings(openai_prompt_cache_diagnostics=True)
    supported = await _responses_body(local_server, history, settings)
    earlier_model = await _responses_body(local_server, history, settings, model_name='gpt-5.5')
    local_server.script(Reply(body=_responses_answer()))
    provider = OpenAIProvider(api_key='sk-test', base_url=local_server.url, max_retries=0)
    async with OpenAIResponsesModel(
        'gpt-5.6',
        provider=provider,
        profile=OpenAIModelProfile(openai_responses_supports_prompt_cache_diagnostics=False),
    ) as model:
        await model.request(history, settings, PARAMS)
    turned_off = local_server.received[-1]['body']

    assert supported['prompt_cache_options'] == {'comparison_response_id': 'resp_1'}
    assert 'prompt_cache_options' not in earlier_model
    assert 'prompt_cache_options' not in turned_off


async def test_openai_comparison_joins_the_prompt_cache_options_given(local_server: LocalServer) -> None:
    options = {'mode': 'explicit', 'ttl': '12h'}
    history = [*_openai_turn('resp_1'), _question()]
    body = await _responses_body(local_server, history, _settings(openai_prompt_cache_options=options))

    assert body['prompt_cache_options'] == {'mode': 'explicit', 'ttl': '12h', 'comparison_response_id': 'resp_1'}
    assert options == {'mode': 'explicit', 'ttl': '12h'}  # the caller's dict is left alone


async def test_openai_compares_only_with_a_response_this_endpoint_issued(local_server: LocalServer) -> None:
    elsewhere = ModelResponse(
        parts=[TextPart('from another server')],
        provider_name='openai',
        provider_url='https://other.example/v1',
        provider_response_id='resp_elsewhere',
    )
    skipped = await _responses_body(local_server, [*_openai_turn('resp_1'), elsewhere, _question()], None)
    # An id OpenAI did not issue (a compatible server's) is refused by the API: nothing is compared.
    foreign_id = await _responses_body(local_server, [*_openai_turn('gen-1'), _question()], None)

    assert skipped['prompt_cache_options'] == {'comparison_response_id': 'resp_1'}
    assert 'prompt_cache_options' not in foreign_id


async def test_openai_compares_nothing_across_a_compaction(local_server: LocalServer) -> None:
    compacted = ModelResponse(
        parts=[CompactionPart(None, provider_name='openai', provider_details={'encrypted_content': 'blob'})],
        provider_name='openai',
        provider_response_id='resp_compact',
        provider_details={'compaction': True},
    )
    before = await _responses_body(local_server, [*_openai_turn('resp_1'), _question()], None)
    after = await _responses_body(local_server, [*_openai_turn('resp_1'), compacted, _question()], None)

    assert before['prompt_cache_options'] == {'comparison_response_id': 'resp_1'}
    assert 'prompt_cache_options' not in after


async def test_openai_compares_with_the_stored_response_a_request_continues(local_server: LocalServer) -> None:
    auto = _settings(openai_previous_response_id='auto')
    local_server.script(Reply(body=_responses_answer('resp_1')), Reply(body=_responses_answer('resp_2')))
    first = _question('first')
    async with _openai(local_server) as model:
        answer = await model.request([first], auto, PARAMS)
        await model.request([first, answer, _question('second')], auto, PARAMS)
    body = local_server.received[-1]['body']

    assert body['previous_response_id'] == 'resp_1'
    assert body['input'] == [{'role': 'user', 'content': 'second'}]  # the response continued from is not sent
    assert body['prompt_cache_options'] == {'comparison_response_id': 'resp_1'}
    validate_responses_body(body)


async def test_openai_a_given_response_id_is_continued_but_not_compared_with(local_server: LocalServer) -> None:
    seed = _settings(openai_previous_response_id='resp_seed')
    fresh = await _responses_body(local_server, [_question()], seed)
    with_history = await _responses_body(local_server, [*_openai_turn('resp_1'), _question()], None)

    assert fresh['previous_response_id'] == 'resp_seed'
    assert 'prompt_cache_options' not in fresh
    assert with_history['prompt_cache_options'] == {'comparison_response_id': 'resp_1'}


async def test_openai_response_diagnostics_land_in_provider_details(local_server: LocalServer) -> None:
    miss = {'type': 'cache_miss', 'reason': 'input_changed', 'cache_missed_tokens': 300}
    local_server.script(
        Reply(body=_responses_answer(prompt_cache_diagnostics=MISS)),
        Reply(body=_responses_answer(prompt_cache_diagnostics=miss)),
        Reply(body=_responses_answer(prompt_cache_diagnostics=None)),
        Reply(body=_responses_answer()),
    )
    async with _openai(local_server) as model:
        responses = [await model.request([_question()], None, PARAMS) for _ in range(4)]
    details = [response.provider_details or {} for response in responses]

    assert details[0]['prompt_cache_diagnostics'] == MISS
    # A miss without `comparison_reusable_tokens` keeps the key, as `None`.
    assert details[1]['prompt_cache_diagnostics'] == {**miss, 'comparison_reusable_tokens': None}
    assert 'prompt_cache_diagnostics' not in details[2]
    assert 'prompt_cache_diagnostics' not in details[3]


async def test_openai_streamed_diagnostics_are_the_final_responses(local_server: LocalServer) -> None:
    pending = _responses_answer(prompt_cache_diagnostics={'type': 'unavailable'}, status='in_progress', output=[])
    events: list[dict[str, Any]] = [
        {'type': 'response.created', 'response': pending},
        {'type': 'response.output_text.delta', 'item_id': 'msg_out', 'delta': 'ok'},
    ]
    hit = {'type': 'response.completed', 'response': _responses_answer(prompt_cache_diagnostics={'type': 'cache_hit'})}
    local_server.script(
        _sse(*events, hit), _sse(*events, {'type': 'response.completed', 'response': _responses_answer()})
    )
    streamed: list[ModelResponse] = []
    async with _openai(local_server) as model:
        for _ in range(2):
            async with model.request_stream([_question()], None, PARAMS) as stream:
                async for _event in stream:
                    pass
            streamed.append(stream.get())

    assert (streamed[0].provider_details or {})['prompt_cache_diagnostics'] == {'type': 'cache_hit'}
    assert 'prompt_cache_diagnostics' not in (streamed[1].provider_details or {})


async def test_openai_streamed_request_sends_the_comparison_too(local_server: LocalServer) -> None:
    local_server.script(_sse({'type': 'response.completed', 'response': _responses_answer()}))
    history = [*_openai_turn('resp_1'), _question()]
    async with _openai(local_server) as model, model.request_stream(history, None, PARAMS) as stream:
        async for _event in stream:
            pass
    body = local_server.received[-1]['body']

    assert body['stream'] is True
    assert body['prompt_cache_options'] == {'comparison_response_id': 'resp_1'}


# Anthropic


def _anthropic(server: LocalServer) -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return AnthropicModel('claude-sonnet-4-5', provider=provider)


def _anthropic_answer(**fields: Any) -> dict[str, Any]:
    return {
        'id': 'msg_new',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': [{'type': 'text', 'text': 'ok'}],
        'stop_reason': 'end_turn',
        'usage': {'input_tokens': 10, 'output_tokens': 2},
        **fields,
    }


def _anthropic_turn(response_id: str, **fields: Any) -> list[ModelMessage]:
    answer = ModelResponse(
        parts=[TextPart('earlier answer')], provider_name='anthropic', provider_response_id=response_id, **fields
    )
    return [_question('Earlier question'), answer]


async def _messages_body(
    server: LocalServer, messages: list[ModelMessage], settings: ModelSettings | None
) -> dict[str, Any]:
    server.script(Reply(body=_anthropic_answer()))
    async with _anthropic(server) as model:
        await model.request(messages, settings, PARAMS)
    body: dict[str, Any] = server.received[-1]['body']
    validate_anthropic_body(body)
    return body


async def test_anthropic_sends_diagnostics_only_when_the_setting_asks(local_server: LocalServer) -> None:
    history = [*_anthropic_turn('msg_1'), _question()]
    default = await _messages_body(local_server, history, None)
    off = await _messages_body(local_server, history, _settings(anthropic_cache_diagnostics=False))
    on = await _messages_body(local_server, history, _settings(anthropic_cache_diagnostics=True))

    assert 'diagnostics' not in default
    assert 'diagnostics' not in off
    assert on['diagnostics'] == {'previous_message_id': 'msg_1'}


async def test_anthropic_diagnostics_name_the_latest_response_of_this_endpoint(local_server: LocalServer) -> None:
    on = _settings(anthropic_cache_diagnostics=True)
    elsewhere = ModelResponse(
        parts=[TextPart('from another server')],
        provider_name='anthropic',
        provider_url='https://other.example',
        provider_response_id='msg_elsewhere',
    )
    first = await _messages_body(local_server, [_question()], on)
    latest = await _messages_body(
        local_server, [*_anthropic_turn('msg_old'), *_anthropic_turn('msg_1'), _question()], on
    )
    skipped = await _messages_body(local_server, [*_anthropic_turn('msg_1'), elsewhere, _question()], on)
    # A latest response whose id Anthropic did not issue (a gateway's) opts in without naming it, not an older one.
    foreign = await _messages_body(
        local_server, [*_anthropic_turn('msg_1'), *_anthropic_turn('gen-2'), _question()], on
    )

    assert first['diagnostics'] == {'previous_message_id': None}
    assert latest['diagnostics'] == {'previous_message_id': 'msg_1'}
    assert skipped['diagnostics'] == {'previous_message_id': 'msg_1'}
    assert foreign['diagnostics'] == {'previous_message_id': None}


async def test_anthropic_response_diagnostics_land_in_provider_details(local_server: LocalServer) -> None:
    reason = {'type': 'messages_changed', 'cache_missed_input_tokens': 900}
    local_server.script(
        Reply(body=_anthropic_answer(diagnostics={'cache_miss_reason': reason})),
        Reply(body=_anthropic_answer(diagnostics={'cache_miss_reason': None})),
        Reply(body=_anthropic_answer(diagnostics={})),
        Reply(body=_anthropic_answer(diagnostics=None)),
        Reply(body=_anthropic_answer()),
    )
    async with _anthropic(local_server) as model:
        responses = [await model.request([_question()], None, PARAMS) for _ in range(5)]
    details = [response.provider_details or {} for response in responses]

    assert details[0]['cache_diagnostics'] == {'cache_miss_reason': reason}
    assert details[1]['cache_diagnostics'] == {'cache_miss_reason': None}
    assert details[2]['cache_diagnostics'] == {'cache_miss_reason': None}
    assert 'cache_diagnostics' not in details[3]
    assert 'cache_diagnostics' not in details[4]


async def test_anthropic_streamed_diagnostics_come_with_the_opening_message(local_server: LocalServer) -> None:
    reason = {'type': 'system_changed', 'cache_missed_input_tokens': 40}

    def events(start: dict[str, Any]) -> Reply:
        return _sse(
            {'type': 'message_start', 'message': start},
            {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'text', 'text': ''}},
            {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'text_delta', 'text': 'ok'}},
            {'type': 'content_block_stop', 'index': 0},
            {'type': 'message_delta', 'delta': {'stop_reason': 'end_turn'}, 'usage': {'output_tokens': 3}},
            {'type': 'message_stop'},
        )

    with_diagnostics = _anthropic_answer(content=[], stop_reason=None, diagnostics={'cache_miss_reason': reason})
    local_server.script(events(with_diagnostics), events(_anthropic_answer(content=[], stop_reason=None)))
    streamed: list[ModelResponse] = []
    async with _anthropic(local_server) as model:
        for _ in range(2):
            async with model.request_stream([_question()], _settings(anthropic_cache_diagnostics=True), PARAMS) as s:
                async for _event in s:
                    pass
            streamed.append(s.get())

    assert local_server.received[0]['body']['diagnostics'] == {'previous_message_id': None}
    assert (streamed[0].provider_details or {})['cache_diagnostics'] == {'cache_miss_reason': reason}
    assert 'cache_diagnostics' not in (streamed[1].provider_details or {})
