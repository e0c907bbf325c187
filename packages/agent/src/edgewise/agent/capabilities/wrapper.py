"""`WrapperCapability`: a capability standing for another one, to which it hands every method (as pydantic-ai 1.107's
`WrapperCapability`, the capability counterpart of `WrapperToolset`)."""

from __future__ import annotations as _annotations

import copy
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..messages import AgentStreamEvent
from ..tools import AgentDepsT, RunContext
from ._hook_table import HOOKS
from .abstract import AbstractCapability

__all__ = ('WrapperCapability',)


@dataclass
class WrapperCapability(AbstractCapability[AgentDepsT]):
    """Hands every `get_*` method and hook to `wrapped`: subclass it and override the methods to change, calling
    `super()` (or `self.wrapped`) for the wrapped capability's behaviour. A run calls a hook of the wrapper only if
    the subclass or the wrapped capability implements it. `for_run` makes the wrapper again around what the wrapped
    capability's `for_run` returns, and `for_agent` likewise: a shallow copy of the wrapper with `wrapped` replaced
    (neither `__init__` nor `__post_init__` runs again, so a subclass with an `__init__` of its own is rebuilt too;
    state it derives from `wrapped` should be computed when read). Without an `id`, `description` or
    `defer_loading` of its own, the wrapper takes the wrapped capability's (a wrapped deferred capability stays
    deferred), again on each rebuild; with an `id` of its own it is a capability of its own, deferred only by its
    own `defer_loading` (it still takes the wrapped capability's description when it has none)."""

    wrapped: AbstractCapability[AgentDepsT]
    """The capability every method is handed to."""
    _own: tuple[str | None, str | None, bool] = field(
        default=(None, None, False), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        # stands for the wrapped capability in the run: its id, description and deferral unless given its own
        self._own = (self.id, self.description, self.defer_loading)
        self._adopt_identity()

    def _adopt_identity(self) -> None:
        own_id, own_description, own_defer = self._own
        self.id = self.wrapped.id if own_id is None else own_id
        self.description = self.wrapped.description if own_description is None else own_description
        # an id of its own makes it a capability of its own, deferred only if it says so
        self.defer_loading = own_defer if own_id is not None else own_defer or self.wrapped.defer_loading

    def _rebound(self, wrapped: AbstractCapability[AgentDepsT]) -> WrapperCapability[AgentDepsT]:
        """A shallow copy of this wrapper around `wrapped`, its adopted identity taken from `wrapped`."""
        rebound = copy.copy(self)
        rebound.wrapped = wrapped
        rebound._adopt_identity()
        return rebound

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: agent specs cannot name it (it holds another capability)."""
        return None

    def overrides(self, hook: str) -> bool:
        """Whether the subclass implements `hook`, or the wrapped capability does."""
        return getattr(type(self), hook) is not getattr(WrapperCapability, hook) or self.wrapped.overrides(hook)

    def for_agent(self, agent: Any) -> AbstractCapability[AgentDepsT]:
        """This wrapper, or a copy of it around the wrapped capability's `for_agent` result when that is another."""
        wrapped = self.wrapped.for_agent(agent)
        return self if wrapped is self.wrapped else self._rebound(wrapped)

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractCapability[AgentDepsT]:
        """This wrapper, or a copy of it around the wrapped capability's `for_run` result when that is another."""
        wrapped = await self.wrapped.for_run(ctx)
        return self if wrapped is self.wrapped else self._rebound(wrapped)

    def apply(self, visitor: Callable[[AbstractCapability[AgentDepsT]], None]) -> None:
        """Call `visitor` with this wrapper, then with the capabilities the wrapped one is made of when it is
        made of several (a `CombinedCapability`)."""
        visitor(self)
        inner: list[AbstractCapability[AgentDepsT]] = []
        self.wrapped.apply(inner.append)
        if len(inner) != 1 or inner[0] is not self.wrapped:
            for capability in inner:
                visitor(capability)

    @property
    def has_resolve_model_id(self) -> bool:
        """Whether the subclass implements `resolve_model_id`, or the wrapped capability does."""
        return self.overrides('resolve_model_id') or self.wrapped.has_resolve_model_id

    def wrap_run_event_stream(
        self, ctx: RunContext[AgentDepsT], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        """The events through the wrapped capability's `wrap_run_event_stream`."""
        return self.wrapped.wrap_run_event_stream(ctx, stream=stream)


def _handing_over(name: str, is_async: bool) -> Callable[..., Any]:
    """A method of `WrapperCapability` calling the wrapped capability's method `name` with the same arguments."""
    if is_async:

        async def hand_over_async(self: WrapperCapability[Any], *args: Any, **kwargs: Any) -> Any:
            return await getattr(self.wrapped, name)(*args, **kwargs)

        method: Callable[..., Any] = hand_over_async
    else:

        def hand_over(self: WrapperCapability[Any], *args: Any, **kwargs: Any) -> Any:
            return getattr(self.wrapped, name)(*args, **kwargs)

        method = hand_over
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"The wrapped capability's `{name}`."
    return method


_SYNC = (
    'get_instructions',
    'get_model_settings',
    'get_model',
    'get_toolset',
    'get_native_tools',
    'get_wrapper_toolset',
    'get_workspace',
)
_ASYNC = (*(spec.name for spec in HOOKS if spec.kind != 'stream'), 'resolve_model_id')
for _name in _SYNC:
    setattr(WrapperCapability, _name, _handing_over(_name, is_async=False))
for _name in _ASYNC:
    setattr(WrapperCapability, _name, _handing_over(_name, is_async=True))
