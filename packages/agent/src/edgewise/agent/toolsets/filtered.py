"""`FilteredToolset`: the wrapped toolset's tools that pass a filter, step by step."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .._tools.definition import ToolDefinition
from ..models._model import AgentDepsT, RunContext
from .abstract import ToolsetTool, register_wrapper
from .wrapper import WrapperToolset

__all__ = ('FilteredToolset',)


@dataclass
class FilteredToolset(WrapperToolset[AgentDepsT]):
    """Keeps the wrapped toolset's tools for which `filter_func(ctx, tool_def)` is true (sync or async)."""

    filter_func: Callable[[RunContext[AgentDepsT], ToolDefinition], bool | Awaitable[bool]]
    """Decides, for each step, whether a tool is shown."""

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The tools the filter keeps."""
        kept: dict[str, ToolsetTool[AgentDepsT]] = {}
        for name, tool in (await self.wrapped.get_tools(ctx)).items():
            keep = self.filter_func(ctx, tool.tool_def)
            if inspect.isawaitable(keep):
                keep = await keep
            if keep:
                kept[name] = tool
        return kept


register_wrapper('filtered', FilteredToolset)
