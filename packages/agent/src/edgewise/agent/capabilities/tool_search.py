"""`ToolSearch`: tools marked `defer_loading=True` hidden from the model until it searches for them."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ..native_tools._tool_search import TOOL_SEARCH_FUNCTION_TOOL_NAME, ToolSearchTool
from ..tools import AgentDepsT, AgentNativeTool
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

    With the default strategy, a model whose provider runs a tool search of its own (Anthropic's on recent Claude
    models, OpenAI Responses' `tool_search` on gpt-5.4 and later: `ToolSearchTool` in the model's native tools)
    is sent that search and the deferred tools with their schemas held back, instead of `search_tools`; other
    models get `search_tools`. `'bm25'` and `'regex'` ask for Anthropic's searches and fail on other models;
    `'keywords'` and search functions always run here.
    """

    strategy: ToolSearchStrategy[AgentDepsT] | None = None
    """How tools are searched: `None` (the default, the best search available: the provider's own, else the
    keyword search here), `'keywords'` (tools scored by the words of their name and description they share with
    the queries), a function of your own (`(ctx, queries, tool_defs) -> names`, sync or async), or `'bm25'` /
    `'regex'` (Anthropic's own searches: a `UserError` with a model that cannot run them)."""

    max_results: int = DEFAULT_MAX_RESULTS
    """The most tools one search returns."""

    tool_description: str | None = None
    """The description of `search_tools` shown to the model, instead of the default."""

    parameter_description: str | None = None
    """The description of its `queries` argument shown to the model, instead of the default."""

    function_tool_name: ClassVar[str] = TOOL_SEARCH_FUNCTION_TOOL_NAME
    """The name of the search tool the model is offered (`'search_tools'`); no other tool may take it."""

    def get_native_tools(self) -> Sequence[AgentNativeTool[AgentDepsT]]:
        """The provider's search: `ToolSearchTool(optional=True)` for the default strategy (left out for models
        without one), `ToolSearchTool(strategy=..., optional=False)` for `'bm25'` / `'regex'`; none for the
        searches run here."""
        strategy = self.strategy
        if strategy is None:
            return [ToolSearchTool(optional=True)]
        if strategy == 'bm25' or strategy == 'regex':
            return [ToolSearchTool(strategy=strategy, optional=False)]
        return []

    def get_wrapper_toolset(self, toolset: AbstractToolset[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """The run's toolset with its deferred tools hidden until found, and `search_tools` added (not for
        `'bm25'` / `'regex'`, which only the provider runs)."""
        strategy = self.strategy
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
            local_search=strategy not in ('bm25', 'regex'),
        )
