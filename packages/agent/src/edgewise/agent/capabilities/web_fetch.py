"""`WebFetch`: the model's own URL fetching where it has one, else a fetch function of yours."""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..common_tools.web_fetch import web_fetch_tool
from ..exceptions import UserError
from ..native_tools import WebFetchTool
from ..tools import AgentDepsT, RunContext, Tool
from ..toolsets import AbstractToolset
from .native_or_local import NativeOrLocalTool

__all__ = ('WebFetch',)


@dataclass(init=False)
class WebFetch(NativeOrLocalTool[AgentDepsT]):
    """Lets the model read web pages: with its provider's `WebFetchTool` when it has one, else with the fetch
    function given as `local` (`WebFetch(local=fetch)`, `fetch(url: str) -> str`, say), or with the built-in
    `edgewise.agent.common_tools.web_fetch.web_fetch_tool` for `local=True`.

    `max_uses` can only be honoured by the native tool: with it set, the local tool is left out and a model without
    URL fetching refuses the request. The domain filters go to the native tool and to the built-in local tool; a
    local function of yours is responsible for its own.
    """

    allowed_domains: list[str] | None = None
    """The only domains the native tool fetches from."""

    blocked_domains: list[str] | None = None
    """Domains the native tool never fetches from."""

    max_uses: int | None = None
    """The most fetches of one run; needs the native tool."""

    enable_citations: bool | None = None
    """Whether the native tool cites the fetched content (ignored by the local tool)."""

    max_content_tokens: int | None = None
    """The most tokens of content the native tool takes from a page (ignored by the local tool)."""

    _native_type = WebFetchTool

    def __init__(
        self,
        *,
        native: WebFetchTool
        | Callable[[RunContext[AgentDepsT]], Awaitable[WebFetchTool | None] | WebFetchTool | None]
        | bool = True,
        local: Tool[AgentDepsT] | Callable[..., Any] | bool | None = None,
        allowed_domains: list[str] | None = None,
        blocked_domains: list[str] | None = None,
        max_uses: int | None = None,
        enable_citations: bool | None = None,
        max_content_tokens: int | None = None,
        id: str | None = None,
        defer_loading: bool = False,
        description: str | None = None,
    ) -> None:
        self._init_common(native=native, local=local, id=id, defer_loading=defer_loading, description=description)
        self.allowed_domains = allowed_domains
        self.blocked_domains = blocked_domains
        self.max_uses = max_uses
        self.enable_citations = enable_citations
        self.max_content_tokens = max_content_tokens
        self.__post_init__()

    def _tool_settings(self) -> dict[str, Any]:
        return {
            'allowed_domains': self.allowed_domains,
            'blocked_domains': self.blocked_domains,
            'max_uses': self.max_uses,
            'enable_citations': self.enable_citations,
            'max_content_tokens': self.max_content_tokens,
        }

    def _resolve_local_strategy(self, name: str | bool) -> Tool[AgentDepsT] | AbstractToolset[AgentDepsT]:
        if name is True:
            return web_fetch_tool(allowed_domains=self.allowed_domains, blocked_domains=self.blocked_domains)
        raise UserError(
            f'WebFetch(local={name!r}) is not a known strategy. Pass `local=True` for the built-in `web_fetch` tool, '
            'or a fetch function or `Tool` as `local=`.'
        )

    def _requires_native(self) -> bool:
        return self.max_uses is not None
