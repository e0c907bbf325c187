"""`Hooks`: a capability made of hook functions, registered with decorators or given to its constructor.

```python
from edgewise.agent import Agent
from edgewise.agent.capabilities import Hooks
from edgewise.agent.models.test import TestModel

hooks = Hooks()


@hooks.on.before_tool_execute(tools=['add'], timeout=5)
def log_call(ctx, *, call, tool_def, args):
    print(f'{call.tool_name}({args})')
    return args


agent = Agent(TestModel(), capabilities=[hooks])


@agent.tool_plain
def add(a: int, b: int) -> int:
    return a + b


agent.run_sync('2 + 3?')
#> add({'a': 0, 'b': 0})
```

The decorators of `hooks.on` are named after the hooks of `AbstractCapability`, without `wrap_` and `on_`
(`hooks.on.tool_execute` registers a `wrap_tool_execute` hook, `hooks.on.tool_execute_error` an
`on_tool_execute_error` one); the constructor takes the same names. Functions may be sync or async (a sync one
runs in a worker thread, as sync tools do, with a copy of the context variables: what it sets there stays
there). Several
functions on one hook run in the order registered (the first `wrap` outermost; an error hook that raises hands
its exception to the next). A `timeout` (seconds) turns a function that runs longer into a `HookTimeoutError`;
`tools=[...]` limits a tool hook to the calls of those tools.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterable, Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any, Generic, Protocol, TypeVar, overload

import anyio

from .._threads import abandoning_threads_on_cancel, run_in_thread
from ..exceptions import HookTimeoutError
from ..messages import AgentStreamEvent, ToolCallPart
from ..tools import AgentDepsT, RunContext
from ._hook_table import HOOKS, HookSpec, folded
from .abstract import (
    AbstractCapability,
    CapabilityOrdering,
)

__all__ = ('Hooks', 'HookRegistration', 'HookTimeoutError')

_F = TypeVar('_F', bound=Callable[..., Any])

# The constructor's and the decorators' names, and the hook each registers (from the table of hooks), and
# `event`: a function of each streamed event, folded into `wrap_run_event_stream`.
_NAMES: dict[str, str] = {spec.short_name: spec.name for spec in HOOKS} | {'event': '_on_event'}


@dataclass
class _Entry:
    """A function registered on a hook, called as the hook's implementations are (see `_hook_table`)."""

    func: Callable[..., Any]
    hook: str
    """The hook's name, as a `HookTimeoutError` gives it."""
    timeout: float | None = None
    tools: frozenset[str] | None = None

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.timeout is None:
            return await _call(self.func, *args, **kwargs)
        try:
            with anyio.fail_after(self.timeout):
                return await _call(self.func, *args, **kwargs)
        except TimeoutError:
            name = getattr(self.func, '__name__', repr(self.func))
            raise HookTimeoutError(self.hook, name, self.timeout) from None


