"""`web_fetch_tool`: a tool that fetches a web page and gives the model its content as markdown.

The model picks the URL, so every hop is checked (see `_ssrf`): only http and https, the domain filters, public
addresses only unless `allow_local_urls=True`, never a cloud metadata address, redirects followed by hand and
checked again, the body capped at `max_download_bytes`. Pages come back as markdown (converted here, with the
standard library's HTML parser), JSON pretty-printed, other text as it is, and anything else (PDF, images) as
`BinaryContent` for the model to read natively. Everything that can go wrong with a URL goes back to the model as a
`ModelRetry`, so it can try another one.
"""

from __future__ import annotations as _annotations

import json
import re
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import httpx
from anyio.lowlevel import RunVar
from typing_extensions import TypedDict

from ..exceptions import ModelRetry
from ..messages import BinaryContent
from ..models._mapping import is_text_like
from ..tools import Tool
from ._markdown import html_to_markdown
from ._ssrf import safe_get

__all__ = ('WebFetchLocalTool', 'WebFetchResult', 'web_fetch_tool')

_MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024
_MAX_JSON_LENGTH = 20_000_000
_BLANK_LINES = re.compile(r'\n{3,}')
_LOCAL_HINT = 'Use allow_local_urls=True to allow local network access.'
_CONVERSIONS: RunVar[anyio.CapacityLimiter] = RunVar('_CONVERSIONS')
"""Conversions run in worker threads; a few at a time leave anyio's other worker threads to other tools."""


class WebFetchResult(TypedDict):
    """What the `web_fetch` tool gives the model for a text page."""

    url: str
    """The URL that was asked for."""
    title: str
    """The page's title (empty when it has none)."""
    content: str
    """The page's content, as markdown."""


@dataclass
class WebFetchLocalTool:
    """The function behind `web_fetch_tool`: fetches a URL and turns the answer into markdown."""

    _: KW_ONLY

    max_content_length: int | None
    """The most characters of content given back (the rest is cut off and marked so); None for no limit."""

    allow_local_urls: bool
    """Whether private, loopback and link-local addresses may be fetched (cloud metadata addresses never are)."""

    timeout: int
    """Seconds each request may take."""

    max_download_bytes: int | None = field(default=_MAX_DOWNLOAD_BYTES)
    """The largest body read, in bytes; None for no limit."""

    allowed_domains: list[str] | None = field(default=None)
    """The only host names fetched from, on every hop (exact names, ignoring case, a trailing dot and the IDNA
    spelling); another one is a `ModelRetry`."""

    blocked_domains: list[str] | None = field(default=None)
    """Host names never fetched from, on every hop (matched as `allowed_domains` are); one is a `ModelRetry`."""

    headers: dict[str, str] | None = field(default=None, repr=False)
    """Extra request headers (left out of the repr: they may carry credentials). The model picks the URL: use
    `allowed_domains` when these carry credentials (`Authorization`, `Cookie` and `Proxy-Authorization` are dropped
    on a redirect to another origin)."""

    async def __call__(self, url: str) -> WebFetchResult | BinaryContent:
        """Fetches the content of a web page at the given URL and returns it as markdown.

        Text (HTML, markdown, JSON, plain text) comes back as a `WebFetchResult`; other content (PDF, images) as
        `BinaryContent` the model can read natively.

        Args:
            url: The URL to fetch.

        Returns:
            The fetched page content.
        """
        request_headers = {'Accept': 'text/markdown, text/html;q=0.9, */*;q=0.8', **(self.headers or {})}
        try:
            response = await safe_get(
                url,
                allow_local=self.allow_local_urls,
                local_hint=_LOCAL_HINT,
                request_timeout=self.timeout,
                headers=request_headers,
                allowed_domains=self.allowed_domains,
                blocked_domains=self.blocked_domains,
                max_bytes=self.max_download_bytes,
            )
        except (ValueError, httpx.HTTPError, httpx.InvalidURL) as exc:
            raise ModelRetry(f'Failed to fetch {url}: {exc}') from exc

        media_type = response.media_type
        if media_type and not is_text_like(media_type):
            return BinaryContent(data=response.content, media_type=media_type)
        try:
            text = response.content.decode(response.charset or 'utf-8', errors='replace')
        except (LookupError, UnicodeError) as exc:
            raise ModelRetry(f'Failed to decode {url}: {exc}') from exc

        title = ''
        if media_type in ('text/markdown', 'text/x-markdown'):
            content = text
        elif not media_type or media_type in ('text/html', 'application/xhtml+xml'):
            title, content = await _convert(html_to_markdown, text)
        elif media_type == 'application/json':
            content = await _convert(_format_json, text, self.max_content_length)
        else:
            content = text
        content = _BLANK_LINES.sub('\n\n', content).strip()
        if self.max_content_length is not None and len(content) > self.max_content_length:
            content = content[: self.max_content_length] + '\n\n[Content truncated]'
        return WebFetchResult(url=url, title=title, content=content)


