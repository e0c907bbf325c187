"""Replay of the recorded Anthropic, Gemini and Responses traffic (`../shared/cassettes`) END TO END through
`AnthropicModel`, `GoogleModel` and `OpenAIResponsesModel`: each model sends a request (checked against the
official SDK's request types) through a mock transport that answers with the recorded response, streamed
(re-chunked at random bytes) when it was recorded streamed; the `ModelResponse` must carry what the recorded
body says. Recorded errors come out as `ModelHTTPError`s with the recorded status and body.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import httpx
import pytest

from edgewise.agent.exceptions import ModelHTTPError
from edgewise.agent.messages import ModelResponse, ThinkingPart, ToolCallPart
from edgewise.agent.models._provider_model import ProviderModel
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.openai import OpenAIResponsesModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import PARAMS, rechunked, user
from ._helpers import (
    cassettes_root,
    load_interactions,
    validate_anthropic_body,
    validate_google_body,
    validate_responses_body,
)
from .test_cassette_replay import (
    _anthropic_actual,
    _anthropic_expected,
    _anthropic_stream_expected,
    _api,
    _google_actual,
    _google_expected,
    _json_body,
    _responses_actual,
    _responses_expected,
    _stream_events,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(cassettes_root() is None, reason='the shared cassettes are not here'),
]

KEY = 'sk-replay-key'
_VALIDATORS = {
    'anthropic': validate_anthropic_body,
    'google': validate_google_body,
    'responses': validate_responses_body,
}


def _of(api: str) -> list[tuple[str, int, dict[str, Any]]]:
    return [item for item in load_interactions() if _api(item[2]['request']['uri']) == api]


def _recorded_model_name(api: str, interaction: dict[str, Any]) -> str:
    if api == 'google':
        return httpx.URL(interaction['request']['uri']).path.rsplit('/', 1)[1].split(':')[0]
    return str((interaction['request'].get('parsed_body') or {}).get('model') or 'recorded')


def _recorded_reply(interaction: dict[str, Any], seed: int) -> httpx.Response:
    recorded = interaction['response']
    headers = {
        k: v[0] for k, v in recorded['headers'].items() if k.lower() not in ('content-length', 'content-encoding')
    }
    status = recorded['status']['code']
    if 'parsed_body' in recorded:
        return httpx.Response(status, headers=headers, content=json.dumps(recorded['parsed_body']).encode())
    data = recorded['body']['string'].encode()
    if 'event-stream' in headers.get('content-type', headers.get('Content-Type', '')):
        return httpx.Response(status, headers=headers, content=rechunked(data, seed))
    return httpx.Response(status, headers=headers, content=data)


def _model(api: str, interaction: dict[str, Any], seed: int) -> tuple[ProviderModel, list[httpx.Request]]:
    sent: list[httpx.Request] = []

    def respond(request: httpx.Request) -> httpx.Response:
        _VALIDATORS[api](json.loads(request.content))
        sent.append(request)
        return _recorded_reply(interaction, seed)

    client = httpx.AsyncClient(transport=httpx.MockTransport(respond))
    name = _recorded_model_name(api, interaction)
    model: ProviderModel
    if api == 'anthropic':
        model = AnthropicModel(name, provider=AnthropicProvider(api_key=KEY, http_client=client, max_retries=0))
    elif api == 'google':
        model = GoogleModel(name, provider=GoogleProvider(api_key=KEY, http_client=client, max_retries=0))
    else:
        model = OpenAIResponsesModel(name, provider=OpenAIProvider(api_key=KEY, http_client=client, max_retries=0))
    return model, sent


async def _replay(api: str, interaction: dict[str, Any], seed: int) -> tuple[ModelResponse, httpx.Request]:
    model, sent = _model(api, interaction, seed)
    if _stream_events(interaction) is None:
        response = await model.request(user('hi'), None, PARAMS)
    else:
        async with model.request_stream(user('hi'), None, PARAMS) as stream:
            async for _ in stream:
                pass
        response = stream.get()
    (request,) = sent
    recorded = httpx.URL(interaction['request']['uri'])
    assert request.url.path == recorded.path  # the same endpoint (and, for Gemini, model and method)
    assert KEY not in str(request.url)
    return response, request


def _ids(items: list[tuple[str, int, dict[str, Any]]]) -> list[str]:
    return [f'{name}#{position}' for name, position, _ in items]


def _params(api: str) -> pytest.MarkDecorator:
    items = [item for item in _of(api) if item[2]['response']['status']['code'] == 200]
    return pytest.mark.parametrize(('seed', 'interaction'), list(enumerate(i for _, _, i in items)), ids=_ids(items))


@_params('anthropic')
async def test_anthropic_replay(seed: int, interaction: dict[str, Any]) -> None:
    response, request = await _replay('anthropic', interaction, seed)
    assert request.headers['x-api-key'] == KEY
    events = _stream_events(interaction)
    expected = _anthropic_expected(_json_body(interaction)) if events is None else _anthropic_stream_expected(events)
    assert _anthropic_actual(response) == expected
    assert response.provider_name == 'anthropic'
    assert all(p.provider_name == 'anthropic' for p in response.parts if isinstance(p, ThinkingPart))


@_params('google')
async def test_google_replay(seed: int, interaction: dict[str, Any]) -> None:
    response, request = await _replay('google', interaction, seed)
    assert request.headers['x-goog-api-key'] == KEY
    events = _stream_events(interaction)
    chunks = [_json_body(interaction)] if events is None else events
    expected = _google_expected(chunks)
    if events is not None:
        expected['signatures'] = None
        assert request.url.params['alt'] == 'sse'
    assert _google_actual(response, streamed=events is not None) == expected
    assert all(p.tool_call_id for p in response.parts if isinstance(p, ToolCallPart))


@_params('responses')
async def test_responses_replay(seed: int, interaction: dict[str, Any]) -> None:
    response, request = await _replay('responses', interaction, seed)
    assert request.headers['authorization'] == f'Bearer {KEY}'
    events = _stream_events(interaction)
    if events is None:
        body = _json_body(interaction)
    else:
        body = next(e['response'] for e in events if e['type'] in ('response.completed', 'response.incomplete'))
    assert _responses_actual(response) == _responses_expected(body)


ERRORS = [
    item
    for api in ('anthropic', 'google', 'responses')
    for item in _of(api)
    if item[2]['response']['status']['code'] != 200
]


@pytest.mark.parametrize('interaction', [i for _, _, i in ERRORS], ids=_ids(ERRORS))
async def test_recorded_errors_replay(interaction: dict[str, Any]) -> None:
    api = _api(interaction['request']['uri'])
    assert api is not None
    with pytest.raises(ModelHTTPError) as exc_info:
        await _replay(api, interaction, 0)
    recorded = interaction['response']
    assert exc_info.value.status_code == recorded['status']['code']
    body = recorded.get('parsed_body')
    if api == 'responses' and isinstance(body, dict):
        body = body.get('error', body)
    if body is not None:
        assert exc_info.value.body == body
    assert KEY not in str(exc_info.value)


def test_every_recorded_interaction_of_the_three_apis_is_replayed() -> None:
    counts = Counter(
        (_api(i['request']['uri']), i['response']['status']['code'] == 200)
        for _, _, i in load_interactions()
        if _api(i['request']['uri']) is not None
    )
    replayed = {api: len(_of(api)) for api in ('anthropic', 'google', 'responses')}
    assert sum(counts.values()) == sum(replayed.values())
    assert all(n > 0 for n in replayed.values())
