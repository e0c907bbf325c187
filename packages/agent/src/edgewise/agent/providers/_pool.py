"""`AsyncPoolTransport`: an httpx transport whose connection pool costs the same at 1,000 requests in flight as at 1.

httpx's own transport keeps its connections and its waiting requests in two lists and, whenever a request comes
in or a response is closed, walks both: every connection is asked whether it has expired (a system call for each
idle one) and every waiting request is matched against every connection. With many requests in flight that walk
is most of a client's time. Here each server has a stack of idle connections and the waiting requests one queue:
a request looks at the newest idle connection of its server and the oldest (which expires first), a closed
response at the first waiter.

The connections themselves are httpcore's (`httpcore.AsyncHTTPConnection`: TCP, TLS, HTTP/1.1, on asyncio and on
trio), the same httpx's transport uses; only the pool around them is different. Errors are httpx's, as from
`httpx.AsyncHTTPTransport`.
"""

from __future__ import annotations as _annotations

import ssl
from collections import deque
from collections.abc import AsyncIterator, Iterable
from typing import Any, NoReturn

import anyio
import httpcore
import httpx

__all__ = ('AsyncPoolTransport', 'DEFAULT_POOL_LIMITS')

DEFAULT_POOL_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100, keepalive_expiry=5.0)
"""The limits of the clients providers make for themselves: those of the official OpenAI and Anthropic SDKs."""

_ERRORS: dict[type[Exception], type[httpx.TransportError]] = {
    getattr(httpcore, name): getattr(httpx, name)
    for name in (
        'TimeoutException',
        'ConnectTimeout',
        'ReadTimeout',
        'WriteTimeout',
        'PoolTimeout',
        'NetworkError',
        'ConnectError',
        'ReadError',
        'WriteError',
        'ProxyError',
        'UnsupportedProtocol',
        'ProtocolError',
        'LocalProtocolError',
        'RemoteProtocolError',
    )
}


_Key = tuple[bytes, bytes, int]
"""An origin as a dict key (httpcore's `Origin` is not hashable): scheme, host, port."""


def _reraise(error: Exception) -> NoReturn:
    """Raise the httpx error of an httpcore error (the nearest class up its hierarchy); any other error as it is."""
    for cls in type(error).__mro__:
        mapped = _ERRORS.get(cls)
        if mapped is not None:
            raise mapped(str(error)) from error
    raise error


class _Waiter:
    """A request waiting for a connection: it is woken with an idle connection of its origin, or with the right to
    open one (`slot`)."""

    __slots__ = ('connection', 'event', 'key', 'slot')

    def __init__(self, key: _Key) -> None:
        self.key = key
        self.event = anyio.Event()
        self.connection: httpcore.AsyncHTTPConnection | None = None
        self.slot = False


