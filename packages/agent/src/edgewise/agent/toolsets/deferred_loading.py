"""`DeferredLoadingToolset`: the wrapped tools marked `defer_loading`, hidden until a tool search finds them."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from .._tools.definition import ToolDefinition
from ..models._model import AgentDepsT, RunContext
from ..tools import ToolsPrepareFunc
from .abstract import AbstractToolset, register_wrapper
from .prepared import PreparedToolset

__all__ = ('DeferredLoadingToolset',)


@dataclass(init=False)
class DeferredLoadingToolset(PreparedToolset[AgentDepsT]):
    """Marks the wrapped toolset's tools (all of them, or those named in `tool_names`) with `defer_loading=True`."""

    prepare_func: ToolsPrepareFunc[AgentDepsT] = field(init=False, repr=False)
    tool_names: frozenset[str] | None = None
    """The tools to mark; every tool when `None`."""

    def __init__(self, wrapped: AbstractToolset[AgentDepsT], *, tool_names: frozenset[str] | None = None) -> None:
        """Wrap `wrapped`, marking the tools named in `tool_names` (every tool when `None`)."""
        self.wrapped = wrapped
        self.tool_names = tool_names
        self.prepare_func = self._mark

    async def _mark(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        names = self.tool_names
        return [replace(d, defer_loading=True) if names is None or d.name in names else d for d in tool_defs]


def _defer_loading(
    toolset: AbstractToolset[AgentDepsT], tool_names: Sequence[str] | None = None
) -> DeferredLoadingToolset[AgentDepsT]:
    return DeferredLoadingToolset(toolset, tool_names=frozenset(tool_names) if tool_names is not None else None)


register_wrapper('defer_loading', _defer_loading)
