"""`RenamedToolset`: some of the wrapped toolset's tools under other names."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, replace
from typing import Any

from ..exceptions import UserError
from ..models._model import AgentDepsT, RunContext
from .abstract import ToolsetTool, register_wrapper
from .wrapper import WrapperToolset

__all__ = ('RenamedToolset',)


@dataclass
class RenamedToolset(WrapperToolset[AgentDepsT]):
    """Renames the wrapped toolset's tools: `name_map` maps each new name to a tool's own name."""

    name_map: dict[str, str]
    """New name -> the tool's own name; tools not named keep their names."""

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The wrapped toolset's tools, renamed.

        Raises:
            UserError: a tool would take the name another tool has (renamed or not).
        """
        new_names = {own: new for new, own in self.name_map.items()}
        tools: dict[str, ToolsetTool[AgentDepsT]] = {}
        for own, tool in (await self.wrapped.get_tools(ctx)).items():
            new = new_names.get(own)
            if (name := new or own) in tools:  # two tools would answer to one name: one would be lost
                raise UserError(
                    f'Renaming tool {own!r} to {name!r} conflicts with existing tool.'
                    if name != own
                    else f'Tool name conflicts with previously renamed tool: {name!r}.'
                )
            if new is not None:
                tools[new] = replace(tool, toolset=self, tool_def=replace(tool.tool_def, name=new))
            else:
                tools[own] = tool
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Call the tool by its own name in the wrapped toolset."""
        own = self.name_map.get(name, name)
        ctx = replace(ctx, tool_name=own)
        tool = replace(tool, tool_def=replace(tool.tool_def, name=own))
        return await self.wrapped.call_tool(own, tool_args, ctx, tool)


register_wrapper('renamed', RenamedToolset)
