"""`AsyncPoolTransport` where requests, cancellations, errors and closing meet: the pool's counts stay right.

Same real threaded server as `test_pool_transport.py` (its helpers are imported). No assertion is on time: where a
leaked place would make a request wait forever, a pool timeout bounds the wait and the failure reads as a
`PoolTimeout`.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpcore
import httpx
import pytest

from edgewise.agent.providers import AsyncPoolTransport

from .test_pool_transport import Server, _client, _get_into, _serve

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Iterator[Server]:
    with _serve() as state:
        yield state


# A pool timeout for requests that must not wait at all: when a place has leaked they would wait forever.
NO_WAIT = httpx.Timeout(30, pool=2)


def _opened_is_accounted(transport: AsyncPoolTransport) -> bool:
    """With no request in flight or waiting, `_opened` counts exactly the connections the pool holds."""
    return transport._opened == len(transport._connections) == transport._idle_count  # pyright: ignore[reportPrivateUsage]


# --- asyncio's own cancellation while an idle connection is evicted for a request. ---


async def test_a_task_cancelled_while_an_idle_connection_is_evicted_for_it_frees_its_place(
    server: Server, anyio_backend: str
) -> None:
    # `_acquire` evicts the idle connection to 127.0.0.1 to open one to `localhost` in its place, and awaits the old
    # connection's close (shielded, but an anyio shield does not stop asyncio's own `task.cancel()`). Cancelled
    # there, the request gives the place back.
    if anyio_backend != 'asyncio':
        pytest.skip("asyncio's own cancellation")
    import asyncio  # noqa: TID251 (what is tested is asyncio's own cancellation)

    other = server.url.replace('127.0.0.1', 'localhost')
    client, transport = _client(server, max_connections=1)
    async with client:
        assert (await client.get('/a')).text == '/a'
        assert 'connections=1, idle=1' in repr(transport)
        task = asyncio.get_running_loop().create_task(client.get(f'{other}/b'))
        for _ in range(1000):
            await asyncio.sleep(0)
            # The new connection counted in the evicted one's place, the evicted one being closed.
            if 'connections=1, idle=0' in repr(transport):
                break
        else:
            pytest.fail('the request never evicted the idle connection')
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await client.get('/after', timeout=NO_WAIT)).text == '/after'  # a PoolTimeout if a place leaked
        assert _opened_is_accounted(transport)


# --- An error making the TLS context. ---


async def test_a_failure_to_make_the_tls_context_frees_the_place_it_was_given(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The TLS context is made before the request takes any place (here the idle connection's, by eviction): when
    # making it fails, the pool is as it was.
    monkeypatch.setenv('SSL_CERT_FILE', '/nonexistent/ca.pem')
    monkeypatch.delenv('SSL_CERT_DIR', raising=False)
    client, transport = _client(server, max_connections=1)
    async with client:
        assert (await client.get('/a')).text == '/a'  # the pool is full: one idle connection
        with pytest.raises(FileNotFoundError):  # from `ssl.create_default_context(cafile=...)`
            await client.get(server.url.replace('http://', 'https://') + '/x')
        assert 'connections=1, idle=1' in repr(transport)  # made before any place is taken: nothing changed
        assert (await client.get('/after', timeout=NO_WAIT)).text == '/after'  # a PoolTimeout if a place leaked
        assert _opened_is_accounted(transport)


# --- A waiter for another server is served in its turn. ---


async def test_a_waiter_for_another_server_is_not_overtaken_without_end(server: Server) -> None:
    # "first come first served": `_release` hands a freed connection to the first waiter *for its server*, skipping
    # older waiters for other servers. While later requests for the busy server keep coming, the older waiter for
    # another server is never served (until its pool timeout). `test_a_freed_connection_goes_to_the_first_request_
    # for_its_server` pins one such overtaking; here it has no bound. (httpx's pool serves the queue in order.)
    with _serve() as other:
        client, transport = _client(server, max_connections=1)
        order: list[str] = []
        async with client:
            held = await client.send(client.build_request('GET', '/a0'), stream=True)
            async with anyio.create_task_group() as group:
                group.start_soon(_get_into, client, f'{other.url}/elsewhere', order)
                await anyio.wait_all_tasks_blocked()
                assert 'waiting=1' in repr(transport)
                for i in range(1, 6):
                    responses: list[httpx.Response] = []
                    sent = anyio.Event()

                    async def later(path: str, responses: list[httpx.Response], sent: anyio.Event) -> None:
                        responses.append(await client.send(client.build_request('GET', path), stream=True))
                        sent.set()

                    group.start_soon(later, f'/a{i}', responses, sent)
                    await anyio.wait_all_tasks_blocked()  # queued behind '/elsewhere'
                    await held.aread()  # read and closed: its connection is freed
                    order.append(held.text)
                    await sent.wait()
                    held = responses[0]
                await held.aread()
                order.append(held.text)
        # The request for the other server came second: it is not served after five later ones.
        assert order.index('/elsewhere') <= 2, order


# --- Idle connections under the top of their stack are checked too. ---


async def test_a_kept_connection_the_server_closed_is_dropped_even_when_another_is_used(server: Server) -> None:
    # The idle stack is LIFO and only the connection popped is checked (`has_expired`): one the server closed (or
    # past `keepalive_expiry`) under the top stays open (CLOSE_WAIT) and counted as long as the top one serves.
    # httpx's pool drops every closed or expired idle connection on each request.
    client, transport = _client(server, max_connections=5)
    async with client:
        first = await client.send(client.build_request('GET', '/close'), stream=True)
        second = await client.send(client.build_request('GET', '/other'), stream=True)
        await first.aread()  # kept first: the bottom of the stack
        await second.aread()  # on top
        assert 'connections=2, idle=2' in repr(transport)
        server.close_now.set()
        await anyio.to_thread.run_sync(server.closed.wait, 30)  # the server has closed the bottom one
        for i in range(3):
            assert (await client.get(f'/n{i}')).text == f'/n{i}'
        assert server.connections == 2
        assert 'connections=1, idle=1' in repr(transport)  # still 2: the closed connection is kept


# --- Closing the transport while a request drops a dead idle connection. ---


async def test_closing_the_transport_while_a_request_drops_a_dead_connection(server: Server) -> None:
    # `_acquire` walks its idle stack, awaiting the close of each dead connection. `aclose()` in that await clears
    # `_connections` and `_idle` (the dict, not the stack list being walked): the request then pops the next
    # connection of the stale list (closed by `aclose()`) and `_discard` fails on `del self._connections[...]`.
    # The close is made slow here (a gate) to make the interleaving certain; any close awaits (asyncio's socket
    # close yields once, TLS sends close_notify).
    client, transport = _client(server, max_connections=5)
    first = await client.send(client.build_request('GET', '/other'), stream=True)
    second = await client.send(client.build_request('GET', '/close'), stream=True)
    await first.aread()
    await second.aread()  # on top of the stack: the one the next request pops first
    server.close_now.set()
    await anyio.to_thread.run_sync(server.closed.wait, 30)
    (dead,) = [c for c, _ in transport._connections.items() if c.has_expired()]  # pyright: ignore[reportPrivateUsage]
    gate = anyio.Event()
    closing = anyio.Event()
    close = dead.aclose

    async def slow_close() -> None:
        closing.set()
        await gate.wait()
        await close()

    dead.aclose = slow_close  # type: ignore[method-assign]
    errors: list[BaseException] = []

    async with anyio.create_task_group() as group:
        group.start_soon(_get_noting_errors, client, errors)
        await closing.wait()  # the request is discarding the dead connection
        await transport.aclose()
        gate.set()
    await client.aclose()
    assert len(errors) == 1
    assert isinstance(errors[0], RuntimeError), repr(errors[0])  # KeyError from `_discard`
    assert 'is closed' in str(errors[0])


# --- A read response closed under cancellation keeps its connection, as with httpx's transport. ---


@pytest.mark.parametrize('transport_class', [httpx.AsyncHTTPTransport, AsyncPoolTransport])
async def test_a_read_response_closed_in_a_cancelled_scope_keeps_its_connection(
    server: Server, transport_class: type[httpx.AsyncBaseTransport]
) -> None:
    # `_ResponseStream.aclose` awaits httpcore's stream close (which takes the connection's state lock) unshielded:
    # in a cancelled scope it raises before marking the connection idle, and the connection is closed. httpcore's
    # own pool (`PoolByteStream.aclose`) shields that close, so httpx's transport keeps the connection.
    transport = transport_class()
    async with transport:
        response = await transport.handle_async_request(httpx.Request('GET', f'{server.url}/x'))
        assert b''.join([part async for part in response.stream]) == b'/x'  # type: ignore[union-attr]
        with anyio.CancelScope() as scope:
            scope.cancel()
            await response.aclose()
        second = await transport.handle_async_request(httpx.Request('GET', f'{server.url}/y'))
        await second.aread()
        await second.aclose()
    assert server.connections == 1  # the second request went over the first connection


# --- Closing the transport as a request starts on a kept connection. ---


async def test_closing_the_transport_as_a_request_starts_raises_no_httpcore_error(server: Server) -> None:
    # Between `_acquire` handing out a kept connection and httpcore marking it active there is an await (the
    # connection's request lock). `aclose()` there closes the connection; httpcore then raises
    # `httpcore.ConnectionNotAvailable`, which `_ERRORS` does not map: it reaches the caller as an httpcore error
    # (httpx's pool catches it and retries on another connection). The lock is gated to make the interleaving certain.
    client, transport = _client(server, max_connections=1)
    assert (await client.get('/a')).text == '/a'
    (kept,) = transport._connections  # pyright: ignore[reportPrivateUsage]
    entered = anyio.Event()
    gate = anyio.Event()

    class GatedLock:
        def __init__(self, lock: Any) -> None:
            self.lock = lock

        async def __aenter__(self) -> None:
            entered.set()
            await gate.wait()
            await self.lock.__aenter__()

        async def __aexit__(self, *exc_info: Any) -> None:
            await self.lock.__aexit__(*exc_info)

    kept._request_lock = GatedLock(kept._request_lock)  # type: ignore[assignment]
    errors: list[BaseException] = []

    async with anyio.create_task_group() as group:
        group.start_soon(_get_noting_errors, client, errors)
        await entered.wait()
        await transport.aclose()
        gate.set()
    await client.aclose()
    assert len(errors) == 1
    assert not type(errors[0]).__module__.startswith('httpcore'), repr(errors[0])


# --- More behaviours httpx's transport has. ---


async def test_a_request_cancelled_while_connecting_frees_its_place(anyio_backend: str) -> None:
    # A listening socket whose backlog is full (and never accepted from) does not complete new handshakes: the
    # connect hangs until cancelled.
    with socket.socket() as listener, socket.socket() as filler1, socket.socket() as filler2:
        listener.bind(('127.0.0.1', 0))
        listener.listen(0)
        for filler in (filler1, filler2):
            filler.setblocking(False)
            filler.connect_ex(listener.getsockname())
        url = f'http://127.0.0.1:{listener.getsockname()[1]}'
        transport = AsyncPoolTransport(limits=httpx.Limits(max_connections=1))
        async with httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(30, pool=2)) as client:
            with anyio.move_on_after(0.3):  # (not an assertion: the connect is made to hang)
                await client.get(f'{url}/x')
            assert transport._opened == 0  # pyright: ignore[reportPrivateUsage]
            assert 'connections=0, idle=0, waiting=0' in repr(transport)


async def test_a_pool_timeout_while_being_handed_the_connection_passes_it_on(server: Server) -> None:
    client, transport = _client(server, max_connections=1)
    async with client:
        held = await client.send(client.build_request('GET', '/a'), stream=True)
        results: list[str] = []
        async with anyio.create_task_group() as group:
            group.start_soon(_get_into, client, '/b', results)
            await anyio.wait_all_tasks_blocked()
            group.start_soon(_get_into, client, '/c', results)
            await anyio.wait_all_tasks_blocked()
            assert 'waiting=2' in repr(transport)
            await held.aread()  # handed to '/b' ... which runs, and '/c' gets it after
        assert results == ['/b', '/c']
        assert _opened_is_accounted(transport)


async def test_a_read_timeout_is_httpx_and_frees_the_place(server: Server) -> None:
    client, transport = _client(server, max_connections=1)
    async with client:
        with pytest.raises(httpx.ReadTimeout):
            await client.get('/hold', timeout=httpx.Timeout(30, read=0.2))
        server.release.set()
        assert 'connections=0' in repr(transport)
        assert (await client.get('/after', timeout=NO_WAIT)).text == '/after'


async def test_the_response_carries_httpcore_extensions(server: Server) -> None:
    client, _ = _client(server)
    async with client:
        response = await client.get('/x')
        assert response.http_version == 'HTTP/1.1'
        assert response.extensions['reason_phrase'] == b'OK'
        assert 'network_stream' in response.extensions
        assert response.request.headers['host'] == server.url.removeprefix('http://')


async def test_a_request_saying_connection_close_does_not_keep_its_connection(server: Server) -> None:
    client, transport = _client(server)
    async with client:
        assert (await client.get('/x', headers={'connection': 'close'})).text == '/x'
        assert 'connections=0, idle=0' in repr(transport)
        assert (await client.get('/y')).text == '/y'
        assert server.connections == 2


@contextmanager
def _http10() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.0'

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(self.path.encode())  # no content-length: the body ends with the connection

    httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f'http://127.0.0.1:{httpd.server_address[1]}'
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


async def test_an_http_1_0_server(anyio_backend: str) -> None:
    with _http10() as url:
        transport = AsyncPoolTransport(limits=httpx.Limits(max_connections=1))
        async with httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(30, pool=2)) as client:
            for i in range(3):
                response = await client.get(f'{url}/p{i}')
                assert (response.http_version, response.text) == ('HTTP/1.0', f'/p{i}')
            assert 'connections=0, idle=0' in repr(transport)


async def test_a_connection_past_keepalive_expiry_is_not_kept(server: Server) -> None:
    # keepalive_expiry=0: expired as soon as the monotonic clock moves, which it has by the time it is released.
    transport = AsyncPoolTransport(limits=httpx.Limits(max_connections=1, keepalive_expiry=0))
    async with httpx.AsyncClient(base_url=server.url, transport=transport, timeout=30) as client:
        assert (await client.get('/a')).text == '/a'
        assert 'connections=0, idle=0' in repr(transport)
        assert (await client.get('/b', timeout=NO_WAIT)).text == '/b'
        assert server.connections == 2


async def test_no_httpcore_error_leaks_from_the_body(server: Server) -> None:
    client, _ = _client(server)
    async with client:
        async with client.stream('GET', '/short') as response:
            with pytest.raises(httpx.RemoteProtocolError) as caught:
                await response.aread()
        assert isinstance(caught.value.__cause__, httpcore.RemoteProtocolError)


async def _get_noting_errors(client: httpx.AsyncClient, errors: list[BaseException]) -> None:
    try:
        await client.get('/x')
    except Exception as error:
        errors.append(error)
