"""`ToolSearchTool`: the provider's own search over the tools a request marks `defer_loading` (Anthropic's
`tool_search_tool_bm25` / `tool_search_tool_regex`), and the names that describe tool search strategies.

The search the agent runs itself (the `search_tools` function tool of the `ToolSearch` capability) lives in
`edgewise.agent.toolsets`; this module holds what a model adapter needs to send the provider's search instead.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..messages import ToolSearchArgs, ToolSearchMatch, ToolSearchReturnContent
from ._base import AbstractNativeTool

__all__ = (
    'TOOL_SEARCH_FUNCTION_TOOL_NAME',
    'ToolSearchArgs',
    'ToolSearchLocalStrategy',
    'ToolSearchMatch',
    'ToolSearchNativeStrategy',
    'ToolSearchReturnContent',
    'ToolSearchTool',
)

ToolSearchNativeStrategy: TypeAlias = Literal['bm25', 'regex']
"""A provider's own search: Anthropic's BM25 (ranked by the words of the query) or regex (a pattern) search."""

ToolSearchLocalStrategy: TypeAlias = Literal['keywords']
"""A search the agent runs: `'keywords'` scores tools by the words of their name and description they share with
the queries."""

TOOL_SEARCH_FUNCTION_TOOL_NAME = 'search_tools'
"""The name of the function tool the agent offers the model when it runs the search itself."""


@dataclass(kw_only=True)
class ToolSearchTool(AbstractNativeTool):
    """Lets the provider search the request's deferred tools itself (Anthropic).

    The function tools of the request marked `defer_loading=True` are sent with `defer_loading: true`: the
    provider keeps them out of the model's context until its search finds them. The search's call and answer come
    back as `NativeToolCallPart` / `NativeToolReturnPart` of `tool_name='tool_search'`, with the arguments as
    `ToolSearchArgs` (`{'queries': [...]}`) and the answer as `ToolSearchReturnContent`
    (`{'discovered_tools': [{'name': ...}]}`).

    Models whose API has no tool search refuse it (`UserError`) unless it is `optional=True`.
    """

    strategy: Literal['bm25', 'regex', 'custom'] | None = None
    """How the provider searches: `None` (its default: BM25 on Anthropic), `'bm25'`, `'regex'`, or `'custom'`
    (a search function run by the agent through the provider's client-side search, not mapped by Edgewise's
    models, which raise `UserError` for it)."""

    kind: str = 'tool_search'
    """The kind of tool."""
