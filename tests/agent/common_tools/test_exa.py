"""The Exa tools against a real HTTP server on 127.0.0.1 that answers as Exa's API does."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import PydanticAIDeprecationWarning, UserError
from edgewise.agent.common_tools.exa import (
    ExaClient,
    ExaToolset,
    exa_answer_tool,
    exa_find_similar_tool,
    exa_get_contents_tool,
    exa_search_tool,
)

from .conftest import RouteServer

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings('ignore::edgewise.agent.PydanticAIDeprecationWarning')]

KEY = 'exa-secret-key-456'
PAGE = {
    'id': 'https://a.example/',
    'url': 'https://a.example/',
    'title': 'A',
    'publishedDate': '2026-01-02',
    'author': 'Ann',
    'text': 'Text of A.',
    'score': 0.5,
}
BARE = {'id': 'https://b.example/', 'url': 'https://b.example/', 'title': None}
RESULTS = [
    {'title': 'A', 'url': 'https://a.example/', 'published_date': '2026-01-02', 'author': 'Ann', 'text': 'Text of A.'},
    {'title': '', 'url': 'https://b.example/', 'published_date': None, 'author': None, 'text': ''},
]


async def test_search_sends_exas_request_and_returns_the_pages(route_server: RouteServer) -> None:
    route_server.route('/search', body={'requestId': 'r1', 'results': [PAGE, BARE]})
    tool = exa_search_tool(KEY, num_results=3, max_characters=100, base_url=route_server.url)
    assert tool.name == 'exa_search'
    assert await tool.function(query='edgewise', search_type='neural') == RESULTS
    [request] = route_server.received
    assert request['headers']['x-api-key'] == KEY
    assert request['body'] == {
        'query': 'edgewise',
        'numResults': 3,
        'type': 'neural',
        'contents': {'text': {'maxCharacters': 100}},
    }
    await exa_search_tool(KEY, base_url=route_server.url).function(query='q')
    assert route_server.received[1]['body'] == {
        'query': 'q',
        'numResults': 5,
        'type': 'auto',
        'contents': {'text': True},
    }


async def test_find_similar_contents_and_answer(route_server: RouteServer) -> None:
    route_server.route('/findSimilar', body={'results': [PAGE]})
    route_server.route('/contents', body={'results': [PAGE, BARE]})
    route_server.route('/answer', body={'answer': 'Yes.', 'citations': [PAGE, BARE]})
    base = route_server.url
    similar = await exa_find_similar_tool(KEY, num_results=2, base_url=base).function(url='https://x.example/')
    assert similar == RESULTS[:1]
    contents = await exa_get_contents_tool(KEY, base_url=base).function(urls=['https://a.example/'])
    assert contents == [
        {
            'url': 'https://a.example/',
            'title': 'A',
            'text': 'Text of A.',
            'author': 'Ann',
            'published_date': '2026-01-02',
        },
        {'url': 'https://b.example/', 'title': '', 'text': '', 'author': None, 'published_date': None},
    ]
    assert await exa_answer_tool(KEY, base_url=base).function(query='Is it?') == {
        'answer': 'Yes.',
        'citations': [
            {'url': 'https://a.example/', 'title': 'A', 'text': 'Text of A.'},
            {'url': 'https://b.example/', 'title': '', 'text': ''},
        ],
    }
    assert [(r['path'], r['body']) for r in route_server.received] == [
        (
            '/findSimilar',
            {'url': 'https://x.example/', 'numResults': 2, 'excludeSourceDomain': True, 'contents': {'text': True}},
        ),
        ('/contents', {'urls': ['https://a.example/'], 'text': True}),
        ('/answer', {'query': 'Is it?', 'text': True}),
    ]


async def test_a_refused_key_is_a_user_error_that_does_not_show_the_key(route_server: RouteServer) -> None:
    route_server.route('/search', status=401, body={'error': f'Invalid API key {KEY}'})
    with pytest.raises(UserError) as exc_info:
        await exa_search_tool(KEY, base_url=route_server.url).function(query='q')
    assert str(exc_info.value) == (
        'Exa refused the API key (HTTP 401: Invalid API key ***). Check the `api_key` given to the Exa tool '
        '(a key from dashboard.exa.ai).'
    )


async def test_the_toolset_shares_one_client_and_picks_its_tools(route_server: RouteServer) -> None:
    route_server.route('/answer', body={'answer': 'ok', 'citations': []})
    with pytest.warns(PydanticAIDeprecationWarning, match='`ExaToolset` is deprecated and will be removed in v3'):
        toolset = ExaToolset(KEY, include_find_similar=False, id='exa', base_url=route_server.url)
    assert list(toolset.tools) == ['exa_search', 'exa_get_contents', 'exa_answer']
    assert toolset.id == 'exa'
    assert await toolset.tools['exa_answer'].function(query='q') == {'answer': 'ok', 'citations': []}
    with pytest.warns(PydanticAIDeprecationWarning):
        only_search = ExaToolset(KEY, include_get_contents=False, include_answer=False, include_find_similar=False)
    assert list(only_search.tools) == ['exa_search']
    with pytest.warns(PydanticAIDeprecationWarning):
        every = ExaToolset(KEY)
    assert list(every.tools) == ['exa_search', 'exa_find_similar', 'exa_get_contents', 'exa_answer']
    with pytest.warns(PydanticAIDeprecationWarning):
        no_search = ExaToolset(KEY, include_search=False)
    assert list(no_search.tools) == ['exa_find_similar', 'exa_get_contents', 'exa_answer']


def test_the_factories_are_deprecated_and_need_a_key_or_a_client() -> None:
    with pytest.warns(PydanticAIDeprecationWarning, match='`exa_search_tool` is deprecated'):
        exa_search_tool(KEY)
    factories: list[Any] = [exa_search_tool, exa_find_similar_tool, exa_get_contents_tool, exa_answer_tool]
    for factory in factories:
        with pytest.raises(ValueError, match=r'^Either api_key or client must be provided$'):
            factory()
    assert repr(ExaClient(KEY)) == "ExaClient(base_url='https://api.exa.ai', timeout=60)"


async def test_a_client_of_exa_pys_shape_can_be_given() -> None:
    class Page:
        url, title, published_date, author, text = 'https://c.example/', 'C', None, None, 'c'

    class Response:
        def __init__(self) -> None:
            self.results = [Page()]

    calls: list[tuple[str, Any, dict[str, Any]]] = []

    class Client:
        async def search(self, query: str, **options: Any) -> Any:
            calls.append(('search', query, options))
            return Response()

        async def find_similar(self, url: str, **options: Any) -> Any:
            raise NotImplementedError  # pragma: no cover

        async def get_contents(self, urls: list[str], **options: Any) -> Any:
            raise NotImplementedError  # pragma: no cover

        async def answer(self, query: str, **options: Any) -> Any:
            raise NotImplementedError  # pragma: no cover

    result = await exa_search_tool(client=Client(), num_results=1).function(query='q')
    assert result == [{'title': 'C', 'url': 'https://c.example/', 'published_date': None, 'author': None, 'text': 'c'}]
    assert calls == [('search', 'q', {'num_results': 1, 'type': 'auto', 'contents': {'text': True}})]
