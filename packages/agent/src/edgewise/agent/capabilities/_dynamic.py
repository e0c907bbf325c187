"""`DynamicCapability`: a capability made for each run by a function of the run context (as pydantic-ai 1.107),
and the wrapping of such functions given in `Agent(capabilities=[...])` or `run(capabilities=[...])`."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..tools import AgentDepsT, RunContext
from .abstract import AbstractCapability, CapabilityFunc

__all__ = ('DynamicCapability', 'as_capabilities', 'capabilities_for_run', 'configured_for_run')


@dataclass
class DynamicCapability(AbstractCapability[AgentDepsT]):
    """The capability `capability_func` returns for the run context of each run (sync or async; `None`: none for
    that run). Its result stands for this one during the run: its instructions, model settings, toolset, native
    tools and hooks all apply. A function given in `Agent(capabilities=[...])` is wrapped in one of these."""

    capability_func: CapabilityFunc
    """The function of the run context returning the run's capability, or `None`."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: takes a function, so agent specs cannot name it."""
        return None

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractCapability[AgentDepsT]:
        """The capability the function returns for this run (itself made per run by its `for_run`), or this one
        (which changes nothing) when it returns `None`."""
        found: Any = self.capability_func(ctx)
        if inspect.isawaitable(found):
            found = await found
        if found is None:
            return self
        capability: AbstractCapability[AgentDepsT] = await found.for_run(ctx)
        return capability


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
