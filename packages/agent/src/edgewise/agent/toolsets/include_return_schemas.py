"""`IncludeReturnSchemasToolset`: the model is told what each of the wrapped toolset's tools returns."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field, replace

from .._tools.definition import ToolDefinition
from ..models._model import AgentDepsT, RunContext
from ..tools import ToolsPrepareFunc
from .abstract import AbstractToolset, register_wrapper
from .prepared import PreparedToolset

__all__ = ('IncludeReturnSchemasToolset',)


@dataclass(init=False)
class IncludeReturnSchemasToolset(PreparedToolset[AgentDepsT]):
    """Sets `include_return_schema=True` on the wrapped toolset's tools that leave it unset (`None`)."""

    prepare_func: ToolsPrepareFunc[AgentDepsT] = field(init=False, repr=False)

    def __init__(self, wrapped: AbstractToolset[AgentDepsT]) -> None:
        """Wrap `wrapped`."""
        self.wrapped = wrapped
        self.prepare_func = _include


async def _include(ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
    # A tool that said `include_return_schema=False` itself keeps it.
    return [replace(d, include_return_schema=True) if d.include_return_schema is None else d for d in tool_defs]


register_wrapper('include_return_schemas', IncludeReturnSchemasToolset)