class AsyncPoolTransport(httpx.AsyncBaseTransport):
    """An HTTP/1.1 transport for `httpx.AsyncClient(transport=...)` whose pool does constant work per request.

    The clients providers make for themselves use it (with `DEFAULT_POOL_LIMITS`); give it to a client of your
    own to get the same pool:

    ```python
    client = httpx.AsyncClient(transport=AsyncPoolTransport(limits=httpx.Limits(max_connections=200)))
    ```

    Requests beyond `limits.max_connections` wait, first come first served, for `timeout.pool` seconds at most
    (then `httpx.PoolTimeout`). Idle connections are kept up to `limits.max_keepalive_connections`, for
    `limits.keepalive_expiry` seconds. Proxies and HTTP/2 are not supported: use `httpx.AsyncHTTPTransport` for
    those.

    Args:
        verify: Verify servers' TLS certificates (`True`), not (`False`), or an `ssl.SSLContext` to use.
        trust_env: Read `SSL_CERT_FILE` and `SSL_CERT_DIR` from the environment for the default TLS context.
        limits: How many connections to open and keep.
        local_address: The local address to connect from (`'0.0.0.0'` for IPv4 only).
        uds: A Unix domain socket to connect through instead of TCP.
        retries: How many times to retry a failed connection attempt.
        socket_options: Socket options set on each new connection.
    """

    def __init__(
        self,
        *,
        verify: ssl.SSLContext | bool = True,
        trust_env: bool = True,
        limits: httpx.Limits = DEFAULT_POOL_LIMITS,
        local_address: str | None = None,
        uds: str | None = None,
        retries: int = 0,
        socket_options: Iterable[Any] | None = None,
    ) -> None:
        if not isinstance(verify, (bool, ssl.SSLContext)):
            raise TypeError(f'`verify` must be a bool or an `ssl.SSLContext`, not {type(verify).__name__}')
        self._verify = verify
        self._trust_env = trust_env
        self._ssl_context: ssl.SSLContext | None = None  # made on the first https connection
        self._max_connections = limits.max_connections if limits.max_connections is not None else 1 << 62
        keep = limits.max_keepalive_connections
        self._max_idle = self._max_connections if keep is None else min(keep, self._max_connections)
        self._keepalive_expiry = limits.keepalive_expiry
        self._connection_options: dict[str, Any] = {
            'local_address': local_address,
            'uds': uds,
            'retries': retries,
            'socket_options': socket_options,
        }
        self._idle: dict[_Key, deque[httpcore.AsyncHTTPConnection]] = {}  # per server, the newest last
        self._idle_count = 0
        self._opened = 0  # connections open, or being opened, or promised to a waiter
        self._waiters: deque[_Waiter] = deque()
        # Every connection open or being opened, with its origin's key.
        self._connections: dict[httpcore.AsyncHTTPConnection, _Key] = {}
        self._closed = False

    def __repr__(self) -> str:
        return (
            f'{type(self).__name__}(connections={len(self._connections)}, idle={self._idle_count}, '
            f'waiting={len(self._waiters)}, max_connections={self._max_connections})'
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        scheme = url.raw_scheme
        if scheme not in (b'http', b'https'):
            raise httpx.UnsupportedProtocol(
                f'Request URL has an unsupported protocol {scheme.decode("ascii", "replace")!r}: '
                'AsyncPoolTransport speaks http:// and https://.'
            )
        if not url.raw_host:
            raise httpx.UnsupportedProtocol(f'Request URL {str(url)!r} is missing a host.')
        port = url.port if url.port is not None else (443 if scheme == b'https' else 80)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=scheme, host=url.raw_host, port=port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        origin = core_request.url.origin
        key = (scheme, url.raw_host, port)
        pool_timeout = request.extensions.get('timeout', {}).get('pool')
        while True:
            connection = await self._acquire(origin, key, pool_timeout)
            try:
                response = await connection.handle_async_request(core_request)
            except httpcore.ConnectionNotAvailable:
                # Closed under the request before it started: by `aclose()` (then `_acquire` says so).
                await self._release(connection)
                continue
            except Exception as error:
                await self._release(connection)
                _reraise(error)
            except BaseException:  # cancelled
                await self._release(connection)
                raise
            break
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(self, connection, response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        """Close every connection, in use or idle; waiting requests fail and later ones are refused."""
        self._closed = True
        connections = list(self._connections)
        self._connections.clear()
        for stack in self._idle.values():
            stack.clear()  # a request dropping a dead idle connection may hold one of these
        self._idle_count = 0
        while self._waiters:
            self._waiters.popleft().event.set()
        with anyio.CancelScope(shield=True):
            for connection in connections:
                await connection.aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError('The AsyncPoolTransport is closed: make a new one (or a new client).')

    async def _acquire(
        self, origin: httpcore.Origin, key: _Key, pool_timeout: float | None
    ) -> httpcore.AsyncHTTPConnection:
        """A connection to `origin`: an idle one that is still good, else a new one, else the next one freed.

        Every change to the counts is made before an `await`, so that a cancellation there (asyncio's own
        cancellation goes through anyio's shields) leaves them right.
        """
        self._check_open()
        if origin.scheme == b'https' and self._ssl_context is None:  # before any place is taken: it can fail
            self._ssl_context = httpx.create_ssl_context(verify=self._verify, trust_env=self._trust_env)
        stack = self._idle.get(key)
        while stack:
            # The oldest idle connection expires first: dropping it when it has keeps the stack clean of
            # connections the server closed, at one check per request.
            oldest = stack[0]
            if len(stack) > 1 and (oldest.has_expired() or not oldest.is_available()):
                stack.popleft()
                self._idle_count -= 1
                await self._discard(oldest)
                self._check_open()
                continue
            connection = stack.pop()
            self._idle_count -= 1
            if connection.is_available() and not connection.has_expired():
                return connection
            await self._discard(connection)
            self._check_open()
        if not self._waiters:  # first come first served: nobody jumps the queue
            if self._opened < self._max_connections:
                return self._new_connection(origin, key)
            if self._idle_count:
                evicted = self._evict_idle()
                connection = self._new_connection(origin, key, counted=True)  # in the evicted one's place
                try:
                    with anyio.CancelScope(shield=True):
                        await evicted.aclose()
                except BaseException:
                    await self._discard(connection)
                    raise
                return connection
        handed = await self._wait(origin, key, pool_timeout)
        if handed is not None:
            return handed
        return self._new_connection(origin, key, counted=True)  # handed the right to open one

    def _new_connection(
        self, origin: httpcore.Origin, key: _Key, *, counted: bool = False
    ) -> httpcore.AsyncHTTPConnection:
        """A new connection (opened by its first request); `counted`: its place in `_opened` is already taken."""
        connection = httpcore.AsyncHTTPConnection(
            origin,
            ssl_context=self._ssl_context if origin.scheme == b'https' else None,
            keepalive_expiry=self._keepalive_expiry,
            **self._connection_options,
        )
        if not counted:
            self._opened += 1
        self._connections[connection] = key
        return connection

    async def _wait(
        self, origin: httpcore.Origin, key: _Key, pool_timeout: float | None
    ) -> httpcore.AsyncHTTPConnection | None:
        """Wait in the queue; returns the connection handed over, or None when handed the right to open one."""
        waiter = _Waiter(key)
        self._waiters.append(waiter)
        try:
            with anyio.fail_after(pool_timeout):
                await waiter.event.wait()
        except BaseException as error:
            if waiter.event.is_set():  # handed something just as it gave up: pass it on
                await self._pass_on(waiter)
            else:
                self._waiters.remove(waiter)
            if isinstance(error, TimeoutError):
                raise httpx.PoolTimeout(
                    f'No connection to {origin} was free within the pool timeout of {pool_timeout} s: '
                    'raise `httpx.Limits(max_connections=...)` or the `pool` timeout.'
                ) from None
            raise
        self._check_open()
        return waiter.connection  # None: handed the right to open one

    async def _pass_on(self, waiter: _Waiter) -> None:
        if waiter.connection is not None:
            await self._release(waiter.connection)
        elif waiter.slot:
            self._opened -= 1
            self._hand_slot()

    async def _release(self, connection: httpcore.AsyncHTTPConnection) -> None:
        """Take back a connection whose response is closed (or whose request failed).

        The first waiter gets it if it waits for the same server; if it waits for another, the connection is
        closed to make room for it: the queue is served in order.
        """
        if self._closed:
            with anyio.CancelScope(shield=True):
                await connection.aclose()
            return
        key = self._connections[connection]
        if connection.is_idle() and not connection.has_expired():
            if not self._waiters:
                if self._idle_count < self._max_idle:
                    stack = self._idle.get(key)
                    if stack is None:
                        stack = self._idle[key] = deque()
                    stack.append(connection)
                    self._idle_count += 1
                    return
            elif self._waiters[0].key == key:
                waiter = self._waiters.popleft()
                waiter.connection = connection
                waiter.event.set()
                return
        await self._discard(connection)

    async def _discard(self, connection: httpcore.AsyncHTTPConnection) -> None:
        """Close a connection for good and give its place to the first waiter."""
        if self._connections.pop(connection, None) is not None:  # not when the transport was closed meanwhile
            self._opened -= 1
            self._hand_slot()
        if not connection.is_closed():
            with anyio.CancelScope(shield=True):
                await connection.aclose()

    def _hand_slot(self) -> None:
        if self._waiters and self._opened < self._max_connections:
            waiter = self._waiters.popleft()
            waiter.slot = True
            self._opened += 1  # counted for the waiter until it opens its connection
            waiter.event.set()

    def _evict_idle(self) -> httpcore.AsyncHTTPConnection:
        """Take out the oldest idle connection of the first server that has one (to open one to another server), its
        place kept; there is one (`_idle_count`). The caller closes it."""
        stack = next(stack for stack in self._idle.values() if stack)
        connection = stack.popleft()
        self._idle_count -= 1
        del self._connections[connection]
        return connection


class _ResponseStream(httpx.AsyncByteStream):
    """A response's body, read off its connection; closing it gives the connection back to the pool."""

    __slots__ = ('_connection', '_pool', '_stream')

    def __init__(self, pool: AsyncPoolTransport, connection: httpcore.AsyncHTTPConnection, stream: Any) -> None:
        self._pool = pool
        self._connection: httpcore.AsyncHTTPConnection | None = connection
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except Exception as error:
            _reraise(error)

    async def aclose(self) -> None:
        connection = self._connection
        if connection is None:
            return
        self._connection = None
        try:
            with anyio.CancelScope(shield=True):  # the connection is marked idle only once this is done
                await self._stream.aclose()
        finally:
            with anyio.CancelScope(shield=True):
                await self._pool._release(connection)
