"""`AsyncPoolTransport` against a real HTTP server on 127.0.0.1: limits, reuse, waiting, errors, closing.

The server records the client port of every request, so the tests see which connection carried it.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import anyio
import httpx
import pytest

from edgewise.agent.providers import AsyncPoolTransport, _base
from edgewise.agent.providers.openai import OpenAIProvider

from .conftest import serve_http

pytestmark = pytest.mark.anyio


@dataclass
class Server:
    """Answers `GET /<anything>` with its path. `/hold...` waits for `release`; `/close` closes the connection after
    answering, once told to (`close_now`), without saying so; `.../bye` says so (`Connection: close`); `/big`
    sends a body of 1 MB; `/short` promises more body than it sends."""

    url: str = ''
    ports: list[int] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    held: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    close_now: threading.Event = field(default_factory=threading.Event)
    closed: threading.Event = field(default_factory=threading.Event)
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def connections(self) -> int:
        return len(set(self.ports))


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            with server.lock:
                server.ports.append(self.client_address[1])
                server.in_flight += 1
                server.most_in_flight = max(server.most_in_flight, server.in_flight)
            try:
                if self.path.startswith('/hold'):
                    server.held.release()
                    server.release.wait(30)
                body = b'x' * 1_000_000 if self.path == '/big' else self.path.encode()
                self.send_response(200)
                self.send_header('content-length', str(len(body) + (100 if self.path == '/short' else 0)))
                if self.path.endswith('/bye'):
                    self.send_header('connection', 'close')
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
            finally:
                with server.lock:
                    server.in_flight -= 1
            if self.path in ('/close', '/short'):
                if self.path == '/close':
                    server.close_now.wait(30)
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                server.closed.set()

    return Handler


@pytest.fixture
def server() -> Iterator[Server]:
    with _serve() as state:
        yield state


@contextmanager
def _serve() -> Iterator[Server]:
    state = Server()
    with serve_http(_handler(state), on_stop=state.release.set) as port:
        state.url = f'http://127.0.0.1:{port}'
        yield state


def _client(server: Server, **limits: Any) -> tuple[httpx.AsyncClient, AsyncPoolTransport]:
    transport = AsyncPoolTransport(limits=httpx.Limits(**limits))
    return httpx.AsyncClient(base_url=server.url, transport=transport, timeout=30), transport


async def test_requests_reuse_one_connection(server: Server) -> None:
    client, transport = _client(server, max_connections=5)
    async with client:
        for i in range(4):
            response = await client.get(f'/n{i}')
            assert (response.status_code, response.text) == (200, f'/n{i}')
        assert server.connections == 1
        assert 'connections=1, idle=1, waiting=0' in repr(transport)


async def test_concurrent_requests_stay_within_max_connections(server: Server) -> None:
    client, transport = _client(server, max_connections=3, max_keepalive_connections=2)
    texts: list[str] = []

    async def one(i: int) -> None:
        texts.append((await client.get(f'/r{i}')).text)

    async with client:
        async with anyio.create_task_group() as group:
            for i in range(40):
                group.start_soon(one, i)
        assert sorted(texts) == sorted(f'/r{i}' for i in range(40))
        assert server.most_in_flight <= 3
        assert 'idle=2, waiting=0' in repr(transport)  # one of the three closed: two are kept
    assert server.connections >= 3  # all three were used


@pytest.mark.parametrize(('first', 'connections'), [('/hold', 1), ('/hold/bye', 2)])
async def test_a_waiting_request_gets_the_freed_connection_or_its_place(
    server: Server, first: str, connections: int
) -> None:
    # `/hold`: the waiter goes over the connection the first request freed. `/hold/bye`: the server closes that
    # connection, and the waiter opens a new one in its place.
    client, transport = _client(server, max_connections=1)
    results: list[str] = []
    async with client:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: _get_into(client, first, results))
            await anyio.to_thread.run_sync(server.held.acquire)
            group.start_soon(lambda: _get_into(client, '/second', results))
            await anyio.wait_all_tasks_blocked()
            assert 'waiting=1' in repr(transport)
            server.release.set()
        assert results == [first, '/second']
        assert 'connections=1, idle=1, waiting=0' in repr(transport)
    assert server.connections == connections


async def _get_into(client: httpx.AsyncClient, path: str, results: list[str]) -> None:
    results.append((await client.get(path)).text)


async def test_the_pool_timeout_is_a_pool_timeout(server: Server) -> None:
    client, _ = _client(server, max_connections=1)
    async with client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.get, '/hold')
            await anyio.to_thread.run_sync(server.held.acquire)
            # The only connection is held by the server until the test releases it: this request cannot get one.
            with pytest.raises(httpx.PoolTimeout, match=r'pool timeout of 0\.05 s'):
                await client.get('/late', timeout=httpx.Timeout(30, pool=0.05))
            server.release.set()
        assert (await client.get('/after')).text == '/after'  # the pool is whole again


async def test_a_cancelled_waiter_leaves_the_queue(server: Server) -> None:
    client, transport = _client(server, max_connections=1)
    async with client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.get, '/hold')
            await anyio.to_thread.run_sync(server.held.acquire)
            with anyio.CancelScope() as scope:
                group.start_soon(_cancel_when_waiting, scope, transport)
                await client.get('/never')
            assert scope.cancelled_caught
            assert 'waiting=0' in repr(transport)
            server.release.set()
        assert (await client.get('/after')).text == '/after'
    assert server.connections == 1


async def _cancel_when_waiting(scope: anyio.CancelScope, transport: AsyncPoolTransport) -> None:
    await anyio.wait_all_tasks_blocked()
    assert 'waiting=1' in repr(transport)
    scope.cancel()


async def test_a_connection_the_server_closed_is_not_reused(server: Server) -> None:
    client, transport = _client(server, max_connections=1)
    async with client:
        assert (await client.get('/close')).text == '/close'
        assert 'idle=1' in repr(transport)
        server.close_now.set()
        await anyio.to_thread.run_sync(server.closed.wait, 30)
        # The kept connection reads as closed: it is dropped and the request goes over a new one.
        assert (await client.get('/next')).text == '/next'
        assert server.connections == 2
        assert 'connections=1' in repr(transport)


async def test_a_response_left_unread_closes_its_connection(server: Server) -> None:
    client, transport = _client(server, max_connections=1)
    async with client:
        async with client.stream('GET', '/big') as response:
            assert response.status_code == 200  # closed with its body unread: the connection cannot be reused
        assert 'connections=0, idle=0' in repr(transport)
        assert (await client.get('/next')).text == '/next'
        assert server.connections == 2


async def test_a_new_origin_takes_the_place_of_an_idle_connection(server: Server) -> None:
    other = server.url.replace('127.0.0.1', 'localhost')
    client, transport = _client(server, max_connections=1)
    async with client:
        assert (await client.get('/a')).text == '/a'
        assert (await client.get(f'{other}/b')).text == '/b'  # the idle connection to 127.0.0.1 is closed for it
        assert 'connections=1, idle=1' in repr(transport)
        assert server.connections == 2


async def test_a_refused_connection_is_a_connect_error_and_frees_its_place(server: Server) -> None:
    with socket.socket() as unused:
        unused.bind(('127.0.0.1', 0))
        port = unused.getsockname()[1]  # bound, not listening: connecting is refused
        client, transport = _client(server, max_connections=1)
        async with client:
            with pytest.raises(httpx.ConnectError):
                await client.get(f'http://127.0.0.1:{port}/x')
            assert 'connections=0' in repr(transport)
            assert (await client.get('/ok')).text == '/ok'


async def test_tls_to_a_plain_server_is_a_connect_error(server: Server) -> None:
    transport = AsyncPoolTransport(verify=False)
    async with httpx.AsyncClient(transport=transport, timeout=30) as client:
        for _ in range(2):  # the TLS context is made once
            with pytest.raises(httpx.ConnectError):
                await client.get(server.url.replace('http://', 'https://') + '/x')
        assert 'connections=0' in repr(transport)


async def test_closing_fails_waiters_and_refuses_later_requests(server: Server) -> None:
    client, transport = _client(server, max_connections=1)
    failures: list[BaseException] = []

    async def wait_then_fail() -> None:
        try:
            await client.get('/never')
        except RuntimeError as error:
            failures.append(error)

    async def held_then_cut() -> None:
        with pytest.raises(httpx.ReadError):  # its connection is closed under it
            await client.get('/hold')

    async with anyio.create_task_group() as group:
        group.start_soon(held_then_cut)
        await anyio.to_thread.run_sync(server.held.acquire)
        group.start_soon(wait_then_fail)
        await anyio.wait_all_tasks_blocked()
        await transport.aclose()
        server.release.set()
    assert [str(error) for error in failures] == ['The AsyncPoolTransport is closed: make a new one (or a new client).']
    with pytest.raises(RuntimeError, match='is closed'):
        await transport.handle_async_request(httpx.Request('GET', f'{server.url}/x'))


async def test_bad_urls_and_arguments() -> None:
    transport = AsyncPoolTransport()
    with pytest.raises(httpx.UnsupportedProtocol, match="unsupported protocol 'ftp'"):
        await transport.handle_async_request(httpx.Request('GET', 'ftp://example.test/x'))
    with pytest.raises(httpx.UnsupportedProtocol, match='missing a host'):
        await transport.handle_async_request(httpx.Request('GET', 'http:///x'))
    with pytest.raises(TypeError, match=r'`verify` must be a bool or an `ssl\.SSLContext`, not str'):
        AsyncPoolTransport(verify='/etc/ssl/cert.pem')  # type: ignore[arg-type]


async def test_providers_make_their_clients_over_the_pool(monkeypatch: pytest.MonkeyPatch, server: Server) -> None:
    for name in ('HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'):
        monkeypatch.delenv(name, raising=False)
    provider = OpenAIProvider(base_url=server.url, api_key='sk-test')
    async with provider:
        assert isinstance(provider.client._transport, AsyncPoolTransport)
        assert (await provider.client.get(f'{server.url}/own')).text == '/own'
    # With a proxy in the environment the client is httpx's own, which goes through it.
    monkeypatch.setenv('HTTPS_PROXY', 'http://127.0.0.1:9')
    client = _base.own_http_client()
    assert not isinstance(client._transport, AsyncPoolTransport)
    await client.aclose()


@pytest.mark.parametrize('path', ['/hold', '/hold/bye'])
async def test_a_waiter_cancelled_as_it_is_served_passes_its_turn_on(server: Server, path: str) -> None:
    # The waiter is handed the freed connection (or, when the server closed it, the right to open one) and is
    # cancelled before it runs again: what it was handed goes back to the pool.
    client, transport = _client(server, max_connections=1)
    async with client:
        async with anyio.create_task_group() as group:
            responses: list[httpx.Response] = []
            answered = anyio.Event()

            async def hold() -> None:
                responses.append(await client.send(client.build_request('GET', path), stream=True))
                answered.set()

            group.start_soon(hold)
            await anyio.to_thread.run_sync(server.held.acquire)
            scope = anyio.CancelScope()

            async def waiter() -> None:
                with scope:
                    await client.get('/never')

            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            assert 'waiting=1' in repr(transport)
            server.release.set()
            await answered.wait()
            await responses[0].aclose()  # closed unread: hands its connection (or its place) to the waiter ...
            scope.cancel()  # ... which is cancelled before it could take it
        assert 'waiting=0' in repr(transport)
        assert (await client.get('/after')).text == '/after'
        assert 'connections=1, idle=1' in repr(transport)


async def test_the_oldest_idle_connection_makes_room_for_another_server(server: Server) -> None:
    with _serve() as second, _serve() as third:
        client, transport = _client(server, max_connections=2)
        async with client:
            assert (await client.get(f'{second.url}/b')).text == '/b'
            async with client.stream('GET', '/held-open'):  # in use (its body unread): its server has no idle one
                assert (await client.get(f'{third.url}/c')).text == '/c'  # the idle connection to `second` goes
                assert 'connections=2, idle=1' in repr(transport)
            assert (await client.get(f'{second.url}/b')).text == '/b'
        assert second.connections == 2


async def test_an_error_of_the_request_body_is_raised_as_it_is(server: Server) -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b'first part'
        raise ValueError('the upload failed')

    client, transport = _client(server, max_connections=1)
    async with client:
        with pytest.raises(ValueError, match='the upload failed'):
            await client.post('/upload', content=body())
        assert 'connections=0' in repr(transport)
        assert (await client.get('/ok')).text == '/ok'


async def test_a_body_cut_short_is_a_remote_protocol_error(server: Server) -> None:
    client, transport = _client(server, max_connections=1)
    async with client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get('/short')
        assert 'connections=0' in repr(transport)


@pytest.mark.parametrize('path', ['/first', '/first/bye'])
async def test_a_task_cancelled_as_it_is_served_passes_its_turn_on(
    server: Server, anyio_backend: str, path: str
) -> None:
    # asyncio's own cancellation (`task.cancel()`, `asyncio.timeout`) lands even on a task whose wait is over. The
    # waiter is handed the connection, or (`/bye`: the server closed it) the right to open one.
    if anyio_backend != 'asyncio':
        pytest.skip('a cancellation that lands after the wait is over is asyncio-only')
    import asyncio  # noqa: TID251 (what is tested is asyncio's own cancellation, which anyio does not make)

    client, transport = _client(server, max_connections=1)
    async with client:
        response = await client.send(client.build_request('GET', path), stream=True)
        waiter = asyncio.get_running_loop().create_task(client.get('/never'))
        await anyio.wait_all_tasks_blocked()
        assert 'waiting=1' in repr(transport)
        await response.aread()  # the body read, the connection (or its place) is handed to the waiter ...
        waiter.cancel()  # ... which is cancelled before it runs again
        with pytest.raises(asyncio.CancelledError):
            await waiter
        kept = 0 if path.endswith('/bye') else 1
        assert f'connections={kept}, idle={kept}, waiting=0' in repr(transport)
        assert (await client.get('/after')).text == '/after'
        assert 'connections=1, idle=1, waiting=0' in repr(transport)
    assert server.connections == 2 - kept


async def test_waiting_requests_are_served_in_order_whatever_their_server(server: Server) -> None:
    with _serve() as other:
        client, transport = _client(server, max_connections=1)
        order: list[str] = []
        async with client:
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: _get_into(client, '/hold', order))
                await anyio.to_thread.run_sync(server.held.acquire)
                group.start_soon(lambda: _get_into(client, f'{other.url}/elsewhere', order))
                await anyio.wait_all_tasks_blocked()
                group.start_soon(lambda: _get_into(client, '/same', order))
                await anyio.wait_all_tasks_blocked()
                assert 'waiting=2' in repr(transport)
                server.release.set()
            # The freed connection made way for the first waiter, to the other server, and that one's for the next.
            assert order == ['/hold', '/elsewhere', '/same']
            assert 'connections=1, idle=1, waiting=0' in repr(transport)
        assert (server.connections, other.connections) == (2, 1)


async def test_closing_a_response_twice_gives_its_connection_back_once(server: Server) -> None:
    client, transport = _client(server, max_connections=1)
    async with client:
        response = await transport.handle_async_request(httpx.Request('GET', f'{server.url}/x'))
        await response.aread()
        await response.stream.aclose()  # type: ignore[union-attr]
        assert 'connections=1, idle=1' in repr(transport)
