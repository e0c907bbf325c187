"""`web_fetch_tool` against a real HTTP server on 127.0.0.1: pages as markdown, the SSRF checks on every hop."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import pytest

from edgewise.agent import Agent, BinaryContent, ModelRetry
from edgewise.agent.capabilities import WebFetch
from edgewise.agent.common_tools import web_fetch as web_fetch_module
from edgewise.agent.common_tools._ssrf import check_domain, is_cloud_metadata, is_local, safe_get
from edgewise.agent.common_tools.web_fetch import WebFetchLocalTool, WebFetchResult, web_fetch_tool
from edgewise.agent.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel

from .conftest import RouteServer

pytestmark = pytest.mark.anyio

PAGE = b"""<!doctype html><html><head><title>The  Page</title><style>p {}</style><script>x()</script></head>
<body><h1>Hello</h1><p>Some <b>bold</b> text and <a href="https://example.com/">a link</a>.</p>
<ul><li>one</li><li>two</li></ul><img src="x.png" alt="pic"></body></html>"""


async def fetch(url: str, **options: Any) -> WebFetchResult | BinaryContent:
    result: WebFetchResult | BinaryContent = await web_fetch_tool(**options).function(url=url)
    return result


async def test_an_html_page_comes_back_as_markdown_with_its_title(route_server: RouteServer) -> None:
    route_server.route('/page', body=PAGE, content_type='text/html; charset=utf-8')
    result = await fetch(f'{route_server.url}/page', allow_local_urls=True)
    assert result == {
        'url': f'{route_server.url}/page',
        'title': 'The Page',
        'content': '# Hello\n\nSome **bold** text and [a link](https://example.com/).\n\n- one\n- two',
    }
    headers = route_server.received[0]['headers']
    assert headers['accept'] == 'text/markdown, text/html;q=0.9, */*;q=0.8'
    assert headers['host'] == f'127.0.0.1:{route_server.port}'


async def test_markdown_plain_text_and_json_come_back_as_text(route_server: RouteServer) -> None:
    route_server.route('/md', body=b'# Title\n\n\n\n\nbody\n', content_type='text/markdown')
    route_server.route('/txt', body='caf\xe9'.encode('latin-1'), content_type='text/plain; charset=latin-1')
    route_server.route('/json', body={'a': [1, 2]})
    base = route_server.url
    assert await fetch(f'{base}/md', allow_local_urls=True) == {
        'url': f'{base}/md',
        'title': '',
        'content': '# Title\n\nbody',
    }
    assert (await fetch(f'{base}/txt', allow_local_urls=True))['content'] == 'caf\xe9'  # type: ignore[index]
    content = (await fetch(f'{base}/json', allow_local_urls=True))['content']  # type: ignore[index]
    assert content == '```json\n' + json.dumps({'a': [1, 2]}, indent=2) + '\n```'


async def test_json_longer_than_the_limit_is_cut_and_marked(route_server: RouteServer) -> None:
    route_server.route('/json', body={'items': list(range(100))})
    result = await fetch(f'{route_server.url}/json', allow_local_urls=True, max_content_length=30)
    whole = '```json\n' + json.dumps({'items': list(range(100))}, indent=2)
    assert result['content'] == whole[:30] + '\n\n[Content truncated]'  # type: ignore[index]


async def test_json_that_does_not_parse_comes_back_as_it_came(route_server: RouteServer) -> None:
    route_server.route('/json', body=b'{not json', content_type='application/json')
    assert (await fetch(f'{route_server.url}/json', allow_local_urls=True))['content'] == '{not json'  # type: ignore[index]


async def test_a_long_page_is_truncated(route_server: RouteServer) -> None:
    route_server.route('/long', body=b'x' * 100, content_type='text/plain')
    result = await fetch(f'{route_server.url}/long', allow_local_urls=True, max_content_length=10)
    assert result['content'] == 'x' * 10 + '\n\n[Content truncated]'  # type: ignore[index]


async def test_binary_content_comes_back_as_binary_content(route_server: RouteServer) -> None:
    route_server.route('/doc.pdf', body=b'%PDF-1.4 data', content_type='application/pdf')
    result = await fetch(f'{route_server.url}/doc.pdf', allow_local_urls=True)
    assert result == BinaryContent(data=b'%PDF-1.4 data', media_type='application/pdf')


async def test_an_unknown_charset_is_a_retry(route_server: RouteServer) -> None:
    route_server.route('/odd', body=b'x', content_type='text/plain; charset=no-such-codec')
    with pytest.raises(ModelRetry, match=r'Failed to decode .*/odd: unknown encoding: no-such-codec'):
        await fetch(f'{route_server.url}/odd', allow_local_urls=True)


async def test_loopback_addresses_are_refused_by_default(route_server: RouteServer) -> None:
    route_server.route('/page', body=PAGE, content_type='text/html')
    message = r'Access to private/internal IP address \(127\.0\.0\.1\) is blocked\. Use allow_local_urls=True'
    with pytest.raises(ModelRetry, match=rf'Failed to fetch {route_server.url}/page: {message}'):
        await fetch(f'{route_server.url}/page')
    # A name that resolves to a loopback address is refused too.
    with pytest.raises(ModelRetry, match=r'private/internal IP address \((127\.0\.0\.1|::1)\)'):
        await fetch(f'http://localhost:{route_server.port}/page')
    assert route_server.received == []


async def test_redirects_are_followed_and_each_hop_is_checked(route_server: RouteServer) -> None:
    base = route_server.url
    route_server.route('/old', status=302, location='/page')
    route_server.route('/page', body=b'moved here', content_type='text/plain')
    route_server.route('/meta', status=301, location='http://169.254.169.254/latest/meta-data/')
    route_server.route('/other', status=307, location=f'http://localhost:{route_server.port}/page')
    result = await fetch(f'{base}/old', allow_local_urls=True)
    assert result == {'url': f'{base}/old', 'title': '', 'content': 'moved here'}
    with pytest.raises(ModelRetry, match=r'cloud metadata service \(169\.254\.169\.254\) is blocked'):
        await fetch(f'{base}/meta', allow_local_urls=True)
    with pytest.raises(ModelRetry, match="Domain 'localhost' is blocked"):
        await fetch(f'{base}/other', allow_local_urls=True, blocked_domains=['LOCALHOST.'])
    with pytest.raises(ModelRetry, match=r"Domain 'localhost' is not in the allowed domains list\. Allowed: \['127"):
        await fetch(f'{base}/other', allow_local_urls=True, allowed_domains=['127.0.0.1'])
    assert [r['path'] for r in route_server.received] == ['/old', '/page', '/meta', '/other', '/other']


async def test_credentials_are_dropped_on_a_redirect_to_another_origin(route_server: RouteServer) -> None:
    route_server.route('/same', status=302, location='/page')
    route_server.route('/cross', status=302, location=f'http://localhost:{route_server.port}/page')
    route_server.route('/page', body=b'ok', content_type='text/plain')
    headers = {'Authorization': 'Bearer secret', 'X-Trace': 't1'}
    await fetch(f'{route_server.url}/same', allow_local_urls=True, headers=headers)
    await fetch(f'{route_server.url}/cross', allow_local_urls=True, headers=headers)
    seen = [(r['path'], r['headers'].get('authorization'), r['headers'].get('x-trace')) for r in route_server.received]
    assert seen == [
        ('/same', 'Bearer secret', 't1'),
        ('/page', 'Bearer secret', 't1'),
        ('/cross', 'Bearer secret', 't1'),
        ('/page', None, 't1'),
    ]


async def test_too_many_redirects_and_a_redirect_without_location_are_retries(route_server: RouteServer) -> None:
    route_server.route('/loop', status=302, location='/loop')
    route_server.route('/nowhere', status=302)
    with pytest.raises(ModelRetry, match=r'Too many redirects \(11\)\. Maximum allowed: 10'):
        await fetch(f'{route_server.url}/loop', allow_local_urls=True)
    with pytest.raises(ModelRetry, match='Redirect response missing Location header'):
        await fetch(f'{route_server.url}/nowhere', allow_local_urls=True)


async def test_error_statuses_and_oversized_bodies_are_retries(route_server: RouteServer) -> None:
    route_server.route('/big', body=b'x' * 2000, content_type='text/plain')
    with pytest.raises(
        ModelRetry,
        match=rf"Failed to fetch .*/missing: Client error '404 Not Found' for url '{route_server.url}/missing'",
    ):
        await fetch(f'{route_server.url}/missing', allow_local_urls=True)
    with pytest.raises(ModelRetry, match='Download exceeds the maximum size of 1000 bytes'):
        await fetch(f'{route_server.url}/big', allow_local_urls=True, max_download_bytes=1000)


async def test_bad_urls_are_retries() -> None:
    with pytest.raises(ModelRetry, match="URL protocol 'file' is not allowed"):
        await fetch('file:///etc/passwd')
    with pytest.raises(ModelRetry, match='Invalid URL: no hostname'):
        await fetch('http:///path')
    with pytest.raises(ModelRetry, match='DNS resolution failed for hostname'):
        await fetch('http://no-such-host.invalid/')


async def test_the_model_gets_the_page_through_an_agent(route_server: RouteServer) -> None:
    route_server.route('/page', body=PAGE, content_type='text/html')

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('web_fetch', {'url': f'{route_server.url}/page'})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(model), tools=[web_fetch_tool(allow_local_urls=True)])
    result = await agent.run('read it')
    returns = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    content: Any = returns[0].content
    assert content['title'] == 'The Page'


def test_the_tool_offered_to_the_model() -> None:
    tool = web_fetch_tool()
    assert (tool.name, tool.description) == (
        'web_fetch',
        'Fetch a web page by URL and return its content as markdown (PDFs, images and such as they are).',
    )
    assert tool.function_schema.json_schema['properties'] == {
        'url': {'description': 'The URL to fetch.', 'type': 'string'}
    }


@pytest.mark.parametrize(
    ('address', 'local', 'metadata'),
    [
        ('8.8.8.8', False, False),
        ('10.0.0.1', True, False),
        ('100.64.0.1', True, False),
        ('::ffff:127.0.0.1', True, False),
        ('::ffff:169.254.169.254', True, True),
        ('64:ff9b::a00:1', True, False),
        ('2002:a00:1::', True, False),
        ('2001:4860:4860::8888', False, False),
        ('168.63.129.16', False, True),
        ('fd00:ec2::254', True, True),
    ],
)
def test_which_addresses_count_as_local_or_metadata(address: str, local: bool, metadata: bool) -> None:
    ip = ipaddress.ip_address(address)
    assert (is_local(ip), is_cloud_metadata(ip)) == (local, metadata)


async def test_web_fetch_local_true_is_this_tool_with_the_capabilitys_domain_filters(route_server: RouteServer) -> None:
    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            assert [t.name for t in info.function_tools] == ['web_fetch']
            return ModelResponse(parts=[ToolCallPart('web_fetch', {'url': f'{route_server.url}/page'})])
        seen.extend(str(p.content) for p in messages[-1].parts if isinstance(p, RetryPromptPart))
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(
        FunctionModel(model), capabilities=[WebFetch(native=False, local=True, allowed_domains=['example.com'])]
    )
    await agent.run('read it')
    assert seen == [
        f"Failed to fetch {route_server.url}/page: Domain '127.0.0.1' is not in the allowed domains list. "
        "Allowed: ['example.com']"
    ]
    assert route_server.received == []


def test_json_is_given_as_it_came_when_it_is_too_deep_or_too_long_to_indent(monkeypatch: pytest.MonkeyPatch) -> None:
    deep = '[' * 100_000 + ']' * 100_000
    assert web_fetch_module._format_json(deep, None) == deep
    monkeypatch.setattr(web_fetch_module, '_MAX_JSON_LENGTH', 10)
    long = json.dumps({'key': 'a value longer than ten characters'})
    assert web_fetch_module._format_json(long, None) == long


async def test_a_negative_download_limit_is_refused() -> None:
    with pytest.raises(ValueError, match=r'^max_bytes must be non-negative$'):
        await safe_get('http://127.0.0.1/', max_bytes=-1)


async def test_content_type_parameters_other_than_charset_are_ignored(route_server: RouteServer) -> None:
    route_server.route('/txt', body=b'plain', content_type='text/plain; format=flowed')
    route_server.route('/page', body=PAGE, content_type='text/html')
    assert (await fetch(f'{route_server.url}/txt', allow_local_urls=True))['content'] == 'plain'  # type: ignore[index]
    # A second conversion in one event loop reuses its limiter.
    for _ in range(2):
        assert (await fetch(f'{route_server.url}/page', allow_local_urls=True))['title'] == 'The Page'  # type: ignore[index]


def test_teredo_addresses_are_checked_by_the_addresses_they_carry_and_odd_host_names_are_compared_as_given() -> None:
    assert is_local(ipaddress.ip_address('2001:0:4136:e378:8000:63bf:3fff:fdd2'))
    host = 'a' * 70 + '.example'
    check_domain(host, allowed_domains=[host.upper()], blocked_domains=None)
    with pytest.raises(ValueError, match='is blocked'):
        check_domain(host, allowed_domains=None, blocked_domains=[host])


async def test_cookies_set_on_the_way_are_not_sent_on(route_server: RouteServer) -> None:
    route_server.route('/set', status=302, location='/page', set_cookie='session=abc; Path=/')
    route_server.route('/page', body=b'ok', content_type='text/plain')
    await fetch(f'{route_server.url}/set', allow_local_urls=True)
    assert [r['headers'].get('cookie') for r in route_server.received] == [None, None]


def test_the_headers_stay_out_of_the_repr() -> None:
    tool = WebFetchLocalTool(
        max_content_length=None, allow_local_urls=False, timeout=5, headers={'Authorization': 'Bearer secret'}
    )
    assert 'secret' not in repr(tool)
    assert repr(tool).startswith('WebFetchLocalTool(max_content_length=None, allow_local_urls=False, timeout=5,')
