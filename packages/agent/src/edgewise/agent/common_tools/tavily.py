"""`tavily_search_tool`: web search through Tavily's search API, spoken over httpx (no `tavily-python` needed).

`client=` takes anything with Tavily's client shape: an async `search(query, **options)` answering Tavily's JSON
(a dict with `results`). That is `TavilyClient` here, and `tavily-python`'s `AsyncTavilyClient` too.
"""

from __future__ import annotations as _annotations

from dataclasses import KW_ONLY, dataclass, field
from functools import partial
from inspect import signature
from typing import Any, Literal, Protocol, overload

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from ..tools import Tool
from ._rest import post_json

__all__ = ('TavilyClient', 'TavilySearchResult', 'TavilySearchTool', 'tavily_search_tool')

DEFAULT_TAVILY_BASE_URL = 'https://api.tavily.com'
_UNSET: Any = object()

SearchDepth = Literal['basic', 'advanced', 'fast', 'ultra-fast']
Topic = Literal['general', 'news', 'finance']
TimeRange = Literal['day', 'week', 'month', 'year']


class TavilySearchResult(TypedDict):
    """One result of a Tavily search, as the model gets it."""

    title: str
    """The page's title."""
    url: str
    """The page's URL."""
    content: str
    """A short extract of the page that matches the query."""
    score: float
    """How relevant Tavily found the result."""


tavily_search_ta = TypeAdapter(list[TavilySearchResult])


class TavilySearchClient(Protocol):
    """What `tavily_search_tool(client=...)` needs of a client."""

    async def search(self, query: str, **options: Any) -> Any:  # pragma: no cover - a protocol
        """Search for `query`; the answer is Tavily's JSON (a dict with `results`)."""
        ...


@dataclass
class TavilyClient:
    """A small Tavily API client: POSTs to `{base_url}/search` with the key as a bearer token.

    The key is left out of the repr and of every error.
    """

    api_key: str = field(repr=False)
    """The Tavily API key."""
    _: KW_ONLY
    base_url: str = DEFAULT_TAVILY_BASE_URL
    """Where Tavily's API is (a proxy or a test server may stand in)."""
    timeout: float = 60
    """Seconds a request may take."""

    async def search(self, query: str, **options: Any) -> Any:
        """Search Tavily for `query` with the search endpoint's options (`search_depth`, `topic`, `time_range`,
        `max_results`, `include_domains`, `exclude_domains`, ...; None values are left out) and return its JSON.

        Raises:
            UserError: Tavily refused the key or the request.
            ModelRetry: a rate limit, a server error or a failed connection.
        """
        body = {'query': query, **{k: v for k, v in options.items() if v is not None}}
        return await post_json(
            f'{self.base_url.rstrip("/")}/search',
            body,
            service='Tavily',
            headers={'Authorization': f'Bearer {self.api_key}'},
            secret=self.api_key,
            key_hint='the `api_key` given to `tavily_search_tool` (a key from app.tavily.com)',
            request_timeout=self.timeout,
        )


@dataclass
class TavilySearchTool:
    """The function behind `tavily_search_tool`."""

    client: TavilySearchClient
    """The Tavily client."""

    _: KW_ONLY

    max_results: int | None = None
    """The most results; None for Tavily's default."""

    async def __call__(
        self,
        query: str,
        search_depth: SearchDepth = 'basic',
        topic: Topic = 'general',
        time_range: TimeRange | None = None,
        include_domains: list[str] | None = None,
        exclude_domains: list[str] | None = None,
    ) -> list[TavilySearchResult]:
        """Searches Tavily for the given query and returns the results.

        Args:
            query: What to search for.
            search_depth: How thorough the search is.
            topic: The kind of search.
            time_range: How far back from today results may be.
            include_domains: Only return results from these domains.
            exclude_domains: Never return results from these domains.

        Returns:
            The search results.
        """
        results = await self.client.search(
            query,
            search_depth=search_depth,
            topic=topic,
            time_range=time_range,
            max_results=self.max_results,
            include_domains=include_domains,
            exclude_domains=exclude_domains,
        )
        return tavily_search_ta.validate_python(results['results'])


@overload
def tavily_search_tool(
    api_key: str,
    *,
    max_results: int | None = None,
    search_depth: SearchDepth = _UNSET,
    topic: Topic = _UNSET,
    time_range: TimeRange | None = _UNSET,
    include_domains: list[str] | None = _UNSET,
    exclude_domains: list[str] | None = _UNSET,
    base_url: str = DEFAULT_TAVILY_BASE_URL,
) -> Tool[Any]: ...


@overload
def tavily_search_tool(
    *,
    client: TavilySearchClient,
    max_results: int | None = None,
    search_depth: SearchDepth = _UNSET,
    topic: Topic = _UNSET,
    time_range: TimeRange | None = _UNSET,
    include_domains: list[str] | None = _UNSET,
    exclude_domains: list[str] | None = _UNSET,
) -> Tool[Any]: ...


def tavily_search_tool(
    api_key: str | None = None,
    *,
    client: TavilySearchClient | None = None,
    max_results: int | None = None,
    search_depth: SearchDepth = _UNSET,
    topic: Topic = _UNSET,
    time_range: TimeRange | None = _UNSET,
    include_domains: list[str] | None = _UNSET,
    exclude_domains: list[str] | None = _UNSET,
    base_url: str = DEFAULT_TAVILY_BASE_URL,
) -> Tool[Any]:
    """A tool named `tavily_search` that searches the web with Tavily.

    `max_results` is yours alone. Each of the other search options given here is fixed for every search and left
    out of the tool's schema; those not given are the model's to choose per call.

    Args:
        api_key: The Tavily API key (from app.tavily.com); needed unless `client` is given.
        client: A Tavily client to use instead (shared between tools, say); `api_key` is then ignored.
        max_results: The most results of a search; None for Tavily's default.
        search_depth: How thorough every search is.
        topic: The kind of every search.
        time_range: How far back from today results may be.
        include_domains: Only return results from these domains.
        exclude_domains: Never return results from these domains.
        base_url: Where Tavily's API is, for the client made from `api_key` (an Edgewise addition).
    """
    if client is None:
        if api_key is None:
            raise ValueError('Either api_key or client must be provided')
        client = TavilyClient(api_key, base_url=base_url)
    function: Any = TavilySearchTool(client=client, max_results=max_results).__call__
    fixed = {
        name: value
        for name, value in (
            ('search_depth', search_depth),
            ('topic', topic),
            ('time_range', time_range),
            ('include_domains', include_domains),
            ('exclude_domains', exclude_domains),
        )
        if value is not _UNSET
    }
    if fixed:
        original = function
        function = partial(original, **fixed)
        function.__name__ = original.__name__
        function.__qualname__ = original.__qualname__
        function.__doc__ = original.__doc__
        # `partial` keeps the fixed parameters in its signature (as defaults): drop them from the schema.
        whole = signature(original)
        function.__signature__ = whole.replace(
            parameters=[p for name, p in whole.parameters.items() if name not in fixed]
        )
    return Tool[Any](
        function,
        name='tavily_search',
        description='Search the web with Tavily for the given query and return the results.',
    )
