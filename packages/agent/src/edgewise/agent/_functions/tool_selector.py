"""Tool selectors: which tools a capability applies to (re-exported by `tools`)."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from .._tools.definition import ToolDefinition
from ..models._model import AgentDepsT, RunContext

__all__ = ('ToolSelector', 'ToolSelectorFunc', 'matches_tool_selector')

ToolSelectorFunc: TypeAlias = Callable[[RunContext[AgentDepsT], ToolDefinition], bool | Awaitable[bool]]
"""A predicate on a tool's definition (sync or async), with the run context."""

ToolSelector: TypeAlias = Literal['all'] | Sequence[str] | dict[str, Any] | ToolSelectorFunc[AgentDepsT]
"""Which tools: `'all'`, tool names, a dict the tool's `metadata` must include (nested dicts included in
depth), or a predicate."""


async def matches_tool_selector(
    selector: ToolSelector[AgentDepsT], ctx: RunContext[AgentDepsT], tool_def: ToolDefinition
) -> bool:
    """Whether `tool_def` is one of the tools `selector` selects."""
    if selector == 'all':
        return True
    if callable(selector):
        found = selector(ctx, tool_def)
        return bool(await found if inspect.isawaitable(found) else found)
    if isinstance(selector, dict):
        return _includes(tool_def.metadata or {}, selector)
    if isinstance(selector, str):
        return tool_def.name == selector
    return tool_def.name in selector


def _includes(metadata: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    for key, value in wanted.items():
        if key not in metadata:
            return False
        held = metadata[key]
        if isinstance(value, Mapping) and isinstance(held, Mapping):
            if not _includes(held, value):
                return False
        elif held != value:
            return False
    return True
