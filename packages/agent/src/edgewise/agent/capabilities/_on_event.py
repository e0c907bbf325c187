"""`on_event` (pydantic-ai 2.68): marks an async method of a capability as a listener of the run's events, all of
them or those of the classes named; `AbstractCapability.on_event` calls the marked methods in definition order."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable
from types import MethodType
from typing import Any, Generic, TypeVar, overload

from .._message_flow.events import AgentStreamEvent
from ..exceptions import UserError
from ..tools import RunContext

__all__ = ('on_event', 'collect_on_event_methods', 'marked_listens_to')

CapabilityT = TypeVar('CapabilityT')
EventT = TypeVar('EventT')

_Listener = Callable[[CapabilityT, RunContext[Any], EventT], Awaitable[None]]


class OnEventMethod(Generic[CapabilityT, EventT]):
    """A method marked by `on_event`: reads as the method on an instance, and names the event classes it takes."""

    def __init__(self, func: _Listener[CapabilityT, EventT], event_types: tuple[type[Any], ...]) -> None:
        self.func = func
        self.event_types = event_types

    def __set_name__(self, owner: type[Any], name: str) -> None:
        if name == 'on_event':
            raise UserError(
                "`@on_event` cannot mark a method named 'on_event': that method calls the marked ones. Give the "
                'listener another name (`_on_event`, say).'
            )

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> OnEventMethod[CapabilityT, EventT]: ...

    @overload
    def __get__(self, instance: object, owner: type[Any]) -> Callable[[RunContext[Any], EventT], Awaitable[None]]: ...

    def __get__(self, instance: object | None, owner: type[Any]) -> Any:
        return self if instance is None else MethodType(self.func, instance)

    def accepts(self, event: object) -> bool:
        """Whether the listener takes `event` (a bare marker takes every event)."""
        return not self.event_types or isinstance(event, self.event_types)


@overload
def on_event(  # type: ignore[overload-overlap]
    func: _Listener[CapabilityT, AgentStreamEvent], /
) -> OnEventMethod[CapabilityT, AgentStreamEvent]: ...


@overload
def on_event(
    *event_types: type[EventT],
) -> Callable[[_Listener[CapabilityT, EventT]], OnEventMethod[CapabilityT, EventT]]: ...


def on_event(*event_types: Any) -> Any:
    """Mark an async method of a capability, `async def method(self, ctx, event)`, as a listener of the run's
    events: `@on_event` for every `AgentStreamEvent`, `@on_event(SomeEvent, OtherEvent)` for those classes only
    (then the capability is skipped for the other events).

    Listeners run as the event passes through the run's stream, before the stream gives it; a `CapabilityEvent`
    class with `dispatch='immediate'` has them run inside `RunContext.emit`, before it returns.
    """
    if len(event_types) == 1 and inspect.isfunction(func := event_types[0]):
        return OnEventMethod(func, ())

    def mark(func: _Listener[CapabilityT, EventT]) -> OnEventMethod[CapabilityT, EventT]:
        return OnEventMethod(func, event_types)

    return mark


_collected: dict[type[Any], tuple[OnEventMethod[Any, Any], ...]] = {}


def collect_on_event_methods(cls: type[Any]) -> tuple[OnEventMethod[Any, Any], ...]:
    """The methods of `cls` marked with `on_event`, inherited ones included, in definition order (a method
    redefined without the mark is not one); looked up once per class."""
    found = _collected.get(cls)
    if found is not None:
        return found
    methods: dict[str, OnEventMethod[Any, Any]] = {}
    for base in reversed(cls.__mro__):
        for name, value in base.__dict__.items():
            if isinstance(value, OnEventMethod):
                methods[name] = value
            else:
                methods.pop(name, None)
    found = _collected[cls] = tuple(methods.values())
    return found


def marked_listens_to(cls: type[Any], event: object) -> bool:
    """Whether a method of `cls` marked with `on_event` takes `event`."""
    return any(method.accepts(event) for method in collect_on_event_methods(cls))
