"""Fixtures of the common tools' tests: a real HTTP server on 127.0.0.1 that answers each path as the test says."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from ..models.conftest import serve_http


@dataclass
class Route:
    """What the server answers on one path."""

    status: int = 200
    body: Any = b''
    """Bytes sent as they are, a JSON-able value, or a function of the request body giving either."""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RouteServer:
    """A real HTTP server answering GETs and POSTs by path (the query ignored, 404 elsewhere); it records every
    request: method, path with query, headers (lowercased names), body (JSON decoded when it is JSON)."""

    url: str = ''
    port: int = 0
    routes: dict[str, Route] = field(default_factory=dict)
    received: list[dict[str, Any]] = field(default_factory=list)

    def route(self, path: str, status: int = 200, body: Any = b'', **headers: str) -> None:
        self.routes[path] = Route(status, body, {k.replace('_', '-'): v for k, v in headers.items()})


def _handler(server: RouteServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def answer(self, body: Any) -> None:
            server.received.append(
                {
                    'method': self.command,
                    'path': self.path,
                    'headers': {k.lower(): v for k, v in self.headers.items()},
                    'body': body,
                }
            )
            route = server.routes.get(self.path.split('?')[0], Route(404, b'not found'))
            value = route.body(body) if callable(route.body) else route.body
            data = value if isinstance(value, bytes) else json.dumps(value).encode()
            self.send_response(route.status)
            headers = dict(route.headers)
            if not isinstance(value, bytes):
                headers.setdefault('content-type', 'application/json')
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.answer(None)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get('content-length') or 0))
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw.decode()
            self.answer(body)

    return Handler


@pytest.fixture
def route_server() -> Iterator[RouteServer]:
    """A `RouteServer` on 127.0.0.1 (a real socket), stopped after the test."""
    server = RouteServer()
    with serve_http(_handler(server)) as port:
        server.port = port
        server.url = f'http://127.0.0.1:{port}'
        yield server
