"""`WebSearch`: the model's own web search where it has one, else a search function of yours."""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..common_tools.duckduckgo import duckduckgo_search_tool
from ..exceptions import UserError
from ..native_tools import WebSearchTool, WebSearchUserLocation
from ..tools import AgentDepsT, RunContext, Tool
from ..toolsets import AbstractToolset
from .native_or_local import NativeOrLocalTool

__all__ = ('WebSearch', 'WebSearchLocalStrategy')

WebSearchLocalStrategy = Literal['duckduckgo']
"""The strategy names `WebSearch(local=...)` knows (`local=True` stands for `'duckduckgo'`: the
`edgewise.agent.common_tools.duckduckgo.duckduckgo_search_tool`)."""


@dataclass(init=False)
class WebSearch(NativeOrLocalTool[AgentDepsT]):
    """Lets the model search the web: with its provider's `WebSearchTool` when it has one, else with the search
    function given as `local` (`WebSearch(local=search)`, `search(query: str) -> str`, say), or with DuckDuckGo for
    `local='duckduckgo'` (or `local=True`).

    The domain filters, `max_uses` and `external_web_access=False` can only be honoured by the native tool: with
    any of them set, the local tool is left out and a model without web search refuses the request.
    """

    search_context_size: Literal['low', 'medium', 'high'] | None = None
    """How much context the native search gathers (ignored by the local tool)."""

    user_location: WebSearchUserLocation | None = None
    """Where the user is, to localize the native search's results (ignored by the local tool)."""

    blocked_domains: list[str] | None = None
    """Domains never to show in the results; needs the native tool."""

    allowed_domains: list[str] | None = None
    """The only domains to show in the results; needs the native tool."""

    max_uses: int | None = None
    """The most searches of one run; needs the native tool."""

    external_web_access: bool | None = None
    """Whether the native search may fetch pages live (OpenAI Responses); `False` needs the native tool."""

    _native_type = WebSearchTool

    def __init__(
        self,
        *,
        native: WebSearchTool
        | Callable[[RunContext[AgentDepsT]], Awaitable[WebSearchTool | None] | WebSearchTool | None]
        | bool = True,
        local: WebSearchLocalStrategy | Tool[AgentDepsT] | Callable[..., Any] | bool | None = None,
        search_context_size: Literal['low', 'medium', 'high'] | None = None,
        user_location: WebSearchUserLocation | None = None,
        blocked_domains: list[str] | None = None,
        allowed_domains: list[str] | None = None,
        max_uses: int | None = None,
        external_web_access: bool | None = None,
        id: str | None = None,
        defer_loading: bool = False,
        description: str | None = None,
    ) -> None:
        self._init_common(native=native, local=local, id=id, defer_loading=defer_loading, description=description)
        self.search_context_size = search_context_size
        self.user_location = user_location
        self.blocked_domains = blocked_domains
        self.allowed_domains = allowed_domains
        self.max_uses = max_uses
        self.external_web_access = external_web_access
        self.__post_init__()

    def _tool_settings(self) -> dict[str, Any]:
        return {
            'search_context_size': self.search_context_size,
            'user_location': self.user_location,
            'blocked_domains': self.blocked_domains,
            'allowed_domains': self.allowed_domains,
            'max_uses': self.max_uses,
            'external_web_access': self.external_web_access,
        }

    def _resolve_local_strategy(self, name: str | bool) -> Tool[AgentDepsT] | AbstractToolset[AgentDepsT]:
        if name is True or name == 'duckduckgo':
            return duckduckgo_search_tool()
        raise UserError(
            f"WebSearch(local={name!r}) is not a known strategy. Supported: 'duckduckgo' (or `local=True`). Or pass "
            'a search function or `Tool` as `local=`.'
        )

    def _requires_native(self) -> bool:
        return (
            self.blocked_domains is not None
            or self.allowed_domains is not None
            or self.max_uses is not None
            or self.external_web_access is False
        )
