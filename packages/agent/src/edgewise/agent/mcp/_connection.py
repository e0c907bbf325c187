"""The JSON-RPC connection of the MCP client: channels (stdio, the SDK's HTTP transports) and the session.

A channel moves JSON-RPC messages (plain dicts) to and from one server. The stdio channel talks to the
server's process directly: the caller writes its request to the pipe and the session's reader task parses
the replies, so a round trip costs one task switch. The HTTP channels wrap the MCP SDK's transports
(streamable HTTP and SSE), which hand over `SessionMessage`s on memory streams.

`MCPSession` matches replies to requests, answers the server's own requests (ping, sampling, elicitation)
through the handlers it is given, and passes notifications on. When the channel closes, every pending
request fails at once with `MCPConnectionClosed`: a server that dies never leaves a caller waiting.
"""

from __future__ import annotations as _annotations

import contextlib
import math
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.abc
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types as mcp_types
from mcp.shared.message import SessionMessage

__all__ = (
    'Channel',
    'MCPConnectionClosed',
    'MCPRequestError',
    'MCPSession',
    'open_stdio_channel',
    'open_sdk_channel',
)

# JSON-RPC error codes the client itself uses (MCP follows JSON-RPC 2.0).
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
# How long a stdio server gets to exit after its stdin closes, then after SIGTERM, before SIGKILL.
_EXIT_GRACE_SECONDS = 2.0


class MCPConnectionClosed(Exception):
    """The channel to the server closed (the process exited, the HTTP stream ended) or could not be used."""


class MCPRequestError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, message: str, code: int, data: Any = None) -> None:
        self.message = message
        self.code = code
        self.data = data
        super().__init__(message)


class Channel(Protocol):
    """Moves JSON-RPC messages to and from one server."""

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message; `MCPConnectionClosed` when the channel is closed."""
        ...

    async def receive(self) -> dict[str, Any]:
        """The next message from the server; `MCPConnectionClosed` when there is none to come."""
        ...


class _StdioChannel:
    """JSON-RPC over a process's stdin and stdout, one message per line."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._buffer = bytearray()
        # Whole lines only: trio refuses concurrent sends, asyncio would interleave partial writes.
        self._write_lock = anyio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        data = pydantic_core.to_json(message) + b'\n'
        async with self._write_lock:
            try:
                await self._stdin.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as e:
                raise MCPConnectionClosed(f'cannot write to the server process: {e!r}') from e

    async def receive(self) -> dict[str, Any]:
        while True:
            end = self._buffer.find(b'\n')
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                if not line.strip():
                    continue
                try:
                    message = pydantic_core.from_json(line)
                except ValueError:
                    # A server that prints something else on stdout: not a message, skip the line.
                    continue
                if isinstance(message, dict):
                    return message
                continue
            try:
                self._buffer += await self._stdout.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as e:
                raise MCPConnectionClosed('the server process closed its stdout (it exited)') from e


@asynccontextmanager
async def open_stdio_channel(
    command: str, args: Sequence[str], env: Mapping[str, str] | None, cwd: str | Path | None
) -> AsyncIterator[Channel]:
    """Start the server process and yield a channel to it; on exit close its stdin, then stop it (bounded).

    The process gets its own session (process group), so that stopping it also stops what it started.
    Its stderr is inherited, so that the server's own diagnostics stay visible.
    """
    process = await anyio.open_process(
        [command, *args],
        env=dict(env) if env is not None else None,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,
        start_new_session=True,
    )
    try:
        yield _StdioChannel(process)
    finally:
        with anyio.CancelScope(shield=True):
            await _stop_process(process)


async def _stop_process(process: anyio.abc.Process) -> None:
    """Close the server's stdin (the MCP way to ask it to exit), then SIGTERM, then SIGKILL its group."""
    try:
        if process.stdin is not None:
            await process.stdin.aclose()
    except (anyio.BrokenResourceError, OSError):  # pragma: no cover - the pipe broke as it was closed
        pass
    with anyio.move_on_after(_EXIT_GRACE_SECONDS):
        await process.wait()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.returncode is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:  # pragma: no cover - exited between the check and the signal
            break
        with anyio.move_on_after(_EXIT_GRACE_SECONDS):
            await process.wait()
    if process.stdout is not None:
        await process.stdout.aclose()


class _SDKStreamChannel:
    """JSON-RPC over the memory streams of one of the MCP SDK's client transports."""

    def __init__(self, read_stream: Any, write_stream: Any) -> None:
        self._read = read_stream
        self._write = write_stream

    async def send(self, message: dict[str, Any]) -> None:
        try:
            await self._write.send(SessionMessage(mcp_types.JSONRPCMessage.model_validate(message)))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as e:
            raise MCPConnectionClosed('the HTTP transport is closed') from e

    async def receive(self) -> dict[str, Any]:
        while True:
            try:
                item = await self._read.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError) as e:
                raise MCPConnectionClosed('the HTTP transport closed') from e
            if isinstance(item, Exception):
                # The transport reports a failed HTTP request (connection refused, 5xx) as an item.
                raise MCPConnectionClosed(f'the HTTP transport failed: {item!r}') from item
            return item.message.model_dump(by_alias=True, mode='json', exclude_none=True)  # type: ignore[no-any-return]


