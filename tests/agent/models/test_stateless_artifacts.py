"""`Model.accepts_stateless_artifacts` in use: `WrapperModel` and `FallbackModel` ask the model behind them; the
OpenAI Responses model sends encrypted reasoning and compaction items back to whichever API verifies them (the
response's recorded `canonical_system`), item ids only to its own provider; the Anthropic model does the same with
signed thinking. Over a real local HTTP server."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from edgewise.agent.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    NativeToolCallPart,
    TextPart,
    ThinkingPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.openai import OpenAIResponsesModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._helpers import validate_anthropic_body, validate_responses_body
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio


class _Picky(TestModel):
    """A model that verifies only responses whose id starts with `ok`."""

    def accepts_stateless_artifacts(self, response: ModelResponse, part: ModelResponsePart | None = None) -> bool:
        return (response.provider_response_id or '').startswith('ok')


def test_a_wrapper_and_a_fallback_ask_the_model_behind_them() -> None:
    picky = _Picky()
    good, bad = ModelResponse(parts=[], provider_response_id='ok-1'), ModelResponse(parts=[], provider_response_id='x')
    assert [WrapperModel(picky).accepts_stateless_artifacts(r) for r in (good, bad)] == [True, False]
    fallback = FallbackModel(picky, TestModel())
    assert [fallback.accepts_stateless_artifacts(r) for r in (good, bad)] == [True, False]
    assert (fallback.canonical_system, fallback.compatible_systems) == (picky.canonical_system, frozenset())
    assert WrapperModel(picky).canonical_system == picky.canonical_system


def _model(server: LocalServer) -> OpenAIResponsesModel:
    return OpenAIResponsesModel('gpt-5', provider=OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0))


def _answer() -> dict[str, Any]:
    return {
        'id': 'resp_9', 'object': 'response', 'created_at': 0, 'model': 'gpt-5', 'status': 'completed',
        'output': [], 'usage': {'input_tokens': 1, 'output_tokens': 1},
    }  # fmt: skip


def _reasoning_turn(provider_name: str, canonical_system: str | None) -> ModelResponse:
    return ModelResponse(
        parts=[
            ThinkingPart('thought', id='rs_1', signature='ENC', provider_name=provider_name),
            TextPart('hello', id='msg_1', provider_name=provider_name),
        ],
        provider_name=provider_name,
        canonical_system=canonical_system,
    )


QUESTION = ModelRequest(parts=[UserPromptPart('hi')])
AGAIN = ModelRequest(parts=[UserPromptPart('again')])


async def _sent_input(server: LocalServer, history: list[ModelMessage]) -> list[dict[str, Any]]:
    server.script(Reply(body=_answer()))
    async with _model(server) as model:
        await model.request(history, None, ModelRequestParameters())
    body = server.received[-1]['body']
    validate_responses_body(body)
    return list(body['input'])


async def test_encrypted_reasoning_goes_to_the_api_that_verifies_it_without_other_item_ids(
    local_server: LocalServer,
) -> None:
    # Another provider's name, but OpenAI's data (as a proxy of OpenAI records it).
    items = await _sent_input(local_server, [QUESTION, _reasoning_turn('proxy', 'openai'), AGAIN])
    assert items == [
        {'role': 'user', 'content': 'hi'},
        {'type': 'reasoning', 'id': 'rs_1', 'summary': [{'type': 'summary_text', 'text': 'thought'}],
         'encrypted_content': 'ENC'},
        {'role': 'assistant', 'content': 'hello'},
        {'role': 'user', 'content': 'again'},
    ]  # fmt: skip


async def test_another_systems_reasoning_goes_back_as_text(local_server: LocalServer) -> None:
    items = await _sent_input(local_server, [QUESTION, _reasoning_turn('anthropic', None), AGAIN])
    assert [item.get('type', item.get('role')) for item in items] == ['user', 'assistant', 'assistant', 'user']
    assert 'ENC' not in str(items)
    assert items[2] == {'role': 'assistant', 'content': 'hello'}


async def test_the_own_providers_reasoning_keeps_every_id(local_server: LocalServer) -> None:
    items = await _sent_input(local_server, [QUESTION, _reasoning_turn('openai', None), AGAIN])
    assert [(item.get('type'), item.get('id')) for item in items[1:3]] == [('reasoning', 'rs_1'), ('message', 'msg_1')]
    assert items[1]['encrypted_content'] == 'ENC'


@pytest.mark.parametrize(('canonical_system', 'kept'), [('openai', 1), ('somebody-else', 3)])
async def test_a_compaction_the_api_verifies_is_sent_and_ends_the_history_before_it(
    local_server: LocalServer, canonical_system: str, kept: int
) -> None:
    compaction = CompactionPart(
        content=None, id='cmp_1', provider_name='proxy', provider_details={'encrypted_content': 'SUMMARY'}
    )
    compacted = ModelResponse(parts=[compaction], provider_name='proxy', canonical_system=canonical_system)
    items = await _sent_input(local_server, [QUESTION, ModelResponse(parts=[TextPart('a')]), compacted, AGAIN])
    compaction_items = [item for item in items if item.get('type') == 'compaction']
    if kept == 1:
        assert items == [
            {'type': 'compaction', 'encrypted_content': 'SUMMARY', 'id': 'cmp_1'},
            {'role': 'user', 'content': 'again'},
        ]
    else:
        assert compaction_items == []
        assert len(items) == kept


def _anthropic(server: LocalServer) -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return AnthropicModel('claude-sonnet-4-5', provider=provider)


def _signed_turn(provider_name: str, canonical_system: str | None) -> ModelResponse:
    return ModelResponse(
        parts=[ThinkingPart('thought', signature='SIG', provider_name=provider_name), TextPart('hello')],
        provider_name=provider_name,
        canonical_system=canonical_system,
    )


@pytest.mark.parametrize(
    ('turn', 'thinking_block'),
    [
        (_signed_turn('proxy', 'anthropic'), {'type': 'thinking', 'thinking': 'thought', 'signature': 'SIG'}),
        (_signed_turn('anthropic', None), {'type': 'thinking', 'thinking': 'thought', 'signature': 'SIG'}),
        (_signed_turn('proxy', 'openai'), None),
    ],
)
async def test_anthropic_sends_signed_thinking_back_only_where_its_api_verifies_it(
    local_server: LocalServer, turn: ModelResponse, thinking_block: dict[str, Any] | None
) -> None:
    answer = {
        'id': 'msg_9', 'type': 'message', 'role': 'assistant', 'model': 'claude-sonnet-4-5', 'content': [],
        'stop_reason': 'end_turn', 'usage': {'input_tokens': 1, 'output_tokens': 1},
    }  # fmt: skip
    local_server.script(Reply(body=answer))
    async with _anthropic(local_server) as model:
        await model.request([QUESTION, turn, AGAIN], None, ModelRequestParameters())
    body = local_server.received[0]['body']
    validate_anthropic_body(body)
    if thinking_block is None:  # as text, in a user turn ahead of the reply (this profile's way)
        assert 'SIG' not in json.dumps(body)
        as_text = {'type': 'text', 'text': '<assistant_thinking>\nthought\n</assistant_thinking>'}
        assert body['messages'][1:3] == [
            {'role': 'user', 'content': [as_text]},
            {'role': 'assistant', 'content': [{'type': 'text', 'text': 'hello'}]},
        ]
    else:
        assert body['messages'][1]['content'] == [thinking_block, {'type': 'text', 'text': 'hello'}]


async def test_a_tool_search_verified_by_openai_goes_back_without_its_ids(local_server: LocalServer) -> None:
    call = NativeToolCallPart(
        'tool_search', {'paths': ['get_weather']}, 'call_s', id='tsc_1', provider_name='proxy',
        provider_details={'call_id': 'call_s', 'execution': 'server', 'status': 'completed'},
    )  # fmt: skip
    searched = ModelResponse(parts=[call], provider_name='proxy', canonical_system='openai')
    elsewhere = replace(searched, canonical_system='somebody-else')
    items = await _sent_input(local_server, [QUESTION, searched, AGAIN])
    assert items[1] == {
        'type': 'tool_search_call', 'call_id': 'call_s', 'execution': 'server', 'status': 'completed',
        'arguments': {'paths': ['get_weather']},
    }  # fmt: skip
    assert [item.get('type') for item in await _sent_input(local_server, [QUESTION, elsewhere, AGAIN])] == [
        None,
        None,
    ]
