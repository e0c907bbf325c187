"""`duckduckgo_search_tool` against a real HTTP server on 127.0.0.1 that answers as DuckDuckGo's HTML search does."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, quote

import pytest

from edgewise.agent import Agent, ModelRetry
from edgewise.agent.capabilities import WebSearch
from edgewise.agent.common_tools.duckduckgo import DuckDuckGoClient, duckduckgo_search_tool
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

from .conftest import RouteServer

pytestmark = pytest.mark.anyio


def result(n: int, *, redirect: bool = True) -> str:
    url = f'https://site{n}.example/page?a=1&b=2'
    href = f'//duckduckgo.com/l/?uddg={quote(url, safe="")}&amp;rut=abc' if redirect else url
    return f"""
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="{href}">Site <b>{n}</b> &amp; more</a></h2>
    <div class="result__extras"><a class="result__url" href="{href}">site{n}.example</a></div>
    <a class="result__snippet" href="{href}">Snippet <b>number</b>
      {n}.</a>
  </div>
</div>"""


AD = """<div class="result results_links results_links_deep result--ad">
  <h2 class="result__title"><a class="result__a" href="https://duckduckgo.com/y.js?ad_domain=x.example">Ad</a></h2>
  <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=x.example">Buy</a></div>"""


def page(*results: str, next_start: int | None = None) -> bytes:
    form = ''
    if next_start is not None:
        form = f"""<div class="nav-link"><form action="/html/" method="post">
<input type="submit" class="btn btn--alt" value="Next" /><input type="hidden" name="q" value="edgewise" />
<input type="hidden" name="s" value="{next_start}" /><input type="hidden" name="dc" value="{next_start + 1}" />
</form></div>"""
    prev = '<form action="/html/" method="post"><input type="submit" value="Previous"><input name="s" value="0"></form>'
    return f'<html><body>{prev}{"".join(results)}{form}</body></html>'.encode()


def serve_pages(server: RouteServer) -> None:
    def answer(body: Any) -> bytes:
        start = int(parse_qs(body).get('s', ['0'])[0])
        if start == 0:
            return page(AD, result(1), result(2, redirect=False), next_start=2)
        return page(result(3), result(4))

    server.route('/html/', body=answer, content_type='text/html; charset=utf-8')


async def test_the_first_page_results_without_ads_when_max_results_is_none(route_server: RouteServer) -> None:
    serve_pages(route_server)
    tool = duckduckgo_search_tool(base_url=route_server.url)
    assert await tool.function(query='edgewise') == [
        {'title': 'Site 1 & more', 'href': 'https://site1.example/page?a=1&b=2', 'body': 'Snippet number 1.'},
        {'title': 'Site 2 & more', 'href': 'https://site2.example/page?a=1&b=2', 'body': 'Snippet number 2.'},
    ]
    [request] = route_server.received
    assert (request['method'], request['path']) == ('POST', '/html/')
    assert parse_qs(request['body'], keep_blank_values=True) == {'q': ['edgewise'], 'b': [''], 'kl': ['wt-wt']}


async def test_max_results_reads_the_next_pages_and_cuts(route_server: RouteServer) -> None:
    serve_pages(route_server)
    tool = duckduckgo_search_tool(max_results=3, base_url=route_server.url)
    results = await tool.function(query='edgewise')
    assert [r['href'] for r in results] == [f'https://site{n}.example/page?a=1&b=2' for n in (1, 2, 3)]
    second = parse_qs(route_server.received[1]['body'])
    assert second == {'q': ['edgewise'], 's': ['2'], 'dc': ['3']}


async def test_the_last_page_ends_the_search(route_server: RouteServer) -> None:
    serve_pages(route_server)
    results = await duckduckgo_search_tool(max_results=10, base_url=route_server.url).function(query='edgewise')
    assert len(results) == 4
    assert len(route_server.received) == 2


async def test_a_page_without_results(route_server: RouteServer) -> None:
    route_server.route('/html/', body=b'<div class="no-results">No results.</div>', content_type='text/html')
    assert await duckduckgo_search_tool(max_results=5, base_url=route_server.url).function(query='zzz') == []


async def test_a_throttled_search_or_a_failed_connection_lets_the_model_retry(route_server: RouteServer) -> None:
    route_server.route('/html/', status=202, body=b'<form id="challenge-form">', content_type='text/html')
    with pytest.raises(ModelRetry, match=r'^DuckDuckGo search failed with HTTP 202 \(it may be limiting searches\)'):
        await duckduckgo_search_tool(base_url=route_server.url).function(query='q')
    with pytest.raises(ModelRetry, match=r'^DuckDuckGo search failed: ConnectError'):
        await duckduckgo_search_tool(base_url='http://127.0.0.1:9').function(query='q')


async def test_a_client_of_ddgs_shape_can_be_given_plain_or_async() -> None:
    calls: list[tuple[str, int | None]] = []
    answer = [{'title': 't', 'href': 'https://h.example', 'body': 'b', 'extra': 'dropped'}]

    class Blocking:
        def text(self, query: str, max_results: int | None = None) -> Any:
            calls.append((query, max_results))
            return answer

    class Async:
        async def text(self, query: str, max_results: int | None = None) -> Any:
            calls.append((query, max_results))
            return answer

    expected = [{'title': 't', 'href': 'https://h.example', 'body': 'b'}]
    assert await duckduckgo_search_tool(Blocking(), max_results=7).function(query='a') == expected
    assert await duckduckgo_search_tool(Async()).function(query='b') == expected
    assert calls == [('a', 7), ('b', None)]


def test_the_tool_offered_to_the_model() -> None:
    tool = duckduckgo_search_tool()
    assert tool.name == 'duckduckgo_search'
    assert tool.function_schema.json_schema['properties'] == {
        'query': {'description': 'What to search for.', 'type': 'string'}
    }
    assert DuckDuckGoClient().base_url == 'https://html.duckduckgo.com'


@pytest.mark.parametrize('local', ['duckduckgo', True])
async def test_web_search_local_duckduckgo_offers_this_tool(local: Any) -> None:
    offered: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append([t.name for t in info.function_tools])
        return ModelResponse(parts=[TextPart('done')])

    await Agent(FunctionModel(model), capabilities=[WebSearch(native=False, local=local)]).run('search')
    assert offered == [['duckduckgo_search']]


async def test_odd_markup_and_the_page_limit(route_server: RouteServer) -> None:
    odd = """<form><input type="hidden"><input name="q" value="x"></form>
<div class="result"><a class="result__a" href="/l/?x=1">Local <span>link</span></a>
<div class="result__snippet">Outer <div>inner</div> tail</div></div>"""

    def answer(body: Any) -> bytes:
        return page(odd, result(1), next_start=2)

    route_server.route('/html/', body=answer, content_type='text/html')
    results = await duckduckgo_search_tool(max_results=100, base_url=route_server.url).function(query='q')
    assert results[:2] == [
        {'title': 'Local link', 'href': '/l/?x=1', 'body': 'Outer inner tail'},
        {'title': 'Site 1 & more', 'href': 'https://site1.example/page?a=1&b=2', 'body': 'Snippet number 1.'},
    ]
    assert len(results) == 10
    assert len(route_server.received) == 5
