"""A model request that cannot reach its server says which server (host and port) and why, without secrets.

Against real sockets on this machine: a closed port on 127.0.0.1 (refused), a name that does not resolve
(`.invalid` never does, and fails without a network), and a listener that never accepts (timed out).
"""

from __future__ import annotations

import contextlib
import errno
import socket
from collections.abc import Iterator

import httpx
import pytest

from edgewise.agent.exceptions import ModelAPIError
from edgewise.agent.models._connection_error import connection_error_message
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import PARAMS, drain, user

pytestmark = pytest.mark.anyio


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound once, then closed)."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 whose listener never accepts, its backlog already full: connecting times out."""
    with socket.socket() as listener:
        listener.bind(('127.0.0.1', 0))
        listener.listen(0)
        port = int(listener.getsockname()[1])
        fillers = []
        for _ in range(8):  # fill the accept queue (its size is the kernel's, at least 1)
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):  # still connecting: it waits in the queue
                filler.connect(('127.0.0.1', port))
            fillers.append(filler)
        try:
            yield port
        finally:
            for filler in fillers:
                filler.close()


def _model(base_url: str) -> OpenAIChatModel:
    return OpenAIChatModel(
        'gpt-4o', provider=OpenAIProvider(base_url=base_url, api_key='sk-very-secret', max_retries=0)
    )


@pytest.mark.parametrize('streamed', [False, True], ids=['plain', 'streamed'])
async def test_a_refused_connection_names_the_host_and_port(closed_port: int, streamed: bool) -> None:
    async with _model(f'http://user:pw@127.0.0.1:{closed_port}/v1?key=sk-query') as model:
        request = drain(model, user('hi'), None, PARAMS) if streamed else model.request(user('hi'), None, PARAMS)
        with pytest.raises(ModelAPIError) as exc_info:
            await request
    message = str(exc_info.value)
    assert message == f'Connection error: cannot connect to 127.0.0.1:{closed_port} (connection refused).'
    assert 'pw' not in message
    assert 'sk-' not in message


async def test_a_name_that_does_not_resolve_is_named_with_the_cause() -> None:
    async with _model('https://api.nonexistent.invalid/v1') as model:
        with pytest.raises(ModelAPIError) as exc_info:
            await model.request(user('hi'), None, PARAMS)
    assert str(exc_info.value) == ('Connection error: cannot connect to api.nonexistent.invalid:443 (name not found).')


async def test_a_connection_that_times_out_names_the_host_and_port(silent_port: int) -> None:
    async with _model(f'http://127.0.0.1:{silent_port}/v1') as model:
        with pytest.raises(ModelAPIError) as exc_info:
            await model.request(user('hi'), {'timeout': 0.2}, PARAMS)
    assert str(exc_info.value) == f'Connection error: cannot connect to 127.0.0.1:{silent_port} (timed out).'


def _raised(error: BaseException, cause: BaseException | None) -> BaseException:
    try:
        try:
            if cause is not None:
                raise cause
        finally:
            raise error
    except BaseException as e:
        return e


@pytest.mark.parametrize(
    ('url', 'cause', 'message'),
    [
        (
            'http://[::1]:8000/v1',
            ConnectionResetError(),
            'cannot connect to [::1]:8000 (connection reset by the server)',
        ),
        ('http://h/v1', OSError(errno.ENETUNREACH, 'unreachable'), 'cannot connect to h:80 (network unreachable)'),
        ('https://h/v1', ValueError('other'), 'the request to h:443 failed (ConnectError)'),
    ],
)
def test_the_message_says_what_is_known_of_the_server_and_the_cause(
    url: str, cause: BaseException, message: str
) -> None:
    error = _raised(httpx.ConnectError('failed', request=httpx.Request('POST', url)), cause)
    assert connection_error_message(error) == f'Connection error: {message}.'


def test_an_error_without_its_request_says_the_cause_alone() -> None:
    assert connection_error_message(httpx.ConnectError('failed')) == 'Connection error: ConnectError.'
    refused = _raised(httpx.ConnectError('failed'), ConnectionRefusedError())
    assert connection_error_message(refused) == 'Connection error: connection refused.'
    assert connection_error_message(refused, while_streaming=True) == (
        'Connection error while streaming: the connection was lost (connection refused).'
    )
