"""`IncludeToolReturnSchemas`: show the model the return schema of the selected tools."""

from __future__ import annotations as _annotations

import dataclasses
from dataclasses import dataclass

from .._functions.tool_selector import ToolSelector, matches_tool_selector
from .._tools.definition import ToolDefinition
from ..tools import AgentDepsT, RunContext
from .abstract import AbstractCapability

__all__ = ('IncludeToolReturnSchemas',)


@dataclass
class IncludeToolReturnSchemas(AbstractCapability[AgentDepsT]):
    """Set `include_return_schema` on the selected tools' definitions, so that the model is shown what they
    return. A tool that chose for itself (`Tool(..., include_return_schema=False)`) keeps its choice."""

    tools: ToolSelector[AgentDepsT] = 'all'
    """Which tools: `'all'`, names, a metadata dict, or a predicate (see `ToolSelector`)."""

    async def prepare_tools(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """The definitions, the selected ones (that did not choose) with `include_return_schema=True`."""
        prepared: list[ToolDefinition] = []
        for tool_def in tool_defs:
            if tool_def.include_return_schema is None and await matches_tool_selector(self.tools, ctx, tool_def):
                tool_def = dataclasses.replace(tool_def, include_return_schema=True)
            prepared.append(tool_def)
        return prepared
