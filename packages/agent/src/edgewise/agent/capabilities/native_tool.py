"""`NativeTool`: a capability that adds one native tool (run by the model's provider) to every request."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pydantic

from ..native_tools import AbstractNativeTool
from ..tools import AgentDepsT, AgentNativeTool
from .abstract import AbstractCapability

__all__ = ('NativeTool',)


@dataclass
class NativeTool(AbstractCapability[AgentDepsT]):
    """Give the agent's requests a native tool: `Agent(capabilities=[NativeTool(WebSearchTool())])` is the same as
    the tool in `Agent(native_tools=...)`. The tool may also be a function of the run context that builds it per
    request (returning `None` leaves it out of that request)."""

    tool: AgentNativeTool[AgentDepsT]
    """The tool, or the function building it."""

    def get_native_tools(self) -> Sequence[AgentNativeTool[AgentDepsT]]:
        """The tool."""
        return [self.tool]

    @classmethod
    def from_spec(cls, tool: Any = None, **fields: Any) -> NativeTool[Any]:
        """The capability from data: `tool={'kind': 'web_search', ...}`, or the tool's fields themselves.

        Raises:
            TypeError: neither a tool nor its fields were given.
        """
        if tool is None and not fields:
            raise TypeError(
                '`NativeTool.from_spec()` requires either a `tool` argument or keyword arguments'
                ' specifying the native tool type (e.g. `kind="web_search"`)'
            )
        data = tool if tool is not None else fields
        return cls(tool=pydantic.TypeAdapter(AbstractNativeTool).validate_python(data))
