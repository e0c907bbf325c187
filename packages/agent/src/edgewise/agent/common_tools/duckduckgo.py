"""`duckduckgo_search_tool`: web search through DuckDuckGo's HTML page, read with the standard library's HTML
parser (no `ddgs` package needed).

`duckduckgo_client=` takes anything with the shape of `ddgs`' `DDGS`: a `text(query, max_results=...)` method,
plain or async, answering a list of `{'title', 'href', 'body'}` dicts. That is `DuckDuckGoClient` here, and
`ddgs.DDGS` too (its blocking calls run in a worker thread).
"""

from __future__ import annotations as _annotations

import inspect
from dataclasses import KW_ONLY, dataclass, field
from html.parser import HTMLParser
from typing import Any, Protocol
from urllib.parse import parse_qs, urlparse

import anyio.to_thread
import httpx
from pydantic import TypeAdapter
from typing_extensions import TypedDict

from ..exceptions import ModelRetry
from ..tools import Tool

__all__ = ('DuckDuckGoClient', 'DuckDuckGoResult', 'DuckDuckGoSearchTool', 'duckduckgo_search_tool')

DEFAULT_DUCKDUCKGO_BASE_URL = 'https://html.duckduckgo.com'
_MAX_PAGES = 5
_HEADERS = {'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64)', 'Accept': 'text/html'}


class DuckDuckGoResult(TypedDict):
    """One result of a DuckDuckGo search, as the model gets it."""

    title: str
    """The page's title."""
    href: str
    """The page's URL."""
    body: str
    """The snippet DuckDuckGo shows for the page."""


duckduckgo_ta = TypeAdapter(list[DuckDuckGoResult])


class DuckDuckGoSearchClient(Protocol):
    """What `duckduckgo_search_tool(duckduckgo_client=...)` needs of a client (`text` may also be async)."""

    def text(self, query: str, max_results: int | None = None) -> Any:  # pragma: no cover - a protocol
        """The results for `query`: a list of dicts with `title`, `href` and `body`."""
        ...


def _classes(attrs: list[tuple[str, str | None]]) -> set[str]:
    return set((dict(attrs).get('class') or '').split())


def _target(href: str) -> str:
    """The page a result links to: DuckDuckGo may route the link through its `/l/?uddg=<url>` redirect."""
    parsed = urlparse(href)
    if parsed.path == '/l/':
        target = parse_qs(parsed.query).get('uddg')
        if target:
            return target[0]
    return 'https:' + href if href.startswith('//') else href


