"""The provider models' requests are built without `httpx.AsyncClient.build_request` on the common path: the
result must be the request `build_request` gives, for every kind of client."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from edgewise.agent.models._direct_send import build_request as _build_request

pytestmark = pytest.mark.anyio

BODY = b'{"model": "m"}'
HEADERS = {'content-type': 'application/json', 'authorization': 'Bearer sk-test'}


def _reference(client: httpx.AsyncClient, url: str, timeout: float | None) -> httpx.Request:
    explicit: Any = httpx.USE_CLIENT_DEFAULT if timeout is None else httpx.Timeout(timeout)
    return client.build_request('POST', url, content=BODY, headers=HEADERS, timeout=explicit)


def _same(built: httpx.Request, reference: httpx.Request) -> None:
    assert built.method == reference.method
    assert built.url == reference.url
    assert built.headers.multi_items() == reference.headers.multi_items()
    assert built.extensions == reference.extensions
    assert built.read() == reference.read()


@pytest.mark.parametrize(
    'client_options',
    [
        {},
        {'base_url': 'http://127.0.0.1:9/v1'},
        {'base_url': 'http://127.0.0.1:9/v1/', 'headers': {'user-agent': 'mine', 'x-extra': 'a'}},
        {'base_url': 'http://127.0.0.1:9/api', 'timeout': httpx.Timeout(3.0, connect=1.0)},
        {'base_url': 'http://127.0.0.1:9', 'cookies': {'session': 'abc'}},
        {'base_url': 'http://127.0.0.1:9', 'params': {'api-version': '2025-01-01'}},
        {'base_url': 'http://127.0.0.1:9/v1', 'headers': {'Host': 'api.example.test'}},
    ],
    ids=['bare', 'base-url', 'client-headers', 'client-timeout', 'cookies', 'params', 'host-header'],
)
@pytest.mark.parametrize('url', ['/chat/completions', 'chat/completions', 'http://127.0.0.1:8/x/messages'])
@pytest.mark.parametrize('seconds', [None, 12.5])
async def test_requests_match_the_clients_own(client_options: dict[str, Any], url: str, seconds: float | None) -> None:
    if 'base_url' not in client_options and not url.startswith('http'):
        pytest.skip('a relative URL needs a base URL')
    async with httpx.AsyncClient(**client_options) as client:
        for _ in range(2):  # the second time from the joined-URL cache
            _same(_build_request(client, url, BODY, HEADERS, seconds), _reference(client, url, seconds))


async def test_a_changed_base_url_or_header_is_used_by_the_next_request() -> None:
    async with httpx.AsyncClient(base_url='http://127.0.0.1:9/v1') as client:
        first = _build_request(client, '/chat/completions', BODY, HEADERS, None)
        client.base_url = httpx.URL('http://127.0.0.1:9/v2')
        client.headers['x-tenant'] = 't1'
        second = _build_request(client, '/chat/completions', BODY, HEADERS, None)
        assert first.url == 'http://127.0.0.1:9/v1/chat/completions'
        assert second.url == 'http://127.0.0.1:9/v2/chat/completions'
        assert second.headers['x-tenant'] == 't1'
        _same(second, _reference(client, '/chat/completions', None))


async def test_requests_with_other_headers_on_one_client_each_get_theirs() -> None:
    other = {'content-type': 'application/json', 'authorization': 'Bearer sk-other', 'accept': 'text/event-stream'}
    async with httpx.AsyncClient(base_url='http://127.0.0.1:9/v1', headers={'Accept': '*/*'}) as client:
        for headers in (HEADERS, other, HEADERS, other):
            built = _build_request(client, '/chat/completions', BODY, dict(headers), None)
            reference = client.build_request('POST', '/chat/completions', content=BODY, headers=headers)
            assert built.headers.multi_items() == reference.headers.multi_items()
        assert built.headers['accept'] == 'text/event-stream'


async def test_a_client_sending_ever_new_headers_keeps_a_few_merges_only() -> None:
    from edgewise.agent.models._direct_send import _MERGED

    async with httpx.AsyncClient(base_url='http://127.0.0.1:9/v1') as client:
        for n in range(40):
            headers = {**HEADERS, 'x-request-id': str(n)}
            built = _build_request(client, '/chat/completions', BODY, dict(headers), None)
            assert built.headers['x-request-id'] == str(n)
        assert 0 < len(_MERGED[client]) <= 16
