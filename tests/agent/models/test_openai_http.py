"""The shared HTTP layer through OpenAIChatModel: retries, errors, timeouts, streams, over a mock and a real socket."""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from edgewise.agent.exceptions import ModelAPIError, ModelHTTPError
from edgewise.agent.models import _http
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import PARAMS, completion, delta, drain, json_reply, mock_model, sse, user
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

FAST = {'retry-after-ms': '1'}


def _server_model(server: LocalServer, max_retries: int = 2) -> OpenAIChatModel:
    return OpenAIChatModel(
        'gpt-4o', provider=OpenAIProvider(base_url=server.url, api_key='sk-local-secret', max_retries=max_retries)
    )


def test_retry_delay_prefers_the_servers_ask() -> None:
    assert _http.retry_delay(0, httpx.Headers({'retry-after-ms': '250'})) == 0.25
    assert _http.retry_delay(0, httpx.Headers({'retry-after': '3'})) == 3.0
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < _http.retry_delay(0, httpx.Headers({'retry-after': when})) <= 30


def test_retry_delay_backs_off_with_jitter_when_the_ask_is_missing_or_absurd() -> None:
    assert _http.retry_delay(0, jitter=lambda: 0.0) == 0.5
    assert _http.retry_delay(2, jitter=lambda: 0.0) == 2.0
    assert _http.retry_delay(10, jitter=lambda: 0.0) == 8.0
    assert _http.retry_delay(1, jitter=lambda: 0.999) == pytest.approx(0.75, rel=0.01)
    assert _http.retry_delay(0, httpx.Headers({'retry-after': '3600'}), jitter=lambda: 0.0) == 0.5
    assert _http.retry_delay(0, httpx.Headers({'retry-after': 'soon'}), jitter=lambda: 0.0) == 0.5
    assert _http.retry_delay(0, httpx.Headers({'retry-after-ms': 'x'}), jitter=lambda: 0.0) == 0.5


@pytest.mark.parametrize(
    ('status', 'headers', 'expected'),
    [
        (429, {}, True),
        (408, {}, True),
        (409, {}, True),
        (500, {}, True),
        (503, {}, True),
        (400, {}, False),
        (404, {}, False),
        (400, {'x-should-retry': 'true'}, True),
        (503, {'x-should-retry': 'false'}, False),
    ],
)
def test_which_statuses_are_retried(status: int, headers: dict[str, str], expected: bool) -> None:
    assert _http.should_retry(httpx.Response(status, headers=headers)) is expected


async def test_a_429_then_success_is_retried_after_the_servers_delay(local_server: LocalServer) -> None:
    local_server.script(
        Reply(429, {'error': {'message': 'slow down'}}, headers={'retry-after-ms': '1'}),
        Reply(500, {'error': {'message': 'oops'}}, headers=FAST),
        Reply(200, completion('finally')),
    )
    async with _server_model(local_server) as model:
        response = await model.request(user('hi'), None, PARAMS)
    assert response.text == 'finally'
    assert len(local_server.received) == 3
    assert local_server.received[0]['body'] == local_server.received[2]['body']


async def test_retries_stop_at_the_limit_with_a_model_http_error(local_server: LocalServer) -> None:
    error = {'error': {'message': 'overloaded', 'type': 'server_error'}}
    local_server.script(*[Reply(503, error, headers=FAST)] * 2)
    with pytest.raises(ModelHTTPError) as exc_info:
        async with _server_model(local_server, max_retries=1) as model:
            await model.request(user('hi'), None, PARAMS)
    assert exc_info.value.status_code == 503
    assert exc_info.value.body == {'message': 'overloaded', 'type': 'server_error'}
    assert exc_info.value.model_name == 'gpt-4o'
    assert str(exc_info.value) == (
        "status_code: 503, model_name: gpt-4o, body: {'message': 'overloaded', 'type': 'server_error'}"
    )
    assert len(local_server.received) == 2


async def test_a_400_is_not_retried(local_server: LocalServer) -> None:
    local_server.script(Reply(400, {'error': {'message': 'bad', 'code': 'unsupported_value'}}))
    with pytest.raises(ModelHTTPError) as exc_info:
        async with _server_model(local_server) as model:
            await model.request(user('hi'), None, PARAMS)
    assert exc_info.value.status_code == 400
    assert len(local_server.received) == 1


async def test_a_model_http_error_carries_the_response_headers(local_server: LocalServer) -> None:
    local_server.script(Reply(400, {'error': {'message': 'bad'}}, headers={'Retry-After': '30', 'X-Request-Id': 'r-1'}))
    with pytest.raises(ModelHTTPError) as exc_info:
        async with _server_model(local_server) as model:
            await model.request(user('hi'), None, PARAMS)
    headers = exc_info.value.headers
    assert headers is not None
    assert (headers['retry-after'], headers['x-request-id'], exc_info.value.retry_after) == ('30', 'r-1', 30.0)