async def _call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    if inspect.iscoroutinefunction(func):
        return await func(*args, **kwargs)
    # A sync function must not block the event loop; under a `timeout`, one running past it is left to finish
    # unseen. Its result comes back boxed: trio refuses a thread's function that returns a coroutine.
    with abandoning_threads_on_cancel():
        (result,) = await run_in_thread(_boxed, func, *args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


def _boxed(func: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any]:
    return (func(*args, **kwargs),)


class _Decorator(Protocol):
    @overload
    def __call__(self, func: _F, /) -> _F: ...
    @overload
    def __call__(self, *, timeout: float | None = None) -> Callable[[_F], _F]: ...


class _ToolDecorator(Protocol):
    @overload
    def __call__(self, func: _F, /) -> _F: ...
    @overload
    def __call__(self, *, tools: Sequence[str] | None = None, timeout: float | None = None) -> Callable[[_F], _F]: ...


class _Register:
    """A decorator of `hooks.on`: bare (`@hooks.on.before_run`) or with options (`@hooks.on.before_run(timeout=2)`)."""

    def __init__(self, hook: str) -> None:
        self.hook = hook

    def __get__(self, registration: HookRegistration[Any], owner: type) -> Any:
        return partial(self._register, registration.hooks)

    def _register(self, hooks: Hooks[Any], func: Any = None, /, **options: Any) -> Any:
        tools = options.get('tools')
        timeout: float | None = options.get('timeout')
        only: frozenset[str] | None = None if tools is None else frozenset(tools)
        if func is not None:
            hooks.add(self.hook, func, timeout=timeout, tools=only)
            return func

        def decorator(func: Any) -> Any:
            hooks.add(self.hook, func, timeout=timeout, tools=only)
            return func

        return decorator


class HookRegistration(Generic[AgentDepsT]):
    """The decorators that register hook functions on a `Hooks` (its `on`), one per hook (see the module
    docstring); the tool hooks' take `tools=[...]` too."""

    before_run: _Decorator
    after_run: _Decorator
    run: _Decorator
    run_error: _Decorator
    before_node_run: _Decorator
    after_node_run: _Decorator
    node_run: _Decorator
    node_run_error: _Decorator
    run_event_stream: _Decorator
    event: _Decorator
    """A function of each streamed event `(ctx, event)`, returning the event (changed or not)."""
    before_model_request: _Decorator
    after_model_request: _Decorator
    model_request: _Decorator
    model_request_error: _Decorator
    prepare_tools: _Decorator
    prepare_output_tools: _Decorator
    before_tool_validate: _ToolDecorator
    after_tool_validate: _ToolDecorator
    tool_validate: _ToolDecorator
    tool_validate_error: _ToolDecorator
    before_tool_execute: _ToolDecorator
    after_tool_execute: _ToolDecorator
    tool_execute: _ToolDecorator
    tool_execute_error: _ToolDecorator
    before_output_validate: _Decorator
    after_output_validate: _Decorator
    output_validate: _Decorator
    output_validate_error: _Decorator
    before_output_process: _Decorator
    after_output_process: _Decorator
    output_process: _Decorator
    output_process_error: _Decorator
    deferred_tool_calls: _Decorator

    def __init__(self, hooks: Hooks[AgentDepsT]) -> None:
        self.hooks = hooks


for _name, _hook in _NAMES.items():
    setattr(HookRegistration, _name, _Register(_hook))


@dataclass(init=False, repr=False)
class Hooks(AbstractCapability[AgentDepsT]):
    """A capability made of hook functions (see the module docstring): register them with the decorators of
    `hooks.on`, or give them to the constructor by the same names (`Hooks(before_run=fn, tool_execute=fn2)`)."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: it holds functions, so it cannot come from a spec."""
        return None

    def __init__(
        self,
        *,
        ordering: CapabilityOrdering | None = None,
        id: str | None = None,
        description: str | None = None,
        defer_loading: bool = False,
        **functions: Callable[..., Any] | None,
    ) -> None:
        """Args:
        ordering: Where this capability goes among the others (`get_ordering`).
        id: The capability's id (`AbstractCapability.id`).
        description: What it is, for the catalog of deferred capabilities.
        defer_loading: Fire the hooks only once the model has loaded the capability (needs `id`).
        **functions: Hook functions by the names of `hooks.on`'s decorators (`before_run`, `tool_execute`, ...).
        """
        self.id, self.description, self.defer_loading = id, description, defer_loading
        self._ordering = ordering
        self._registry: dict[str, list[_Entry]] = {}
        for name, func in functions.items():
            if name not in _NAMES:
                raise TypeError(f'Hooks() got an unexpected keyword argument {name!r}')
            if func is not None:
                self.add(_NAMES[name], func)

    @cached_property
    def on(self) -> HookRegistration[AgentDepsT]:
        """The decorators that register hook functions."""
        return HookRegistration(self)

    def add(
        self, hook: str, func: Callable[..., Any], *, timeout: float | None = None, tools: frozenset[str] | None = None
    ) -> None:
        """Register `func` on `hook` (the name of an `AbstractCapability` hook, e.g. `'wrap_tool_execute'`)."""
        self._registry.setdefault(hook, []).append(_Entry(func, hook.removeprefix('_'), timeout, tools))

    def get_ordering(self) -> CapabilityOrdering | None:
        """The ordering given to the constructor."""
        return self._ordering

    def overrides(self, hook: str) -> bool:
        """Whether a function is registered on `hook`."""
        if hook == 'wrap_run_event_stream':
            return bool(self._registry.get(hook) or self._registry.get('_on_event'))
        return bool(self._registry.get(hook))

    def __repr__(self) -> str:
        return f'Hooks({ {hook: len(entries) for hook, entries in self._registry.items() if entries} })'

    # -- dispatch --------------------------------------------------------------------------------------------

    def _entries(self, hook: str, call: ToolCallPart | None = None) -> list[_Entry]:
        entries = self._registry.get(hook, [])
        if call is None:
            return entries
        return [e for e in entries if e.tools is None or call.tool_name in e.tools]

    # -- the hooks -------------------------------------------------------------------------------------------

    async def wrap_run_event_stream(
        self, ctx: RunContext[AgentDepsT], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        """The events through each `event` function, then inside each `run_event_stream` function."""
        if events := self._entries('_on_event'):
            stream = _each_event(ctx, stream, events)
        for entry in reversed(self._entries('wrap_run_event_stream')):
            stream = entry.func(ctx, stream=stream)
        async for event in stream:
            yield event


def _hooks_hook(spec: HookSpec) -> Callable[..., Any]:
    """`Hooks`'s `spec` hook: its functions (for the tool called, with `tools=[...]`) folded in the order they
    were registered."""
    fold = folded(spec, in_reverse=False)
    name = spec.name

    async def hook(self: Hooks[Any], ctx: RunContext[Any], /, *args: Any, **kwargs: Any) -> Any:
        return await fold(self._entries(name, kwargs.get('call')), ctx, args, kwargs)

    hook.__name__ = hook.__qualname__ = name
    hook.__doc__ = f'The `{name}` functions as one ({spec.kind}; see `capabilities._hook_table`).'
    return hook


for _spec in HOOKS:
    if _spec.name not in Hooks.__dict__:  # the hooks written out (`wrap_run_event_stream`, with `event`)
        setattr(Hooks, _spec.name, _hooks_hook(_spec))


async def _each_event(
    ctx: RunContext[Any], stream: AsyncIterable[AgentStreamEvent], entries: list[_Entry]
) -> AsyncIterable[AgentStreamEvent]:
    async for event in stream:
        for entry in entries:
            event = await entry(ctx, event)
        yield event
