"""Provider requests skip `httpx.AsyncClient.send` for plain clients: what a user of the client sees must not change
(transports and mounts, cookies, the log line, errors), and clients that configure more go through `send`."""

from __future__ import annotations

import gzip
import json
import logging
from typing import Any

import httpx
import pytest

from edgewise.agent.models import _direct_send

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

BODY = b'{"model": "m"}'
HEADERS = {'content-type': 'application/json'}


class RecordingTransport(httpx.AsyncBaseTransport):
    """A transport that hands requests to another and records their URLs (a stand-in for a proxy's)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.urls: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _post(client: httpx.AsyncClient, url: str = '/chat') -> tuple[httpx.Response, bytes]:
    request = _direct_send.build_request(client, url, BODY, dict(HEADERS), None)
    response = await _direct_send.send(client, request)
    return response, await _direct_send.read_body(response)


def test_the_httpx_internals_relied_on_are_there() -> None:
    # If this fails, httpx changed what `_direct_send` reads: pin httpx below that version or adapt the module.
    routed = httpx.AsyncBaseTransport()
    client = httpx.AsyncClient(default_encoding='latin-1', mounts={'http://proxied.test': routed})
    assert client._transport_for_url(httpx.URL('http://proxied.test/x')) is routed
    assert client._transport_for_url(httpx.URL('http://other.test/x')) is client._transport
    assert client._default_encoding == 'latin-1'
    for name in _direct_send._SEND_METHODS:
        assert callable(getattr(httpx.AsyncClient, name))
    # ... and a plain client's requests take the direct path (not `send`), for which this module exists.
    request = _direct_send.build_request(client, 'http://other.test/x', BODY, dict(HEADERS), None)
    assert _direct_send._direct(client, request)


async def test_a_plain_client_gets_what_send_gives(local_server: LocalServer) -> None:
    answer = {'id': 'x', 'choices': []}
    local_server.script(Reply(200, answer, headers={'x-trace': 'abc'}), Reply(200, answer, headers={'x-trace': 'abc'}))
    async with httpx.AsyncClient(base_url=local_server.url, headers={'x-client': 'mine'}) as client:
        direct, body = await _post(client)
        reference = await client.send(client.build_request('POST', '/chat', content=BODY, headers=HEADERS))
    assert (direct.status_code, direct.http_version, direct.reason_phrase) == (200, 'HTTP/1.1', 'OK')

    # The same headers in the same order; the replies' `date` may fall in different seconds: only its place counts.
    def without_date(response: httpx.Response) -> list[tuple[str, str]]:
        return [(name, '<date>' if name == 'date' else value) for name, value in response.headers.multi_items()]

    assert without_date(direct) == without_date(reference)
    assert 'date' in direct.headers
    assert direct.headers['x-trace'] == 'abc'
    assert json.loads(body) == reference.json() == answer
    assert direct.request.url == reference.request.url == f'{local_server.url}/chat'
    assert direct.is_closed
    assert local_server.received[0] == local_server.received[1]
    assert local_server.received[0]['headers']['x-client'] == 'mine'


async def test_a_mounted_transport_is_used(local_server: LocalServer) -> None:
    local_server.script(Reply(200, {'ok': True}))
    port = local_server.url.split(':')[2].split('/')[0]
    mounted = RecordingTransport(httpx.AsyncHTTPTransport())
    async with httpx.AsyncClient(base_url=local_server.url, mounts={f'http://127.0.0.1:{port}': mounted}) as client:
        _, body = await _post(client)
    assert json.loads(body) == {'ok': True}
    assert mounted.urls == [f'{local_server.url}/chat']


async def test_cookies_set_by_the_server_are_kept_and_sent_back(local_server: LocalServer) -> None:
    local_server.script(Reply(200, {}, headers={'set-cookie': '__cf_bm=abc; Path=/'}), Reply(200, {}))
    async with httpx.AsyncClient(base_url=local_server.url) as client:
        await _post(client)
        assert client.cookies['__cf_bm'] == 'abc'
        await _post(client)
    assert 'Cookie' not in local_server.received[0]['headers']
    assert local_server.received[1]['headers']['Cookie'] == '__cf_bm=abc'


async def test_each_exchange_is_logged_as_send_logs_it(
    local_server: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    local_server.script(Reply(201, {}), Reply(201, {}))
    async with httpx.AsyncClient(base_url=local_server.url) as client:
        with caplog.at_level(logging.INFO, logger='httpx'):
            await _post(client)
            await client.send(client.build_request('POST', '/chat', content=BODY, headers=HEADERS))
    logged = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    expected = ('httpx', logging.INFO, f'HTTP Request: POST {local_server.url}/chat "HTTP/1.1 201 Created"')
    assert logged == [expected, expected]


async def test_a_gzipped_body_is_decoded(local_server: LocalServer) -> None:
    data = json.dumps({'text': 'squeezed ' * 50}).encode()
    local_server.script(Reply(200, gzip.compress(data), headers={'content-encoding': 'gzip'}))
    async with httpx.AsyncClient(base_url=local_server.url) as client:
        _, body = await _post(client)
    assert body == data


async def test_a_streamed_body_arrives_in_its_chunks_decoded(local_server: LocalServer) -> None:
    events = b'data: 1\n\ndata: 2\n\n'
    squeezed = gzip.compress(events)
    local_server.script(
        Reply(200, chunks=[events[:9], events[9:]]),
        Reply(200, chunks=[squeezed[:10], squeezed[10:]], headers={'content-encoding': 'gzip'}),
    )
    bodies: list[bytes] = []
    async with httpx.AsyncClient(base_url=local_server.url) as client:
        for _ in range(2):
            request = _direct_send.build_request(client, '/chat', BODY, dict(HEADERS), None)
            response = await _direct_send.send(client, request)
            try:
                bodies.append(b''.join([chunk async for chunk in _direct_send.body_chunks(response)]))
            finally:
                await response.aclose()
    assert bodies == [events, events]


async def test_the_clients_default_encoding_reads_an_error_body(local_server: LocalServer) -> None:
    local_server.script(Reply(400, 'caf\xe9'.encode('latin-1'), headers={'content-type': 'text/plain'}))
    async with httpx.AsyncClient(base_url=local_server.url, default_encoding='latin-1') as client:
        request = _direct_send.build_request(client, '/chat', BODY, dict(HEADERS), None)
        response = await _direct_send.send(client, request)
        await response.aread()
        await response.aclose()
    assert response.text == 'caf\xe9'


async def test_a_transport_error_names_its_request() -> None:
    async with httpx.AsyncClient(base_url='http://127.0.0.1:9/v1') as client:  # port 9 (discard): refused
        request = _direct_send.build_request(client, '/chat', BODY, dict(HEADERS), None)
        with pytest.raises(httpx.ConnectError) as exc_info:
            await _direct_send.send(client, request)
    assert exc_info.value.request is request


async def test_a_closed_client_refuses_as_send_does() -> None:
    client = httpx.AsyncClient(base_url='http://127.0.0.1:9/v1')
    await client.aclose()
    request = _direct_send.build_request(client, '/chat', BODY, dict(HEADERS), None)
    with pytest.raises(RuntimeError, match='client has been closed'):
        await _direct_send.send(client, request)


class SendCountingClient(httpx.AsyncClient):
    sends = 0

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        self.sends += 1
        return await super().send(request, **kwargs)


async def test_what_send_would_add_is_applied(local_server: LocalServer) -> None:
    hooked: list[str] = []

    async def hook(request: httpx.Request) -> None:
        hooked.append(str(request.url))

    local_server.script(*[Reply(200, {})] * 4, Reply(307, b'', headers={'location': '/moved'}), Reply(200, {}))
    host = local_server.url.removeprefix('http://')
    async with httpx.AsyncClient(base_url=local_server.url, auth=('user', 'secret')) as client:
        await _post(client)
    async with httpx.AsyncClient(base_url=f'http://user:secret@{host}') as client:
        await _post(client)
    async with httpx.AsyncClient(base_url=local_server.url, event_hooks={'request': [hook]}) as client:
        await _post(client)
    async with SendCountingClient(base_url=local_server.url) as counting:
        await _post(counting)
    async with httpx.AsyncClient(base_url=local_server.url, follow_redirects=True) as client:
        _, body = await _post(client)
    basic = 'Basic dXNlcjpzZWNyZXQ='
    assert [r['headers'].get('Authorization') for r in local_server.received[:2]] == [basic, basic]
    assert hooked == [f'{local_server.url}/chat']
    assert counting.sends == 1
    assert [r['path'] for r in local_server.received[4:]] == ['/v1/chat', '/moved']
    assert json.loads(body) == {}