async def test_a_status_error_raised_by_the_users_client_keeps_the_headers(local_server: LocalServer) -> None:
    async def raise_for_status(response: httpx.Response) -> None:
        response.raise_for_status()

    local_server.script(Reply(403, {'error': {'message': 'no'}}, headers={'X-Request-Id': 'r-2'}))
    async with httpx.AsyncClient(event_hooks={'response': [raise_for_status]}) as client:
        provider = OpenAIProvider(base_url=local_server.url, api_key='sk-local-secret', http_client=client)
        with pytest.raises(ModelHTTPError) as exc_info:
            await OpenAIChatModel('gpt-4o', provider=provider).request(user('hi'), None, PARAMS)
    assert exc_info.value.status_code == 403
    assert (exc_info.value.headers or {}).get('x-request-id') == 'r-2'


async def test_x_should_retry_false_overrides_a_retryable_status(local_server: LocalServer) -> None:
    local_server.script(Reply(500, b'plain failure', headers={'x-should-retry': 'false', 'content-type': 'text/plain'}))
    with pytest.raises(ModelHTTPError) as exc_info:
        async with _server_model(local_server) as model:
            await model.request(user('hi'), None, PARAMS)
    assert exc_info.value.body == 'plain failure'


async def test_a_dropped_connection_is_retried_then_reported(
    local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_http, 'INITIAL_DELAY', 0.001)  # no server to ask for a delay: the backoff is bounded
    local_server.script(Reply(drop=True), Reply(200, completion('after the drop')))
    async with _server_model(local_server) as model:
        response = await model.request(user('hi'), None, PARAMS)
    assert response.text == 'after the drop'

    local_server.script(Reply(drop=True))
    with pytest.raises(ModelAPIError) as exc_info:
        async with _server_model(local_server, max_retries=0) as model:
            await model.request(user('hi'), None, PARAMS)
    assert str(exc_info.value).startswith('Connection error')
    assert not isinstance(exc_info.value, ModelHTTPError)


async def test_a_slow_server_times_out(local_server: LocalServer) -> None:
    local_server.script(Reply(hold=True))
    with pytest.raises(ModelAPIError, match=r'^Request timed out\.$'):
        async with _server_model(local_server, max_retries=0) as model:
            await model.request(user('hi'), {'timeout': 0.2}, PARAMS)


async def test_a_stream_over_a_socket(local_server: LocalServer) -> None:
    body = sse(
        delta(role='assistant', content='Hel'),
        delta(content='lo'),
        delta('stop'),
        {'choices': [], 'usage': {'prompt_tokens': 5, 'completion_tokens': 2, 'total_tokens': 7}},
    )
    local_server.script(
        Reply(
            200, chunks=[body[i : i + 7] for i in range(0, len(body), 7)], headers={'content-type': 'text/event-stream'}
        )
    )
    async with _server_model(local_server) as model, model.request_stream(user('hi'), None, PARAMS) as stream:
        events = [e async for e in stream]
    assert stream.get().text == 'Hello'
    assert stream.get().usage.input_tokens == 5
    assert events[0].event_kind == 'part_start'
    assert local_server.received[0]['body']['stream_options'] == {'include_usage': True}


async def test_leaving_a_stream_early_closes_the_connection(local_server: LocalServer) -> None:
    local_server.script(
        Reply(
            200,
            chunks=[sse(delta(content='first'), done=False)],
            keep_open=True,
            headers={'content-type': 'text/event-stream'},
        )
    )
    async with _server_model(local_server) as model:
        async with model.request_stream(user('hi'), None, PARAMS) as stream:
            async for event in stream:
                assert event.event_kind == 'part_start'
                break
        # The provider's client is still open: only leaving the stream closed the connection, which the
        # server sees while its stream is still open (it records that once it reads EOF: wait boundedly).
        for _ in range(2000):
            if local_server.disconnects:
                break
            await anyio.sleep(0.005)
        assert local_server.disconnects == [True]


async def test_a_stream_is_not_retried_once_it_has_started() -> None:
    calls = 0

    def respond(_: dict[str, object]) -> httpx.Response:
        nonlocal calls
        calls += 1

        async def body() -> AsyncIterator[bytes]:
            yield sse(delta(content='partial'), done=False)
            raise httpx.ReadError('connection reset')

        return httpx.Response(200, headers={'content-type': 'text/event-stream'}, content=body())

    model, _ = mock_model(respond)
    texts: list[str] = []

    async def read() -> None:
        async with model.request_stream(user('hi'), None, PARAMS) as stream:
            try:
                async for _ in stream:
                    pass
            finally:
                texts.append(stream.get().text or '')

    with pytest.raises(ModelAPIError, match='Connection error while streaming'):
        await read()
    assert calls == 1
    assert texts == ['partial']


async def test_api_keys_appear_in_no_repr_error_or_span(capfire) -> None:
    model, recorder = mock_model(json_reply({'error': {'message': 'denied'}}, 401))
    with pytest.raises(ModelHTTPError) as exc_info:
        await model.request(user('hi'), None, PARAMS)
    assert recorder.requests[0].headers['authorization'] == 'Bearer sk-test-key'
    texts = [repr(model), repr(model.provider), str(exc_info.value), repr(exc_info.value)]
    texts.append(str(capfire.exporter.exported_spans_as_dict()))
    assert all('sk-test-key' not in text for text in texts)


