"""`CapabilityOwnedToolset`: the tools of a deferred capability (`defer_loading=True`), hidden from the model
until the capability is loaded (as pydantic-ai 1.107's module of this name)."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from .._messages.capability_loading import DEFERRED_CAPABILITY_TOOL_METADATA_KEY
from .._tools.definition import ToolDefinition
from ..models._model import AgentDepsT, RunContext
from .abstract import AbstractToolset, ToolsetInstructions, ToolsetTool
from .function import FunctionToolset
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
    tagged already (by a capability inside this one) keeping its tag. Nothing else changes: the wrapped toolset's
    `id` is this one's (its instruction blocks stay keyed `toolset:<id>`)."""

    capability: Any
    """The capability owning the tools (typed loosely: capabilities sit above toolsets)."""

    @property
    def id(self) -> str | None:
        """The wrapped toolset's id: the tagging is no toolset of its own."""
        return self.wrapped.id

    @property
    def lists_statically(self) -> bool:
        """Whether the same listing of the wrapped toolset means the same tools (a `FunctionToolset`'s does): the
        tagged listing is then the same object too, step after step, and run after run."""
        return type(self.wrapped).get_tools is FunctionToolset.get_tools

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The wrapped tools, those without an owner tagged with this capability's id."""
        tools = await self.wrapped.get_tools(ctx)
        owner = resolve_capability_id(ctx, self.capability)
        # The last listing tagged is kept on the wrapped toolset (which outlives the runs, unlike this wrapper, made
        # for each): the same listing and owner give the same tagged listing.
        kept: dict[str, Any] = getattr(self.wrapped, '__dict__', None) or {}
        last = kept.get(_TAGGED)
        if last is not None and last[0] is tools and last[1] == owner:
            tagged: dict[str, ToolsetTool[AgentDepsT]] = last[2]
            return tagged
        if owner is None or all(tool.tool_def.capability_id is not None for tool in tools.values()):
            return tools
        tagged = {
            name: tool
            if tool.tool_def.capability_id is not None
            else replace(tool, tool_def=replace(tool.tool_def, capability_id=owner))
            for name, tool in tools.items()
        }
        kept[_TAGGED] = (tools, owner, tagged)
        return tagged


_TAGGED = '_edgewise_capability_tagged'
"""Where a toolset keeps its last listing tagged by a `CapabilityToolset`: the listing, the owner, the tagged one."""


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
