"""Each provider's error answers raise the category pydantic-ai 2.68 gives them, still `ModelHTTPError`s.

Over a real HTTP server on 127.0.0.1 answering with the status and the error body each API sends: OpenAI's Chat
Completions and Responses, Anthropic's Messages, Gemini's `generateContent`; streamed errors too, and transport
failures with the stage of the request where they happened. An API key the server echoes never shows.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelRequestTimeout,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from edgewise.agent.messages import ModelMessage, ModelRequest
from edgewise.agent.models import Model, ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import completion
from .conftest import LocalServer, Reply, serve_http

pytestmark = pytest.mark.anyio

SECRET = 'sk-taxonomy-secret-0123456789'
PARAMS = ModelRequestParameters()
HI: list[ModelMessage] = [ModelRequest.user_text_prompt('hi')]
SSE = {'content-type': 'text/event-stream'}


def _chat(server: LocalServer) -> Model:
    return OpenAIChatModel('gpt-4o', provider=OpenAIProvider(base_url=server.url, api_key=SECRET, max_retries=0))


def _responses(server: LocalServer) -> Model:
    return OpenAIResponsesModel('gpt-5', provider=OpenAIProvider(base_url=server.url, api_key=SECRET, max_retries=0))


def _anthropic(server: LocalServer) -> Model:
    provider = AnthropicProvider(api_key=SECRET, base_url=server.url.removesuffix('/v1'), max_retries=0)
    return AnthropicModel('claude-sonnet-4-5', provider=provider)


def _gemini(server: LocalServer) -> Model:
    provider = GoogleProvider(api_key=SECRET, base_url=server.url.removesuffix('/v1'), max_retries=0)
    return GoogleModel('gemini-2.5-flash', provider=provider)


async def _request(model: Model) -> None:
    async with model:
        await model.request(HI, None, PARAMS)


async def _stream(model: Model) -> None:
    async with model, model.request_stream(HI, None, PARAMS) as stream:
        async for _ in stream:
            pass


async def _raised(model: Model, *, streamed: bool = False) -> ModelAPIError:
    with pytest.raises(ModelAPIError) as caught:
        await (_stream(model) if streamed else _request(model))
    return caught.value


def _openai_error(code: str | None, message: str, error_type: str = 'invalid_request_error') -> dict[str, Any]:
    return {'error': {'message': message, 'type': error_type, 'param': None, 'code': code}}


OPENAI_CASES: list[tuple[int, dict[str, Any], type[ModelAPIError]]] = [
    (401, _openai_error('invalid_api_key', f'Incorrect API key provided: {SECRET}.'), ModelAuthenticationError),
    (403, _openai_error(None, 'Project does not have access to model gpt-4o'), ModelAuthenticationError),
    (404, _openai_error('model_not_found', 'The model `gpt-4o` does not exist'), ModelNotFoundError),
    (429, _openai_error('rate_limit_exceeded', 'Rate limit reached', 'requests'), ModelRateLimitError),
    (
        429,
        _openai_error('insufficient_quota', 'You exceeded your current quota', 'insufficient_quota'),
        ModelQuotaExceededError,
    ),
    (
        400,
        _openai_error('context_length_exceeded', "This model's maximum context length is 128000 tokens"),
        ModelContextWindowExceededError,
    ),
    (400, _openai_error(None, 'Invalid value for temperature'), ModelRequestRejectedError),
    (422, _openai_error(None, 'Unprocessable'), ModelRequestRejectedError),
    (402, _openai_error(None, 'Payment required'), ModelQuotaExceededError),
    (500, _openai_error(None, 'The server had an error', 'server_error'), ModelServerError),
    (502, _openai_error(None, 'Bad gateway', 'server_error'), ModelServerError),
    (503, _openai_error(None, 'Service unavailable', 'service_unavailable'), ModelUnavailableError),
    (503, _openai_error(None, 'The engine is currently overloaded', 'server_is_overloaded'), ModelOverloadedError),
]


@pytest.mark.parametrize('make_model', [_chat, _responses], ids=['chat', 'responses'])
@pytest.mark.parametrize(('status', 'body', 'category'), OPENAI_CASES)
async def test_openai_errors_raise_their_category(
    local_server: LocalServer,
    make_model: Callable[[LocalServer], Model],
    status: int,
    body: dict[str, Any],
    category: type[ModelAPIError],
) -> None:
    local_server.script(Reply(status, body, headers={'x-request-id': 'req-1'}))
    error = await _raised(make_model(local_server))
    assert isinstance(error, category)
    assert isinstance(error, ModelHTTPError)
    assert type(error).__name__ == category.__name__
    assert (error.status_code, error.in_stream) == (status, False)
    assert (error.provider_error_code, error.provider_error_type) == (body['error']['code'], body['error']['type'])
    assert (error.headers or {})['x-request-id'] == 'req-1'


async def test_an_openai_rate_limit_says_how_long_to_wait(local_server: LocalServer) -> None:
    body = _openai_error('rate_limit_exceeded', 'Rate limit reached', 'requests')
    local_server.script(Reply(429, body, headers={'retry-after-ms': '1500', 'x-should-retry': 'true'}))
    error = await _raised(_chat(local_server))
    assert isinstance(error, ModelRateLimitError)
    assert isinstance(error, ModelHTTPError)
    assert error.retry_after == 1.5
    assert error.provider_retry_hint is True


async def test_an_echoed_api_key_is_redacted_from_the_error(local_server: LocalServer) -> None:
    local_server.script(Reply(401, _openai_error('invalid_api_key', f'Incorrect API key provided: {SECRET}.')))
    error = await _raised(_chat(local_server))
    assert isinstance(error, ModelAuthenticationError)
    assert error.body == _openai_error('invalid_api_key', 'Incorrect API key provided: ***.')['error']
    for text in (str(error), repr(error), repr(error.body)):
        assert SECRET not in text


async def test_an_error_inside_a_chat_stream_gets_the_status_it_has_outside_one(local_server: LocalServer) -> None:
    chunk = b'data: {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}\n\n'
    local_server.script(Reply(200, chunks=[chunk], headers=SSE))
    error = await _raised(_chat(local_server), streamed=True)
    assert isinstance(error, ModelRateLimitError)
    assert isinstance(error, ModelHTTPError)
    assert (error.status_code, error.in_stream, error.headers) == (429, True, None)


async def test_an_error_inside_a_chat_stream_without_a_known_status_is_not_an_http_error(
    local_server: LocalServer,
) -> None:
    local_server.script(Reply(200, chunks=[b'data: {"error": {"message": "odd", "code": "weird"}}\n\n'], headers=SSE))
    error = await _raised(_chat(local_server), streamed=True)
    assert type(error) is ModelAPIError
    assert (str(error), error.in_stream, error.provider_error_code) == ('Error while streaming: odd', True, 'weird')


async def test_a_failed_responses_stream_raises_the_category_of_its_error(local_server: LocalServer) -> None:
    failed = {
        'type': 'response.failed',
        'response': {'id': 'r', 'status': 'failed', 'error': {'code': 'server_error', 'message': 'boom'}},
    }
    local_server.script(Reply(200, chunks=[f'data: {_json(failed)}\n\n'.encode()], headers=SSE))
    error = await _raised(_responses(local_server), streamed=True)
    assert isinstance(error, ModelServerError)
    assert isinstance(error, ModelHTTPError)
    assert (error.status_code, error.in_stream, error.body) == (500, True, {'code': 'server_error', 'message': 'boom'})


def _anthropic_error(error_type: str, message: str) -> dict[str, Any]:
    return {'type': 'error', 'error': {'type': error_type, 'message': message}}


ANTHROPIC_CASES: list[tuple[int, dict[str, Any], type[ModelAPIError]]] = [
    (401, _anthropic_error('authentication_error', 'invalid x-api-key'), ModelAuthenticationError),
    (403, _anthropic_error('permission_error', 'no access'), ModelAuthenticationError),
    (404, _anthropic_error('not_found_error', 'model: claude-sonnet-4-5'), ModelNotFoundError),
    (429, _anthropic_error('rate_limit_error', 'Number of requests exceeded'), ModelRateLimitError),
    (
        400,
        _anthropic_error('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
        ModelContextWindowExceededError,
    ),
    (
        400,
        _anthropic_error('invalid_request_error', 'Your credit balance is too low to access the API'),
        ModelQuotaExceededError,
    ),
    (400, _anthropic_error('invalid_request_error', 'max_tokens: field required'), ModelRequestRejectedError),
    (500, _anthropic_error('api_error', 'Internal server error'), ModelServerError),
    (529, _anthropic_error('overloaded_error', 'Overloaded'), ModelOverloadedError),
]


@pytest.mark.parametrize(('status', 'body', 'category'), ANTHROPIC_CASES)
async def test_anthropic_errors_raise_their_category(
    local_server: LocalServer, status: int, body: dict[str, Any], category: type[ModelAPIError]
) -> None:
    local_server.script(Reply(status, body))
    error = await _raised(_anthropic(local_server))
    assert isinstance(error, category)
    assert isinstance(error, ModelHTTPError)
    assert (error.status_code, error.body, error.provider_error_type) == (status, body, body['error']['type'])


async def test_an_anthropic_error_event_gets_the_status_of_its_type(local_server: LocalServer) -> None:
    start = {'type': 'message_start', 'message': {'id': 'm', 'model': 'claude-sonnet-4-5', 'content': []}}
    chunks = [
        f'event: {e["type"]}\ndata: {_json(e)}\n\n'.encode()
        for e in (start, _anthropic_error('overloaded_error', 'Overloaded'))
    ]
    local_server.script(Reply(200, chunks=chunks, headers=SSE))
    error = await _raised(_anthropic(local_server), streamed=True)
    assert isinstance(error, ModelOverloadedError)
    assert isinstance(error, ModelHTTPError)
    assert (error.status_code, error.in_stream) == (529, True)


async def test_an_anthropic_error_event_of_an_unknown_type_is_not_an_http_error(local_server: LocalServer) -> None:
    chunks = [f'event: error\ndata: {_json(_anthropic_error("odd_error", "odd"))}\n\n'.encode()]
    local_server.script(Reply(200, chunks=chunks, headers=SSE))
    error = await _raised(_anthropic(local_server), streamed=True)
    assert type(error) is ModelAPIError
    assert str(error) == "Model 'claude-sonnet-4-5' stream failed: odd_error: odd"
    assert error.in_stream


def _google_error(code: int, status: str, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = {'code': code, 'message': message, 'status': status}
    if details:
        error['details'] = list(details)
    return {'error': error}


_PER_MINUTE = {
    '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
    'violations': [{'quotaId': 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier'}],
}
_PER_DAY = {
    '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
    'violations': [{'quotaId': 'GenerateRequestsPerDayPerProjectPerModel-FreeTier'}],
}
_RETRY_INFO = {'@type': 'type.googleapis.com/google.rpc.RetryInfo', 'retryDelay': '14s'}
_TOO_LONG = 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).'
_KEY_INVALID = {'@type': 'type.googleapis.com/google.rpc.ErrorInfo', 'reason': 'API_KEY_INVALID'}

GEMINI_CASES: list[tuple[int, dict[str, Any], type[ModelAPIError]]] = [
    (429, _google_error(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded', _PER_MINUTE, _RETRY_INFO), ModelRateLimitError),
    (429, _google_error(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded', _PER_DAY), ModelQuotaExceededError),
    (400, _google_error(400, 'INVALID_ARGUMENT', 'API key not valid.', _KEY_INVALID), ModelAuthenticationError),
    (
        400,
        _google_error(
            400,
            'INVALID_ARGUMENT',
            _TOO_LONG,
        ),
        ModelContextWindowExceededError,
    ),
    (400, _google_error(400, 'INVALID_ARGUMENT', 'Bad field'), ModelRequestRejectedError),
    (
        400,
        _google_error(400, 'FAILED_PRECONDITION', 'Please enable billing on your project.'),
        ModelQuotaExceededError,
    ),
    (403, _google_error(403, 'PERMISSION_DENIED', 'Permission denied'), ModelAuthenticationError),
    (401, _google_error(401, 'UNAUTHENTICATED', 'Unauthenticated'), ModelAuthenticationError),
    (404, _google_error(404, 'NOT_FOUND', 'models/gemini-2.5-flash is not found'), ModelNotFoundError),
    (500, _google_error(500, 'INTERNAL', 'An internal error has occurred'), ModelServerError),
    (503, _google_error(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'), ModelOverloadedError),
    (503, _google_error(503, 'UNAVAILABLE', 'The service is currently unavailable.'), ModelUnavailableError),
    (504, _google_error(504, 'DEADLINE_EXCEEDED', 'Deadline exceeded'), ModelServerError),
]


@pytest.mark.parametrize(('status', 'body', 'category'), GEMINI_CASES)
async def test_gemini_errors_raise_their_category(
    local_server: LocalServer, status: int, body: dict[str, Any], category: type[ModelAPIError]
) -> None:
    local_server.script(Reply(status, body))
    error = await _raised(_gemini(local_server))
    assert isinstance(error, category)
    assert isinstance(error, ModelHTTPError)
    assert (error.status_code, error.body, error.provider_error_code) == (status, body, body['error']['status'])


async def test_a_gemini_rate_limit_waits_as_its_retry_info_says(local_server: LocalServer) -> None:
    local_server.script(Reply(429, _google_error(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded', _RETRY_INFO)))
    assert (await _raised(_gemini(local_server))).retry_after == 14.0
    # A `Retry-After` header wins over the body.
    local_server.script(
        Reply(
            429, _google_error(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded', _RETRY_INFO), headers={'retry-after': '3'}
        )
    )
    assert (await _raised(_gemini(local_server))).retry_after == 3.0


async def test_a_gemini_error_chunk_in_a_stream_keeps_its_status(local_server: LocalServer) -> None:
    chunk = _google_error(503, 'UNAVAILABLE', 'The model is overloaded.')
    local_server.script(Reply(200, chunks=[f'data: {_json(chunk)}\n\n'.encode()], headers=SSE))
    error = await _raised(_gemini(local_server), streamed=True)
    assert isinstance(error, ModelOverloadedError)
    assert isinstance(error, ModelHTTPError)
    assert (error.status_code, error.in_stream, error.provider_error_code) == (503, True, 'UNAVAILABLE')


@pytest.mark.parametrize(
    ('make_model', 'category'),
    # OpenAI's message is the text of a body that is not JSON, and says overloaded; the others read no message.
    [(_chat, ModelOverloadedError), (_anthropic, ModelUnavailableError), (_gemini, ModelUnavailableError)],
    ids=['openai', 'anthropic', 'gemini'],
)
async def test_a_status_with_an_unknown_body_falls_back_on_its_status(
    local_server: LocalServer, make_model: Callable[[LocalServer], Model], category: type[ModelAPIError]
) -> None:
    local_server.script(Reply(503, b'upstream is overloaded', headers={'content-type': 'text/plain'}))
    error = await _raised(make_model(local_server))
    assert type(error).__name__ == category.__name__
    assert isinstance(error, ModelHTTPError)
    assert error.body == 'upstream is overloaded'
    local_server.script(Reply(418, {'teapot': True}))
    error = await _raised(make_model(local_server))
    assert type(error) is ModelHTTPError
    assert error.status_code == 418


@pytest.mark.parametrize('streamed', [False, True], ids=['plain', 'streamed'])
@pytest.mark.parametrize('make_model', [_chat, _anthropic, _gemini], ids=['openai', 'anthropic', 'gemini'])
async def test_a_refused_connection_is_a_connection_error_in_the_connect_phase(
    make_model: Callable[[LocalServer], Model], streamed: bool
) -> None:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = int(s.getsockname()[1])
    error = await _raised(make_model(LocalServer(url=f'http://127.0.0.1:{port}/v1')), streamed=streamed)
    assert type(error) is ModelConnectionError
    assert error.phase == 'connect'
    assert isinstance(error.__cause__, Exception)
    assert SECRET not in str(error)
    assert SECRET not in repr(error)


class _CutOff(BaseHTTPRequestHandler):
    """Answers a stream with its first event, then closes the connection before the body's end."""

    protocol_version = 'HTTP/1.1'

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get('content-length') or 0))
        self.send_response(200)
        self.send_header('content-type', 'text/event-stream')
        self.send_header('transfer-encoding', 'chunked')
        self.end_headers()
        event = b'data: {"id": "c", "choices": [{"index": 0, "delta": {"content": "par"}}]}\n\n'
        self.wfile.write(f'{len(event):x}\r\n'.encode() + event + b'\r\n')
        self.wfile.flush()
        self.close_connection = True


