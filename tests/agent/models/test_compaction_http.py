"""Provider-side compaction over a real local HTTP server: what Anthropic's Messages API and OpenAI's Responses API
are sent (the compaction parts of the history, `context_management`, the beta flag, the trimmed history) and how
their compaction blocks and items are read, streamed or not; `OpenAICompaction`'s `/responses/compact` call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import UnexpectedModelBehavior, UserError
from edgewise.agent.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SpeechPart,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestContext, ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicCompaction, AnthropicModel
from edgewise.agent.models.openai import OpenAICompaction, OpenAIResponsesModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

PLANTED = 'pydantic_ai_standing_prompt_planted'


def _anthropic(server: LocalServer) -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return AnthropicModel('claude-sonnet-4-5', provider=provider)


def _openai(server: LocalServer) -> OpenAIResponsesModel:
    return OpenAIResponsesModel('gpt-5', provider=OpenAIProvider(api_key='sk-test', base_url=server.url))


def _anthropic_answer(*content: dict[str, Any], stop_reason: str = 'end_turn') -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': list(content),
        'stop_reason': stop_reason,
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


def _responses_answer(*output: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': 'resp_1',
        'object': 'response',
        'model': 'gpt-5',
        'status': 'completed',
        'output': list(output),
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


def _sse(*events: dict[str, Any]) -> list[bytes]:
    return [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]


def _history(compaction: CompactionPart) -> list[ModelMessage]:
    return [
        ModelRequest(parts=[SystemPromptPart('Be brief.'), UserPromptPart('old question')]),
        ModelResponse(parts=[TextPart('old answer')]),
        ModelRequest(parts=[UserPromptPart('another question')]),
        ModelResponse(parts=[TextPart('before the summary'), compaction, TextPart('after the summary')]),
        ModelRequest(parts=[UserPromptPart('new question')]),
    ]


async def test_anthropic_sends_its_compaction_block_and_only_the_history_after_it(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_anthropic_answer({'type': 'text', 'text': 'ok'})))
    compaction = CompactionPart(
        'summary so far', provider_name='anthropic', provider_details={'encrypted_content': 'e'}
    )

    async with _anthropic(local_server) as model:
        response = await model.request(_history(compaction), None, ModelRequestParameters())

    assert response.text == 'ok'
    sent = local_server.received[0]
    assert sent['headers']['anthropic-beta'] == 'compact-2026-01-12'
    body = sent['body']
    assert body['system'] == 'Be brief.'  # the standing prompt survives the trim
    assert body['context_management'] == {'edits': [{'type': 'compact_20260112'}]}
    assert body['messages'] == [
        {
            'role': 'assistant',
            'content': [
                {'type': 'compaction', 'content': 'summary so far', 'encrypted_content': 'e'},
                {'type': 'text', 'text': 'after the summary'},
            ],
        },
        {'role': 'user', 'content': [{'type': 'text', 'text': 'new question'}]},
    ]


async def test_anthropic_skips_another_providers_compaction_and_keeps_the_history(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_anthropic_answer({'type': 'text', 'text': 'ok'})))
    compaction = CompactionPart(None, provider_name='openai', provider_details={'encrypted_content': 'e'})

    async with _anthropic(local_server) as model:
        await model.request(_history(compaction), None, ModelRequestParameters())

    body = local_server.received[0]['body']
    assert [m['role'] for m in body['messages']] == ['user', 'assistant', 'user', 'assistant', 'user']
    assert body['messages'][3]['content'] == [
        {'type': 'text', 'text': 'before the summary'},
        {'type': 'text', 'text': 'after the summary'},
    ]
    # A history with compaction parts is sent with a compaction edit (the API reads such blocks only then).
    assert body['context_management'] == {'edits': [{'type': 'compact_20260112'}]}


async def test_anthropic_compaction_capability_sets_the_edit_and_reads_the_block(local_server: LocalServer) -> None:
    block = {'type': 'compaction', 'content': 'the summary', 'encrypted_content': None}
    local_server.script(Reply(body=_anthropic_answer(block, stop_reason='compaction')))
    capability = AnthropicCompaction(token_threshold=60_000, instructions='Keep names.', pause_after_compaction=True)
    # The capability's edit is added to those of the settings below it (the model's own here).
    settings = {'anthropic_context_management': {'edits': [{'type': 'clear_tool_uses_20250919'}]}}
    provider = AnthropicProvider(api_key='sk-test', base_url=local_server.url.removesuffix('/v1'), max_retries=0)
    async with AnthropicModel('claude-sonnet-4-5', provider=provider, settings=settings) as model:  # type: ignore[arg-type]
        result = await Agent(model, capabilities=[capability]).run('hello')

    edit = {
        'type': 'compact_20260112',
        'trigger': {'type': 'input_tokens', 'value': 60_000},
        'pause_after_compaction': True,
        'instructions': 'Keep names.',
    }
    assert local_server.received[0]['body']['context_management'] == {
        'edits': [{'type': 'clear_tool_uses_20250919'}, edit]
    }
    assert 'compact-2026-01-12' in local_server.received[0]['headers']['anthropic-beta']
    # A response that only compacted: its summary is the text the run ends on.
    assert result.output == 'the summary'
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert response.parts == [CompactionPart('the summary', provider_name='anthropic')]
    assert response.finish_reason == 'stop'


async def test_anthropic_streams_a_compaction_block(local_server: LocalServer) -> None:
    events = _sse(
        {'type': 'message_start', 'message': _anthropic_answer()},
        {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'compaction', 'content': None}},
        {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'compaction_delta', 'content': 'summary'}},
        {'type': 'content_block_stop', 'index': 0},
        {'type': 'content_block_start', 'index': 1, 'content_block': {'type': 'text', 'text': ''}},
        {'type': 'content_block_delta', 'index': 1, 'delta': {'type': 'text_delta', 'text': 'done'}},
        {'type': 'content_block_stop', 'index': 1},
        {'type': 'message_delta', 'delta': {'stop_reason': 'end_turn'}, 'usage': {'output_tokens': 3}},
        {'type': 'message_stop'},
    )
    local_server.script(Reply(headers={'content-type': 'text/event-stream'}, chunks=events))
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('hi')])]
    async with (
        _anthropic(local_server) as model,
        model.request_stream(messages, None, ModelRequestParameters()) as stream,
    ):
        async for _ in stream:
            pass
    assert stream.get().parts == [CompactionPart('summary', provider_name='anthropic'), TextPart('done')]


async def test_openai_sends_its_compaction_item_and_only_the_history_after_it(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_responses_answer(_message('ok'))))
    details = {'type': 'compaction', 'id': 'cmp_1', 'encrypted_content': 'blob', PLANTED: True}
    compaction = CompactionPart(None, id='cmp_1', provider_name='openai', provider_details=details)
    settings = {'openai_context_management': [{'type': 'compaction', 'compact_threshold': 1000}]}

    async with _openai(local_server) as model:
        await model.request(_history(compaction), settings, ModelRequestParameters())  # type: ignore[arg-type]

    body = local_server.received[0]['body']
    assert body['context_management'] == [{'type': 'compaction', 'compact_threshold': 1000}]
    # The item made from a window holding the system prompt carries it on: it is not sent again.
    assert body['input'] == [
        {'type': 'compaction', 'encrypted_content': 'blob', 'id': 'cmp_1'},
        {'role': 'assistant', 'content': 'after the summary'},
        {'role': 'user', 'content': 'new question'},
    ]


async def test_openai_resends_the_system_prompt_after_an_unmarked_compaction(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_responses_answer(_message('ok'))))
    details = {'type': 'compaction', 'encrypted_content': 'blob'}
    compaction = CompactionPart(None, provider_name='openai', provider_details=details)

    async with _openai(local_server) as model:
        await model.request(_history(compaction), None, ModelRequestParameters())

    assert local_server.received[0]['body']['input'][:2] == [
        {'role': 'system', 'content': 'Be brief.'},
        {'type': 'compaction', 'encrypted_content': 'blob'},
    ]


async def test_openai_ignores_a_readable_compaction_it_cannot_read(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_responses_answer(_message('ok'))))
    compaction = CompactionPart('a readable summary', provider_name='openai')  # no encrypted content: no boundary

    async with _openai(local_server) as model:
        await model.request(_history(compaction), None, ModelRequestParameters())

    items = local_server.received[0]['body']['input']
    assert items[0] == {'role': 'system', 'content': 'Be brief.'}
    assert {'role': 'user', 'content': 'old question'} in items
    assert all(item.get('type') != 'compaction' for item in items)


async def test_openai_reads_a_compaction_item_whole_and_streamed(local_server: LocalServer) -> None:
    item = {'type': 'compaction', 'id': 'cmp_2', 'encrypted_content': 'blob2'}
    local_server.script(Reply(body=_responses_answer(item, _message('ok'))))
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('hi')])]
    async with _openai(local_server) as model:
        response = await model.request(messages, None, ModelRequestParameters())
    assert response.parts[0] == CompactionPart(None, id='cmp_2', provider_name='openai', provider_details=item)

    events = _sse(
        {'type': 'response.created', 'response': {'id': 'resp_2', 'model': 'gpt-5'}},
        {'type': 'response.output_item.added', 'item': {'type': 'compaction', 'id': 'cmp_2'}},
        {'type': 'response.output_item.done', 'item': item},
        {'type': 'response.completed', 'response': _responses_answer(item)},
    )
    local_server.script(Reply(headers={'content-type': 'text/event-stream'}, chunks=events))
    async with _openai(local_server) as model, model.request_stream(messages, None, ModelRequestParameters()) as stream:
        async for _ in stream:
            pass
    assert stream.get().parts == [CompactionPart(None, id='cmp_2', provider_name='openai', provider_details=item)]


async def test_openai_stateless_compaction_calls_the_compact_endpoint(local_server: LocalServer) -> None:
    compacted = {'type': 'compaction', 'id': 'cmp_3', 'encrypted_content': 'blob3'}
    local_server.script(
        Reply(body={'id': 'resp_c', 'output': [compacted], 'usage': {'input_tokens': 30, 'output_tokens': 5}}),
        Reply(body=_responses_answer(_message('final'))),
    )
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('first')]),
        ModelResponse(parts=[TextPart('one')], provider_name='openai'),
    ]
    capability = OpenAICompaction(trigger=lambda messages: len(messages) > 2)
    async with _openai(local_server) as model:
        agent = Agent(model, capabilities=[capability])
        result = await agent.run('second', message_history=history)

    assert result.output == 'final'
    compact, request = local_server.received
    assert compact['path'] == '/v1/responses/compact'
    assert compact['body'] == {
        'model': 'gpt-5',
        'input': [
            {'role': 'user', 'content': 'first'},
            {'role': 'assistant', 'content': 'one'},
        ],
    }
    assert request['path'] == '/v1/responses'
    # The compaction stands in for the history before the new request.
    assert request['body']['input'] == [
        {'type': 'compaction', 'encrypted_content': 'blob3', 'id': 'cmp_3'},
        {'role': 'user', 'content': 'second'},
    ]
    kept = result.all_messages()[0]
    assert isinstance(kept, ModelResponse)
    assert kept.provider_details == {'compaction': True}
    assert kept.parts == [
        CompactionPart(None, id='cmp_3', provider_name='openai', provider_details={**compacted, PLANTED: True})
    ]


async def test_openai_compaction_that_returns_no_compaction_is_an_error(local_server: LocalServer) -> None:
    local_server.script(Reply(body={'id': 'resp_c', 'output': [_message('no')]}))
    async with _openai(local_server) as model:
        context = ModelRequestContext(
            model=model,
            messages=[ModelRequest(parts=[UserPromptPart('hi')])],
            model_settings=None,
            model_request_parameters=ModelRequestParameters(),
        )
        with pytest.raises(
            UnexpectedModelBehavior, match=r"output item of a compaction is not a compaction \(got 'message'\)"
        ):
            await model.compact_messages(context, instructions='Summarize.')
    assert local_server.received[0]['body']['instructions'] == 'Summarize.'


async def test_http_models_refuse_spoken_turns_that_were_not_prepared(local_server: LocalServer) -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[SpeechPart(speaker='user', transcript='Hello')])]
    local_server.script(Reply(body=_responses_answer(_message('ok'))))
    async with _openai(local_server) as model:
        with pytest.raises(UserError, match=r'`SpeechPart` cannot be sent to this model as-is'):
            await model.request(messages, None, ModelRequestParameters())
        assert local_server.received == []  # refused before anything was sent
        # Prepared, the same history goes out as text.
        await model.request(model.prepare_messages(messages), None, ModelRequestParameters())
    assert local_server.received[0]['body']['input'] == [{'role': 'user', 'content': 'Hello'}]


async def test_stateless_compaction_leaves_a_lone_request_alone(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_responses_answer(_message('ok'))))
    async with _openai(local_server) as model:
        agent = Agent(model, capabilities=[OpenAICompaction(trigger=lambda messages: True)])
        assert (await agent.run('only this')).output == 'ok'
    assert [r['path'] for r in local_server.received] == ['/v1/responses']


async def test_anthropic_sends_a_compaction_without_encrypted_content_as_text(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_anthropic_answer({'type': 'text', 'text': 'ok'})))
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('q')]),
        ModelResponse(parts=[CompactionPart('summary', provider_name='anthropic')]),
        ModelRequest(parts=[UserPromptPart('next')]),
    ]
    async with _anthropic(local_server) as model:
        await model.request(history, None, ModelRequestParameters())
    assert local_server.received[0]['body']['messages'][0] == {
        'role': 'assistant',
        'content': [{'type': 'compaction', 'content': 'summary'}],
    }
