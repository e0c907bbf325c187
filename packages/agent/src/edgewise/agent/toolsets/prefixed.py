"""`PrefixedToolset`: the wrapped toolset's tools named `{prefix}_{name}`."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, replace
from typing import Any

from ..models._model import AgentDepsT, RunContext
from .abstract import ToolsetTool, register_wrapper
from .wrapper import WrapperToolset

__all__ = ('PrefixedToolset',)


@dataclass
class PrefixedToolset(WrapperToolset[AgentDepsT]):
    """Prefixes the names of the wrapped toolset's tools with `prefix` and an underscore."""

    prefix: str
    """The prefix (an underscore follows it)."""

    @property
    def tool_name_conflict_hint(self) -> str:
        """What a name clash error suggests."""
        return 'Change the `prefix` attribute to avoid name conflicts.'

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The wrapped toolset's tools under their prefixed names."""
        tools: dict[str, ToolsetTool[AgentDepsT]] = {}
        for name, tool in (await self.wrapped.get_tools(ctx)).items():
            new_name = f'{self.prefix}_{name}'
            tools[new_name] = replace(tool, toolset=self, tool_def=replace(tool.tool_def, name=new_name))
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Call the tool by its own name in the wrapped toolset."""
        own = name.removeprefix(f'{self.prefix}_')
        ctx = replace(ctx, tool_name=own)
        tool = replace(tool, tool_def=replace(tool.tool_def, name=own))
        return await self.wrapped.call_tool(own, tool_args, ctx, tool)


register_wrapper('prefixed', PrefixedToolset)
