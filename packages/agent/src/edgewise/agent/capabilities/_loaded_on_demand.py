"""Capabilities loaded on demand (`defer_loading=True`), as pydantic-ai 1.107 loads them.

A run with deferred capabilities gets a `DeferredCapabilityLoader`: its instructions list the deferred capabilities
(id and description) and it adds the `load_capability` tool. Each deferred capability stands in the run behind a
`DeferredCapabilityGate`: until the model loads it, its instructions, native tools and model settings stay out of
the requests, its tools are listed `defer_loading=True` (hidden from the model) and its hooks do not fire. Loading
returns a confirmation (`LoadCapabilityReturn`) and the run states the capability's instructions after it, in the
history (`_loop.loaded_instructions`); its tools, native tools and settings apply from the next request and its hooks
from the next hook point. What is loaded is read from the history (the
`LoadCapabilityCallPart` / `LoadCapabilityReturnPart` pairs), so a later run given the history, or a stored run
resumed, has it loaded too. The tool and the toolset hiding a capability's tools sit with the toolsets
(`toolsets._deferred_capability_loader`, `toolsets._capability_owned`); the message parts in
`_messages.capability_loading`.
"""

from __future__ import annotations as _annotations

import re
from collections.abc import AsyncIterable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from .._functions.runners import normalize_instructions
from .._messages.tool_parts import TOOL_SEARCH_NATIVE_KIND
from ..exceptions import UserError
from ..messages import (
    AgentStreamEvent,
)
from ..tools import AgentDepsT, AgentNativeTool, RunContext
from ..toolsets import AbstractToolset
from ..toolsets._capability_owned import CapabilityOwnedToolset
from ..toolsets._deferred_capability_loader import DeferredCapabilityLoaderToolset
from ..toolsets._dynamic import as_toolset
from ._hook_table import HOOKS
from .abstract import AbstractCapability, CapabilityOrdering
from .combined import CombinedCapability
from .instrumentation import Instrumentation
from .wrapper import WrapperCapability

__all__ = (
    'DEFERRED_CAPABILITY_CATALOG_PREFIX',
    'DEFERRED_CAPABILITY_CATALOG_PREFIX_WITH_SEARCH',
    'DeferredCapabilityGate',
    'DeferredCapabilityLoader',
    'capability_registry',
    'deferred_run_capabilities',
    'validate_capability_ids',
)

DEFERRED_CAPABILITY_CATALOG_PREFIX = (
    'The following capabilities are deferred and can be loaded using the `load_capability` tool. '
    "A capability's tools stay hidden until it is loaded:"
)
"""The first line of the catalog of deferred capabilities in the instructions (pydantic-ai 2.x's)."""

DEFERRED_CAPABILITY_CATALOG_PREFIX_WITH_SEARCH = (
    DEFERRED_CAPABILITY_CATALOG_PREFIX[:-1] + ' — load the capability first rather than searching for its tools:'
)
"""The catalog's first line in a run that also has tools to search (pydantic-ai 2.x's): it steers the model to
`load_capability`, since a capability's tools are never searched."""


# -- the run's capabilities by id ----------------------------------------------------------------------------------


def validate_capability_ids(capabilities: Sequence[AbstractCapability[Any]]) -> set[str]:
    """The explicit ids of `capabilities` (each one, as `apply` visits them).

    Raises:
        UserError: a deferred capability has no `id`, or two capabilities share one.
    """
    ids: set[str] = set()
    for capability in _leaves(capabilities):
        if capability.defer_loading and capability.id is None:
            raise UserError(
                'Deferred capabilities must use stable explicit `id` values. '
                'Pass `id=...` when using `defer_loading=True`.'
            )
        if capability.id is None:
            continue
        if capability.id in ids:
            raise UserError(
                f'Capability id {capability.id!r} is used by multiple capabilities. '
                'Capability ids must be unique within a run.'
            )
        ids.add(capability.id)
    return ids


