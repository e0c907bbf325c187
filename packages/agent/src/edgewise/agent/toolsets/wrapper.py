"""`WrapperToolset`: a toolset that hands everything to the toolset it wraps; subclass it to change one thing."""

from __future__ import annotations as _annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Self

from ..models._model import AgentDepsT, RunContext
from .abstract import AbstractToolset, ToolsetInstructions, ToolsetTool

__all__ = ('WrapperToolset',)


@dataclass
class WrapperToolset(AbstractToolset[AgentDepsT]):
    """Delegates listing, calling, entering and leaving to `wrapped`."""

    wrapped: AbstractToolset[AgentDepsT]
    """The toolset wrapped."""

    @property
    def id(self) -> str | None:
        """None: a wrapper is named by what it wraps."""
        return None

    @property
    def label(self) -> str:
        """The class and the wrapped toolset's label."""
        return f'{type(self).__name__}({self.wrapped.label})'

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """This wrapper around the wrapped toolset's toolset for the run."""
        wrapped = await self.wrapped.for_run(ctx)
        return self if wrapped is self.wrapped else self._wrapping(wrapped)

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """This wrapper around the wrapped toolset's toolset for the step."""
        wrapped = await self.wrapped.for_run_step(ctx)
        return self if wrapped is self.wrapped else self._wrapping(wrapped)

    def _wrapping(self, wrapped: AbstractToolset[AgentDepsT]) -> WrapperToolset[AgentDepsT]:
        """A copy of this wrapper around `wrapped`."""
        return replace(self, wrapped=wrapped)

    async def __aenter__(self) -> Self:
        """Enter the wrapped toolset."""
        await self.wrapped.__aenter__()
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        """Leave the wrapped toolset."""
        return await self.wrapped.__aexit__(*args)

    async def get_instructions(self, ctx: RunContext[AgentDepsT]) -> ToolsetInstructions:
        """The wrapped toolset's instructions."""
        return await self.wrapped.get_instructions(ctx)

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The wrapped toolset's tools."""
        return await self.wrapped.get_tools(ctx)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Call the tool through the wrapped toolset."""
        return await self.wrapped.call_tool(name, tool_args, ctx, tool)

    def apply(self, visitor: Callable[[AbstractToolset[AgentDepsT]], None]) -> None:
        """Visit the wrapped toolset's leaves."""
        self.wrapped.apply(visitor)

    def visit_and_replace(
        self, visitor: Callable[[AbstractToolset[AgentDepsT]], AbstractToolset[AgentDepsT]]
    ) -> AbstractToolset[AgentDepsT]:
        """This wrapper around the wrapped toolset with its leaves replaced."""
        return replace(self, wrapped=self.wrapped.visit_and_replace(visitor))
