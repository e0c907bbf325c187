"""Fixtures of the provider model tests: a scripted HTTP server on 127.0.0.1, and request-body validation."""

from __future__ import annotations

import email.policy
import functools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    """One scripted answer of the local server."""

    status: int = 200
    body: Any = None
    """A JSON-able body, or bytes sent as they are."""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] | None = None
    """Sent one by one with a flush after each (a streamed, chunked body)."""
    drop: bool = False
    """Close the connection without answering."""
    hold: bool = False
    """Answer only once the test ends (a server that is too slow)."""
    keep_open: bool = False
    """After the chunks, keep the stream open until the client closes the connection (recorded)."""


@dataclass
class LocalServer:
    """A real HTTP server answering POSTs with scripted replies, in order; it records what it received."""

    url: str
    replies: deque[Reply] = field(default_factory=deque)
    received: list[dict[str, Any]] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    disconnects: list[bool] = field(default_factory=list)
    """For each `keep_open` reply: whether the client closed the connection while the stream was open."""

    files: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)
    """What a GET of each path answers: status, content type, body (404 for other paths)."""
    downloads: list[str] = field(default_factory=list)
    """The paths of the GETs received."""
    download_headers: list[dict[str, str]] = field(default_factory=list)
    """The headers of each GET received (names in lower case)."""

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)


def _multipart(content_type: str, raw: bytes) -> dict[str, Any]:
    """A multipart body as its content type, its plain fields and its files (field name, file name, type)."""
    message = BytesParser(policy=email.policy.HTTP).parsebytes(f'content-type: {content_type}\r\n\r\n'.encode() + raw)
    fields: dict[str, str] = {}
    files: list[tuple[str, str, str]] = []
    for part in message.iter_parts():
        name = part.get_param('name', header='content-disposition')
        filename = part.get_filename()
        if filename is None:
            fields[str(name)] = part.get_content()
        else:
            files.append((str(name), filename, part.get_content_type()))
    return {'content_type': content_type, 'fields': fields, 'files': files}


def _handler(server: LocalServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, format: str, *args: Any) -> None:  # the test output stays clean
            pass

        def do_GET(self) -> None:
            server.downloads.append(self.path)
            server.download_headers.append({name.lower(): value for name, value in self.headers.items()})
            status, content_type, data = server.files.get(self.path, (404, 'text/plain', b'not found'))
            self.send_response(status)
            if content_type:
                self.send_header('content-type', content_type)
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get('content-length') or 0)
            raw = self.rfile.read(length)
            content_type = self.headers.get('content-type') or ''
            body = (
                _multipart(content_type, raw) if content_type.startswith('multipart/') else json.loads(raw or b'null')
            )
            server.received.append({'path': self.path, 'headers': dict(self.headers.items()), 'body': body})
            reply = server.replies.popleft()
            if reply.drop:
                self.close_connection = True
                return
            if reply.hold:
                server.released.wait(30)
                return
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.chunks is not None:
                self.send_header('transfer-encoding', 'chunked')
                self.end_headers()
                for chunk in reply.chunks:
                    self.wfile.write(f'{len(chunk):x}\r\n'.encode() + chunk + b'\r\n')
                    self.wfile.flush()
                if reply.keep_open:
                    # Wait (boundedly) for the client to close its end: reading then gives EOF.
                    self.connection.settimeout(10)
                    try:
                        server.disconnects.append(self.connection.recv(1) == b'')
                    except OSError:
                        server.disconnects.append(True)
                    self.close_connection = True
                    return
                self.wfile.write(b'0\r\n\r\n')
                self.wfile.flush()
                return
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            if 'content-type' not in reply.headers:
                self.send_header('content-type', 'application/json')
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    """A scripted HTTP server on 127.0.0.1 (a real socket), stopped after the test."""
    server = LocalServer(url='')
    with serve_http(_handler(server), on_stop=server.released.set) as port:
        server.url = f'http://127.0.0.1:{port}/v1'
        yield server


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler], on_stop: Callable[[], object] = lambda: None) -> Iterator[int]:
    """A threaded HTTP server on 127.0.0.1 with `handler`, on the port given; `on_stop` runs before it stops (to
    free handlers that wait)."""
    httpd = ThreadingHTTPServer(('127.0.0.1', 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        on_stop()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def exhaust(value: Any) -> Any:
    """`value` with every lazy iterable the SDK's validators return turned into a list (validating it)."""
    if isinstance(value, dict):
        return {k: exhaust(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [exhaust(v) for v in value]
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if hasattr(value, '__iter__'):
        return [exhaust(v) for v in value]
    return value


@functools.cache
def _chat_validator(stream: bool) -> Any:
    from openai.types.chat import completion_create_params as params
    from pydantic import TypeAdapter

    return TypeAdapter(params.CompletionCreateParamsStreaming if stream else params.CompletionCreateParamsNonStreaming)


def validate_chat_body(body: dict[str, Any]) -> None:
    """Check a Chat Completions request body against the official `openai` SDK's request types."""
    exhaust(_chat_validator(bool(body.get('stream'))).validate_python(body))
