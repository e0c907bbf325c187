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
`on_tool_execute_error` one); the constructor takes the same names. Functions may be sync or async. Several
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
from pydantic import ValidationError

from .._run.result import AgentRunResult
from .._tools.deferred_calls import DeferredToolRequests, DeferredToolResults
from .._tools.definition import ToolDefinition
from ..exceptions import HookTimeoutError, ModelRetry
from ..messages import AgentStreamEvent, ModelResponse, ToolCallPart
from ..models import ModelRequestContext
from ..output import OutputContext
from ..tools import AgentDepsT, RunContext
from .abstract import (
    AbstractCapability,
    AgentNode,
    CapabilityOrdering,
    NodeResult,
    RawOutput,
    RawToolArgs,
    ValidatedToolArgs,
    WrapModelRequestHandler,
    WrapNodeRunHandler,
    WrapOutputProcessHandler,
    WrapOutputValidateHandler,
    WrapRunHandler,
    WrapToolExecuteHandler,
    WrapToolValidateHandler,
)

__all__ = ('Hooks', 'HookRegistration', 'HookTimeoutError')

_F = TypeVar('_F', bound=Callable[..., Any])

# The constructor's and the decorators' names, and the hook each registers.
_NAMES: dict[str, str] = {
    'before_run': 'before_run', 'after_run': 'after_run', 'run': 'wrap_run', 'run_error': 'on_run_error',
    'before_node_run': 'before_node_run', 'after_node_run': 'after_node_run', 'node_run': 'wrap_node_run',
    'node_run_error': 'on_node_run_error', 'run_event_stream': 'wrap_run_event_stream', 'event': '_on_event',
    'before_model_request': 'before_model_request', 'after_model_request': 'after_model_request',
    'model_request': 'wrap_model_request', 'model_request_error': 'on_model_request_error',
    'prepare_tools': 'prepare_tools', 'prepare_output_tools': 'prepare_output_tools',
    'before_tool_validate': 'before_tool_validate', 'after_tool_validate': 'after_tool_validate',
    'tool_validate': 'wrap_tool_validate', 'tool_validate_error': 'on_tool_validate_error',
    'before_tool_execute': 'before_tool_execute', 'after_tool_execute': 'after_tool_execute',
    'tool_execute': 'wrap_tool_execute', 'tool_execute_error': 'on_tool_execute_error',
    'before_output_validate': 'before_output_validate', 'after_output_validate': 'after_output_validate',
    'output_validate': 'wrap_output_validate', 'output_validate_error': 'on_output_validate_error',
    'before_output_process': 'before_output_process', 'after_output_process': 'after_output_process',
    'output_process': 'wrap_output_process', 'output_process_error': 'on_output_process_error',
    'deferred_tool_calls': 'handle_deferred_tool_calls',
}  # fmt: skip


@dataclass
class _Entry:
    func: Callable[..., Any]
    timeout: float | None = None
    tools: frozenset[str] | None = None

    async def __call__(self, hook: str, *args: Any, **kwargs: Any) -> Any:
        if self.timeout is None:
            return await _call(self.func, *args, **kwargs)
        try:
            with anyio.fail_after(self.timeout):
                return await _call(self.func, *args, **kwargs)
        except TimeoutError:
            name = getattr(self.func, '__name__', repr(self.func))
            raise HookTimeoutError(hook, name, self.timeout) from None


