"""A local stand-in for OpenAI's sign-in backends (Codex, ChatGPT plan usage): one server on 127.0.0.1 answering both
the token endpoint (OAuth refresh grants, with the replies a test queues) and a streamed Responses endpoint, which
answers 401 to the access tokens a test revokes."""

from __future__ import annotations

import base64
import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl

from .conftest import serve_http

__all__ = ('FakeOpenAI', 'serve_fake_openai', 'sse_text', 'unsigned_jwt')


def unsigned_jwt(claims: dict[str, Any]) -> str:
    """An unsigned JWT carrying `claims` (the providers read its claims, they do not check a signature)."""

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b'=').decode()

    return f'{part({"alg": "none"})}.{part(claims)}.sig'


def sse_text(text: str) -> bytes:
    """A streamed Responses answer of one text delta."""
    events: list[dict[str, Any]] = [
        {'type': 'response.created', 'response': {'id': 'resp_1', 'model': 'gpt-5.4', 'status': 'in_progress'}},
        {'type': 'response.output_text.delta', 'item_id': 'msg_1', 'delta': text},
        {
            'type': 'response.completed',
            'response': {
                'id': 'resp_1',
                'model': 'gpt-5.4',
                'status': 'completed',
                'output': [],
                'usage': {'input_tokens': 5, 'output_tokens': 1, 'total_tokens': 6},
            },
        },
    ]
    return ''.join(f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n' for e in events).encode()


@dataclass
class FakeOpenAI:
    """The API (under `api_path`) and the token endpoint (`token_path`) on one local server."""

    api_path: str
    token_path: str
    url: str = ''
    token_replies: deque[tuple[int, dict[str, Any]]] = field(default_factory=deque)
    revoked: set[str] = field(default_factory=set)
    received: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f'{self.url}{self.api_path}'

    @property
    def token_url(self) -> str:
        return f'{self.url}{self.token_path}'

    def paths(self) -> list[str]:
        return [r['path'] for r in self.received]


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, data: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header('content-type', content_type)
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get('content-length') or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            form = headers.get('content-type', '').startswith('application/x-www-form-urlencoded')
            body = dict(parse_qsl(raw.decode())) if form else json.loads(raw or b'null')
            with fake.lock:
                fake.received.append({'path': self.path, 'headers': headers, 'body': body})
                if self.path == fake.token_path:
                    status, reply = fake.token_replies.popleft()
                    self._send(status, json.dumps(reply).encode(), 'application/json')
                    return
            token = headers.get('authorization', '').removeprefix('Bearer ')
            if token in fake.revoked:
                self._send(401, json.dumps({'error': {'message': 'token expired'}}).encode(), 'application/json')
                return
            self._send(200, sse_text('Hello'), 'text/event-stream')

    return Handler


@contextmanager
def serve_fake_openai(*, api_path: str, token_path: str) -> Iterator[FakeOpenAI]:
    """A `FakeOpenAI` served on 127.0.0.1 for the block."""
    fake = FakeOpenAI(api_path=api_path, token_path=token_path)
    with serve_http(_handler(fake)) as port:
        fake.url = f'http://127.0.0.1:{port}'
        yield fake
