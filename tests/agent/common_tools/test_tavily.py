"""`tavily_search_tool` against a real HTTP server on 127.0.0.1 that answers as Tavily's search API does."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import ModelRetry, UserError
from edgewise.agent.common_tools.tavily import TavilyClient, tavily_search_tool

from .conftest import RouteServer

pytestmark = pytest.mark.anyio

KEY = 'tvly-secret-key-123'
ANSWER = {
    'query': 'edgewise',
    'results': [
        {
            'title': 'Edgewise',
            'url': 'https://e.example/',
            'content': 'A graph engine.',
            'score': 0.9,
            'raw_content': None,
        },
        {'title': 'Other', 'url': 'https://o.example/', 'content': 'Something else.', 'score': 0.25},
    ],
    'response_time': 0.5,
}
RESULTS = [
    {'title': 'Edgewise', 'url': 'https://e.example/', 'content': 'A graph engine.', 'score': 0.9},
    {'title': 'Other', 'url': 'https://o.example/', 'content': 'Something else.', 'score': 0.25},
]


async def test_a_search_posts_the_query_with_the_key_and_returns_the_results(route_server: RouteServer) -> None:
    route_server.route('/search', body=ANSWER)
    tool = tavily_search_tool(KEY, max_results=3, base_url=route_server.url)
    assert await tool.function(query='edgewise', topic='news', include_domains=['e.example']) == RESULTS
    [request] = route_server.received
    assert (request['method'], request['path'], request['headers']['authorization']) == (
        'POST',
        '/search',
        f'Bearer {KEY}',
    )
    assert request['body'] == {
        'query': 'edgewise',
        'search_depth': 'basic',
        'topic': 'news',
        'max_results': 3,
        'include_domains': ['e.example'],
    }


async def test_options_given_to_the_factory_are_fixed_and_hidden_from_the_model(route_server: RouteServer) -> None:
    route_server.route('/search', body=ANSWER)
    tool = tavily_search_tool(KEY, search_depth='advanced', time_range='week', base_url=route_server.url)
    assert list(tool.function_schema.json_schema['properties']) == [
        'query',
        'topic',
        'include_domains',
        'exclude_domains',
    ]
    assert tool.name == 'tavily_search'
    await tool.function(query='q')
    body = route_server.received[0]['body']
    assert (body['search_depth'], body['time_range'], body['topic']) == ('advanced', 'week', 'general')


def test_the_model_sees_every_option_when_none_is_fixed() -> None:
    schema = tavily_search_tool(KEY).function_schema.json_schema
    assert schema['required'] == ['query']
    assert list(schema['properties']) == [
        'query',
        'search_depth',
        'topic',
        'time_range',
        'include_domains',
        'exclude_domains',
    ]
    assert schema['properties']['search_depth']['enum'] == ['basic', 'advanced', 'fast', 'ultra-fast']


async def test_a_refused_key_is_a_user_error_that_does_not_show_the_key(route_server: RouteServer) -> None:
    route_server.route('/search', status=401, body={'detail': {'error': f'Unauthorized: bad key {KEY}'}})
    with pytest.raises(UserError) as exc_info:
        await tavily_search_tool(KEY, base_url=route_server.url).function(query='q')
    assert str(exc_info.value) == (
        'Tavily refused the API key (HTTP 401: Unauthorized: bad key ***). Check the `api_key` given to '
        '`tavily_search_tool` (a key from app.tavily.com).'
    )


async def test_server_errors_and_rate_limits_let_the_model_retry(route_server: RouteServer) -> None:
    route_server.route('/search', status=429, body={'detail': {'error': 'Too many requests'}})
    with pytest.raises(ModelRetry, match=r'^Tavily request failed with HTTP 429: Too many requests$'):
        await tavily_search_tool(KEY, base_url=route_server.url).function(query='q')
    route_server.route('/search', status=500, body=b'oops', content_type='text/plain')
    with pytest.raises(ModelRetry, match=r'^Tavily request failed with HTTP 500: oops$'):
        await tavily_search_tool(KEY, base_url=route_server.url).function(query='q')
    route_server.route('/search', status=400, body={'error': 'bad topic'})
    with pytest.raises(UserError, match=r'^Tavily refused the request with HTTP 400: bad topic$'):
        await tavily_search_tool(KEY, base_url=route_server.url).function(query='q')
    route_server.route('/search', status=422, body={'loc': ['query']})
    with pytest.raises(UserError, match=r"^Tavily refused the request with HTTP 422: \{'loc': \['query'\]\}$"):
        await tavily_search_tool(KEY, base_url=route_server.url).function(query='q')
    route_server.route('/search', body=b'<html>', content_type='text/html')
    with pytest.raises(ModelRetry, match=r'^Tavily answered with something that is not JSON \(HTTP 200\)$'):
        await tavily_search_tool(KEY, base_url=route_server.url).function(query='q')


async def test_a_connection_that_fails_lets_the_model_retry(route_server: RouteServer) -> None:
    with pytest.raises(ModelRetry, match=r'^Tavily request failed: ConnectError') as exc_info:
        await tavily_search_tool(KEY, base_url='http://127.0.0.1:9').function(query='q')
    assert KEY not in str(exc_info.value)


async def test_a_client_of_tavilys_shape_can_be_given() -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    class Client:
        async def search(self, query: str, **options: Any) -> Any:
            calls.append((query, options))
            return ANSWER

    tool = tavily_search_tool(client=Client(), max_results=2, exclude_domains=['x.example'])
    assert await tool.function(query='q') == RESULTS
    assert calls == [
        (
            'q',
            {
                'search_depth': 'basic',
                'topic': 'general',
                'time_range': None,
                'max_results': 2,
                'include_domains': None,
                'exclude_domains': ['x.example'],
            },
        )
    ]


def test_a_key_or_a_client_is_needed_and_the_key_stays_out_of_the_repr() -> None:
    with pytest.raises(ValueError, match=r'^Either api_key or client must be provided$'):
        tavily_search_tool()  # type: ignore[call-overload]
    assert KEY not in repr(TavilyClient(KEY))
    assert repr(TavilyClient(KEY)) == "TavilyClient(base_url='https://api.tavily.com', timeout=60)"
