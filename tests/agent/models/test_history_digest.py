"""`ModelResponse.history_digest` and `openai_previous_response_id` on `OpenAIResponsesModel`, over a real local HTTP
server: a response records the digest of what it was made from, a later request continues from it (sending only the
messages after it) while that is unchanged, and sends everything once it changed or when there is no digest."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import replace
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._continuation import merge_responses
from edgewise.agent.models._history_digest import continuation_digest, digest_matches, history_hasher
from edgewise.agent.models.openai import OpenAIResponsesModel, OpenAIResponsesModelSettings
from edgewise.agent.providers.openai import OpenAIProvider

from ._helpers import validate_responses_body
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

AUTO = OpenAIResponsesModelSettings(openai_previous_response_id='auto')
SEED = OpenAIResponsesModelSettings(openai_previous_response_id='resp_0')
PARAMS = ModelRequestParameters()


def _model(server: LocalServer, key: bytes | None = None) -> OpenAIResponsesModel:
    provider = OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0)
    return OpenAIResponsesModel('gpt-4.1', provider=provider, history_digest_key=key)


def _answer(response_id: str, *output: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': response_id,
        'object': 'response',
        'created_at': 0,
        'model': 'gpt-4.1',
        'status': 'completed',
        'output': list(output) or [_message(f'answer of {response_id}')],
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


def _message(text: str) -> dict[str, Any]:
    return {
        'type': 'message',
        'id': 'msg_1',
        'role': 'assistant',
        'status': 'completed',
        'content': [{'type': 'output_text', 'text': text, 'annotations': []}],
    }


def _sse(*events: dict[str, Any]) -> Reply:
    chunks = [f'data: {json.dumps(event)}\n\n'.encode() for event in events]
    return Reply(headers={'content-type': 'text/event-stream'}, chunks=chunks)


async def _first_turn(server: LocalServer, key: bytes | None = None) -> list[ModelMessage]:
    """A question and its answer `resp_1`, made under `'auto'` (so it records its digest)."""
    question = ModelRequest(parts=[UserPromptPart('What is 2+2?')])
    server.script(Reply(body=_answer('resp_1')))
    async with _model(server, key) as model:
        answer = await model.request([question], AUTO, PARAMS)
    return [question, answer]


def _follow_up(history: list[ModelMessage]) -> list[ModelMessage]:
    return [*history, ModelRequest(parts=[UserPromptPart('And 3+3?')])]


def test_the_digest_is_a_sha256_of_the_history_then_each_part() -> None:
    request = ModelRequest(parts=[UserPromptPart('hi')], instructions='Be brief.')
    history: list[ModelMessage] = [request]
    parts = [TextPart('hello', id='msg_1', provider_name='openai')]
    without_instructions: list[ModelMessage] = [replace(request, instructions=None)]
    expected = hashlib.sha256(ModelMessagesTypeAdapter.dump_json(without_instructions, exclude_none=True))
    expected.update(b'\n' + json.dumps(
        {'content': 'hello', 'id': 'msg_1', 'provider_name': 'openai', 'part_kind': 'text'}, separators=(',', ':')
    ).encode())  # fmt: skip
    digest = continuation_digest(history_hasher(history, None), parts)
    assert digest == expected.hexdigest()
    keyed = hmac.new(b'k', ModelMessagesTypeAdapter.dump_json(without_instructions, exclude_none=True), 'sha256')
    keyed.update(b'\n' + expected_part_json(parts[0]))
    assert continuation_digest(history_hasher(history, b'k'), parts) == keyed.hexdigest()


def expected_part_json(part: TextPart) -> bytes:
    return json.dumps(
        {'content': part.content, 'id': part.id, 'provider_name': part.provider_name, 'part_kind': 'text'},
        separators=(',', ':'),
    ).encode()


def test_metadata_instructions_and_a_calls_kind_do_not_count() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('hi'), ToolReturnPart('t', 'ok', 'c0')], instructions='A.'),
    ]
    call = ToolCallPart('t', {'x': 1}, 'c1', provider_name='openai')
    response = ModelResponse(parts=[call], provider_name='openai')
    response.history_digest = continuation_digest(history_hasher(history, None), response.parts)
    request = history[0]
    assert isinstance(request, ModelRequest)
    original = request.parts[1]
    assert isinstance(original, ToolReturnPart)
    tool_return = replace(original, metadata={'app': 1})
    changed: list[ModelMessage] = [
        replace(request, parts=[request.parts[0], tool_return], instructions='B.', metadata={'app': 2})
    ]
    stamped = replace(response, parts=[replace(call, tool_kind='some-kind')], metadata={'app': 3})
    assert digest_matches(stamped, changed, None)
    assert not digest_matches(response, [ModelRequest(parts=[UserPromptPart('hello')])], None)
    assert not digest_matches(response, history, b'another key')
    assert not digest_matches(replace(response, history_digest=None), history, None)


async def test_a_response_made_under_the_setting_records_its_digest(local_server: LocalServer) -> None:
    question, answer = await _first_turn(local_server)
    assert isinstance(answer, ModelResponse)
    assert answer.history_digest == continuation_digest(history_hasher([question], None), answer.parts)
    assert len(answer.history_digest) == 64
    local_server.script(Reply(body=_answer('resp_2')))
    async with _model(local_server) as model:
        plain = await model.request([question], None, PARAMS)
    assert plain.history_digest is None
    assert 'previous_response_id' not in local_server.received[1]['body']


async def test_a_matching_history_continues_from_the_stored_response(local_server: LocalServer) -> None:
    history = await _first_turn(local_server)
    local_server.script(Reply(body=_answer('resp_2')))
    async with _model(local_server) as model:
        await model.request(_follow_up(history), AUTO, PARAMS)
    body = local_server.received[1]['body']
    validate_responses_body(body)
    assert (body['previous_response_id'], body['input']) == ('resp_1', [{'role': 'user', 'content': 'And 3+3?'}])


async def test_the_digest_survives_a_json_round_trip(local_server: LocalServer) -> None:
    history = await _first_turn(local_server, key=b'secret')
    loaded = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history))
    assert loaded == history
    local_server.script(Reply(body=_answer('resp_2')))
    async with _model(local_server, key=b'secret') as model:
        await model.request(_follow_up(loaded), AUTO, PARAMS)
    body = local_server.received[1]['body']
    assert (body['previous_response_id'], len(body['input'])) == ('resp_1', 1)


@pytest.mark.parametrize(
    'change',
    ['question edited', 'answer edited', 'no digest', 'another key', 'earlier messages missing'],
)
async def test_a_changed_history_sends_everything(local_server: LocalServer, change: str) -> None:
    question, answer = await _first_turn(local_server)
    assert isinstance(question, ModelRequest)
    assert isinstance(answer, ModelResponse)
    key = None
    history: list[ModelMessage]
    if change == 'question edited':
        history = [ModelRequest(parts=[UserPromptPart('What is 2+3?')]), answer]
    elif change == 'answer edited':
        history = [question, replace(answer, parts=[TextPart('redacted', id='msg_1', provider_name='openai')])]
    elif change == 'no digest':  # as stored before digests were recorded
        history = [question, replace(answer, history_digest=None)]
    elif change == 'another key':
        history, key = [question, answer], b'secret'
    else:
        history = [answer]
    local_server.script(Reply(body=_answer('resp_2')))
    async with _model(local_server, key) as model:
        # Even a concrete id is not used: the server's copy of the conversation lacks the change.
        await model.request(_follow_up(history), SEED, PARAMS)
    body = local_server.received[1]['body']
    validate_responses_body(body)
    assert 'previous_response_id' not in body
    assert body['input'][-1] == {'role': 'user', 'content': 'And 3+3?'}
    assert len(body['input']) == len(history) + 1


async def test_a_concrete_id_seeds_a_history_without_a_stored_response(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_answer('resp_2')), Reply(body=_answer('resp_3')))
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('Go on.')])]
    async with _model(local_server) as model:
        await model.request(history, SEED, PARAMS)
        await model.request(history, AUTO, PARAMS)
    seeded, auto = (r['body'] for r in local_server.received)
    assert (seeded['previous_response_id'], seeded['input']) == ('resp_0', [{'role': 'user', 'content': 'Go on.'}])
    assert 'previous_response_id' not in auto


async def test_another_endpoints_response_is_not_continued_from(local_server: LocalServer) -> None:
    question, answer = await _first_turn(local_server)
    assert isinstance(answer, ModelResponse)
    elsewhere = replace(answer, provider_url='https://elsewhere.invalid/v1')
    local_server.script(Reply(body=_answer('resp_2')))
    async with _model(local_server) as model:
        await model.request(_follow_up([question, elsewhere]), AUTO, PARAMS)
    body = local_server.received[1]['body']
    assert 'previous_response_id' not in body
    assert len(body['input']) == 3


async def test_a_streamed_response_records_its_digest_and_is_continued_from(local_server: LocalServer) -> None:
    question = ModelRequest(parts=[UserPromptPart('What is 2+2?')])
    local_server.script(
        _sse(
            {'type': 'response.created', 'response': {'id': 'resp_1', 'model': 'gpt-4.1'}},
            {'type': 'response.output_text.delta', 'item_id': 'msg_1', 'delta': '4'},
            {'type': 'response.completed', 'response': _answer('resp_1', _message('4'))},
        ),
        Reply(body=_answer('resp_2')),
    )
    async with _model(local_server) as model:
        async with model.request_stream([question], AUTO, PARAMS) as streamed:
            async for _ in streamed:
                pass
        answer = streamed.get()
        assert answer.history_digest == continuation_digest(history_hasher([question], None), answer.parts)
        await model.request(_follow_up([question, answer]), AUTO, PARAMS)
    body = local_server.received[1]['body']
    assert (body['previous_response_id'], len(body['input'])) == ('resp_1', 1)


async def test_an_agent_run_continues_after_a_tool_call(local_server: LocalServer) -> None:
    call = {
        'type': 'function_call', 'id': 'fc_1', 'call_id': 'call_1', 'name': 'double', 'arguments': '{"x": 2}',
        'status': 'completed',
    }  # fmt: skip
    local_server.script(Reply(body=_answer('resp_1', call)), Reply(body=_answer('resp_2', _message('4'))))
    async with _model(local_server) as model:
        agent = Agent(model, model_settings=AUTO)

        @agent.tool_plain
        def double(x: int) -> int:
            """Double a number."""
            return 2 * x

        result = await agent.run('Double 2.')
        # The stored run goes on in a new one from JSON: the latest response is continued from.
        stored = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(result.all_messages()))
        local_server.script(Reply(body=_answer('resp_3', _message('8'))))
        await agent.run('Now double 4.', message_history=stored)
    assert result.output == '4'
    first, second, third = (r['body'] for r in local_server.received)
    assert 'previous_response_id' not in first
    assert (second['previous_response_id'], second['input']) == (
        'resp_1', [{'type': 'function_call_output', 'call_id': 'call_1', 'output': '4'}]
    )  # fmt: skip
    responses = [m for m in result.all_messages() if isinstance(m, ModelResponse)]
    assert all(r.history_digest is not None for r in responses)
    assert (third['previous_response_id'], third['input']) == (
        'resp_2', [{'role': 'user', 'content': 'Now double 4.'}]
    )  # fmt: skip


def test_a_merged_turn_keeps_the_earlier_digest_when_the_segment_has_none() -> None:
    first = ModelResponse(parts=[TextPart('a')], provider_response_id='r1', history_digest='d1')
    without = ModelResponse(parts=[TextPart('b')], provider_response_id='r2')
    assert merge_responses(first, without).history_digest == 'd1'
    later = ModelResponse(parts=[TextPart('b')], provider_response_id='r2', history_digest='d2')
    assert merge_responses(first, later).history_digest == 'd2'
