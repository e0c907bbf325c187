"""`PreparedToolset`: the wrapped toolset's definitions of each step passed through a function."""

from __future__ import annotations as _annotations

import inspect
from dataclasses import dataclass, replace

from ..exceptions import PrepareReturnedNoneError, UserError
from ..models._model import AgentDepsT, RunContext
from ..tools import ToolsPrepareFunc
from .abstract import ToolsetTool, register_wrapper
from .wrapper import WrapperToolset

__all__ = ('PreparedToolset',)


@dataclass
class PreparedToolset(WrapperToolset[AgentDepsT]):
    """Passes the tool definitions of each step through `prepare_func(ctx, tool_defs)`, which may change
    descriptions and schemas or drop tools (return `[]` to drop them all) but not add or rename any."""

    prepare_func: ToolsPrepareFunc[AgentDepsT]
    """Returns the definitions to show for the step."""

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The tools whose definitions the function returned, with those definitions.

        Raises:
            UserError: the function returned a definition whose name is not one of the wrapped tools.
            PrepareReturnedNoneError: the function returned `None`.
        """
        tools = await self.wrapped.get_tools(ctx)
        prepared = self.prepare_func(ctx, [tool.tool_def for tool in tools.values()])
        if inspect.isawaitable(prepared):
            prepared = await prepared
        if prepared is None:
            raise PrepareReturnedNoneError.of(self.prepare_func)
        by_name = {tool_def.name: tool_def for tool_def in prepared}
        if by_name.keys() - tools.keys():
            raise UserError(
                'Prepare function cannot add or rename tools. Use `FunctionToolset.add_function()` or '
                '`RenamedToolset` instead.'
            )
        return {name: replace(tools[name], tool_def=tool_def) for name, tool_def in by_name.items()}


register_wrapper('prepared', PreparedToolset)
