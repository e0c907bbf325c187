"""Exa tools: web search, similar pages, page contents and answers with citations, through Exa's API spoken over
httpx (no `exa-py` needed).

As in pydantic-ai 2.x, these are deprecated and go in v3 (pydantic-ai moves them to its harness's `ExaSearch`
capability). `client=` takes anything with `exa-py`'s `AsyncExa` shape (async `search`, `find_similar`,
`get_contents`, `answer` whose answers have `results` / `answer` and `citations` of objects with `title`, `url`,
`published_date`, `author`, `text`): `ExaClient` here, or `exa_py.AsyncExa`.
"""

from __future__ import annotations as _annotations

import re
import warnings
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, Protocol, overload

from typing_extensions import TypedDict, deprecated

from .._warnings import PydanticAIDeprecationWarning
from ..tools import Tool
from ..toolsets import FunctionToolset
from ._rest import post_json

__all__ = (
    'ExaAnswerResult',
    'ExaClient',
    'ExaContentResult',
    'ExaSearchResult',
    'ExaToolset',
    'exa_answer_tool',
    'exa_find_similar_tool',
    'exa_get_contents_tool',
    'exa_search_tool',
)

DEFAULT_EXA_BASE_URL = 'https://api.exa.ai'
_DEPRECATED = (
    '`{}` is deprecated and will be removed in v3, as in pydantic-ai 2.x (which moves Exa search to the '
    '`ExaSearch` capability of the Pydantic AI Harness); Edgewise keeps it working until then.'
)
_CAMEL = re.compile(r'_([a-z])')

SearchType = Literal['auto', 'keyword', 'neural', 'fast', 'deep']


class ExaSearchResult(TypedDict):
    """One page Exa found, with its text, as the model gets it."""

    title: str
    """The page's title."""
    url: str
    """The page's URL."""
    published_date: str | None
    """When the page was published, if known."""
    author: str | None
    """The page's author, if known."""
    text: str
    """The page's text."""


class ExaAnswerResult(TypedDict):
    """Exa's answer to a question, with the pages it cites."""

    answer: str
    """The answer."""
    citations: list[dict[str, Any]]
    """The cited pages: `url`, `title` and `text` each."""


class ExaContentResult(TypedDict):
    """The content of one page Exa read."""

    url: str
    """The page's URL."""
    title: str
    """The page's title."""
    text: str
    """The page's text."""
    author: str | None
    """The page's author, if known."""
    published_date: str | None
    """When the page was published, if known."""


class ExaSearchClient(Protocol):
    """What the Exa tools need of a client (`exa_py.AsyncExa` has it)."""

    async def search(self, query: str, **options: Any) -> Any: ...  # pragma: no cover - a protocol

    async def find_similar(self, url: str, **options: Any) -> Any: ...  # pragma: no cover - a protocol

    async def get_contents(self, urls: list[str], **options: Any) -> Any: ...  # pragma: no cover - a protocol

    async def answer(self, query: str, **options: Any) -> Any: ...  # pragma: no cover - a protocol


@dataclass
class ExaPage:
    """A page in one of `ExaClient`'s answers."""

    url: str
    title: str | None = None
    published_date: str | None = None
    author: str | None = None
    text: str | None = None


@dataclass
class ExaResponse:
    """`ExaClient`'s answer to a search, a similar-pages search or a contents request."""

    results: list[ExaPage]


@dataclass
class ExaAnswer:
    """`ExaClient`'s answer to a question."""

    answer: str
    citations: list[ExaPage]


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {_CAMEL.sub(lambda m: m.group(1).upper(), k): _camel(v) for k, v in value.items() if v is not None}
    return value


def _page(item: dict[str, Any]) -> ExaPage:
    return ExaPage(
        url=str(item.get('url') or item.get('id') or ''),
        title=item.get('title'),
        published_date=item.get('publishedDate'),
        author=item.get('author'),
        text=item.get('text'),
    )