def capability_registry(capabilities: Sequence[AbstractCapability[Any]]) -> dict[str, AbstractCapability[Any]]:
    """The capabilities by id (`RunContext.capabilities`): a capability without an `id` under its class name in
    snake case, with `_2`, `_3`... when taken.

    Raises:
        UserError: as `validate_capability_ids`.
    """
    explicit = validate_capability_ids(capabilities)
    registry: dict[str, AbstractCapability[Any]] = {}
    for capability in _leaves(capabilities):
        key = capability.id
        if key is None:
            key = base = _snake(type(capability).__name__)
            suffix = 2
            while key in registry or key in explicit:
                key, suffix = f'{base}_{suffix}', suffix + 1
        registry[key] = capability
    return registry


def deferred_run_capabilities(capabilities: list[AbstractCapability[Any]]) -> list[AbstractCapability[Any]]:
    """`capabilities` with each deferred one behind a `DeferredCapabilityGate` and a `DeferredCapabilityLoader`
    last (unless one is already there); `capabilities` itself when none is deferred."""
    if not any(c.defer_loading for c in _leaves(capabilities)):
        return capabilities
    gated = [_gated(c) for c in capabilities]
    if not any(isinstance(c, DeferredCapabilityLoader) for c in _leaves(capabilities)):
        gated.append(DeferredCapabilityLoader())
    return gated


def _gated(capability: AbstractCapability[Any]) -> AbstractCapability[Any]:
    if isinstance(capability, DeferredCapabilityGate):
        return capability
    if isinstance(capability, CombinedCapability):
        return CombinedCapability([_gated(c) for c in capability.capabilities])
    return DeferredCapabilityGate(capability) if capability.defer_loading else capability


def _leaves(capabilities: Sequence[AbstractCapability[Any]]) -> list[AbstractCapability[Any]]:
    found: list[AbstractCapability[Any]] = []
    for capability in capabilities:
        capability.apply(found.append)
    return found


def _snake(name: str) -> str:
    return re.sub(r'(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])', '_', name).lower()


# -- the catalog and the `load_capability` tool -------------------------------------------------------------------


async def _catalog(ctx: RunContext[Any]) -> str:
    # Every deferred capability, loaded or not: the text stays the same across loads (a stable prompt prefix).
    # A run with searchable tools (marked for the tool search for good, found or not: the line stays the same) says
    # that a capability is loaded, not searched for.
    searchable = any(t.with_native == TOOL_SEARCH_NATIVE_KIND for t in ctx.tools.values())
    lines = [DEFERRED_CAPABILITY_CATALOG_PREFIX_WITH_SEARCH if searchable else DEFERRED_CAPABILITY_CATALOG_PREFIX]
    for key, capability in ctx.capabilities.items():
        if capability.defer_loading:
            description = await _text(capability.get_description(), ctx)
            lines.append(f'- {key}: {description}' if description else f'- {key}')
    return '\n'.join(lines)


async def _text(item: Any, ctx: RunContext[Any]) -> str | None:
    if item is None or isinstance(item, str):
        return item
    runners = normalize_instructions(item)
    return await runners[0].run(ctx) if runners and not isinstance(runners[0], str) else None


@dataclass
class DeferredCapabilityLoader(AbstractCapability[AgentDepsT]):
    """Added to a run with deferred capabilities (once): the catalog of them in the instructions, and the
    `load_capability` tool (`DeferredCapabilityLoaderToolset`) around the run's toolset."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: added by the run, never named in a spec."""
        return None

    def get_ordering(self) -> CapabilityOrdering | None:
        """Outermost, inside `Instrumentation`."""
        return CapabilityOrdering(position='outermost', wrapped_by=[Instrumentation])

    def get_instructions(self) -> Any:
        """The catalog: one line per deferred capability, `- <id>: <description>` (`- <id>` without one)."""
        return _catalog

    def get_wrapper_toolset(self, toolset: AbstractToolset[AgentDepsT]) -> AbstractToolset[AgentDepsT] | None:
        """The run's toolset with the `load_capability` tool first."""
        return DeferredCapabilityLoaderToolset(toolset)


# -- a deferred capability, inert until loaded --------------------------------------------------------------------


