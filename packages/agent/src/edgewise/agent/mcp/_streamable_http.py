"""The streamable HTTP channel of the MCP client: JSON-RPC messages POSTed to the server, answers read back.

Each message the client sends is one POST; the server answers a request with a JSON body or with an event stream
(`text/event-stream`) that carries the server's own requests and notifications about the call, then the answer.
Messages the server sends outside any request come on a GET event stream, opened once the session is
initialized (a server without one answers 405). The session id the server gives in its answer to `initialize`
goes with every later request, and the session is ended with a DELETE when the channel closes.

Every request runs in a task of the channel's own task group, which the channel opens and closes in one task
(`open_streamable_http_channel` is an async context manager): no task group is entered in one place and left in
another, on asyncio and trio alike.
"""

from __future__ import annotations as _annotations

import codecs
import contextlib
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import httpx
import pydantic_core

from ..models._sse import SSEDecoder
from ._connection import Channel, MCPConnectionClosed

__all__ = ('open_streamable_http_channel',)

_SESSION_ID = 'mcp-session-id'
_PROTOCOL_VERSION = 'mcp-protocol-version'
# How long ending the session (the DELETE) may take when the channel closes.
_CLOSE_SECONDS = 2.0


class _StreamableHTTPChannel:
    """JSON-RPC over streamable HTTP: `send` POSTs in the background, `receive` gives what came back."""

    def __init__(self, client: httpx.AsyncClient, url: str, task_group: anyio.abc.TaskGroup) -> None:
        self._client = client
        self._url = url
        self._task_group = task_group
        self._incoming, self._received = anyio.create_memory_object_stream[dict[str, Any] | MCPConnectionClosed](
            math.inf
        )
        self.session_id: str | None = None
        self._protocol_version: str | None = None
        self._closed: MCPConnectionClosed | None = None

    def _headers(self) -> dict[str, str]:
        headers = {'accept': 'application/json, text/event-stream', 'content-type': 'application/json'}
        if self.session_id is not None:
            headers[_SESSION_ID] = self.session_id
        if self._protocol_version is not None:
            headers[_PROTOCOL_VERSION] = self._protocol_version
        return headers

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed is not None:
            raise self._closed
        if message.get('method') == 'initialize':
            await self._post(message)  # the session id comes with its answer: the next requests need it
            return
        self._task_group.start_soon(self._post, message)
        if message.get('method') == 'notifications/initialized':
            self._task_group.start_soon(self._listen)

    async def receive(self) -> dict[str, Any]:
        try:
            item = await self._received.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError) as e:
            raise MCPConnectionClosed('the HTTP transport closed') from e
        if isinstance(item, MCPConnectionClosed):
            raise item
        return item

    def _fail(self, reason: MCPConnectionClosed) -> None:
        if self._closed is None:
            self._closed = reason
            with contextlib.suppress(anyio.ClosedResourceError):  # the channel is closing anyway
                self._incoming.send_nowait(reason)

    async def _post(self, message: dict[str, Any]) -> None:
        request_id = message.get('id') if 'method' in message else None
        try:
            content = pydantic_core.to_json(message)
            async with self._client.stream('POST', self._url, content=content, headers=self._headers()) as response:
                if message.get('method') == 'initialize':
                    self.session_id = response.headers.get(_SESSION_ID) or self.session_id
                if response.status_code == 202 or (request_id is None and response.is_success):
                    return
                if not response.is_success:
                    await response.aread()
                    raise MCPConnectionClosed(f'the server answered HTTP {response.status_code} to a request')
                await self._read(response)
        except MCPConnectionClosed as e:
            self._fail(e)
        except httpx.HTTPError as e:
            self._fail(MCPConnectionClosed(f'the HTTP transport failed: {e!r}'))

    async def _listen(self) -> None:
        """The GET stream of the messages the server sends outside any request (when it has one)."""
        headers = self._headers()
        headers['accept'] = 'text/event-stream'
        del headers['content-type']
        with contextlib.suppress(httpx.HTTPError):
            async with self._client.stream('GET', self._url, headers=headers) as response:
                if response.is_success:
                    await self._read(response)

    async def _read(self, response: httpx.Response) -> None:
        content_type = response.headers.get('content-type', '')
        if content_type.startswith('text/event-stream'):
            decoder = SSEDecoder()
            text = codecs.getincrementaldecoder('utf-8')(errors='replace')
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(text.decode(chunk)):
                    if event.event == 'message' and event.data:
                        self._deliver(pydantic_core.from_json(event.data))
            for event in decoder.flush():
                if event.event == 'message' and event.data:  # pragma: no branch - servers end their events
                    self._deliver(pydantic_core.from_json(event.data))
        elif content_type.startswith('application/json'):
            self._deliver(pydantic_core.from_json(await response.aread()))

    def _deliver(self, value: Any) -> None:
        for message in value if isinstance(value, list) else [value]:
            if isinstance(message, dict):
                result = message.get('result')
                if isinstance(result, dict) and 'protocolVersion' in result and 'serverInfo' in result:
                    self._protocol_version = str(result['protocolVersion'])
                with contextlib.suppress(anyio.ClosedResourceError):  # the channel is closing: nobody reads it
                    self._incoming.send_nowait(message)

    def close(self) -> None:
        """Close the channel's streams (what was received and not read is dropped)."""
        self._incoming.close()
        self._received.close()

    async def end_session(self) -> None:
        """Tell the server the session is over (DELETE), in a bounded time; a server without it is fine."""
        if self.session_id is None:
            return
        with anyio.move_on_after(_CLOSE_SECONDS, shield=True), contextlib.suppress(httpx.HTTPError):
            await self._client.delete(self._url, headers={_SESSION_ID: self.session_id})


@asynccontextmanager
async def open_streamable_http_channel(client: httpx.AsyncClient, url: str) -> AsyncIterator[Channel]:
    """A channel to the MCP server at `url` over streamable HTTP, through `client`; closed on exit."""
    async with anyio.create_task_group() as task_group:
        channel = _StreamableHTTPChannel(client, url, task_group)
        try:
            yield channel
        finally:
            task_group.cancel_scope.cancel()
            channel.close()
            await channel.end_session()
