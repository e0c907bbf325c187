"""`openai_conversation_id` (pydantic-ai 2.68): a conversation OpenAI keeps, continued from its latest response in the
history, seen in the bodies a real local HTTP server receives."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, UserPromptPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.openai import OpenAIResponsesModel, OpenAIResponsesModelSettings
from edgewise.agent.providers.openai import OpenAIProvider

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

PARAMS = ModelRequestParameters()
QUESTION = ModelRequest(parts=[UserPromptPart('2+2?')], conversation_id='run-conv')
FOLLOW_UP = ModelRequest(parts=[UserPromptPart('And 3+3?')], conversation_id='run-conv')
AUTO = OpenAIResponsesModelSettings(openai_conversation_id='auto')


def _answer(response_id: str, conversation: str | None, text: str = '4') -> dict[str, Any]:
    body: dict[str, Any] = {
        'id': response_id,
        'object': 'response',
        'created_at': 0,
        'model': 'gpt-5',
        'status': 'completed',
        'output': [
            {
                'type': 'message',
                'id': f'msg_{response_id}',
                'role': 'assistant',
                'status': 'completed',
                'content': [{'type': 'output_text', 'text': text, 'annotations': []}],
            }
        ],
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }
    if conversation is not None:
        body['conversation'] = {'id': conversation}
    return body


def _model(server: LocalServer, settings: OpenAIResponsesModelSettings | None = None) -> OpenAIResponsesModel:
    provider = OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0)
    return OpenAIResponsesModel('gpt-5', provider=provider, settings=settings)


async def _send(
    server: LocalServer, messages: list[ModelMessage], settings: OpenAIResponsesModelSettings | None
) -> tuple[ModelResponse, dict[str, Any]]:
    server.script(Reply(body=_answer(f'resp_{len(server.received) + 1}', 'conv_1')))
    async with _model(server) as model:
        response = await model.request(messages, settings, PARAMS)
    body: dict[str, Any] = server.received[-1]['body']
    return response, body


async def test_a_conversation_id_goes_with_every_message_until_a_response_joins_it(local_server: LocalServer) -> None:
    first, body = await _send(local_server, [QUESTION], OpenAIResponsesModelSettings(openai_conversation_id='conv_1'))
    assert body['conversation'] == 'conv_1'
    assert body['input'] == [{'role': 'user', 'content': '2+2?'}]
    # the response names the conversation it joined
    assert first.provider_details is not None
    assert first.provider_details['conversation_id'] == 'conv_1'

    first = replace(first, conversation_id='run-conv')
    _, body = await _send(
        local_server, [QUESTION, first, FOLLOW_UP], OpenAIResponsesModelSettings(openai_conversation_id='conv_1')
    )
    assert (body['conversation'], body['input']) == ('conv_1', [{'role': 'user', 'content': 'And 3+3?'}])


async def test_auto_continues_the_latest_response_of_the_run_conversation(local_server: LocalServer) -> None:
    _, body = await _send(local_server, [QUESTION], AUTO)
    assert 'conversation' not in body  # nothing in the history to continue
    first, _ = await _send(local_server, [QUESTION], None)
    first = replace(first, conversation_id='run-conv')
    _, body = await _send(local_server, [QUESTION, first, FOLLOW_UP], AUTO)
    assert (body['conversation'], body['input']) == ('conv_1', [{'role': 'user', 'content': 'And 3+3?'}])


async def test_auto_passes_over_another_run_conversation(local_server: LocalServer) -> None:
    first, _ = await _send(local_server, [QUESTION], None)
    theirs = replace(first, conversation_id='another-conv')
    _, body = await _send(local_server, [QUESTION, theirs, FOLLOW_UP], AUTO)
    assert 'conversation' not in body
    assert [item.get('role') for item in body['input']] == ['user', 'assistant', 'user']


async def test_a_response_of_another_openai_conversation_is_not_continued(local_server: LocalServer) -> None:
    first, _ = await _send(local_server, [QUESTION], None)
    _, body = await _send(
        local_server, [QUESTION, first, FOLLOW_UP], OpenAIResponsesModelSettings(openai_conversation_id='conv_9')
    )
    assert body['conversation'] == 'conv_9'
    assert len(body['input']) == 3  # everything: conv_9 holds none of it yet


async def test_a_response_of_another_endpoint_is_not_continued(local_server: LocalServer) -> None:
    first, _ = await _send(local_server, [QUESTION], None)
    elsewhere = replace(first, provider_url='https://eu.example.invalid/v1', conversation_id='run-conv')
    _, body = await _send(local_server, [QUESTION, elsewhere, FOLLOW_UP], AUTO)
    assert 'conversation' not in body


async def test_the_model_settings_default_is_resolved_too(local_server: LocalServer) -> None:
    first, _ = await _send(local_server, [QUESTION], None)
    first = replace(first, conversation_id='run-conv')
    local_server.script(Reply(body=_answer('resp_9', 'conv_1')))
    async with _model(local_server, settings=AUTO) as model:
        await model.request([QUESTION, first, FOLLOW_UP], None, PARAMS)
    body = local_server.received[-1]['body']
    assert (body['conversation'], body['input']) == ('conv_1', [{'role': 'user', 'content': 'And 3+3?'}])


async def test_both_continuations_at_once_are_refused(local_server: LocalServer) -> None:
    both = OpenAIResponsesModelSettings(openai_conversation_id='conv_1', openai_previous_response_id='auto')
    async with _model(local_server) as model:
        with pytest.raises(UserError, match='cannot both be set'):
            await model.request([QUESTION], both, PARAMS)
    assert local_server.received == []


async def test_a_streamed_response_names_its_conversation(local_server: LocalServer) -> None:
    completed = _answer('resp_1', 'conv_1')
    events: list[dict[str, Any]] = [
        {'type': 'response.created', 'response': {'id': 'resp_1', 'model': 'gpt-5', 'status': 'in_progress'}},
        {'type': 'response.output_text.delta', 'item_id': 'msg_1', 'delta': '4'},
        {'type': 'response.completed', 'response': completed},
    ]
    chunks = [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]
    local_server.script(Reply(chunks=chunks, headers={'content-type': 'text/event-stream'}))
    async with _model(local_server) as model, model.request_stream([QUESTION], AUTO, PARAMS) as streamed:
        async for _ in streamed:
            pass
    response = streamed.get()
    assert response.provider_details is not None
    assert response.provider_details['conversation_id'] == 'conv_1'
    assert 'conversation' not in local_server.received[-1]['body']


async def test_an_agent_continues_its_conversation_across_runs(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_answer('resp_1', 'conv_1')), Reply(body=_answer('resp_2', 'conv_1', '6')))
    async with _model(local_server) as model:
        agent = Agent(model, model_settings=AUTO)
        first = await agent.run('2+2?')
        second = await agent.run('And 3+3?', message_history=first.all_messages())
    assert second.output == '6'
    bodies = [received['body'] for received in local_server.received]
    assert 'conversation' not in bodies[0]
    assert (bodies[1]['conversation'], bodies[1]['input']) == ('conv_1', [{'role': 'user', 'content': 'And 3+3?'}])
