"""Replays the recorded provider traffic (../shared/cassettes) through the response and stream mappings.

The recorded bodies are read where they lie and never copied into the project; without them these tests
skip. Each mapped `ModelResponse` is compared with values read straight from the recorded body.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import anyio
import pytest
from pydantic_core import from_json

from edgewise.agent.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._anthropic_mapping import AnthropicStreamedResponse, anthropic_model_response
from edgewise.agent.models._google_mapping import GoogleStreamedResponse, google_model_response
from edgewise.agent.models._mapping import EventStreamedResponse
from edgewise.agent.models._openai_responses_mapping import (
    OpenAIResponsesStreamedResponse,
    responses_model_response,
)

from ._helpers import aiter_events, cassettes_root, load_interactions, split_sse

pytestmark = pytest.mark.skipif(cassettes_root() is None, reason='the shared cassettes are not here')


def _api(uri: str) -> str | None:
    if '/v1/messages' in uri:
        return 'anthropic'
    if ':generateContent' in uri or ':streamGenerateContent' in uri:
        return 'google'
    if uri.split('?')[0].endswith('/v1/responses'):
        return 'responses'
    return None


def _successful(api: str) -> list[tuple[str, int, dict[str, Any]]]:
    return [
        item
        for item in load_interactions()
        if _api(item[2]['request']['uri']) == api and item[2]['response']['status']['code'] == 200
    ]


def _ids(items: list[tuple[str, int, dict[str, Any]]]) -> list[str]:
    return [f'{name}#{position}' for name, position, _ in items]


def _json_body(interaction: dict[str, Any]) -> dict[str, Any]:
    response = interaction['response']
    if 'parsed_body' in response:
        return dict(response['parsed_body'])
    return dict(json.loads(response['body']['string']))


def _stream_events(interaction: dict[str, Any]) -> list[dict[str, Any]] | None:
    response = interaction['response']
    content_type = {k.lower(): v for k, v in response['headers'].items()}.get('content-type', [''])[0]
    if 'event-stream' not in content_type:
        return None
    return list(split_sse(response['body']['string']))


async def _run_stream(response: EventStreamedResponse) -> ModelResponse:
    async for _ in response:
        pass
    return response.get()


def _stream(cls: type[Any], events: list[dict[str, Any]], provider_name: str) -> ModelResponse:
    async def main() -> ModelResponse:
        streamed = cls(
            ModelRequestParameters(), aiter_events(events), model_name='recorded', provider_name=provider_name
        )
        return await _run_stream(streamed)

    return anyio.run(main)


def _calls(response: ModelResponse) -> list[tuple[str, str, dict[str, Any]]]:
    return [(p.tool_name, p.tool_call_id, p.args_as_dict()) for p in response.parts if isinstance(p, ToolCallPart)]


# --- Anthropic -------------------------------------------------------------------------------------------


def _anthropic_expected(body: dict[str, Any]) -> dict[str, Any]:
    blocks = body['content']
    usage = body['usage']
    return {
        'text': ''.join(b['text'] for b in blocks if b['type'] == 'text'),
        'thinking': [(b['thinking'], b['signature']) for b in blocks if b['type'] == 'thinking'],
        'calls': [(b['name'], b['id'], b['input']) for b in blocks if b['type'] == 'tool_use'],
        'input': usage['input_tokens']
        + (usage.get('cache_creation_input_tokens') or 0)
        + (usage.get('cache_read_input_tokens') or 0),
        'output': usage['output_tokens'],
        'stop_reason': body['stop_reason'],
        'id': body['id'],
    }


def _anthropic_stream_expected(events: list[dict[str, Any]]) -> dict[str, Any]:
    start = next(e for e in events if e['type'] == 'message_start')['message']
    body = {**start, 'content': [], 'usage': dict(start['usage'])}
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        if event['type'] == 'content_block_start':
            blocks[event['index']] = {**event['content_block'], '_json': ''}
        elif event['type'] == 'content_block_delta':
            block, delta = blocks[event['index']], event['delta']
            if delta['type'] == 'text_delta':
                block['text'] += delta['text']
            elif delta['type'] == 'thinking_delta':
                block['thinking'] += delta['thinking']
            elif delta['type'] == 'signature_delta':
                block['signature'] = delta['signature']
            elif delta['type'] == 'input_json_delta':
                block['_json'] += delta['partial_json']
        elif event['type'] == 'message_delta':
            body['stop_reason'] = event['delta']['stop_reason']
            body['usage'].update({k: v for k, v in event['usage'].items() if v is not None})
    for _, block in sorted(blocks.items()):
        if block['type'] == 'tool_use':
            block['input'] = json.loads(block['_json']) if block['_json'] else block['input']
        body['content'].append(block)
    return _anthropic_expected(body)


def _anthropic_actual(response: ModelResponse) -> dict[str, Any]:
    return {
        'text': ''.join(p.content for p in response.parts if isinstance(p, TextPart)),
        'thinking': [(p.content, p.signature) for p in response.parts if isinstance(p, ThinkingPart) and p.id is None],
        'calls': [(name, call_id, args) for name, call_id, args in _calls(response)],
        'input': response.usage.input_tokens,
        'output': response.usage.output_tokens,
        'stop_reason': (response.provider_details or {}).get('finish_reason'),
        'id': response.provider_response_id,
    }


ANTHROPIC = _successful('anthropic')


@pytest.mark.parametrize('interaction', [i for _, _, i in ANTHROPIC], ids=_ids(ANTHROPIC))
def test_anthropic_interaction(interaction: dict[str, Any]) -> None:
    events = _stream_events(interaction)
    if events is None:
        body = _json_body(interaction)
        response = anthropic_model_response(body)
        expected = _anthropic_expected(body)
    else:
        response = _stream(AnthropicStreamedResponse, events, 'anthropic')
        expected = _anthropic_stream_expected(events)
    assert _anthropic_actual(response) == expected
    assert all(p.provider_name == 'anthropic' for p in response.parts if isinstance(p, ThinkingPart))


# --- Gemini ----------------------------------------------------------------------------------------------


def _google_expected(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    parts = [
        p for c in chunks for cand in c.get('candidates') or () for p in (cand.get('content') or {}).get('parts') or ()
    ]
    usage: dict[str, Any] = next((c['usageMetadata'] for c in reversed(chunks) if 'usageMetadata' in c), {})
    finish = next(
        (
            cand['finishReason']
            for c in reversed(chunks)
            for cand in c.get('candidates') or ()
            if 'finishReason' in cand
        ),
        None,
    )
    return {
        'text': ''.join(p['text'] for p in parts if 'text' in p and not p.get('thought')),
        'thoughts': ''.join(p['text'] for p in parts if p.get('thought')),
        'calls': [
            (p['functionCall']['name'], p['functionCall'].get('args') or {}) for p in parts if 'functionCall' in p
        ],
        'signatures': [p['thoughtSignature'] for p in parts if p.get('thoughtSignature')],
        'input': usage.get('promptTokenCount', 0),
        'output': usage.get('candidatesTokenCount', 0) + usage.get('thoughtsTokenCount', 0),
        'finish': finish,
    }


def _google_actual(response: ModelResponse, *, streamed: bool) -> dict[str, Any]:
    signatures = [
        p.provider_details['thought_signature']
        for p in response.parts
        if p.provider_details and 'thought_signature' in p.provider_details
    ]
    return {
        'text': ''.join(p.content for p in response.parts if isinstance(p, TextPart)),
        'thoughts': ''.join(p.content for p in response.parts if isinstance(p, ThinkingPart)),
        'calls': [(name, args) for name, _, args in _calls(response)],
        # A stream may sign several chunks of one part; only the last signature of a part is kept.
        'signatures': signatures if not streamed else None,
        'input': response.usage.input_tokens,
        'output': response.usage.output_tokens,
        'finish': (response.provider_details or {}).get('finish_reason'),
    }


GOOGLE = _successful('google')


@pytest.mark.parametrize('interaction', [i for _, _, i in GOOGLE], ids=_ids(GOOGLE))
def test_google_interaction(interaction: dict[str, Any]) -> None:
    events = _stream_events(interaction)
    if events is None:
        chunks = [_json_body(interaction)]
        response = google_model_response(chunks[0], model_name='recorded')
    else:
        chunks = events
        response = _stream(GoogleStreamedResponse, events, 'google-gla')
    expected = _google_expected(chunks)
    if events is not None:
        expected['signatures'] = None
    assert _google_actual(response, streamed=events is not None) == expected
    assert all(p.tool_call_id for p in response.parts if isinstance(p, ToolCallPart))
    if (version := chunks[-1].get('modelVersion')) is not None:
        assert response.model_name == version


# --- OpenAI Responses ------------------------------------------------------------------------------------


def _responses_expected(body: dict[str, Any]) -> dict[str, Any]:
    output = body.get('output') or []
    texts = [c['text'] for o in output if o['type'] == 'message' for c in o['content'] if c['type'] == 'output_text']
    usage = body.get('usage') or {}
    return {
        'text': ''.join(texts),
        'calls': [
            (o['name'], o['call_id'], from_json(o['arguments']) if o['arguments'] else {})
            for o in output
            if o['type'] == 'function_call'
        ],
        'reasoning_ids': sorted(
            {o['id'] for o in output if o['type'] == 'reasoning' and (o.get('summary') or o.get('encrypted_content'))}
        ),
        'input': usage.get('input_tokens', 0),
        'output': usage.get('output_tokens', 0),
        'id': body['id'],
    }


def _responses_actual(response: ModelResponse) -> dict[str, Any]:
    return {
        'text': ''.join(p.content for p in response.parts if isinstance(p, TextPart)),
        'calls': _calls(response),
        'reasoning_ids': sorted({p.id for p in response.parts if isinstance(p, ThinkingPart) and p.id}),
        'input': response.usage.input_tokens,
        'output': response.usage.output_tokens,
        'id': response.provider_response_id,
    }


RESPONSES = _successful('responses')


@pytest.mark.parametrize('interaction', [i for _, _, i in RESPONSES], ids=_ids(RESPONSES))
def test_responses_interaction(interaction: dict[str, Any]) -> None:
    events = _stream_events(interaction)
    if events is None:
        body = _json_body(interaction)
        response = responses_model_response(body)
        assert response.finish_reason == ('stop' if body.get('status') == 'completed' else response.finish_reason)
    else:
        body = next(e['response'] for e in events if e['type'] in ('response.completed', 'response.incomplete'))
        response = _stream(OpenAIResponsesStreamedResponse, events, 'openai')
        assert response.finish_reason == responses_model_response(body).finish_reason
    assert _responses_actual(response) == _responses_expected(body)


def test_every_interaction_is_counted() -> None:
    """Every recorded interaction hits one of the four APIs; the three mapped here are counted per API."""
    counts = Counter(
        (_api(i['request']['uri']) or 'chat', i['response']['status']['code'] == 200) for _, _, i in load_interactions()
    )
    assert counts[('anthropic', True)] == len(ANTHROPIC) > 0
    assert counts[('google', True)] == len(GOOGLE) > 0
    assert counts[('responses', True)] == len(RESPONSES) > 0