@dataclass(init=False)
class DeferredCapabilityGate(WrapperCapability[AgentDepsT]):
    """A deferred capability in a run: hands everything to it once the model has loaded it (its id in
    `ctx.loaded_capability_ids`); until then its instructions, model settings and native tools give nothing, its
    tools are hidden from the model and each of its hooks behaves as `AbstractCapability`'s (changes nothing)."""

    gates_loading: ClassVar[bool] = True
    """Marks a gate: a `CombinedCapability` holding it leaves the gating of its settings and tools to it."""

    def __init__(self, wrapped: AbstractCapability[AgentDepsT]) -> None:
        self.wrapped = wrapped
        self.id, self.description, self.defer_loading = wrapped.id, wrapped.description, True

    def _loaded(self, ctx: RunContext[Any]) -> bool:
        return self.wrapped.id in ctx.loaded_capability_ids

    def overrides(self, hook: str) -> bool:
        """Whether the wrapped capability implements `hook`."""
        return self.wrapped.overrides(hook)

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractCapability[AgentDepsT]:
        """This gate, or one around the wrapped capability's `for_run` result when that is another."""
        wrapped = await self.wrapped.for_run(ctx)
        return self if wrapped is self.wrapped else DeferredCapabilityGate(wrapped)

    def apply(self, visitor: Callable[[AbstractCapability[AgentDepsT]], None]) -> None:
        """Visit the wrapped capability (the run lists it, not the gate, in `ctx.capabilities`)."""
        self.wrapped.apply(visitor)

    def get_ordering(self) -> CapabilityOrdering | None:
        """The wrapped capability's place among the others."""
        return self.wrapped.get_ordering()

    def get_instructions(self) -> Any:
        """`None`: a deferred capability's instructions are never in the instructions' prefix. Once loaded (by the
        model's `load_capability` call or from code) the run states them in the history, as the block
        `capability:<id>` (pydantic-ai 2.68)."""
        return None

    def get_model_settings(self) -> Any:
        """A function giving the wrapped capability's settings once it is loaded (none before); `None` if it has
        none."""
        settings = self.wrapped.get_model_settings()
        if settings is None:
            return None

        def loaded_settings(ctx: RunContext[AgentDepsT]) -> Any:
            if not self._loaded(ctx):
                return None
            return settings(replace(ctx, capability_active=True)) if callable(settings) else settings

        return loaded_settings

    def get_native_tools(self) -> Sequence[AgentNativeTool[AgentDepsT]]:
        """The wrapped capability's native tools, each a function giving it once the capability is loaded."""
        return [self._gate_native(tool) for tool in self.wrapped.get_native_tools()]

    def _gate_native(self, tool: AgentNativeTool[AgentDepsT]) -> AgentNativeTool[AgentDepsT]:
        def loaded_tool(ctx: RunContext[AgentDepsT]) -> Any:
            if not self._loaded(ctx):
                return None
            return tool(replace(ctx, capability_active=True)) if callable(tool) else tool

        return loaded_tool

    def get_toolset(self) -> AbstractToolset[AgentDepsT] | None:
        """The wrapped capability's toolset, hidden from the model until the capability is loaded."""
        toolset = self.wrapped.get_toolset()
        return None if toolset is None else CapabilityOwnedToolset(as_toolset(toolset), self.wrapped)

    def wrap_run_event_stream(
        self, ctx: RunContext[AgentDepsT], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        """The events through the wrapped capability's `wrap_run_event_stream` once it is loaded."""
        if not self._loaded(ctx):
            return stream
        return self.wrapped.wrap_run_event_stream(replace(ctx, capability_active=True), stream=stream)


def _gated_hook(name: str) -> Callable[..., Any]:
    default = getattr(AbstractCapability, name)

    async def gated(self: DeferredCapabilityGate[Any], ctx: RunContext[Any], *args: Any, **kwargs: Any) -> Any:
        if self._loaded(ctx):
            return await getattr(self.wrapped, name)(replace(ctx, capability_active=True), *args, **kwargs)
        return await default(self, ctx, *args, **kwargs)

    gated.__name__ = gated.__qualname__ = name
    gated.__doc__ = f"The wrapped capability's `{name}` once it is loaded; `AbstractCapability`'s before."
    return gated


for _spec in HOOKS:
    if _spec.kind != 'stream':  # `wrap_run_event_stream` is written out
        setattr(DeferredCapabilityGate, _spec.name, _gated_hook(_spec.name))
