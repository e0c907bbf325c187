"""`ToolSearch`: tools marked `defer_loading=True` hidden from the model until it searches for them."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import ClassVar

from ..exceptions import UserError
from ..native_tools._tool_search import TOOL_SEARCH_FUNCTION_TOOL_NAME
from ..tools import AgentDepsT
from ..toolsets import AbstractToolset
from ..toolsets._tool_search import (
    DEFAULT_MAX_RESULTS,
    ToolSearchFunc,
    ToolSearchLocalStrategy,
    ToolSearchNativeStrategy,
    ToolSearchStrategy,
    ToolSearchToolset,
    keywords_search_fn,
)
from .abstract import AbstractCapability

__all__ = (
    'ToolSearch',
    'ToolSearchFunc',
    'ToolSearchLocalStrategy',
    'ToolSearchNativeStrategy',
    'ToolSearchStrategy',
)


@dataclass
class ToolSearch(AbstractCapability[AgentDepsT]):
    """Keeps the tools marked `defer_loading=True` (`Tool(..., defer_loading=True)`, `toolset.defer_loading()`)
    out of the model's requests and offers it a `search_tools` tool instead: the model calls it with queries, gets
    the names and descriptions of the matching tools, and can call those from its next request on.

    Every agent run behaves as if it had a `ToolSearch()`; give one to change its settings. Runs without
    deferred tools are not changed at all.

    Edgewise runs the search itself with every model: the provider-run tool search of pydantic-ai 1.107
    (Anthropic's BM25 and regex searches, OpenAI's `tool_search`) is not mapped, so `strategy='bm25'` or
    `'regex'` is a `UserError` when a run starts.
    """

    strategy: ToolSearchStrategy[AgentDepsT] | None = None
    """How tools are searched: `None` (the default, the best search available: the keyword search here),
    `'keywords'` (tools scored by the words of their name and description they share with the queries),
    a function of your own (`(ctx, queries, tool_defs) -> names`, sync or async), or `'bm25'` / `'regex'`
    (a provider's own search, not available in Edgewise)."""

    max_results: int = DEFAULT_MAX_RESULTS
    """The most tools one search returns."""

    tool_description: str | None = None
    """The description of `search_tools` shown to the model, instead of the default."""

    parameter_description: str | None = None
    """The description of its `queries` argument shown to the model, instead of the default."""

    function_tool_name: ClassVar[str] = TOOL_SEARCH_FUNCTION_TOOL_NAME
    """The name of the search tool the model is offered (`'search_tools'`); no other tool may take it."""

    def get_wrapper_toolset(self, toolset: AbstractToolset[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """The run's toolset with its deferred tools hidden until found and `search_tools` added.

        Raises:
            UserError: the strategy is `'bm25'` or `'regex'`, which only a provider can run.
        """
        strategy = self.strategy
        if strategy in ('bm25', 'regex'):
            raise UserError(
                f"`ToolSearch(strategy={strategy!r})` asks for the model provider's own tool search, which Edgewise "
                "does not support yet: use `strategy='keywords'`, a search function, or the default `None`."
            )
        if strategy == 'keywords':
            search_fn: ToolSearchFunc[AgentDepsT] | None = keywords_search_fn
        elif callable(strategy):
            search_fn = strategy
        else:
            search_fn = None
        return ToolSearchToolset(
            toolset,
            search_fn=search_fn,
            max_results=self.max_results,
            tool_description=self.tool_description,
            parameter_description=self.parameter_description,
        )