def open_sdk_channel(read_stream: Any, write_stream: Any) -> Channel:
    """A channel over the (receive, send) memory streams that an SDK client transport yields."""
    return _SDKStreamChannel(read_stream, write_stream)


@dataclass(eq=False)
class _Pending:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: dict[str, Any] | None = None
    error: BaseException | None = None


RequestHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Answers one request of the server (method, params) with a result dict; raises `MCPRequestError`."""
NotificationHandler = Callable[[str, dict[str, Any]], Coroutine[Any, Any, None]]


class MCPSession:
    """Requests and replies over one channel; the reader runs in a task of the task group given to `start`."""

    def __init__(self, channel: Channel, *, on_request: RequestHandler, on_notification: NotificationHandler) -> None:
        self._channel = channel
        self._on_request = on_request
        self._on_notification = on_notification
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self._closed: MCPConnectionClosed | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._notifications: MemoryObjectSendStream[tuple[str, dict[str, Any]]] | None = None

    @property
    def closed(self) -> MCPConnectionClosed | None:
        """Why the connection closed, or `None` while it is open."""
        return self._closed

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start reading the server's messages in `task_group` (cancel it to stop)."""
        self._task_group = task_group
        # Notifications are handled one after the other, in the order they came (log messages, list changes),
        # by a task of their own, so that a slow handler holds up neither the reader nor the answers.
        send, receive = anyio.create_memory_object_stream[tuple[str, dict[str, Any]]](math.inf)
        self._notifications = send
        task_group.start_soon(self._notification_loop, receive)
        task_group.start_soon(self._read_loop)

    async def _notification_loop(self, notifications: MemoryObjectReceiveStream[tuple[str, dict[str, Any]]]) -> None:
        async with notifications:
            async for method, params in notifications:
                await self._on_notification(method, params)

    async def request(self, method: str, params: dict[str, Any] | None, time_limit: float | None) -> dict[str, Any]:
        """Send a request and wait for its result, at most `time_limit` seconds (then `TimeoutError`).

        Raises:
            MCPRequestError: the server answered with an error.
            MCPConnectionClosed: the connection closed before the answer came.
            TimeoutError: no answer within `time_limit`; the server is told to cancel the request.
        """
        if self._closed is not None:
            raise self._closed
        request_id = self._next_id
        self._next_id += 1
        message: dict[str, Any] = {'jsonrpc': '2.0', 'id': request_id, 'method': method}
        if params is not None:
            message['params'] = params
        pending = self._pending[request_id] = _Pending()
        try:
            await self._channel.send(message)
            with anyio.fail_after(time_limit):
                await pending.done.wait()
        except TimeoutError:
            if self._closed is None:
                with anyio.move_on_after(1, shield=True):
                    await self._notify_quietly(
                        'notifications/cancelled', {'requestId': request_id, 'reason': 'timed out'}
                    )
            raise
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None
        return pending.result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification."""
        if self._closed is not None:
            raise self._closed
        message: dict[str, Any] = {'jsonrpc': '2.0', 'method': method}
        if params is not None:
            message['params'] = params
        await self._channel.send(message)

    async def _notify_quietly(self, method: str, params: dict[str, Any]) -> None:
        with contextlib.suppress(MCPConnectionClosed):
            await self.notify(method, params)

    async def _read_loop(self) -> None:
        try:
            while True:
                message = await self._channel.receive()
                self._dispatch(message)
        except MCPConnectionClosed as e:
            self._close(e)
        except Exception as e:  # pragma: no cover - a bug in a channel: fail the callers, do not hang them
            self._close(MCPConnectionClosed(f'reading from the server failed: {e!r}'))
        finally:
            if self._closed is None:
                # Cancelled: the connection is being shut down by the client.
                self._close(MCPConnectionClosed('the client closed the connection'))
            if self._notifications is not None:
                self._notifications.close()  # the notifications already read are still handled

    def _close(self, reason: MCPConnectionClosed) -> None:
        self._closed = reason
        for pending in self._pending.values():
            pending.error = reason
            pending.done.set()

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get('method')
        if method is None:
            self._resolve(message)
        elif 'id' in message:
            assert self._task_group is not None
            self._task_group.start_soon(self._answer, message['id'], method, message.get('params') or {})
        else:
            assert self._notifications is not None
            self._notifications.send_nowait((method, message.get('params') or {}))

    def _resolve(self, message: dict[str, Any]) -> None:
        raw_id = message.get('id')
        try:
            request_id = int(raw_id)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        pending = self._pending.get(request_id)
        if pending is None:
            return  # an answer to a request that timed out or was cancelled
        if (error := message.get('error')) is not None:
            pending.error = MCPRequestError(
                str(error.get('message', 'unknown error')), int(error.get('code', INTERNAL_ERROR)), error.get('data')
            )
        else:
            pending.result = message.get('result') or {}
        pending.done.set()

    async def _answer(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        reply: dict[str, Any] = {'jsonrpc': '2.0', 'id': request_id}
        try:
            if method == 'ping':
                reply['result'] = {}
            else:
                reply['result'] = await self._on_request(method, params)
        except MCPRequestError as e:
            reply['error'] = {'code': e.code, 'message': e.message}
        except Exception as e:
            reply['error'] = {'code': INTERNAL_ERROR, 'message': f'{type(e).__name__}: {e}'}
        with contextlib.suppress(MCPConnectionClosed):
            await self._channel.send(reply)
