"""`CombinedCapability`: several capabilities acting as one, each hook applied in order."""

from __future__ import annotations as _annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._run.options import AgentInstructions, AgentModelSettings
from ..models import KnownModelName, Model, ModelResolutionContext
from ..settings import ModelSettings, merge_model_settings
from ..tools import AgentDepsT, AgentNativeTool, RunContext
from ..toolsets import AbstractToolset, CombinedToolset
from ..toolsets._capability_owned import CapabilityOwnedToolset, CapabilityToolset
from ..toolsets._dynamic import as_toolset
from ..workspaces import WorkspaceBackend, WorkspaceRef
from ._hook_table import HOOKS, HookSpec, folded
from ._ordering import sort_capabilities
from .abstract import (
    AbstractCapability,
    AgentModel,
)

__all__ = ('CombinedCapability', 'active_context', 'combined_or_none')


@dataclass
class CombinedCapability(AbstractCapability[AgentDepsT]):
    """The capabilities in order (nested `CombinedCapability`s flattened, then sorted by their `get_ordering`
    constraints): the first one's `prepare_*` and `before_*` hooks run first, its `wrap_*` hooks are the
    outermost, and its `after_*` and `on_*_error` hooks run last. An agent's capabilities act through one of
    these.

    An `on_*_error` hook that raises hands its exception to the next one; the first that returns a value ends the
    error. Only the capabilities that implement a hook take part in it."""

    capabilities: Sequence[AbstractCapability[AgentDepsT]] = field(default_factory=list)
    """The capabilities, in order."""
    _by_hook: dict[str, list[Callable[..., Any]]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.capabilities = _flat_and_sorted(self.capabilities)

    def _rebound(self, capabilities: Sequence[AbstractCapability[AgentDepsT]]) -> CombinedCapability[AgentDepsT]:
        """A shallow copy of this one holding `capabilities` (flattened and sorted): neither `__init__` nor
        `__post_init__` runs again, so a subclass with an `__init__` of its own is rebuilt too."""
        rebound = copy.copy(self)
        rebound.capabilities = _flat_and_sorted(capabilities)
        rebound._by_hook = {}
        return rebound

    def _with(self, hook: str) -> list[Callable[..., Any]]:
        """The `hook` methods of the capabilities that implement it, in order (looked up once per hook)."""
        found = self._by_hook.get(hook)
        if found is None:
            found = self._by_hook[hook] = [_as_active(c, hook) for c in self.capabilities if c.overrides(hook)]
        return found

    def overrides(self, hook: str) -> bool:
        """Whether any of the capabilities implements `hook`."""
        return bool(self._with(hook))

    def for_agent(self, agent: Any) -> CombinedCapability[AgentDepsT]:
        """The capabilities' `for_agent` results as one (this one when each stays itself)."""
        found = [c.for_agent(agent) for c in self.capabilities]
        if all(a is b for a, b in zip(found, self.capabilities, strict=True)):
            return self
        return self._rebound(found)

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractCapability[AgentDepsT]:
        """The capabilities' `for_run` results as one (this one when each stays itself)."""
        found = [await c.for_run(ctx) if c.overrides('for_run') else c for c in self.capabilities]
        if all(a is b for a, b in zip(found, self.capabilities, strict=True)):
            return self
        return self._rebound(found)

    def apply(self, visitor: Callable[[AbstractCapability[AgentDepsT]], None]) -> None:
        """Call `visitor` with each of the capabilities, in order."""
        for capability in self.capabilities:
            capability.apply(visitor)

    def has_request_hook(self) -> bool:
        """Whether any of the capabilities has a `before_model_request` hook."""
        return any(capability.has_request_hook() for capability in self.capabilities)

    # -- what capabilities give ------------------------------------------------------------------------------

    def get_instructions(self) -> AgentInstructions:
        """Every capability's instructions, in order."""
        items: list[Any] = []
        for capability in self.capabilities:
            found = capability.get_instructions()
            if found is not None:
                items += [found] if isinstance(found, str) or callable(found) else list(found)
        return items or None

    def get_model_settings(self) -> AgentModelSettings[Any] | None:
        """Every capability's model settings merged, later capabilities winning; a function of the run context
        if one of them gives a function or is deferred (its settings count once it is loaded), which gives `{}`
        when no settings apply; `None` if none gives settings."""
        layers = [
            _when_loaded(c, s) if _is_deferred(c) else s
            for c in self.capabilities
            if (s := c.get_model_settings()) is not None
        ]
        if not any(callable(layer) for layer in layers):
            merged: ModelSettings | None = None
            for layer in layers:
                merged = merge_model_settings(merged, layer)  # type: ignore[arg-type]
            return merged

        def resolve(ctx: RunContext[AgentDepsT]) -> ModelSettings:
            merged: ModelSettings | None = None
            for layer in layers:
                merged = merge_model_settings(merged, layer(ctx) if callable(layer) else layer)
            return merged if merged is not None else {}

        return resolve

    def get_model(self) -> AgentModel[AgentDepsT] | None:
        """The last model pick of the capabilities (deferred capabilities pick none); `None` if none picks one."""
        model: AgentModel[AgentDepsT] | None = None
        for capability in self.capabilities:
            if not capability.defer_loading and (picked := capability.get_model()) is not None:
                model = picked
        return model

    @property
    def has_resolve_model_id(self) -> bool:
        """Whether a capability (not deferred) implements `resolve_model_id`."""
        return any(not c.defer_loading and c.has_resolve_model_id for c in self.capabilities)

    async def resolve_model_id(
        self, ctx: ModelResolutionContext[AgentDepsT], *, model_id: KnownModelName | str
    ) -> Model | None:
        """The first model a capability (not deferred) resolves `model_id` to, in order; `None` if none does."""
        for capability in self.capabilities:
            if not capability.defer_loading and capability.has_resolve_model_id:
                found = await capability.resolve_model_id(ctx, model_id=model_id)
                if found is not None:
                    return found
        return None

    def get_toolset(self) -> AbstractToolset[AgentDepsT] | None:
        """Every capability's toolset, as one, each capability's tools tagged with its id (`CapabilityToolset`, a
        deferred capability's tagged by its own gate); `None` if none has one."""
        toolsets = [_owned(c, as_toolset(t)) for c in self.capabilities if (t := c.get_toolset()) is not None]
        if not toolsets:
            return None
        return toolsets[0] if len(toolsets) == 1 else CombinedToolset(toolsets)

    def get_workspace(self, ctx: RunContext[AgentDepsT], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        """The first workspace a capability (not deferred) supplies for `ref`, in order; `None` if none does."""
        for capability in self.capabilities:
            if not capability.defer_loading and (found := capability.get_workspace(ctx, ref=ref)) is not None:
                return found
        return None

    def get_native_tools(self) -> Sequence[AgentNativeTool[AgentDepsT]]:
        """Every capability's native tools, in order; those of a deferred capability each a function of the run
        context giving the tool once the capability is loaded (`None` before)."""
        return [
            _when_loaded(capability, tool) if _is_deferred(capability) else tool
            for capability in self.capabilities
            for tool in capability.get_native_tools()
        ]

    def get_wrapper_toolset(self, toolset: AbstractToolset[AgentDepsT]) -> AbstractToolset[AgentDepsT] | None:
        """The toolset in each capability's wrapper, the first capability's outermost; `None` if none wraps it."""
        wrapped: AbstractToolset[AgentDepsT] | None = None
        for capability in reversed(self.capabilities):
            found = capability.get_wrapper_toolset(toolset if wrapped is None else wrapped)
            if found is not None:
                wrapped = found
        return wrapped


def _as_active(capability: AbstractCapability[Any], hook: str) -> Callable[..., Any]:
    """`capability`'s `hook`, given a run context saying the capability is active (`capability_active=True`, as
    pydantic-ai 2.68) when it is always on. A deferred one's gate says so itself once it is loaded, and a nested
    `CombinedCapability` for each of its own."""
    method: Callable[..., Any] = getattr(capability, hook)
    if capability.defer_loading or isinstance(capability, CombinedCapability):
        return method

    def as_active(ctx: RunContext[Any], /, *args: Any, **kwargs: Any) -> Any:
        # (sync, so one wrapper serves the async hooks, whose coroutine it returns, and the event stream hook)
        return method(active_context(ctx), *args, **kwargs)

    return as_active


def active_context(ctx: RunContext[AgentDepsT]) -> RunContext[AgentDepsT]:
    """`ctx` for the hook of a capability in effect: a copy with `capability_active=True` (`ctx` when it says so)."""
    if ctx.capability_active is True:
        return ctx
    if type(ctx) is RunContext:  # a shallow copy, without a `replace`'s `__init__`
        active = copy.copy(ctx)
        active.capability_active = True
        return active
    return replace(ctx, capability_active=True)


def _is_deferred(capability: AbstractCapability[Any]) -> bool:
    """Whether `capability` is deferred and not already behind a gate of the run (which answers for it)."""
    return capability.defer_loading and not getattr(capability, 'gates_loading', False)


def _when_loaded(capability: AbstractCapability[Any], given: Any) -> Callable[[RunContext[Any]], Any]:
    """A function of the run context giving `given` (or, when it is a function, its result for a context saying
    the capability is loaded) once the deferred `capability` is loaded (its id in `ctx.loaded_capability_ids`),
    `None` before."""

    def loaded_only(ctx: RunContext[Any]) -> Any:
        if capability.id not in ctx.loaded_capability_ids:
            return None
        return given(replace(ctx, capability_active=True)) if callable(given) else given

    return loaded_only


def _flat_and_sorted(capabilities: Sequence[AbstractCapability[Any]]) -> list[AbstractCapability[Any]]:
    """`capabilities` with nested `CombinedCapability`s flattened, sorted by their ordering constraints."""
    flat: list[AbstractCapability[Any]] = []
    for capability in capabilities:
        if isinstance(capability, CombinedCapability):
            flat.extend(capability.capabilities)
        else:
            flat.append(capability)
    return sort_capabilities(flat)


def _combined_hook(spec: HookSpec) -> Callable[..., Any]:
    """`CombinedCapability`'s `spec` hook: the capabilities' implementations folded (`folded`) as the table says."""
    fold = folded(spec, in_reverse=True)
    name = spec.name
    hook: Callable[..., Any]
    if spec.kind == 'stream':

        def hook(self: CombinedCapability[Any], ctx: RunContext[Any], /, *args: Any, **kwargs: Any) -> Any:
            return fold(self._with(name), ctx, args, kwargs)

    else:

        async def hook(self: CombinedCapability[Any], ctx: RunContext[Any], /, *args: Any, **kwargs: Any) -> Any:
            return await fold(self._with(name), ctx, args, kwargs)

    hook.__name__ = hook.__qualname__ = name
    hook.__doc__ = f"The capabilities' `{name}` hooks as one ({spec.kind}; see `capabilities._hook_table`)."
    return hook


for _spec in HOOKS:
    setattr(CombinedCapability, _spec.name, _combined_hook(_spec))


def _owned(capability: AbstractCapability[Any], toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
    """`toolset` of `capability`, its tools tagged with the capability's id; a combined capability's, and a deferred
    capability's (`CapabilityOwnedToolset`), are tagged already."""
    if isinstance(capability, CombinedCapability) or isinstance(toolset, CapabilityOwnedToolset):
        return toolset
    return CapabilityToolset(toolset, capability=capability)


def combined_or_none(capabilities: Sequence[Any]) -> CombinedCapability[Any] | None:
    """The capabilities among `capabilities` as one, or `None` when there are none (a run then skips every hook)."""
    found = [c for c in capabilities if isinstance(c, AbstractCapability)]
    return CombinedCapability(found) if found else None
