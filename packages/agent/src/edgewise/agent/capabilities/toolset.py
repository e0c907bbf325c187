"""`Toolset`: a capability that adds a toolset's tools to the agent's (`capabilities=[Toolset(my_toolset)]`)."""

from __future__ import annotations as _annotations

from dataclasses import dataclass

from ..tools import AgentDepsT
from ..toolsets import AbstractToolset, ToolsetFunc
from .abstract import AbstractCapability

__all__ = ('Toolset',)


@dataclass
class Toolset(AbstractCapability[AgentDepsT]):
    """Adds the tools of `toolset` to the agent's, as `Agent(toolsets=[toolset])` would; with other capabilities
    (`PrefixTools(Toolset(...), prefix=...)`, a `CombinedCapability`) it carries a toolset where a capability is
    expected. Not buildable from an agent spec (a spec cannot hold a toolset)."""

    toolset: AbstractToolset[AgentDepsT] | ToolsetFunc[AgentDepsT]
    """The toolset, or a function of the run context building one at each step (as `@agent.toolset` takes)."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: a toolset cannot be given in an agent spec."""
        return None

    def get_toolset(self) -> AbstractToolset[AgentDepsT] | ToolsetFunc[AgentDepsT] | None:
        """The toolset, as given."""
        return self.toolset
