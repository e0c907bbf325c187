"""Test-side AWS pieces written apart from the library's: an event-stream frame encoder and a SigV4 verifier.

They follow AWS's documentation independently of `_eventstream` and `_sigv4`, so that a test comparing the two
catches a mistake in either.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import struct
import zlib
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import quote, unquote

ACCESS_KEY = 'AKIDEXAMPLE'
SECRET_KEY = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
SESSION_TOKEN = 'FQoGZXIvYXdzEXAMPLESESSIONTOKEN'
BEARER = 'bedrock-api-key-example'


def header_bytes(name: str, value: Any) -> bytes:
    """One header in the framing: a string (type 7), bytes (6), bool (0/1) or int (4)."""
    encoded = name.encode()
    out = bytes([len(encoded)]) + encoded
    if isinstance(value, bool):
        return out + bytes([0 if value else 1])
    if isinstance(value, int):
        return out + bytes([4]) + struct.pack('>i', value)
    if isinstance(value, bytes):
        return out + bytes([6]) + struct.pack('>H', len(value)) + value
    data = str(value).encode()
    return out + bytes([7]) + struct.pack('>H', len(data)) + data


def frame(headers: dict[str, Any] | bytes, payload: bytes) -> bytes:
    """A whole event-stream message: prelude, its CRC, headers, payload and the message CRC."""
    raw_headers = headers if isinstance(headers, bytes) else b''.join(header_bytes(k, v) for k, v in headers.items())
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack('>II', total, len(raw_headers))
    body = prelude + struct.pack('>I', zlib.crc32(prelude)) + raw_headers + payload
    return body + struct.pack('>I', zlib.crc32(body))


def event(event_type: str, payload: dict[str, Any]) -> bytes:
    """A ConverseStream event message."""
    headers = {':event-type': event_type, ':content-type': 'application/json', ':message-type': 'event'}
    return frame(headers, json.dumps(payload, ensure_ascii=False).encode())


def exception(exception_type: str, message: str) -> bytes:
    """A ConverseStream exception message."""
    headers = {':exception-type': exception_type, ':content-type': 'application/json', ':message-type': 'exception'}
    return frame(headers, json.dumps({'message': message}).encode())


_AUTH = re.compile(
    r'^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<day>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request, '
    r'SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})$'
)


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def verify_sigv4(
    method: str, raw_path: str, headers: dict[str, str], body: bytes, secrets: dict[str, str]
) -> tuple[bool, str]:
    """Whether the request's `Authorization` header is the SigV4 signature of what arrived (and why not).

    Args:
        method: The request's method.
        raw_path: The request target as received (path and query).
        headers: The headers as received.
        body: The body as received.
        secrets: The secret key of each access key id.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    found = _AUTH.match(lowered.get('authorization', ''))
    if found is None:
        return False, 'no SigV4 authorization header'
    if found['key'] not in secrets:
        return False, 'unknown access key'
    amz_date = lowered.get('x-amz-date', '')
    if amz_date[:8] != found['day']:
        return False, 'x-amz-date does not match the credential scope'
    signed = found['signed'].split(';')
    if 'host' not in signed or 'x-amz-date' not in signed:
        return False, 'host and x-amz-date must be signed'
    path, _, query = raw_path.partition('?')
    canonical_path = '/'.join(quote(segment, safe='-_.~') for segment in path.split('/'))
    pairs = sorted(
        (quote(unquote(k), safe='-_.~'), quote(unquote(v), safe='-_.~'))
        for k, _, v in (item.partition('=') for item in query.split('&') if item)
    )
    canonical = '\n'.join(
        [
            method,
            canonical_path,
            '&'.join(f'{k}={v}' for k, v in pairs),
            ''.join(f'{name}:{" ".join(lowered[name].split())}\n' for name in signed),
            found['signed'],
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f'{found["day"]}/{found["region"]}/{found["service"]}/aws4_request'
    to_sign = f'AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}'
    key = ('AWS4' + secrets[found['key']]).encode()
    for piece in (found['day'], found['region'], found['service'], 'aws4_request'):
        key = _hmac(key, piece)
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, found['signature']):
        return False, 'signature mismatch'
    return True, f'{found["region"]}/{found["service"]}'


@dataclass
class Answer:
    """One scripted answer: JSON (`body`) or a stream of event-stream messages (`frames`)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    frames: list[bytes] | None = None


@dataclass
class FakeBedrock:
    """The local Bedrock: it refuses a request whose signature or bearer token is wrong, as AWS does."""

    url: str = ''
    answers: deque[Answer] = field(default_factory=deque)
    received: list[dict[str, Any]] = field(default_factory=list)

    def script(self, *answers: Answer) -> None:
        self.answers.extend(answers)


def bedrock_handler(server: FakeBedrock) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, status: int, body: Any, headers: dict[str, str]) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            for name, value in {'content-type': 'application/json', **headers}.items():
                self.send_header(name, value)
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            data = b'\x89PNG-downloaded'
            self.send_response(200)
            self.send_header('content-type', 'image/png')
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get('content-length') or 0))
            headers = dict(self.headers.items())
            auth = self.headers.get('authorization') or ''
            if auth.startswith('AWS4-HMAC-SHA256'):
                ok, detail = verify_sigv4('POST', self.path, headers, raw, {ACCESS_KEY: SECRET_KEY})
            else:
                ok, detail = auth == f'Bearer {BEARER}', 'bearer'
            server.received.append({'path': self.path, 'headers': headers, 'body': json.loads(raw), 'auth': detail})
            if not ok:
                error = {'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/'}
                return self._json(403, {'message': f'The request signature is wrong: {detail}'}, error)
            answer = server.answers.popleft()
            if answer.frames is None:
                return self._json(answer.status, answer.body, answer.headers)
            self.send_response(200)
            self.send_header('content-type', 'application/vnd.amazon.eventstream')
            self.send_header('x-amzn-requestid', 'req-stream-1')
            self.send_header('transfer-encoding', 'chunked')
            self.end_headers()
            for data in answer.frames:
                # Each message in two chunks, cut mid-frame: the decoder must join them.
                for chunk in (data[: len(data) // 2], data[len(data) // 2 :]):
                    self.wfile.write(f'{len(chunk):x}\r\n'.encode() + chunk + b'\r\n')
                    self.wfile.flush()
            self.wfile.write(b'0\r\n\r\n')
            self.wfile.flush()
            return None

    return Handler
