"""`CapabilityOwnedToolset`: the tools of a deferred capability (`defer_loading=True`), hidden from the model
until the capability is loaded (as pydantic-ai 1.107's module of this name)."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .._messages.capability_loading import DEFERRED_CAPABILITY_TOOL_METADATA_KEY
from .._tools.definition import ToolDefinition
from ..models._model import AgentDepsT, RunContext
from .abstract import AbstractToolset, ToolsetInstructions, ToolsetTool
from .wrapper import WrapperToolset

__all__ = (
    'CapabilityOwnedToolset',
    'CapabilityToolset',
    'resolve_capability_id',
    'tool_defs_from_pre_definition_load_returns',
)


@dataclass
class CapabilityOwnedToolset(WrapperToolset[AgentDepsT]):
    """The toolset of a deferred capability: its tools marked `defer_loading=True` and tagged with the capability's
    id (`ToolDefinition.capability_id` and the metadata key); the tool search shows them once the capability is
    loaded and never searches them. Its instructions come back in the `load_capability` return instead of in
    each request."""

    capability: Any
    """The capability owning the tools (typed loosely: capabilities sit above toolsets)."""

    def apply(self, visitor: Callable[[AbstractToolset[AgentDepsT]], None]) -> None:
        """Visit this toolset (the loader finds a capability's toolsets by it), then the wrapped one's leaves."""
        visitor(self)
        self.wrapped.apply(visitor)

    async def get_instructions(self, ctx: RunContext[AgentDepsT]) -> ToolsetInstructions:
        """None: the `load_capability` return carries them."""
        return None

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The wrapped tools, marked and tagged."""
        tools = await self.wrapped.get_tools(ctx)
        owner = resolve_capability_id(ctx, self.capability)
        found: dict[str, ToolsetTool[AgentDepsT]] = {}
        for name, tool in tools.items():
            tool_def = tool.tool_def
            metadata = {**(tool_def.metadata or {}), DEFERRED_CAPABILITY_TOOL_METADATA_KEY: True}
            changed = replace(tool_def, defer_loading=True, metadata=metadata, capability_id=owner)
            found[name] = replace(tool, tool_def=changed)
        return found


@dataclass
class CapabilityToolset(WrapperToolset[AgentDepsT]):
    """The toolset of a capability in effect from the start (not deferred): its tools tagged with the capability's
    id in the run (`ToolDefinition.capability_id`, as pydantic-ai 2.x tags the tools of every capability), a tool
    tagged already (by a capability inside this one) keeping its tag. Nothing else changes."""

    capability: Any
    """The capability owning the tools (typed loosely: capabilities sit above toolsets)."""
    _last: tuple[Any, str | None, dict[str, ToolsetTool[AgentDepsT]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """The last listing tagged: the wrapped listing, the owner's id and the tagged listing (a listing that does not
    change gives the same tagged one, which a run's step takes as unchanged)."""

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The wrapped tools, those without an owner tagged with this capability's id."""
        tools = await self.wrapped.get_tools(ctx)
        owner = resolve_capability_id(ctx, self.capability)
        last = self._last
        if last is not None and last[0] is tools and last[1] == owner:
            return last[2]
        if owner is None or all(tool.tool_def.capability_id is not None for tool in tools.values()):
            return tools
        tagged = {
            name: tool
            if tool.tool_def.capability_id is not None
            else replace(tool, tool_def=replace(tool.tool_def, capability_id=owner))
            for name, tool in tools.items()
        }
        self._last = (tools, owner, tagged)
        return tagged


def resolve_capability_id(ctx: RunContext[Any], capability: Any) -> str | None:
    """The id `capability` has in the run (`ctx.capabilities`), or its own `id` when the run does not list it."""
    for key, listed in ctx.capabilities.items():
        if listed is capability:
            return key
    found: str | None = capability.id
    return found


def tool_defs_from_pre_definition_load_returns(
    ctx: RunContext[Any], tool_defs: Iterable[ToolDefinition]
) -> dict[str, ToolDefinition]:
    """The tools among `tool_defs` that a `load_capability` call of the history revealed, by name: those owned
    (`capability_id`) by a deferred capability of the run (`defer_loading=True`) that the history has loaded
    (`ctx.loaded_capability_ids`). A history written before load returns listed the tools they reveal names only
    the capability: these are its tools. A capability that is not deferred (any more) reveals nothing."""
    found: dict[str, ToolDefinition] = {}
    for tool_def in tool_defs:
        owner = tool_def.capability_id
        if owner is None or owner not in ctx.loaded_capability_ids:
            continue
        capability = ctx.capabilities.get(owner)
        if capability is not None and capability.defer_loading:
            found[tool_def.name] = tool_def
    return found
