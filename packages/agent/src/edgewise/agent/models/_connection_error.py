"""What a request that never reached its server says: which server (host and port, never credentials) and why.

httpx reports a failed connection as `ConnectError('All connection attempts failed')` or similar; the cause is
further down its chain of exceptions (a refused connection, a name the resolver does not know, a timeout),
differently on asyncio and trio (trio groups the attempts in an `ExceptionGroup`).
"""

from __future__ import annotations as _annotations

import errno
import socket
from collections.abc import Iterator
from typing import Any

__all__ = ('connection_error_message',)


def connection_error_message(error: BaseException, *, while_streaming: bool = False) -> str:
    """`Connection error: cannot connect to HOST:PORT (CAUSE).` for an httpx transport error, with what is known.

    Args:
        error: The `httpx.TransportError` (or `TimeoutException`) raised by the request.
        while_streaming: The connection was lost while reading a streamed response.
    """
    where = _server(error)
    cause = _cause(error)
    if while_streaming:
        lost = f' from {where}' if where else ''
        return f'Connection error while streaming: the connection{lost} was lost ({cause or type(error).__name__}).'
    if where is None:
        return f'Connection error: {cause or type(error).__name__}.'
    if cause is None:
        return f'Connection error: the request to {where} failed ({type(error).__name__}).'
    return f'Connection error: cannot connect to {where} ({cause}).'


def _server(error: BaseException) -> str | None:
    """`host:port` of the request that failed (httpx errors carry it), without user, password, path or query."""
    try:
        url: Any = error.request.url  # type: ignore[attr-defined]  # httpx.RequestError.request (raises unset)
    except (AttributeError, RuntimeError):
        return None
    host = url.host
    port = url.port or {'https': 443, 'http': 80}.get(url.scheme)
    if ':' in host:  # an IPv6 address
        host = f'[{host}]'
    return f'{host}:{port}' if port else host


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def _cause(error: BaseException) -> str | None:
    for current in _chain(error):
        if isinstance(current, socket.gaierror):
            return 'name not found'
        if isinstance(current, ConnectionRefusedError):
            return 'connection refused'
        if isinstance(current, TimeoutError) or type(current).__name__ in ('ConnectTimeout', 'TimeoutException'):
            return 'timed out'
        if isinstance(current, ConnectionResetError):
            return 'connection reset by the server'
        if isinstance(current, OSError) and current.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return 'network unreachable'
    return None
