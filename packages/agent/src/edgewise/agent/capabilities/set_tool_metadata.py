"""`SetToolMetadata`: metadata merged into the definitions of the selected tools."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .._functions.tool_selector import ToolSelector, matches_tool_selector
from .._tools.definition import ToolDefinition
from ..tools import AgentDepsT, RunContext
from ..toolsets import AbstractToolset, PreparedToolset
from .abstract import AbstractCapability

__all__ = ('SetToolMetadata',)


@dataclass(init=False)
class SetToolMetadata(AbstractCapability[AgentDepsT]):
    """Merge the keyword arguments into the `metadata` of the selected tools' definitions (the given keys win
    over a tool's own): `SetToolMetadata(tools=['search'], cost='high')`.

    Applies to every function tool of the run (not output tools), so that other capabilities and toolsets can
    select the tools by that metadata.
    """

    tools: ToolSelector[AgentDepsT] = 'all'
    """Which tools: `'all'`, names, a metadata dict, or a predicate (see `ToolSelector`)."""
    metadata: dict[str, Any] = field(default_factory=dict[str, Any], init=False)
    """The entries merged into each selected tool's metadata (the constructor's keyword arguments)."""

    def __init__(self, *, tools: ToolSelector[AgentDepsT] = 'all', **metadata: Any) -> None:
        """Select the tools with `tools`; every other keyword argument is a metadata entry."""
        self.tools = tools
        self.metadata = metadata

    def get_wrapper_toolset(self, toolset: AbstractToolset[AgentDepsT]) -> AbstractToolset[AgentDepsT] | None:
        """`toolset` with the metadata merged into the selected tools' definitions."""
        return PreparedToolset(toolset, self._merge)

    async def _merge(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        merged: list[ToolDefinition] = []
        for tool_def in tool_defs:
            if await matches_tool_selector(self.tools, ctx, tool_def):
                tool_def = replace(tool_def, metadata={**(tool_def.metadata or {}), **self.metadata})
            merged.append(tool_def)
        return merged
