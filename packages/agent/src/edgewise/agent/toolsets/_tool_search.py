"""Tool search: tools marked `defer_loading=True` stay hidden from the model until a search finds them.

`ToolSearchToolset` wraps a run's toolset. While any of its tools is deferred, it lists one more tool,
`search_tools`, that the model calls with a list of queries; the answer names the matching deferred tools, and
from the next request on those tools are shown to the model like any other. What was found is read back from
the message history at every step (the `ToolReturnPart`s of `search_tools`, tagged `tool_kind='tool-search'`),
so a run continued from a stored history keeps the tools it found.

Deferred tools stay in the step's tool listing (marked `defer_loading=True` until found, with
`with_native='tool_search'` for good): the request a run sends holds the hidden ones, which the model resolves
`'withheld'` (not sent) or `'deferred'` (`ModelRequestParameters.tool_visibility`), and the run answers a call the
model makes to one before searching with a retry prompt (as pydantic-ai 2.x), not by running it.
"""

from __future__ import annotations as _annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import pydantic
from typing_extensions import TypedDict

from .._messages.capability_loading import owned_by_deferred_capability
from .._messages.history import post_compaction_window
from .._messages.model_messages import (
    TOOL_SEARCH_TOOL_KIND,
    ModelMessage,
    ModelRequest,
    NativeToolReturnPart,
    ToolAvailabilityDeltaPart,
    ToolReturnPart,
    ToolSearchMatch,
    ToolSearchReturnContent,
)
from .._messages.tool_parts import TOOL_SEARCH_NATIVE_KIND
from .._tools.definition import ToolDefinition
from ..exceptions import ModelRetry, UserError
from ..models._model import AgentDepsT, RunContext
from ..native_tools._tool_search import (
    TOOL_SEARCH_FUNCTION_TOOL_NAME,
    ToolSearchLocalStrategy,
    ToolSearchNativeStrategy,
)
from .abstract import AbstractToolset, ToolsetTool
from .wrapper import WrapperToolset

__all__ = (
    'TOOL_SEARCH_FUNCTION_TOOL_NAME',
    'TOOL_SEARCH_NATIVE_KIND',
    'TOOL_SEARCH_TOOL_KIND',
    'NO_MATCHES_MESSAGE',
    'ToolSearchFunc',
    'ToolSearchLocalStrategy',
    'ToolSearchMatch',
    'ToolSearchNativeStrategy',
    'ToolSearchReturnContent',
    'ToolSearchStrategy',
    'ToolSearchToolset',
    'discovered_tool_names',
    'keywords_search_fn',
)


NO_MATCHES_MESSAGE = 'No matching tools found. The tools you need may not be available.'
"""What the model is told when a search finds nothing."""

DEFAULT_MAX_RESULTS = 10

# The texts the model sees, worded as in pydantic-ai 1.107 (the model's behaviour is tuned to them).
_DEFAULT_TOOL_DESCRIPTION = (
    'There are additional tools not yet visible to you.'
    ' When you need a capability not provided by your current tools,'
    ' search here by providing one or more queries to discover and activate relevant tools.'
    ' Each query is tokenized into words; tool names and descriptions are scored by token overlap.'
    ' If no tools are found, they do not exist — do not retry.'
)
_DEFAULT_PARAMETER_DESCRIPTION = (
    'List of search queries to match against tool names and descriptions.'
    ' Use specific words likely to appear in tool names or descriptions to narrow down relevant tools.'
    ' Each query is independently tokenized; matches across queries are unioned.'
)
_EMPTY_QUERY_MESSAGE = 'Please provide at least one non-empty search query.'

ToolSearchFunc = Callable[
    [RunContext[AgentDepsT], Sequence[str], Sequence[ToolDefinition]],
    'Sequence[str] | Awaitable[Sequence[str]]',
]
"""A search of your own (sync or async): given the run context, the model's queries and the definitions of the
tools not found yet, it returns the names of the matching ones, best first."""

ToolSearchStrategy = ToolSearchFunc[AgentDepsT] | ToolSearchLocalStrategy | ToolSearchNativeStrategy
"""What `ToolSearch(strategy=...)` takes (besides `None`, the default)."""


class _SearchArgs(TypedDict):
    __pydantic_config__ = pydantic.ConfigDict(extra='forbid')  # type: ignore[misc]
    queries: list[str]


