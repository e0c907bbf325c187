"""`edgewise.agent.retries`: tenacity-driven httpx transports and the `Retry-After` wait, against a real local server.

Waits never happen: each test records what tenacity asks to sleep (or uses `wait_none`), so nothing depends on
the machine's speed.
"""

from __future__ import annotations

import email.utils
import inspect
import subprocess
import time
from typing import Any

import httpx
import pytest
from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_fixed,
    wait_none,
)

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelAPIError, ModelHTTPError
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.retries import AsyncTenacityTransport, RetryConfig, TenacityTransport, wait_retry_after

from .._without_module import run_without
from .models._chat import completion
from .models.conftest import LocalServer, Reply
from .models.conftest import local_server as local_server


def http_date(seconds_from_now: float) -> str:
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


class AsyncSleeps(list[float]):
    """A tenacity `sleep` that records each wait instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


class SyncSleeps(list[float]):
    """The synchronous form of `AsyncSleeps`."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def status_config(sleep: Any, attempts: int = 5) -> RetryConfig:
    """Retry failed statuses, waiting as `Retry-After` says (at most 30 s), else the default backoff."""
    return RetryConfig(
        retry=retry_if_exception_type(httpx.HTTPStatusError),
        wait=wait_retry_after(max_wait=30),
        stop=stop_after_attempt(attempts),
        reraise=True,
        sleep=sleep,
    )


def raise_for_status(response: httpx.Response) -> None:
    response.raise_for_status()


def rate_limited_then_ok() -> list[Reply]:
    """429 asking 7 s, 429 asking an hour (by date), 503 asking nothing, then 200."""
    return [
        Reply(429, {'error': 'slow down'}, headers={'retry-after': '7'}),
        Reply(429, {'error': 'slow down'}, headers={'retry-after': http_date(3600)}),
        Reply(503, {'error': 'unavailable'}),
        Reply(200, {'ok': True}),
    ]


def test_the_public_names_are_pydantic_ais() -> None:
    import edgewise.agent.retries as retries

    assert retries.__all__ == ['RetryConfig', 'TenacityTransport', 'AsyncTenacityTransport', 'wait_retry_after']
    assert RetryConfig.__total__ is False
    assert sorted(RetryConfig.__annotations__) == [
        'after',
        'before',
        'before_sleep',
        'reraise',
        'retry',
        'retry_error_callback',
        'retry_error_cls',
        'sleep',
        'stop',
        'wait',
    ]


@pytest.mark.parametrize('function', [TenacityTransport.__init__, AsyncTenacityTransport.__init__, wait_retry_after])
def test_the_signatures_are_pydantic_ais(function: Any) -> None:
    expected = {
        '__init__': [('self', inspect.Parameter.empty), ('config', inspect.Parameter.empty), ('wrapped', None),
                     ('validate_response', None)],
        'wait_retry_after': [('fallback_strategy', None), ('max_wait', 300)],
    }[function.__name__]  # fmt: skip
    parameters = inspect.signature(function).parameters.values()
    assert [(p.name, p.default) for p in parameters] == expected
    assert {p.kind for p in parameters} == {inspect.Parameter.POSITIONAL_OR_KEYWORD}


# The async transport


@pytest.mark.anyio
async def test_async_transport_waits_as_retry_after_asks_then_backs_off(local_server: LocalServer) -> None:
    local_server.script(*rate_limited_then_ok())
    sleeps = AsyncSleeps()
    transport = AsyncTenacityTransport(status_config(sleeps), validate_response=raise_for_status)
    async with httpx.AsyncClient(transport=transport) as client:
        response = await client.post(f'{local_server.url}/things', json={'n': 1})
    assert (response.status_code, response.json()) == (200, {'ok': True})
    # 7 s as asked; an hour capped at max_wait; no header: the default backoff, 2**(attempt - 1) = 4 s.
    assert sleeps == [7.0, 30.0, 4.0]
    assert [r['body'] for r in local_server.received] == [{'n': 1}] * 4


@pytest.mark.anyio
async def test_async_transport_reraises_the_last_status_error_when_attempts_run_out(local_server: LocalServer) -> None:
    local_server.script(*[Reply(503, {'error': 'unavailable'})] * 3)
    sleeps = AsyncSleeps()
    transport = AsyncTenacityTransport(status_config(sleeps, attempts=3), validate_response=raise_for_status)
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx.HTTPStatusError) as exc_info:
            await client.post(f'{local_server.url}/things', json={})
    assert exc_info.value.response.status_code == 503
    assert exc_info.value.request.url == f'{local_server.url}/things'
    assert sleeps == [1.0, 2.0]
    assert len(local_server.received) == 3


