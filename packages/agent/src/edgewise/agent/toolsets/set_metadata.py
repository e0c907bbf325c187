"""`SetMetadataToolset`: metadata merged into the definitions of the wrapped toolset's tools."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .._tools.definition import ToolDefinition
from ..models._model import AgentDepsT, RunContext
from ..tools import ToolsPrepareFunc
from .abstract import AbstractToolset, register_wrapper
from .prepared import PreparedToolset

__all__ = ('SetMetadataToolset',)


@dataclass(init=False)
class SetMetadataToolset(PreparedToolset[AgentDepsT]):
    """Merges `metadata` into each tool's `ToolDefinition.metadata` (its keys win over the tool's own)."""

    prepare_func: ToolsPrepareFunc[AgentDepsT] = field(init=False, repr=False)
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    """The entries added to each tool's metadata."""

    def __init__(self, wrapped: AbstractToolset[AgentDepsT], metadata: dict[str, Any]) -> None:
        """Wrap `wrapped`, adding `metadata` to its tools."""
        self.wrapped = wrapped
        self.metadata = metadata
        self.prepare_func = self._merge

    async def _merge(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return [replace(d, metadata={**(d.metadata or {}), **self.metadata}) for d in tool_defs]


def _with_metadata(toolset: AbstractToolset[AgentDepsT], **metadata: Any) -> SetMetadataToolset[AgentDepsT]:
    return SetMetadataToolset(toolset, metadata)


register_wrapper('with_metadata', _with_metadata)