@cache
def _args_validator() -> Any:
    # Built on the first search tool, not at import: importing the agent should not pay for a schema it may never use.
    return pydantic.TypeAdapter(_SearchArgs).validator


_TOKEN = re.compile(r'[a-z0-9]+')


def _search_schema(parameter_description: str) -> dict[str, Any]:
    return {
        'additionalProperties': False,
        'properties': {
            'queries': {'description': parameter_description, 'items': {'type': 'string'}, 'type': 'array'},
        },
        'required': ['queries'],
        'type': 'object',
    }


def _words(text: str) -> set[str]:
    # lowercase runs of letters and digits: `me` matches `get_me`, not the inside of `comment`
    return set(_TOKEN.findall(text.lower()))


def keywords_search_fn(ctx: RunContext[Any], queries: Sequence[str], tools: Sequence[ToolDefinition]) -> list[str]:
    """The `'keywords'` search: the tools sharing words with the queries (words of their name or description),
    most shared words first."""
    wanted = _words(' '.join(queries))
    scored = [(len(wanted & _words(f'{t.name} {t.description or ""}')), t.name) for t in tools]
    # `sorted` is stable: tools with the same score keep their order
    return [name for score, name in sorted(scored, key=lambda item: -item[0]) if score]


def discovered_tool_names(messages: Iterable[ModelMessage]) -> set[str]:
    """The names of the deferred tools `messages` revealed: those tool searches found (local and provider-run) and
    those named by `ToolAvailabilityDeltaPart`s (a tool's `ToolReturn(tools=...)`, a loaded capability).

    Only what follows the latest compaction counts (`post_compaction_window`, as in pydantic-ai 2.x): a tool revealed
    before it is hidden again, until a search or a load reveals it once more."""
    found: set[str] = set()
    for message in post_compaction_window(messages if isinstance(messages, Sequence) else list(messages)):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolAvailabilityDeltaPart):
                    found.update(part.tools_added)
                elif isinstance(part, ToolReturnPart) and part.tool_kind == TOOL_SEARCH_TOOL_KIND:
                    _add_matches(part.content, found)  # a `ToolSearchReturnPart`, or one built by hand
                elif isinstance(part, ToolReturnPart) and part.tool_name == TOOL_SEARCH_FUNCTION_TOOL_NAME:
                    _add_names(part.metadata, found)  # histories of earlier pydantic-ai versions
        else:
            for response_part in message.parts:
                if isinstance(response_part, NativeToolReturnPart) and response_part.tool_kind == TOOL_SEARCH_TOOL_KIND:
                    _add_matches(response_part.content, found)
    return found


def _add_matches(content: Any, found: set[str]) -> None:
    matches = content.get('discovered_tools') if isinstance(content, dict) else None
    if isinstance(matches, list):
        found.update(m['name'] for m in matches if isinstance(m, dict) and isinstance(m.get('name'), str))


def _add_names(metadata: Any, found: set[str]) -> None:
    names = metadata.get('discovered_tools') if isinstance(metadata, dict) else None
    if isinstance(names, list) and all(isinstance(name, str) for name in names):
        found.update(names)


@dataclass(kw_only=True)
class _SearchTool(ToolsetTool[AgentDepsT]):
    """The `search_tools` tool of one step, with the definitions of the deferred tools not found yet."""

    corpus: list[ToolDefinition]


