"""`PrepareTools` and `PrepareOutputTools`: a function that filters or changes the tool definitions of each step."""

from __future__ import annotations as _annotations

import inspect
from dataclasses import dataclass

from .._tools.definition import ToolDefinition
from ..exceptions import PrepareReturnedNoneError
from ..tools import AgentDepsT, RunContext, ToolsPrepareFunc
from .abstract import AbstractCapability

__all__ = ('PrepareTools', 'PrepareOutputTools')


@dataclass
class PrepareTools(AbstractCapability[AgentDepsT]):
    """Pass the function tools of each step through `prepare_func(ctx, tool_defs)` (sync or async), which returns
    the definitions to keep, changed or not. Output tools are left alone: see `PrepareOutputTools`."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: it takes a function, so it cannot come from a spec."""
        return None

    prepare_func: ToolsPrepareFunc[AgentDepsT]
    """The function."""

    async def prepare_tools(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """What the function returns for the step's function tools."""
        return await _prepared(self.prepare_func, ctx, tool_defs)


@dataclass
class PrepareOutputTools(AbstractCapability[AgentDepsT]):
    """Pass the output tools of each step through `prepare_func(ctx, tool_defs)`, as `PrepareTools` does for
    function tools (`ctx.retry` counts output retries)."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: it takes a function, so it cannot come from a spec."""
        return None

    prepare_func: ToolsPrepareFunc[AgentDepsT]
    """The function."""

    async def prepare_output_tools(
        self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        """What the function returns for the step's output tools."""
        return await _prepared(self.prepare_func, ctx, tool_defs)


async def _prepared(
    prepare_func: ToolsPrepareFunc[AgentDepsT], ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]
) -> list[ToolDefinition]:
    result = prepare_func(ctx, tool_defs)
    if inspect.isawaitable(result):
        result = await result
    if result is None:
        raise PrepareReturnedNoneError.of(prepare_func)
    return list(result)