class _ResultsPage(HTMLParser):
    """The results of one page, and the fields of its "Next" form (None on the last page)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[dict[str, str]] = []
        self.next_form: dict[str, str] | None = None
        self._field: str | None = None
        self._field_tag = ''
        self._field_depth = 0
        self._text: list[str] = []
        self._form: dict[str, str] | None = None
        self._form_is_next = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if self._field is not None:
            self._field_depth += tag == self._field_tag
            return
        classes = _classes(attrs)
        if tag == 'a' and 'result__a' in classes:
            self.results.append({'title': '', 'href': _target(values.get('href') or ''), 'body': ''})
            self._start('title', tag)
        elif 'result__snippet' in classes and self.results:
            self._start('body', tag)
        elif tag == 'form':
            self._form, self._form_is_next = {}, False
        elif tag == 'input' and self._form is not None:
            if values.get('type') == 'submit':
                self._form_is_next = self._form_is_next or (values.get('value') or '').strip() == 'Next'
            elif values.get('name'):
                self._form[str(values['name'])] = values.get('value') or ''

    def _start(self, name: str, tag: str) -> None:
        self._field, self._field_tag, self._field_depth, self._text = name, tag, 0, []

    def handle_endtag(self, tag: str) -> None:
        if self._field is not None:
            if tag != self._field_tag:
                return
            if self._field_depth:
                self._field_depth -= 1
                return
            self.results[-1][self._field] = ' '.join(''.join(self._text).split())
            self._field = None
        elif tag == 'form' and self._form is not None:
            if self._form_is_next:
                self.next_form = self._form
            self._form = None

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self._text.append(data)


@dataclass
class DuckDuckGoClient:
    """A small DuckDuckGo client: POSTs the query to `{base_url}/html/` and reads the results off the page."""

    _: KW_ONLY
    base_url: str = DEFAULT_DUCKDUCKGO_BASE_URL
    """Where DuckDuckGo's HTML search is (a proxy or a test server may stand in)."""
    region: str = 'wt-wt'
    """DuckDuckGo's region code (`'wt-wt'`: no region)."""
    timeout: float = 30
    """Seconds a request may take."""
    headers: dict[str, str] = field(default_factory=lambda: dict(_HEADERS))
    """The request headers."""

    async def text(self, query: str, max_results: int | None = None) -> list[dict[str, str]]:
        """The results for `query`: those of the first page when `max_results` is None, else up to `max_results`
        from as many pages as it takes (five at most).

        Raises:
            ModelRetry: DuckDuckGo refused the search (it limits automated searches) or could not be reached.
        """
        results: list[dict[str, str]] = []
        form: dict[str, str] | None = {'q': query, 'b': '', 'kl': self.region}
        async with httpx.AsyncClient(timeout=self.timeout, headers=self.headers) as client:
            for _ in range(_MAX_PAGES):
                assert form is not None
                page = await self._page(client, form)
                results.extend(r for r in page.results if r['href'] and not _is_ad(r['href']))
                form = page.next_form
                if max_results is None or len(results) >= max_results or form is None or not page.results:
                    break
        return results if max_results is None else results[:max_results]

    async def _page(self, client: httpx.AsyncClient, form: dict[str, str]) -> _ResultsPage:
        try:
            response = await client.post(f'{self.base_url.rstrip("/")}/html/', data=form)
        except httpx.HTTPError as exc:
            raise ModelRetry(f'DuckDuckGo search failed: {type(exc).__name__}: {exc}') from None
        if response.status_code != 200:
            # DuckDuckGo answers automated searches it throttles with 202 (a challenge page), 403 or 429.
            raise ModelRetry(
                f'DuckDuckGo search failed with HTTP {response.status_code} (it may be limiting searches): '
                'try again later or search another way'
            )
        page = _ResultsPage()
        page.feed(response.text)
        page.close()
        return page


def _is_ad(href: str) -> bool:
    parsed = urlparse(href)
    return parsed.hostname in ('duckduckgo.com', 'www.duckduckgo.com') and parsed.path.startswith('/y.js')


@dataclass
class DuckDuckGoSearchTool:
    """The function behind `duckduckgo_search_tool`."""

    client: DuckDuckGoSearchClient
    """The DuckDuckGo client."""

    _: KW_ONLY

    max_results: int | None
    """The most results; None for those of the first page."""

    async def __call__(self, query: str) -> list[DuckDuckGoResult]:
        """Searches DuckDuckGo for the given query and returns the results.

        Args:
            query: What to search for.

        Returns:
            The search results.
        """
        if inspect.iscoroutinefunction(self.client.text):
            results = await self.client.text(query, max_results=self.max_results)
        else:
            results = await anyio.to_thread.run_sync(lambda: self.client.text(query, max_results=self.max_results))
        return duckduckgo_ta.validate_python(results)


def duckduckgo_search_tool(
    duckduckgo_client: DuckDuckGoSearchClient | None = None,
    max_results: int | None = None,
    *,
    base_url: str = DEFAULT_DUCKDUCKGO_BASE_URL,
) -> Tool[Any]:
    """A tool named `duckduckgo_search` that searches the web with DuckDuckGo (no key needed).

    Args:
        duckduckgo_client: The client to search with; a `DuckDuckGoClient` on `base_url` when None.
        max_results: The most results of a search; None for those of the first page.
        base_url: Where DuckDuckGo's HTML search is, for the client made when none is given (an Edgewise
            addition).
    """
    client = duckduckgo_client if duckduckgo_client is not None else DuckDuckGoClient(base_url=base_url)
    return Tool[Any](
        DuckDuckGoSearchTool(client=client, max_results=max_results).__call__,
        name='duckduckgo_search',
        description='Search the web with DuckDuckGo for the given query and return the results.',
    )