async def _convert(function: Any, *args: Any) -> Any:
    limiter = _CONVERSIONS.get(None)
    if limiter is None:
        limiter = anyio.CapacityLimiter(4)
        _CONVERSIONS.set(limiter)
    return await anyio.to_thread.run_sync(function, *args, limiter=limiter)


def _format_json(text: str, max_length: int | None) -> str:
    """A JSON body indented in a fenced block; the body as it came when it is not JSON, or when indenting it would
    pass the length that is given back (so the work stays bounded by that length)."""
    limit = _MAX_JSON_LENGTH if max_length is None else max_length
    chunks = ['```json\n']
    size = 0
    try:
        for chunk in json.JSONEncoder(indent=2).iterencode(json.loads(text)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                # Cut anyway where the caller cuts: with no limit of theirs, the body is given as it came.
                return text if max_length is None else ''.join(chunks)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
        return text
    chunks.append('\n```')
    return ''.join(chunks)


def web_fetch_tool(
    *,
    max_content_length: int | None = 50_000,
    allow_local_urls: bool = False,
    timeout: int = 30,
    max_download_bytes: int | None = _MAX_DOWNLOAD_BYTES,
    allowed_domains: list[str] | None = None,
    blocked_domains: list[str] | None = None,
    headers: dict[str, str] | None = None,
) -> Tool[Any]:
    """A tool named `web_fetch` that fetches a URL and gives the model its content as markdown.

    It asks for markdown first (`Accept: text/markdown`, which some sites serve) and converts HTML itself otherwise.

    Args:
        max_content_length: The most characters of content given back (about 12,500 tokens by default); None for no
            limit.
        allow_local_urls: Whether private, loopback and link-local addresses may be fetched. Cloud metadata
            addresses never are.
        timeout: Seconds each request may take.
        max_download_bytes: The largest body read, in bytes, checked while it arrives (50 MiB by default); None for
            no limit.
        allowed_domains: The only host names fetched from, checked on every redirect too; another one is a
            `ModelRetry`.
        blocked_domains: Host names never fetched from, checked on every redirect too.
        headers: Extra request headers (an `Accept` here replaces the default one). The model picks the URL, so a
            credential here goes to any host the domain filters let through; `Authorization`, `Cookie` and
            `Proxy-Authorization` are dropped on a redirect to another origin.
    """
    return Tool[Any](
        WebFetchLocalTool(
            max_content_length=max_content_length,
            allow_local_urls=allow_local_urls,
            timeout=timeout,
            max_download_bytes=max_download_bytes,
            allowed_domains=allowed_domains,
            blocked_domains=blocked_domains,
            headers=headers,
        ).__call__,
        name='web_fetch',
        description='Fetch a web page by URL and return its content as markdown (PDFs, images and such as they are).',
    )
