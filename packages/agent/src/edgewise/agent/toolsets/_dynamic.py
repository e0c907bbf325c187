"""`DynamicToolset`: a toolset built by a function of the `RunContext`, per run or per step (`@agent.toolset`)."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Self, TypeAlias

from ..models._model import AgentDepsT, RunContext
from .abstract import AbstractToolset, ToolsetInstructions, ToolsetTool

__all__ = ('DynamicToolset', 'ToolsetFunc', 'as_toolset')

ToolsetFunc: TypeAlias = Callable[
    [RunContext[AgentDepsT]], AbstractToolset[AgentDepsT] | Awaitable[AbstractToolset[AgentDepsT] | None] | None
]
"""A function (sync or async) building a toolset for a run or a step, or `None` for no tools."""


class DynamicToolset(AbstractToolset[AgentDepsT]):
    """The toolset `toolset_func(ctx)` returns, evaluated at each step (`per_run_step`) or once per run.

    A toolset built anew is entered, and the one it replaces left, as the steps go.
    """

    def __init__(self, toolset_func: ToolsetFunc[AgentDepsT], *, per_run_step: bool = True, id: str | None = None):
        """Wrap `toolset_func`; `id` names the toolset in errors."""
        self.toolset_func = toolset_func
        self.per_run_step = per_run_step
        self._id = id
        self._toolset: AbstractToolset[AgentDepsT] | None = None

    @property
    def id(self) -> str | None:
        """The id given to the constructor."""
        return self._id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DynamicToolset):
            return NotImplemented
        return (self.toolset_func, self.per_run_step, self._id, self._toolset) == (
            other.toolset_func, other.per_run_step, other._id, other._toolset,
        )  # fmt: skip

    __hash__ = None  # type: ignore[assignment]

    async def _build(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT] | None:
        built = self.toolset_func(ctx)
        if inspect.isawaitable(built):
            built = await built
        return built

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """A copy of its own for the run (built now unless it is built per step)."""
        copy = DynamicToolset(self.toolset_func, per_run_step=self.per_run_step, id=self._id)
        if not self.per_run_step:
            copy._toolset = await copy._build(ctx)
        return copy

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """Build the step's toolset (per step only), leaving the previous one and entering the new one."""
        if not self.per_run_step:
            return self
        built = await self._build(ctx)
        if built is self._toolset:
            return self
        old, self._toolset = self._toolset, None
        if old is not None:
            await old.__aexit__(None, None, None)
        if built is not None:
            await built.__aenter__()
            self._toolset = built
        return self

    async def __aenter__(self) -> Self:
        """Enter the toolset built for the run, if any."""
        if self._toolset is not None:
            toolset, self._toolset = self._toolset, None
            await toolset.__aenter__()
            self._toolset = toolset
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        """Leave the current toolset, if any."""
        toolset, self._toolset = self._toolset, None
        if toolset is not None:
            return await toolset.__aexit__(*args)
        return None

    async def get_instructions(self, ctx: RunContext[AgentDepsT]) -> ToolsetInstructions:
        """The current toolset's instructions."""
        return None if self._toolset is None else await self._toolset.get_instructions(ctx)

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The current toolset's tools (none before it is built)."""
        return {} if self._toolset is None else await self._toolset.get_tools(ctx)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Call the tool through the current toolset."""
        assert self._toolset is not None
        return await self._toolset.call_tool(name, tool_args, ctx, tool)

    def apply(self, visitor: Callable[[AbstractToolset[AgentDepsT]], None]) -> None:
        """Visit the current toolset's leaves (or this toolset before one is built)."""
        if self._toolset is None:
            visitor(self)
        else:
            self._toolset.apply(visitor)

    def visit_and_replace(
        self, visitor: Callable[[AbstractToolset[AgentDepsT]], AbstractToolset[AgentDepsT]]
    ) -> AbstractToolset[AgentDepsT]:
        """A copy around the built toolset with its leaves replaced (or `visitor(self)` before one is built)."""
        if self._toolset is None:
            return visitor(self)
        copy = DynamicToolset(self.toolset_func, per_run_step=self.per_run_step, id=self._id)
        copy._toolset = self._toolset.visit_and_replace(visitor)
        return copy


def as_toolset(toolset: AbstractToolset[AgentDepsT] | ToolsetFunc[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
    """`toolset` itself, or a function building one wrapped in a `DynamicToolset` (built anew at each step)."""
    return toolset if isinstance(toolset, AbstractToolset) else DynamicToolset(toolset)