async def _call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    result = func(*args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


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
        self._registry.setdefault(hook, []).append(_Entry(func, timeout, tools))

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

    async def _through(self, hook: str, ctx: RunContext[Any], key: str, value: Any, **kwargs: Any) -> Any:
        """`value` (passed as `key`) through each function of `hook`, in order."""
        for entry in self._entries(hook, kwargs.get('call')):
            value = await entry(hook, ctx, **{key: value}, **kwargs)
        return value

    async def _wrapped(
        self, hook: str, ctx: RunContext[Any], key: str | None, value: Any, handler: Any, **kwargs: Any
    ) -> Any:
        """`handler` inside each function of `hook`, the first registered outermost."""
        for entry in reversed(self._entries(hook, kwargs.get('call'))):
            handler = partial(_wrap_link, entry, hook, ctx, key, handler, kwargs)
        return await (handler() if key is None else handler(value))

    async def _recovered(self, hook: str, ctx: RunContext[Any], error: Any, errors: Any, **kwargs: Any) -> Any:
        """The first value a function of `hook` returns for `error`; each one that raises passes its exception on."""
        for entry in self._entries(hook, kwargs.get('call')):
            try:
                return await entry(hook, ctx, error=error, **kwargs)
            except errors as exc:
                error = exc
        raise error

    # -- the hooks -------------------------------------------------------------------------------------------

    async def before_run(self, ctx: RunContext[AgentDepsT]) -> None:
        """Each `before_run` function."""
        for entry in self._entries('before_run'):
            await entry('before_run', ctx)

    async def after_run(self, ctx: RunContext[AgentDepsT], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        """The result through each `after_run` function."""
        return await self._through('after_run', ctx, 'result', result)  # type: ignore[no-any-return]

    async def wrap_run(self, ctx: RunContext[AgentDepsT], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        """The run inside each `run` function."""
        return await self._wrapped('wrap_run', ctx, None, None, handler)  # type: ignore[no-any-return]

    async def on_run_error(self, ctx: RunContext[AgentDepsT], *, error: BaseException) -> AgentRunResult[Any]:
        """The first result a `run_error` function returns."""
        return await self._recovered('on_run_error', ctx, error, BaseException)  # type: ignore[no-any-return]

    async def before_node_run(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT]
    ) -> AgentNode[AgentDepsT]:
        """The node through each `before_node_run` function."""
        return await self._through('before_node_run', ctx, 'node', node)  # type: ignore[no-any-return]

    async def after_node_run(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT], result: NodeResult[AgentDepsT]
    ) -> NodeResult[AgentDepsT]:
        """The next node through each `after_node_run` function."""
        return await self._through('after_node_run', ctx, 'result', result, node=node)  # type: ignore[no-any-return]

    async def wrap_node_run(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT], handler: WrapNodeRunHandler[AgentDepsT]
    ) -> NodeResult[AgentDepsT]:
        """The node inside each `node_run` function."""
        return await self._wrapped('wrap_node_run', ctx, 'node', node, handler)  # type: ignore[no-any-return]

    async def on_node_run_error(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT], error: Exception
    ) -> NodeResult[AgentDepsT]:
        """The first next node a `node_run_error` function returns."""
        return await self._recovered('on_node_run_error', ctx, error, Exception, node=node)  # type: ignore[no-any-return]

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

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """The request context through each `before_model_request` function."""
        for entry in self._entries('before_model_request'):
            request_context = await entry('before_model_request', ctx, request_context)
        return request_context

    async def after_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        """The response through each `after_model_request` function."""
        return await self._through(  # type: ignore[no-any-return]
            'after_model_request', ctx, 'response', response, request_context=request_context
        )

    async def wrap_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        """The request inside each `model_request` function."""
        return await self._wrapped(  # type: ignore[no-any-return]
            'wrap_model_request', ctx, 'request_context', request_context, handler
        )

    async def on_model_request_error(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        """The first response a `model_request_error` function returns."""
        return await self._recovered(  # type: ignore[no-any-return]
            'on_model_request_error', ctx, error, Exception, request_context=request_context
        )

    async def prepare_tools(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """The definitions through each `prepare_tools` function."""
        for entry in self._entries('prepare_tools'):
            tool_defs = await entry('prepare_tools', ctx, tool_defs)
        return tool_defs

    async def prepare_output_tools(
        self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        """The definitions through each `prepare_output_tools` function."""
        for entry in self._entries('prepare_output_tools'):
            tool_defs = await entry('prepare_output_tools', ctx, tool_defs)
        return tool_defs

    async def before_tool_validate(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: RawToolArgs
    ) -> RawToolArgs:
        """The raw arguments through each `before_tool_validate` function for this tool."""
        return await self._through(  # type: ignore[no-any-return]
            'before_tool_validate', ctx, 'args', args, call=call, tool_def=tool_def
        )

    async def after_tool_validate(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
    ) -> ValidatedToolArgs:
        """The validated arguments through each `after_tool_validate` function for this tool."""
        return await self._through(  # type: ignore[no-any-return]
            'after_tool_validate', ctx, 'args', args, call=call, tool_def=tool_def
        )

    async def wrap_tool_validate(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: RawToolArgs,
        handler: WrapToolValidateHandler,
    ) -> ValidatedToolArgs:
        """The validation inside each `tool_validate` function for this tool."""
        return await self._wrapped(  # type: ignore[no-any-return]
            'wrap_tool_validate', ctx, 'args', args, handler, call=call, tool_def=tool_def
        )

    async def on_tool_validate_error(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: RawToolArgs,
        error: ValidationError | ModelRetry,
    ) -> ValidatedToolArgs:
        """The first arguments a `tool_validate_error` function for this tool returns."""
        return await self._recovered(  # type: ignore[no-any-return]
            'on_tool_validate_error', ctx, error, (ValidationError, ModelRetry), call=call, tool_def=tool_def, args=args
        )

    async def before_tool_execute(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
    ) -> ValidatedToolArgs:
        """The arguments through each `before_tool_execute` function for this tool."""
        return await self._through(  # type: ignore[no-any-return]
            'before_tool_execute', ctx, 'args', args, call=call, tool_def=tool_def
        )

    async def after_tool_execute(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        result: Any,
    ) -> Any:
        """The tool's result through each `after_tool_execute` function for this tool."""
        return await self._through('after_tool_execute', ctx, 'result', result, call=call, tool_def=tool_def, args=args)

    async def wrap_tool_execute(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        """The tool's run inside each `tool_execute` function for this tool."""
        return await self._wrapped('wrap_tool_execute', ctx, 'args', args, handler, call=call, tool_def=tool_def)

    async def on_tool_execute_error(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        error: Exception,
    ) -> Any:
        """The first result a `tool_execute_error` function for this tool returns."""
        return await self._recovered(
            'on_tool_execute_error', ctx, error, Exception, call=call, tool_def=tool_def, args=args
        )

    async def before_output_validate(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: RawOutput
    ) -> RawOutput:
        """The raw output through each `before_output_validate` function."""
        return await self._through(  # type: ignore[no-any-return]
            'before_output_validate', ctx, 'output', output, output_context=output_context
        )

    async def after_output_validate(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any
    ) -> Any:
        """The validated value through each `after_output_validate` function."""
        return await self._through('after_output_validate', ctx, 'output', output, output_context=output_context)

    async def wrap_output_validate(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        output_context: OutputContext,
        output: RawOutput,
        handler: WrapOutputValidateHandler,
    ) -> Any:
        """The validation inside each `output_validate` function."""
        return await self._wrapped(
            'wrap_output_validate', ctx, 'output', output, handler, output_context=output_context
        )

    async def on_output_validate_error(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        output_context: OutputContext,
        output: RawOutput,
        error: ValidationError | ModelRetry,
    ) -> Any:
        """The first value an `output_validate_error` function returns."""
        return await self._recovered(
            'on_output_validate_error', ctx, error, (ValidationError, ModelRetry), output_context=output_context,
            output=output,
        )  # fmt: skip

    async def before_output_process(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any
    ) -> Any:
        """The validated value through each `before_output_process` function."""
        return await self._through('before_output_process', ctx, 'output', output, output_context=output_context)

    async def after_output_process(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any
    ) -> Any:
        """The output through each `after_output_process` function."""
        return await self._through('after_output_process', ctx, 'output', output, output_context=output_context)

    async def wrap_output_process(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        output_context: OutputContext,
        output: Any,
        handler: WrapOutputProcessHandler,
    ) -> Any:
        """The processing inside each `output_process` function."""
        return await self._wrapped('wrap_output_process', ctx, 'output', output, handler, output_context=output_context)

    async def on_output_process_error(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any, error: Exception
    ) -> Any:
        """The first output an `output_process_error` function returns."""
        return await self._recovered(
            'on_output_process_error', ctx, error, Exception, output_context=output_context, output=output
        )

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Each `deferred_tool_calls` function answers what the ones before it left open; the answers merged."""
        merged: DeferredToolResults | None = None
        remaining: DeferredToolRequests | None = requests
        for entry in self._entries('handle_deferred_tool_calls'):
            if remaining is None:
                break
            results = await entry('handle_deferred_tool_calls', ctx, requests=remaining)
            if results is None or not (results.approvals or results.calls):
                continue
            if merged is None:
                merged = DeferredToolResults()
            merged.update(results)
            remaining = remaining.remaining(results)
        return merged


async def _wrap_link(
    entry: _Entry, hook: str, ctx: RunContext[Any], key: str | None, inner: Any, kwargs: dict[str, Any], *value: Any
) -> Any:
    if key is None:
        return await entry(hook, ctx, handler=inner, **kwargs)
    return await entry(hook, ctx, handler=inner, **{key: value[0]}, **kwargs)


async def _each_event(
    ctx: RunContext[Any], stream: AsyncIterable[AgentStreamEvent], entries: list[_Entry]
) -> AsyncIterable[AgentStreamEvent]:
    async for event in stream:
        for entry in entries:
            event = await entry('on_event', ctx, event)
        yield event