class _ShortBody(BaseHTTPRequestHandler):
    """Answers 200 with a body shorter than its `content-length`, then closes the connection."""

    protocol_version = 'HTTP/1.1'

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get('content-length') or 0))
        self.send_response(200)
        self.send_header('content-type', 'application/json')
        self.send_header('content-length', '1000')
        self.end_headers()
        self.wfile.write(b'{"id": "cut')
        self.wfile.flush()
        self.close_connection = True


async def test_a_body_cut_off_is_a_connection_error_in_the_read_phase() -> None:
    with serve_http(_ShortBody) as port:
        error = await _raised(_chat(LocalServer(url=f'http://127.0.0.1:{port}/v1')))
    assert type(error) is ModelConnectionError
    assert error.phase == 'read'
    assert isinstance(error.__cause__, Exception)


async def test_a_stream_cut_off_is_a_connection_error_in_the_read_phase() -> None:
    with serve_http(_CutOff) as port:
        error = await _raised(_chat(LocalServer(url=f'http://127.0.0.1:{port}/v1')), streamed=True)
    assert type(error) is ModelConnectionError
    assert error.phase == 'read'
    assert str(error).startswith('Connection error while streaming')


@pytest.mark.parametrize('make_model', [_chat, _responses, _anthropic, _gemini])
async def test_an_attempt_that_times_out_is_a_timeout_error_in_the_read_phase(
    local_server: LocalServer, make_model: Callable[[LocalServer], Model]
) -> None:
    local_server.script(Reply(hold=True))
    async with make_model(local_server) as model:
        with pytest.raises(ModelTimeoutError) as caught:
            await model.request(HI, {'timeout': 0.2}, PARAMS)
    assert isinstance(caught.value, ModelConnectionError)
    assert (str(caught.value), caught.value.phase) == ('Request timed out.', 'read')


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


async def test_the_deadline_covers_every_attempt_at_an_http_request(local_server: LocalServer) -> None:
    # The server never answers; without `timeout`, each attempt would wait for the client's own timeout.
    local_server.script(Reply(hold=True), Reply(hold=True), Reply(hold=True))
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-deadline-secret', max_retries=2)
    async with OpenAIChatModel('gpt-4o', provider=provider) as model:
        with pytest.raises(ModelRequestTimeout) as caught:
            await Agent(model).run('hi', model_settings={'request_timeout': 0.2})
    assert caught.value.model_name == 'gpt-4o'


async def test_the_request_timeout_setting_is_not_sent_to_the_provider(local_server: LocalServer) -> None:
    # (Apart from the deadline test above: there the request may not even reach a busy server in time.)
    local_server.script(Reply(body=completion('hello')))
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-deadline-secret', max_retries=0)
    async with OpenAIChatModel('gpt-4o', provider=provider) as model:
        result = await Agent(model).run('hi', model_settings={'request_timeout': 600})
    assert result.output == 'hello'
    [request] = local_server.received
    assert request['body']['model'] == 'gpt-4o'
    assert 'request_timeout' not in request['body']
