"""A provider's POST through the user's `httpx.AsyncClient`, with a third of the bookkeeping of `client.send`.

`client.send` takes every request through the auth flow, the redirect loop, the event hooks, cookie
extraction and a timing wrapper around the response stream. For a client that has none of these to apply (no
auth, redirects not followed, no hooks, no cookies, a plain `httpx.AsyncClient` whose sending methods nobody
patched), what is left of `client.send` is handing the request to the transport it picks for the URL (its
mounts and proxies included) and logging the exchange. That is what `send` does here, and otherwise it calls
`client.send`: the server, the transport, the pool, the timeouts, the errors and the log line are the same
either way.

Two of httpx's private members are used, both present from httpx 0.27 to 0.28 (the range the package pins):
`AsyncClient._transport_for_url` (which transport a URL goes through) and `AsyncClient._default_encoding`.
`tests/agent/models/test_direct_send.py` fails if they change.

The body is read straight off the transport's stream when it has no `content-encoding`, which leaves out three
layers of async iterators (and a decoder that would pass the bytes through) per chunk.
"""

from __future__ import annotations as _annotations

import logging
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

__all__ = ('build_request', 'send', 'read_body', 'body_chunks')

_LOG = logging.getLogger('httpx')  # the logger `client.send` reports each exchange to

# Each client's URLs joined to its base URL, with the base URL they were joined to (a client's base URL can be set).
_JOINED: weakref.WeakKeyDictionary[httpx.AsyncClient, dict[str, tuple[httpx.URL, httpx.URL]]] = (
    weakref.WeakKeyDictionary()
)

# The methods `client.send` runs through; a subclass or a patch (an APM's instrumentation) replacing one of
# them must run, so such a client is sent through `client.send`.
# Per client, the merge of its headers with each set of a provider's headers (`_merged_headers`).
_MERGED: weakref.WeakKeyDictionary[
    httpx.AsyncClient, dict[tuple[tuple[str, str], ...], tuple[list[tuple[bytes, bytes]], list[tuple[bytes, bytes]]]]
] = weakref.WeakKeyDictionary()

_AUTOMATIC = frozenset((b'host', b'content-length', b'transfer-encoding'))
"""Headers `httpx.Request` adds unless they are given."""

_SEND_METHODS = ('send', '_send_handling_auth', '_send_handling_redirects', '_send_single_request')
_plain_methods: tuple[object, ...] | None = None


def build_request(
    client: httpx.AsyncClient, url: str, content: bytes, headers: dict[str, str], timeout: float | None
) -> httpx.Request:
    """The request `client.build_request('POST', url, content=content, ...)` would build, at half its cost.

    A provider posts to the same few URLs all the time: the URL is joined to the client's base URL once, and the
    client's headers, timeout and extensions are applied as `build_request` does; the `Host` and `Content-Length`
    headers `httpx.Request` would add are put in the same places directly. A client with cookies or query
    parameters of its own goes through `build_request` itself.
    """
    import httpx

    if client.cookies or client.params:
        explicit: Any = httpx.USE_CLIENT_DEFAULT if timeout is None else httpx.Timeout(timeout)
        return client.build_request('POST', url, content=content, headers=headers, timeout=explicit)
    base = client.base_url
    joined = _JOINED.get(client)
    if joined is None:
        joined = _JOINED[client] = {}
    found = joined.get(url)
    if found is None or found[0] is not base:
        found = joined[url] = (base, client.build_request('POST', url).url)
    target = found[1]
    raw = _merged_headers(client, headers)
    extensions = {'timeout': (client.timeout if timeout is None else httpx.Timeout(timeout)).as_dict()}
    if not content or not target.host or not _AUTOMATIC.isdisjoint([key.lower() for key, _ in raw]):
        return httpx.Request('POST', target, headers=raw, content=content, extensions=extensions)
    # What `httpx.Request(content=...)` does: `Host` first, `Content-Length` last, the body read.
    raw.insert(0, (b'Host', target.netloc))
    raw.append((b'Content-Length', b'%d' % len(content)))
    request = httpx.Request(
        'POST', target, headers=httpx.Headers(raw), stream=httpx.ByteStream(content), extensions=extensions
    )
    request.read()
    return request


def _merged_headers(client: httpx.AsyncClient, headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """The client's headers updated with `headers`, as `build_request` merges them; the merge is kept per client
    and reused while the client's headers and `headers` are the same (a provider sends the same few sets)."""
    own = client.headers.raw  # read every time: the client's headers can be changed in place
    key = tuple(headers.items())
    merges = _MERGED.get(client)
    if merges is None:
        merges = _MERGED[client] = {}
    found = merges.get(key)
    if found is not None and found[0] == own:
        return list(found[1])
    merged = client.headers.copy()
    merged.update(headers)
    if len(merges) >= 16:  # headers that change with every request (a request id): keep a few merges only
        merges.clear()
    merges[key] = (own, merged.raw)
    return merged.raw


def _direct(client: httpx.AsyncClient, request: httpx.Request) -> bool:
    """Whether `client.send(request)` would do nothing but hand the request to the transport and log."""
    global _plain_methods
    import httpx

    cls = type(client)
    if _plain_methods is None:
        _plain_methods = tuple(getattr(httpx.AsyncClient, name) for name in _SEND_METHODS)
    if cls is not httpx.AsyncClient and any(
        getattr(cls, name) is not method for name, method in zip(_SEND_METHODS, _plain_methods, strict=True)
    ):
        return False
    hooks = client.event_hooks
    return not (
        client.auth is not None
        or client.follow_redirects
        or hooks['request']
        or hooks['response']
        or client.is_closed
        or request.url.userinfo  # basic auth from the URL
    )


async def send(client: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    """`client.send(request, stream=True)`: the response with its body not read yet."""
    import httpx

    if not _direct(client, request):
        return await client.send(request, stream=True)
    transport = client._transport_for_url(request.url)
    try:
        response = await transport.handle_async_request(request)
    except httpx.RequestError as e:
        e.request = request  # as `client.send` sets it
        raise
    response.request = request
    response.default_encoding = client._default_encoding
    headers = response.headers
    if 'set-cookie' in headers or 'set-cookie2' in headers:
        client.cookies.extract_cookies(response)
    if _LOG.isEnabledFor(logging.INFO):
        _LOG.info(
            'HTTP Request: %s %s "%s %d %s"',
            request.method,
            request.url,
            response.http_version,
            response.status_code,
            response.reason_phrase,
        )
    return response


def body_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The response's body, decoded from its `content-encoding` (gzip, ...) if it has one, in chunks."""
    if 'content-encoding' in response.headers:
        return response.aiter_bytes()
    stream: Any = response.stream
    return stream.__aiter__()  # type: ignore[no-any-return]


async def read_body(response: httpx.Response) -> bytes:
    """The whole body of the response (decoded from its `content-encoding`); the response is closed after."""
    try:
        if 'content-encoding' in response.headers:
            return await response.aread()
        stream: Any = response.stream
        return b''.join([chunk async for chunk in stream])
    finally:
        await response.aclose()