async def test_the_span_has_the_genai_attributes(capfire) -> None:
    model, _ = mock_model(json_reply(completion('hi', usage={'prompt_tokens': 9, 'completion_tokens': 3})))
    await model.request(user('hi'), {'temperature': 0.5, 'max_tokens': 20}, PARAMS)
    (span,) = capfire.exporter.exported_spans_as_dict()
    attributes = span['attributes']
    assert span['name'] == 'POST /v1/chat/completions'
    assert {k: v for k, v in attributes.items() if k.startswith(('gen_ai', 'server'))} == {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.request.max_tokens': 20,
        'gen_ai.request.temperature': 0.5,
        'server.address': 'api.openai.com',
        'server.port': 443,
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.response.id': 'chatcmpl-1',
        'gen_ai.response.finish_reasons': '["stop"]',  # logfire stores lists as JSON
        'gen_ai.usage.input_tokens': 9,
        'gen_ai.usage.output_tokens': 3,
    }


def test_the_errors_match_pydantic_ai() -> None:
    import pickle

    from edgewise.agent.exceptions import AgentRunError

    http = ModelHTTPError(429, 'gpt-4o', {'message': 'slow down'})
    api = ModelAPIError('gpt-4o', 'Connection error.')
    assert isinstance(http, ModelAPIError)
    assert isinstance(api, AgentRunError)
    assert str(api) == 'Connection error.'
    copy = pickle.loads(pickle.dumps(http))
    assert (copy.status_code, copy.model_name, copy.body, str(copy)) == (
        429,
        'gpt-4o',
        {'message': 'slow down'},
        str(http),
    )
    assert str(pickle.loads(pickle.dumps(api))) == 'Connection error.'


async def test_a_streamed_request_has_one_span_with_the_final_usage(capfire) -> None:
    body = sse(
        delta(content='Hi'),
        delta('length'),
        {'choices': [], 'usage': {'prompt_tokens': 4, 'completion_tokens': 1, 'total_tokens': 5}},
    )
    model, _ = mock_model(lambda _: httpx.Response(200, headers={'content-type': 'text/event-stream'}, content=body))
    await drain(model, user('hi'), None, PARAMS)
    (span,) = capfire.exporter.exported_spans_as_dict()
    attributes = span['attributes']
    assert (attributes['gen_ai.usage.input_tokens'], attributes['gen_ai.usage.output_tokens']) == (4, 1)
    assert attributes['gen_ai.response.finish_reasons'] == '["length"]'
    assert attributes['gen_ai.response.model'] == 'gpt-4o-mini'


async def test_a_connect_timeout_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_http, 'INITIAL_DELAY', 0.001)
    attempts: list[int] = []

    def respond(_: dict[str, object]) -> httpx.Response:
        attempts.append(1)
        if len(attempts) == 1:
            raise httpx.ConnectTimeout('too slow')
        return httpx.Response(200, json=completion('second time'))

    model, _ = mock_model(respond)
    assert (await model.request(user('hi'), None, PARAMS)).text == 'second time'
    assert len(attempts) == 2


async def test_odd_answers_are_errors() -> None:
    model, _ = mock_model(lambda _: httpx.Response(302, headers={'location': '/elsewhere'}))
    with pytest.raises(ModelAPIError, match=r'^Unexpected HTTP status 302\.$'):
        await model.request(user('hi'), None, PARAMS)
    model, _ = mock_model(json_reply({'detail': 'not an OpenAI error'}, 422))
    with pytest.raises(ModelHTTPError) as exc_info:
        await model.request(user('hi'), None, PARAMS)
    assert exc_info.value.body == {'detail': 'not an OpenAI error'}


async def test_a_stream_that_times_out_while_reading() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield sse(delta(content='partial'), done=False)
        raise httpx.ReadTimeout('no more')

    model, _ = mock_model(lambda _: httpx.Response(200, headers={'content-type': 'text/event-stream'}, content=body()))
    with pytest.raises(ModelAPIError, match='Request timed out while streaming'):
        await drain(model, user('hi'), None, PARAMS)


async def test_no_span_without_tracing(capfire, monkeypatch: pytest.MonkeyPatch) -> None:
    from edgewise.agent import _instrument

    monkeypatch.setattr(_instrument, 'TRACING', False)
    model, _ = mock_model(json_reply(completion()))
    await model.request(user('hi'), None, PARAMS)
    assert capfire.exporter.exported_spans_as_dict() == []


def test_a_retry_after_date_in_the_past_falls_back_to_backoff() -> None:
    headers = httpx.Headers({'retry-after': 'Wed, 21 Oct 2015 07:28:00 -0000'})
    assert _http.retry_delay(0, headers, jitter=lambda: 0.0) == 0.5


async def test_a_json_answer_in_utf16_is_read_as_httpx_reads_it() -> None:
    import json

    body = json.dumps(completion('wide')).encode('utf-16')
    model, _ = mock_model(lambda _: httpx.Response(200, headers={'content-type': 'application/json'}, content=body))
    assert (await model.request(user('hi'), None, PARAMS)).text == 'wide'