@dataclass
class ToolSearchToolset(WrapperToolset[AgentDepsT]):
    """The wrapped toolset with its deferred tools hidden until the `search_tools` tool it adds finds them (see the
    module docstring). Without deferred tools, it lists the wrapped toolset's tools unchanged."""

    search_fn: ToolSearchFunc[AgentDepsT] | None = None
    """The search; the keyword search when `None`."""
    max_results: int = DEFAULT_MAX_RESULTS
    """The most tools one search returns."""
    tool_description: str | None = None
    """The search tool's description for the model, instead of the default."""
    parameter_description: str | None = None
    """The description of its `queries` argument, instead of the default."""
    local_search: bool = True
    """Whether `search_tools` is offered; `False` when only the provider's search may run (`ToolSearch(strategy=
    'bm25')`), which then finds the deferred tools (marked `with_native='tool_search'` either way)."""

    def _wrapping(self, wrapped: AbstractToolset[AgentDepsT]) -> WrapperToolset[AgentDepsT]:
        if type(self) is not ToolSearchToolset:  # a subclass may have an `__init__` of its own
            return replace(self, wrapped=wrapped)
        # `replace`, without its `__init__` (the class has no `__post_init__`): every run wraps its toolset in one.
        copy = object.__new__(ToolSearchToolset)
        copy.__dict__ = {**self.__dict__, 'wrapped': wrapped}
        return copy

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The wrapped tools, the deferred ones after the others, each marked `defer_loading=True` until a search
        found it; then `search_tools`, when some deferred tool is searchable (not a deferred capability's).

        Raises:
            UserError: one of the wrapped tools is named `search_tools`.
        """
        tools = await self.wrapped.get_tools(ctx)
        if not any(tool.tool_def.defer_loading for tool in tools.values()):
            return tools
        if TOOL_SEARCH_FUNCTION_TOOL_NAME in tools:
            raise UserError(
                f"Tool name '{TOOL_SEARCH_FUNCTION_TOOL_NAME}' is reserved for tool search. "
                'Rename your tool to avoid conflicts.'
            )
        found = discovered_tool_names(ctx.messages)
        listed = {name: tool for name, tool in tools.items() if not tool.tool_def.defer_loading}
        corpus: list[ToolDefinition] = []
        searchable = False
        for name, tool in tools.items():
            if tool.tool_def.defer_loading:
                owner = tool.tool_def.capability_id
                if owned_by_deferred_capability(tool.tool_def) and owner in ctx.capabilities:
                    # a deferred capability's tool: shown once the capability is loaded, never searched
                    shown = replace(tool.tool_def, defer_loading=owner not in ctx.active_capability_ids)
                    listed[name] = replace(tool, tool_def=shown)
                    continue
                searchable = True
                hidden = name not in found
                if hidden:
                    corpus.append(tool.tool_def)
                tool_def = replace(tool.tool_def, with_native=TOOL_SEARCH_NATIVE_KIND, defer_loading=hidden)
                listed[name] = replace(tool, tool_def=tool_def)
        if searchable and self.local_search:  # only deferred capabilities' tools: nothing to search, no search tool
            listed[TOOL_SEARCH_FUNCTION_TOOL_NAME] = self._search_tool(corpus)
        return listed

    def _search_tool(self, corpus: list[ToolDefinition]) -> _SearchTool[AgentDepsT]:
        tool_def = ToolDefinition(
            name=TOOL_SEARCH_FUNCTION_TOOL_NAME,
            description=self.tool_description or _DEFAULT_TOOL_DESCRIPTION,
            parameters_json_schema=_search_schema(self.parameter_description or _DEFAULT_PARAMETER_DESCRIPTION),
            tool_kind=TOOL_SEARCH_TOOL_KIND,
            # a provider-run search replaces the keyword search; a search function of the user's runs here
            unless_native=TOOL_SEARCH_NATIVE_KIND if self.search_fn is None else None,
        )
        return _SearchTool(
            toolset=self, tool_def=tool_def, max_retries=1, args_validator=_args_validator(), corpus=corpus
        )

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Run a search for `search_tools`; call the wrapped toolset for the other tools."""
        if isinstance(tool, _SearchTool):
            return await self._search(tool_args['queries'], ctx, tool.corpus)
        return await self.wrapped.call_tool(name, tool_args, ctx, tool)

    async def _search(
        self, queries: list[str], ctx: RunContext[AgentDepsT], corpus: list[ToolDefinition]
    ) -> ToolSearchReturnContent:
        if not any(query.strip() for query in queries):
            raise ModelRetry(_EMPTY_QUERY_MESSAGE)
        if self.search_fn is None:
            if not _words(' '.join(queries)):
                raise ModelRetry(_EMPTY_QUERY_MESSAGE)
            names: Sequence[str] = keywords_search_fn(ctx, queries, corpus)
        else:
            answer = self.search_fn(ctx, queries, corpus)
            names = await answer if inspect.isawaitable(answer) else answer
        by_name = {tool_def.name: tool_def for tool_def in corpus}
        # as pydantic-ai: the first `max_results` names, those that are not deferred tools left out
        picked = [by_name[name] for name in list(names)[: self.max_results] if name in by_name]
        if not picked:
            return {'discovered_tools': [], 'message': NO_MATCHES_MESSAGE}
        # as pydantic-ai 2.x: names only, since the definitions of the tools found reach the model with the next request
        return {'discovered_tools': [{'name': t.name} for t in picked]}