@pytest.mark.anyio
async def test_without_reraise_a_retry_error_holds_the_last_attempt(local_server: LocalServer) -> None:
    local_server.script(Reply(500, {}), Reply(502, {}))
    config = RetryConfig(stop=stop_after_attempt(2), sleep=AsyncSleeps())
    transport = AsyncTenacityTransport(config, validate_response=raise_for_status)
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(RetryError) as exc_info:
            await client.post(f'{local_server.url}/things', json={})
    error = exc_info.value.last_attempt.exception()
    assert isinstance(error, httpx.HTTPStatusError)
    assert error.response.status_code == 502


@pytest.mark.anyio
async def test_without_validate_response_an_error_status_is_returned(local_server: LocalServer) -> None:
    local_server.script(Reply(503, {'error': 'unavailable'}))
    transport = AsyncTenacityTransport(status_config(AsyncSleeps()))
    async with httpx.AsyncClient(transport=transport) as client:
        response = await client.post(f'{local_server.url}/things', json={})
    assert response.status_code == 503
    assert len(local_server.received) == 1


@pytest.mark.anyio
async def test_a_dropped_connection_is_retried(local_server: LocalServer) -> None:
    local_server.script(Reply(drop=True), Reply(drop=True), Reply(200, {'ok': True}))
    config = RetryConfig(retry=retry_if_exception_type(httpx.TransportError), stop=stop_after_attempt(3), reraise=True)
    async with httpx.AsyncClient(transport=AsyncTenacityTransport(config)) as client:
        response = await client.post(f'{local_server.url}/things', json={'n': 2})
    assert response.json() == {'ok': True}
    assert [r['body'] for r in local_server.received] == [{'n': 2}] * 3


@pytest.mark.anyio
async def test_a_dropped_connection_on_the_last_attempt_is_raised(local_server: LocalServer) -> None:
    local_server.script(Reply(drop=True), Reply(drop=True))
    config = RetryConfig(retry=retry_if_exception_type(httpx.TransportError), stop=stop_after_attempt(2), reraise=True)
    async with httpx.AsyncClient(transport=AsyncTenacityTransport(config)) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.post(f'{local_server.url}/things', json={})
    assert len(local_server.received) == 2


class Unwanted(Exception):
    """What the tests' validators raise."""


@pytest.mark.anyio
async def test_validate_response_decides_and_the_rejected_response_is_closed(local_server: LocalServer) -> None:
    local_server.script(Reply(200, {'state': 'pending'}, headers={'x-state': 'pending'}), Reply(200, {'state': 'done'}))
    seen: list[httpx.Response] = []

    def validate(response: httpx.Response) -> None:
        seen.append(response)
        assert response.request.url == f'{local_server.url}/jobs'
        if response.headers.get('x-state') == 'pending':
            raise Unwanted('not ready')

    config = RetryConfig(retry=retry_if_exception_type(Unwanted), wait=wait_none(), stop=stop_after_attempt(3))
    async with httpx.AsyncClient(transport=AsyncTenacityTransport(config, validate_response=validate)) as client:
        response = await client.post(f'{local_server.url}/jobs', json={})
    assert response.json() == {'state': 'done'}
    assert len(seen) == 2
    assert seen[0].is_closed
    assert seen[1] is response


@pytest.mark.anyio
async def test_an_exception_the_config_does_not_retry_is_raised_at_once(local_server: LocalServer) -> None:
    local_server.script(Reply(200, {}), Reply(200, {}))

    def validate(response: httpx.Response) -> None:
        raise ValueError('rejected')

    config = RetryConfig(retry=retry_if_exception_type(Unwanted), stop=stop_after_attempt(3), reraise=True)
    async with httpx.AsyncClient(transport=AsyncTenacityTransport(config, validate_response=validate)) as client:
        with pytest.raises(ValueError, match='rejected'):
            await client.post(f'{local_server.url}/things', json={})
    assert len(local_server.received) == 1


