"""`ExternalToolset`: tools the model may call whose results come from outside the run (a front end, a job)."""

from __future__ import annotations as _annotations

from dataclasses import replace
from functools import cache
from typing import Any

import pydantic
from typing_extensions import deprecated

from .._tools.definition import ToolDefinition
from ..exceptions import UserError
from ..models._model import AgentDepsT, RunContext
from .abstract import AbstractToolset, ToolsetTool

__all__ = ('DeferredToolset', 'ExternalToolset')


@cache
def _any_args_validator() -> Any:
    # Built on first use, not at import: building a validator loads pydantic's plugins (logfire's among them),
    # which would cost every `import edgewise.agent` a few hundred milliseconds.
    return pydantic.TypeAdapter(dict[str, Any]).validator


class ExternalToolset(AbstractToolset[AgentDepsT]):
    """Tools given by their definitions only: a call of one ends the run with it in `DeferredToolRequests.calls`,
    and its result comes back with the next run's `deferred_tool_results`."""

    tool_defs: list[ToolDefinition]
    """The tools' definitions (their kind becomes `'external'`)."""

    def __init__(self, tool_defs: list[ToolDefinition], *, id: str | None = None) -> None:
        """Make a toolset of the `tool_defs`; `id` names it in errors."""
        self.tool_defs = tool_defs
        self._id = id

    @property
    def id(self) -> str | None:
        """The id given to the constructor."""
        return self._id

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The tools, of kind `'external'`; their arguments are checked only for being an object."""
        return {
            d.name: ToolsetTool(toolset=self, tool_def=replace(d, kind='external'), max_retries=0,
                                args_validator=_any_args_validator())
            for d in self.tool_defs
        }  # fmt: skip

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Never called by the agent (external calls end the run).

        Raises:
            UserError: always.
        """
        raise UserError(f'External tool {name!r} cannot be called directly: its result comes from outside the run.')


@deprecated('`DeferredToolset` is deprecated, use `ExternalToolset` instead')
class DeferredToolset(ExternalToolset[AgentDepsT]):
    """The old name of `ExternalToolset` (deprecated, as in pydantic-ai)."""
