"""What the provider-model tests need to know of each API: a model factory, its URLs, a reply and a stream."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from edgewise.agent.models._provider_model import ProviderModel
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.openai import OpenAIResponsesModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._helpers import validate_anthropic_body, validate_google_body, validate_responses_body

SECRET = 'sk-provider-secret-123'


def _events(*events: tuple[str | None, dict[str, Any]]) -> bytes:
    out = []
    for name, data in events:
        out.append((f'event: {name}\n' if name else '') + f'data: {json.dumps(data)}\n\n')
    return ''.join(out).encode()


@dataclass(frozen=True)
class Spec:
    """One API under test."""

    name: str
    make: Callable[..., ProviderModel]
    """`make(base_url=..., http_client=..., max_retries=...)`: a model with the key `SECRET`."""
    base_suffix: str
    """What the local server's `/v1` URL becomes for this provider's `base_url`."""
    path: str
    stream_path: str
    auth: tuple[str, str]
    validate: Callable[[dict[str, Any]], None]
    reply: dict[str, Any]
    """A successful answer whose text is `hello`, usage 10 in / 2 out."""
    stream: bytes
    """A streamed answer whose text is `Hello`."""
    error: dict[str, Any]
    """An error body."""

    def body_of(self, request: httpx.Request) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(request.content)
        return body


def _anthropic(**kwargs: Any) -> ProviderModel:
    base_url = kwargs.pop('base_url', None)
    return AnthropicModel('claude-sonnet-4-5', provider=AnthropicProvider(api_key=SECRET, base_url=base_url, **kwargs))


def _google(**kwargs: Any) -> ProviderModel:
    return GoogleModel('gemini-2.5-flash', provider=GoogleProvider(api_key=SECRET, **kwargs))


def _responses(**kwargs: Any) -> ProviderModel:
    return OpenAIResponsesModel('gpt-5', provider=OpenAIProvider(api_key=SECRET, **kwargs))


ANTHROPIC = Spec(
    name='anthropic',
    make=_anthropic,
    base_suffix='',
    path='/v1/messages',
    stream_path='/v1/messages',
    auth=('x-api-key', SECRET),
    validate=validate_anthropic_body,
    reply={
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5-20250929',
        'content': [{'type': 'text', 'text': 'hello'}],
        'stop_reason': 'end_turn',
        'stop_sequence': None,
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    },
    stream=_events(
        (
            'message_start',
            {
                'type': 'message_start',
                'message': {
                    'id': 'msg_2',
                    'type': 'message',
                    'role': 'assistant',
                    'model': 'claude-sonnet-4-5-20250929',
                    'content': [],
                    'stop_reason': None,
                    'usage': {'input_tokens': 5, 'output_tokens': 1},
                },
            },
        ),
        (
            'content_block_start',
            {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'text', 'text': ''}},
        ),
        ('ping', {'type': 'ping'}),
        (
            'content_block_delta',
            {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'text_delta', 'text': 'Hel'}},
        ),
        (
            'content_block_delta',
            {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'text_delta', 'text': 'lo'}},
        ),
        ('content_block_stop', {'type': 'content_block_stop', 'index': 0}),
        (
            'message_delta',
            {'type': 'message_delta', 'delta': {'stop_reason': 'end_turn'}, 'usage': {'output_tokens': 2}},
        ),
        ('message_stop', {'type': 'message_stop'}),
    ),
    error={'type': 'error', 'error': {'type': 'overloaded_error', 'message': 'Overloaded'}},
)

GOOGLE = Spec(
    name='google',
    make=_google,
    base_suffix='',
    path='/v1beta/models/gemini-2.5-flash:generateContent',
    stream_path='/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    auth=('x-goog-api-key', SECRET),
    validate=validate_google_body,
    reply={
        'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'hello'}]}, 'finishReason': 'STOP'}],
        'usageMetadata': {'promptTokenCount': 10, 'candidatesTokenCount': 2, 'totalTokenCount': 12},
        'modelVersion': 'gemini-2.5-flash',
        'responseId': 'resp-g1',
    },
    stream=_events(
        (
            None,
            {
                'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'Hel'}]}}],
                'modelVersion': 'gemini-2.5-flash',
                'responseId': 'resp-g2',
            },
        ),
        (
            None,
            {
                'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'lo'}]}, 'finishReason': 'STOP'}],
                'usageMetadata': {'promptTokenCount': 5, 'candidatesTokenCount': 2, 'totalTokenCount': 7},
                'modelVersion': 'gemini-2.5-flash',
                'responseId': 'resp-g2',
            },
        ),
    ),
    error={'error': {'code': 503, 'message': 'The model is overloaded.', 'status': 'UNAVAILABLE'}},
)

RESPONSES = Spec(
    name='responses',
    make=_responses,
    base_suffix='/v1',
    path='/v1/responses',
    stream_path='/v1/responses',
    auth=('authorization', f'Bearer {SECRET}'),
    validate=validate_responses_body,
    reply={
        'id': 'resp_1',
        'object': 'response',
        'created_at': 1700000000,
        'model': 'gpt-5-2025-08-07',
        'status': 'completed',
        'output': [
            {
                'type': 'message',
                'id': 'msg_1',
                'role': 'assistant',
                'status': 'completed',
                'content': [{'type': 'output_text', 'text': 'hello', 'annotations': []}],
            }
        ],
        'usage': {'input_tokens': 10, 'output_tokens': 2, 'total_tokens': 12},
    },
    stream=_events(
        (
            'response.created',
            {
                'type': 'response.created',
                'response': {'id': 'resp_2', 'model': 'gpt-5-2025-08-07', 'status': 'in_progress', 'output': []},
            },
        ),
        ('response.output_text.delta', {'type': 'response.output_text.delta', 'item_id': 'msg_2', 'delta': 'Hel'}),
        ('response.output_text.delta', {'type': 'response.output_text.delta', 'item_id': 'msg_2', 'delta': 'lo'}),
        (
            'response.completed',
            {
                'type': 'response.completed',
                'response': {
                    'id': 'resp_2',
                    'model': 'gpt-5-2025-08-07',
                    'status': 'completed',
                    'output': [],
                    'usage': {'input_tokens': 5, 'output_tokens': 2, 'total_tokens': 7},
                },
            },
        ),
    ),
    error={'error': {'message': 'The server is overloaded.', 'type': 'server_error'}},
)

SPECS = [ANTHROPIC, GOOGLE, RESPONSES]