@pytest.mark.anyio
async def test_the_default_sleep_runs_on_asyncio_and_trio_and_takes_a_negative_wait_as_none(
    local_server: LocalServer,
) -> None:
    local_server.script(
        Reply(429, {}, headers={'retry-after': '-3'}), Reply(503, {}, headers={'retry-after': '0'}), Reply(200, {})
    )
    config = RetryConfig(
        retry=retry_if_exception_type(httpx.HTTPStatusError), wait=wait_retry_after(), stop=stop_after_attempt(3)
    )
    async with httpx.AsyncClient(transport=AsyncTenacityTransport(config, validate_response=raise_for_status)) as c:
        response = await c.post(f'{local_server.url}/things', json={})
    assert response.status_code == 200
    assert len(local_server.received) == 3
    assert 'sleep' not in config


class RecordingAsyncTransport(httpx.AsyncHTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def __aenter__(self) -> RecordingAsyncTransport:
        self.calls.append('enter')
        return self

    async def __aexit__(self, *args: Any) -> None:
        self.calls.append('exit')

    async def aclose(self) -> None:
        self.calls.append('aclose')
        await super().aclose()


@pytest.mark.anyio
async def test_async_transport_enters_and_closes_what_it_wraps() -> None:
    wrapped = RecordingAsyncTransport()
    transport = AsyncTenacityTransport(RetryConfig(), wrapped)
    assert transport.wrapped is wrapped
    async with transport as entered:
        assert entered is transport
    await transport.aclose()
    assert wrapped.calls == ['enter', 'exit', 'aclose']


def test_the_default_wrapped_transports_are_new_httpx_transports() -> None:
    first, second = AsyncTenacityTransport(RetryConfig()), AsyncTenacityTransport(RetryConfig())
    assert type(first.wrapped) is httpx.AsyncHTTPTransport
    assert first.wrapped is not second.wrapped
    assert type(TenacityTransport(RetryConfig()).wrapped) is httpx.HTTPTransport
    assert first.validate_response is None
    assert first.config == {}


# The sync transport


def test_sync_transport_waits_as_retry_after_asks_then_backs_off(local_server: LocalServer) -> None:
    local_server.script(*rate_limited_then_ok())
    sleeps = SyncSleeps()
    with httpx.Client(transport=TenacityTransport(status_config(sleeps), validate_response=raise_for_status)) as client:
        response = client.post(f'{local_server.url}/things', json={'n': 3})
    assert (response.status_code, response.json()) == (200, {'ok': True})
    assert sleeps == [7.0, 30.0, 4.0]
    assert [r['body'] for r in local_server.received] == [{'n': 3}] * 4


def test_sync_transport_retries_dropped_connections_and_closes_rejected_responses(local_server: LocalServer) -> None:
    local_server.script(Reply(drop=True), Reply(200, {'state': 'pending'}), Reply(200, {'state': 'done'}))
    seen: list[httpx.Response] = []

    def validate(response: httpx.Response) -> None:
        seen.append(response)
        if response.read() == b'{"state": "pending"}':
            raise Unwanted('not ready')

    config = RetryConfig(
        retry=retry_if_exception_type((httpx.TransportError, Unwanted)), stop=stop_after_attempt(3), sleep=SyncSleeps()
    )
    with httpx.Client(transport=TenacityTransport(config, validate_response=validate)) as client:
        response = client.post(f'{local_server.url}/things', json={})
    assert response.json() == {'state': 'done'}
    assert len(local_server.received) == 3
    assert seen[0].is_closed


def test_sync_transport_without_validate_response_returns_an_error_status(local_server: LocalServer) -> None:
    local_server.script(Reply(503, {'error': 'unavailable'}))
    with httpx.Client(transport=TenacityTransport(status_config(SyncSleeps()))) as client:
        response = client.post(f'{local_server.url}/things', json={})
    assert response.status_code == 503
    assert len(local_server.received) == 1


def test_sync_transport_reraises_when_attempts_run_out(local_server: LocalServer) -> None:
    local_server.script(Reply(429, {}, headers={'retry-after': '1'}), Reply(429, {}, headers={'retry-after': '1'}))
    sleeps = SyncSleeps()
    transport = TenacityTransport(status_config(sleeps, 2), validate_response=raise_for_status)
    with httpx.Client(transport=transport) as client, pytest.raises(httpx.HTTPStatusError) as exc_info:
        client.post(f'{local_server.url}/things', json={})
    assert exc_info.value.response.status_code == 429
    assert sleeps == [1.0]


def test_sync_transport_with_the_default_sleep_fails_on_a_negative_retry_after(local_server: LocalServer) -> None:
    # As in pydantic-ai: wait_retry_after returns the negative number, which time.sleep refuses.
    local_server.script(Reply(429, {}, headers={'retry-after': '-1'}))
    config = RetryConfig(retry=retry_if_exception_type(httpx.HTTPStatusError), wait=wait_retry_after())
    transport = TenacityTransport(config, validate_response=raise_for_status)
    with httpx.Client(transport=transport) as client, pytest.raises(ValueError, match='must be non-negative'):
        client.post(f'{local_server.url}/things', json={})
    assert len(local_server.received) == 1


class RecordingTransport(httpx.HTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def __enter__(self) -> RecordingTransport:
        self.calls.append('enter')
        return self

    def __exit__(self, *args: Any) -> None:
        self.calls.append('exit')

    def close(self) -> None:
        self.calls.append('close')
        super().close()


def test_sync_transport_enters_and_closes_what_it_wraps() -> None:
    wrapped = RecordingTransport()
    transport = TenacityTransport(RetryConfig(), wrapped)
    with transport as entered:
        assert entered is transport
    transport.close()
    assert wrapped.calls == ['enter', 'exit', 'close']


# wait_retry_after on its own


def failed_state(error: BaseException | None, attempt: int = 1) -> RetryCallState:
    state = RetryCallState(Retrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    if error is not None:
        state.set_exception((type(error), error, None))
    return state


def status_error(status: int = 429, retry_after: str | None = None) -> httpx.HTTPStatusError:
    request = httpx.Request('GET', 'http://127.0.0.1/')
    headers = {} if retry_after is None else {'retry-after': retry_after}
    response = httpx.Response(status, headers=headers, request=request)
    return httpx.HTTPStatusError('failed', request=request, response=response)


@pytest.mark.parametrize(
    ('value', 'expected'),
    [
        ('0', 0.0),
        ('12', 12.0),
        (' 12 ', 12.0),
        ('86400', 300.0),
        # As in pydantic-ai: int() reads the number, so a negative one is returned as is.
        ('-3', -3.0),
        # Not whole seconds, not a date, a date already past, a date without a time zone: the fallback.
        ('1.5', 9.0),
        ('soon', 9.0),
        ('Wed, 21 Oct 2015 07:28:00 GMT', 9.0),
        ('Wed, 21 Oct 2099 07:28:00 -0000', 9.0),
        ('', 9.0),
        # An hour ahead, capped.
        ('Wed, 21 Oct 2099 07:28:00 GMT', 300.0),
    ],
)
def test_wait_retry_after_reads_the_header(value: str, expected: float) -> None:
    wait = wait_retry_after(fallback_strategy=wait_fixed(9))
    assert wait(failed_state(status_error(retry_after=value))) == expected


def test_wait_retry_after_reads_a_date_in_the_near_future() -> None:
    wait = wait_retry_after(fallback_strategy=wait_fixed(9), max_wait=1000)
    asked = wait(failed_state(status_error(retry_after=http_date(600))))
    assert 0 < asked <= 600


def test_without_a_status_error_the_fallback_decides_and_max_wait_does_not_bound_it() -> None:
    wait = wait_retry_after(fallback_strategy=wait_fixed(500), max_wait=10)
    assert wait(failed_state(status_error(503))) == 500.0
    assert wait(failed_state(httpx.ConnectError('refused'))) == 500.0
    assert wait(failed_state(None)) == 500.0


def test_the_default_fallback_is_exponential_up_to_a_minute() -> None:
    wait = wait_retry_after()
    assert [wait(failed_state(httpx.ConnectError('refused'), n)) for n in (1, 2, 3, 6, 7, 20)] == [
        1.0,
        2.0,
        4.0,
        32.0,
        60.0,
        60.0,
    ]


# With a model


def chat_model(server: LocalServer, client: httpx.AsyncClient, max_retries: int) -> OpenAIChatModel:
    provider = OpenAIProvider(base_url=server.url, api_key='sk-local', http_client=client, max_retries=max_retries)
    return OpenAIChatModel('gpt-4o', provider=provider)


@pytest.mark.anyio
async def test_an_agent_over_a_retrying_client_gets_its_answer(local_server: LocalServer) -> None:
    local_server.script(
        Reply(429, {'error': {'message': 'slow down'}}, headers={'retry-after': '2'}),
        Reply(503, {'error': {'message': 'unavailable'}}),
        Reply(200, completion('Paris.')),
    )
    sleeps = AsyncSleeps()
    transport = AsyncTenacityTransport(status_config(sleeps), validate_response=raise_for_status)
    async with httpx.AsyncClient(transport=transport) as client:
        result = await Agent(chat_model(local_server, client, max_retries=0)).run('Capital of France?')
    assert result.output == 'Paris.'
    assert sleeps == [2.0, 2.0]
    assert [r['path'] for r in local_server.received] == ['/v1/chat/completions'] * 3
    assert local_server.received[0]['body'] == local_server.received[2]['body']


@pytest.mark.anyio
async def test_when_the_transport_gives_up_the_model_raises_a_model_http_error(local_server: LocalServer) -> None:
    local_server.script(*[Reply(503, {'error': {'message': 'unavailable'}})] * 2)
    transport = AsyncTenacityTransport(status_config(AsyncSleeps(), attempts=2), validate_response=raise_for_status)
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(ModelHTTPError) as exc_info:
            await Agent(chat_model(local_server, client, max_retries=0)).run('Capital of France?')
    # The transport closed the answer unread: its body is gone.
    assert (exc_info.value.status_code, exc_info.value.body, exc_info.value.model_name) == (503, None, 'gpt-4o')
    assert isinstance(exc_info.value.__cause__, httpx.HTTPStatusError)
    assert len(local_server.received) == 2


@pytest.mark.anyio
async def test_the_models_own_retries_repeat_the_transports_attempts(local_server: LocalServer) -> None:
    local_server.script(*[Reply(503, {}, headers={'retry-after-ms': '1'})] * 3, Reply(200, completion('Paris.')))
    transport = AsyncTenacityTransport(status_config(AsyncSleeps(), attempts=2), validate_response=raise_for_status)
    async with httpx.AsyncClient(transport=transport) as client:
        result = await Agent(chat_model(local_server, client, max_retries=1)).run('Capital of France?')
    # Two transport attempts, the model's retry, then two more transport attempts of which the second succeeds.
    assert result.output == 'Paris.'
    assert len(local_server.received) == 4


async def read_then_raise_for_status(response: httpx.Response) -> None:
    await response.aread()
    response.raise_for_status()


@pytest.mark.anyio
async def test_a_status_error_raised_by_a_response_hook_keeps_the_body_it_read(local_server: LocalServer) -> None:
    local_server.script(Reply(400, {'error': {'message': 'bad request', 'type': 'invalid_request_error'}}))
    async with httpx.AsyncClient(event_hooks={'response': [read_then_raise_for_status]}) as client:
        with pytest.raises(ModelHTTPError) as exc_info:
            await Agent(chat_model(local_server, client, max_retries=2)).run('Capital of France?')
    assert exc_info.value.status_code == 400
    assert exc_info.value.body == {'message': 'bad request', 'type': 'invalid_request_error'}
    assert len(local_server.received) == 1


@pytest.mark.anyio
async def test_a_status_error_for_a_redirect_is_an_unexpected_status(local_server: LocalServer) -> None:
    local_server.script(Reply(302, {}, headers={'location': '/elsewhere', 'x-should-retry': 'true'}))
    async with httpx.AsyncClient(event_hooks={'response': [read_then_raise_for_status]}) as client:
        with pytest.raises(ModelAPIError) as exc_info:
            await Agent(chat_model(local_server, client, max_retries=2)).run('Capital of France?')
    assert not isinstance(exc_info.value, ModelHTTPError)
    assert exc_info.value.message == 'Unexpected HTTP status 302.'
    assert len(local_server.received) == 1


# Without tenacity


def run_without_tenacity(code: str) -> subprocess.CompletedProcess[str]:
    return run_without('tenacity', code)


def test_without_tenacity_the_import_names_the_extra() -> None:
    result = run_without_tenacity(
        'try:\n    import edgewise.agent.retries\n'
        'except ModuleNotFoundError as e:\n    print(e.name, isinstance(e, ImportError), str(e))'
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        'tenacity True edgewise.agent.retries needs tenacity: install the `retries` extra, '
        "`pip install 'edgewise-agent[retries]'`.\n"
    )


def test_the_agent_package_does_not_import_tenacity() -> None:
    result = run_without_tenacity(
        'import edgewise.agent, edgewise.agent.models.openai, edgewise.agent.providers.openai\n'
        'from edgewise.agent import Agent\n'
        "print(sys.modules['tenacity'], 'edgewise.agent.retries' in sys.modules)"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'None False\n'