@dataclass
class ExaClient:
    """A small Exa API client: POSTs JSON to `{base_url}/<endpoint>` with the key in `x-api-key`. Its methods take
    `exa-py`'s snake_case options (sent in Exa's camelCase).

    The key is left out of the repr and of every error.
    """

    api_key: str = field(repr=False)
    """The Exa API key."""
    _: KW_ONLY
    base_url: str = DEFAULT_EXA_BASE_URL
    """Where Exa's API is (a proxy or a test server may stand in)."""
    timeout: float = 60
    """Seconds a request may take."""

    async def _post(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = await post_json(
            f'{self.base_url.rstrip("/")}/{endpoint}',
            _camel(body),
            service='Exa',
            headers={'x-api-key': self.api_key},
            secret=self.api_key,
            key_hint='the `api_key` given to the Exa tool (a key from dashboard.exa.ai)',
            request_timeout=self.timeout,
        )
        return answer if isinstance(answer, dict) else {}

    async def search(self, query: str, **options: Any) -> ExaResponse:
        """Exa's `/search`: pages for `query` (`num_results`, `type`, `contents`, ...)."""
        answer = await self._post('search', {'query': query, **options})
        return ExaResponse([_page(r) for r in answer.get('results') or []])

    async def find_similar(self, url: str, **options: Any) -> ExaResponse:
        """Exa's `/findSimilar`: pages like the one at `url` (`num_results`, `exclude_source_domain`, ...)."""
        answer = await self._post('findSimilar', {'url': url, **options})
        return ExaResponse([_page(r) for r in answer.get('results') or []])

    async def get_contents(self, urls: list[str], **options: Any) -> ExaResponse:
        """Exa's `/contents`: the contents of the pages at `urls` (`text`, ...)."""
        answer = await self._post('contents', {'urls': urls, **options})
        return ExaResponse([_page(r) for r in answer.get('results') or []])

    async def answer(self, query: str, **options: Any) -> ExaAnswer:
        """Exa's `/answer`: an answer to `query` with the pages it cites (`text`, ...)."""
        answer = await self._post('answer', {'query': query, **options})
        return ExaAnswer(str(answer.get('answer') or ''), [_page(c) for c in answer.get('citations') or []])


def _search_result(page: Any) -> ExaSearchResult:
    return ExaSearchResult(
        title=page.title or '',
        url=page.url,
        published_date=page.published_date,
        author=page.author,
        text=page.text or '',
    )


@dataclass
class ExaSearchTool:
    """The function behind `exa_search_tool`."""

    client: ExaSearchClient
    """The Exa client."""
    num_results: int
    """How many results a search gives."""
    max_characters: int | None
    """The most characters of text of each result; None for no limit."""

    async def __call__(self, query: str, search_type: SearchType = 'auto') -> list[ExaSearchResult]:
        """Searches Exa for the given query and returns the results with content.

        Args:
            query: What to search for.
            search_type: How to search: 'auto' lets Exa choose, 'keyword' matches words exactly, 'neural' searches
                by meaning, 'fast' favours speed, 'deep' runs several queries for a thorough search.

        Returns:
            The pages found, with their text.
        """
        text: Any = {'max_characters': self.max_characters} if self.max_characters is not None else True
        response = await self.client.search(
            query, num_results=self.num_results, type=search_type, contents={'text': text}
        )
        return [_search_result(page) for page in response.results]


@dataclass
class ExaFindSimilarTool:
    """The function behind `exa_find_similar_tool`."""

    client: ExaSearchClient
    """The Exa client."""
    num_results: int
    """How many results a search gives."""

    async def __call__(self, url: str, exclude_source_domain: bool = True) -> list[ExaSearchResult]:
        """Finds pages similar to the given URL and returns them with content.

        Args:
            url: The page to find others like.
            exclude_source_domain: Whether to leave out pages of the URL's own domain.

        Returns:
            The similar pages, with their text.
        """
        response = await self.client.find_similar(
            url, num_results=self.num_results, exclude_source_domain=exclude_source_domain, contents={'text': True}
        )
        return [_search_result(page) for page in response.results]


@dataclass
class ExaGetContentsTool:
    """The function behind `exa_get_contents_tool`."""

    client: ExaSearchClient
    """The Exa client."""

    async def __call__(self, urls: list[str]) -> list[ExaContentResult]:
        """Gets the content of the specified URLs.

        Args:
            urls: The pages to read.

        Returns:
            The content of each page.
        """
        response = await self.client.get_contents(urls, text=True)
        return [
            ExaContentResult(
                url=page.url,
                title=page.title or '',
                text=page.text or '',
                author=page.author,
                published_date=page.published_date,
            )
            for page in response.results
        ]


@dataclass
class ExaAnswerTool:
    """The function behind `exa_answer_tool`."""

    client: ExaSearchClient
    """The Exa client."""

    async def __call__(self, query: str) -> ExaAnswerResult:
        """Generates an AI-powered answer to the query with citations.

        Args:
            query: The question to answer.

        Returns:
            The answer, with the pages it cites.
        """
        response = await self.client.answer(query, text=True)
        return ExaAnswerResult(
            answer=response.answer,
            citations=[{'url': c.url, 'title': c.title or '', 'text': c.text or ''} for c in response.citations],
        )


def _client(api_key: str | None, client: ExaSearchClient | None, base_url: str) -> ExaSearchClient:
    if client is not None:
        return client
    if api_key is None:
        raise ValueError('Either api_key or client must be provided')
    return ExaClient(api_key, base_url=base_url)


@overload
def exa_search_tool(
    api_key: str, *, num_results: int = 5, max_characters: int | None = None, base_url: str = DEFAULT_EXA_BASE_URL
) -> Tool[Any]: ...


@overload
def exa_search_tool(
    *, client: ExaSearchClient, num_results: int = 5, max_characters: int | None = None
) -> Tool[Any]: ...


@deprecated(_DEPRECATED.format('exa_search_tool'), category=PydanticAIDeprecationWarning)
def exa_search_tool(
    api_key: str | None = None,
    *,
    client: ExaSearchClient | None = None,
    num_results: int = 5,
    max_characters: int | None = None,
    base_url: str = DEFAULT_EXA_BASE_URL,
) -> Tool[Any]:
    """A tool named `exa_search` that searches the web with Exa and gives the pages' text.

    Args:
        api_key: The Exa API key (from dashboard.exa.ai); needed unless `client` is given.
        client: An Exa client to use instead (shared between tools, say); `api_key` is then ignored.
        num_results: How many results a search gives.
        max_characters: The most characters of text of each result (fewer tokens); None for no limit.
        base_url: Where Exa's API is, for the client made from `api_key` (an Edgewise addition).
    """
    return Tool[Any](
        ExaSearchTool(_client(api_key, client, base_url), num_results, max_characters).__call__,
        name='exa_search',
        description='Search the web with Exa, a neural search engine, and return the pages found with their text.',
    )


@overload
def exa_find_similar_tool(api_key: str, *, num_results: int = 5, base_url: str = DEFAULT_EXA_BASE_URL) -> Tool[Any]: ...


@overload
def exa_find_similar_tool(*, client: ExaSearchClient, num_results: int = 5) -> Tool[Any]: ...


@deprecated(_DEPRECATED.format('exa_find_similar_tool'), category=PydanticAIDeprecationWarning)
def exa_find_similar_tool(
    api_key: str | None = None,
    *,
    client: ExaSearchClient | None = None,
    num_results: int = 5,
    base_url: str = DEFAULT_EXA_BASE_URL,
) -> Tool[Any]:
    """A tool named `exa_find_similar` that finds pages like a given one with Exa.

    Args:
        api_key: The Exa API key (from dashboard.exa.ai); needed unless `client` is given.
        client: An Exa client to use instead; `api_key` is then ignored.
        num_results: How many similar pages a search gives.
        base_url: Where Exa's API is, for the client made from `api_key` (an Edgewise addition).
    """
    return Tool[Any](
        ExaFindSimilarTool(_client(api_key, client, base_url), num_results).__call__,
        name='exa_find_similar',
        description='Find web pages like the one at a URL (related content, competitors, other sources) with Exa.',
    )


@overload
def exa_get_contents_tool(api_key: str, *, base_url: str = DEFAULT_EXA_BASE_URL) -> Tool[Any]: ...


@overload
def exa_get_contents_tool(*, client: ExaSearchClient) -> Tool[Any]: ...


@deprecated(_DEPRECATED.format('exa_get_contents_tool'), category=PydanticAIDeprecationWarning)
def exa_get_contents_tool(
    api_key: str | None = None, *, client: ExaSearchClient | None = None, base_url: str = DEFAULT_EXA_BASE_URL
) -> Tool[Any]:
    """A tool named `exa_get_contents` that reads the full text of pages with Exa.

    Args:
        api_key: The Exa API key (from dashboard.exa.ai); needed unless `client` is given.
        client: An Exa client to use instead; `api_key` is then ignored.
        base_url: Where Exa's API is, for the client made from `api_key` (an Edgewise addition).
    """
    return Tool[Any](
        ExaGetContentsTool(_client(api_key, client, base_url)).__call__,
        name='exa_get_contents',
        description='Read the full text of the pages at the given URLs with Exa.',
    )


@overload
def exa_answer_tool(api_key: str, *, base_url: str = DEFAULT_EXA_BASE_URL) -> Tool[Any]: ...


@overload
def exa_answer_tool(*, client: ExaSearchClient) -> Tool[Any]: ...


@deprecated(_DEPRECATED.format('exa_answer_tool'), category=PydanticAIDeprecationWarning)
def exa_answer_tool(
    api_key: str | None = None, *, client: ExaSearchClient | None = None, base_url: str = DEFAULT_EXA_BASE_URL
) -> Tool[Any]:
    """A tool named `exa_answer` that answers a question with Exa, citing the web pages it draws on.

    Args:
        api_key: The Exa API key (from dashboard.exa.ai); needed unless `client` is given.
        client: An Exa client to use instead; `api_key` is then ignored.
        base_url: Where Exa's API is, for the client made from `api_key` (an Edgewise addition).
    """
    return Tool[Any](
        ExaAnswerTool(_client(api_key, client, base_url)).__call__,
        name='exa_answer',
        description='Answer a question with Exa, citing the web pages the answer draws on.',
    )


@deprecated(_DEPRECATED.format('ExaToolset'), category=PydanticAIDeprecationWarning)
class ExaToolset(FunctionToolset[Any]):
    """The Exa tools, sharing one client."""

    def __init__(
        self,
        api_key: str,
        *,
        num_results: int = 5,
        max_characters: int | None = None,
        include_search: bool = True,
        include_find_similar: bool = True,
        include_get_contents: bool = True,
        include_answer: bool = True,
        id: str | None = None,
        base_url: str = DEFAULT_EXA_BASE_URL,
    ) -> None:
        """The Exa tools chosen, with one client.

        Args:
            api_key: The Exa API key (from dashboard.exa.ai).
            num_results: How many results a search or a similar-pages search gives.
            max_characters: The most characters of text of each search result; None for no limit.
            include_search: Whether to include `exa_search`.
            include_find_similar: Whether to include `exa_find_similar`.
            include_get_contents: Whether to include `exa_get_contents`.
            include_answer: Whether to include `exa_answer`.
            id: The toolset's id (for durable execution).
            base_url: Where Exa's API is (an Edgewise addition).
        """
        client = ExaClient(api_key, base_url=base_url)
        tools: list[Tool[Any]] = []
        # Making the toolset warned already: the factories' own warnings would only repeat it.
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', PydanticAIDeprecationWarning)
            if include_search:
                tools.append(exa_search_tool(client=client, num_results=num_results, max_characters=max_characters))
            if include_find_similar:
                tools.append(exa_find_similar_tool(client=client, num_results=num_results))
            if include_get_contents:
                tools.append(exa_get_contents_tool(client=client))
            if include_answer:
                tools.append(exa_answer_tool(client=client))
        super().__init__(tools, id=id)
