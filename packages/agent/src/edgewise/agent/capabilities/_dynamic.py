"""`DynamicCapability`: a capability made for each run by a function of the run context, standing in the run as a
`ResolvedDynamicCapability` (as pydantic-ai 2.x), and the wrapping of such functions given in
`Agent(capabilities=[...])` or `run(capabilities=[...])`."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..exceptions import UserError
from ..tools import AgentDepsT, RunContext
from ..toolsets import AbstractToolset
from ..toolsets._dynamic import DynamicToolset
from .abstract import AbstractCapability, CapabilityFunc, CapabilityOrdering
from .wrapper import WrapperCapability

__all__ = (
    'DynamicCapability',
    'ResolvedDynamicCapability',
    'as_capabilities',
    'capabilities_for_run',
    'configured_for_run',
)


@dataclass
class DynamicCapability(AbstractCapability[AgentDepsT]):
    """The capability `capability_func` returns for the run context of each run (sync or async; `None`: none for
    that run). Its result stands for this one during the run, wrapped in a `ResolvedDynamicCapability`: its
    instructions, model settings, native tools and hooks all apply; its tools come through the one toolset this
    capability has from the start (`get_toolset`), which lists the tools of the run's result. A function given in
    `Agent(capabilities=[...])` is wrapped in one of these.

    `defer_loading=True` is refused: set it on the capability the function returns."""

    capability_func: CapabilityFunc
    """The function of the run context returning the run's capability, or `None`."""

    def __post_init__(self) -> None:
        if self.defer_loading:
            raise UserError(
                '`defer_loading` is not supported on `DynamicCapability` — set it on the capability the factory '
                'returns instead.'
            )
        # one toolset for the life of the capability: what the agent enters and durable steps name stays the same
        self._toolset: DynamicToolset[AgentDepsT] = DynamicToolset(self._run_toolset, per_run_step=False, id=self.id)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: takes a function, so agent specs cannot name it."""
        return None

    def get_toolset(self) -> DynamicToolset[AgentDepsT]:
        """The toolset listing the tools of the capability made for the run (the same toolset in every run)."""
        return self._toolset

    async def _run_toolset(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT] | None:
        # In a run, `for_run` made the capability already: its toolset is the one of the run's capability standing
        # for this one (the function is called once per run). Without the run's capabilities (a context made
        # elsewhere), the function is called again.
        registry: dict[str, Any] = getattr(ctx, 'capabilities', None) or {}
        for capability in registry.values():
            if isinstance(capability, ResolvedDynamicCapability) and capability.dynamic_toolset is self._toolset:
                return await _built_toolset(capability.wrapped.get_toolset(), ctx)
            if capability is self:  # the function returned `None` for this run
                return None
        made = await self._made_for(ctx)
        return None if made is None else await _built_toolset(made.get_toolset(), ctx)

    async def _made_for(self, ctx: RunContext[AgentDepsT]) -> AbstractCapability[AgentDepsT] | None:
        found: Any = self.capability_func(ctx)
        if inspect.isawaitable(found):
            found = await found
        if found is None:
            return None
        if ctx.agent is not None:
            found = found.for_agent(ctx.agent)
        capability: AbstractCapability[AgentDepsT] = await found.for_run(ctx)
        return capability

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractCapability[AgentDepsT]:
        """The capability the function returns for this run (itself made per run by its `for_run`), wrapped in a
        `ResolvedDynamicCapability`; or this one (which changes nothing) when it returns `None`."""
        made = await self._made_for(ctx)
        if made is None:
            return self
        return ResolvedDynamicCapability(wrapped=made, dynamic_toolset=self._toolset)


@dataclass
class ResolvedDynamicCapability(WrapperCapability[AgentDepsT]):
    """What a `DynamicCapability` stands for in a run: the capability its function made (`wrapped`), every method
    handed to it, but for the toolset (the `DynamicCapability`'s own, which lists the wrapped capability's tools)
    and the ordering (the wrapped capability's, so that its place among the others holds)."""

    dynamic_toolset: DynamicToolset[AgentDepsT]
    """The `DynamicCapability`'s toolset."""

    def get_toolset(self) -> DynamicToolset[AgentDepsT]:
        """The `DynamicCapability`'s toolset (it lists the wrapped capability's tools)."""
        return self.dynamic_toolset

    def get_ordering(self) -> CapabilityOrdering | None:
        """The wrapped capability's ordering."""
        return self.wrapped.get_ordering()


async def _built_toolset(toolset: Any, ctx: RunContext[Any]) -> AbstractToolset[Any] | None:
    """A capability's `get_toolset()` result as a toolset: a function of the run context called with `ctx`."""
    if toolset is None or isinstance(toolset, AbstractToolset):
        return toolset
    built = toolset(ctx)
    if inspect.isawaitable(built):
        built = await built
    found: AbstractToolset[Any] | None = built
    return found


def as_capabilities(capabilities: Sequence[Any] | None) -> list[AbstractCapability[Any]]:
    """`capabilities` with each function of the run context wrapped in a `DynamicCapability`."""
    return [c if isinstance(c, AbstractCapability) else DynamicCapability(c) for c in capabilities or ()]


async def capabilities_for_run(
    capabilities: Sequence[AbstractCapability[Any]], ctx: RunContext[Any]
) -> list[AbstractCapability[Any]] | None:
    """Each capability's `for_run` result, in order; `None` when every capability stays itself (the run then keeps
    what it was configured with)."""
    found = [await c.for_run(ctx) if c.overrides('for_run') else c for c in capabilities]
    return None if all(a is b for a, b in zip(found, capabilities, strict=True)) else found


async def configured_for_run(deps: Any, state: Any, configure: Callable[..., Any]) -> Any:
    """The deps of a run made again with its capabilities' `for_run` results (`configure(resolved=...)`), or
    `deps` as they are when no capability of the run is made per run."""
    root = deps.root_capability
    if root is None or not root.overrides('for_run'):
        return deps
    per_run = await capabilities_for_run(root.capabilities, deps.run_context(state))
    if per_run is None:
        return deps
    made = configure(resolved=per_run)
    made.prompt = deps.prompt
    made.cancellation = deps.cancellation  # a `for_run` hook may have cancelled the run already
    return made
