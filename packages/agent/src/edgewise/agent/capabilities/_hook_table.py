"""The table of capability hooks: each hook's name, how several implementations of it fold into one (its
kind), the group of hooks a run checks together, and the argument the hook passes along.

Everything that lists hooks derives from `HOOKS`: `CombinedCapability` and `Hooks` (their methods are built
from it, once, by `folded`), the sets of hooks the loop checks before taking a hooked path (`hook_names`), the
hooks a run looks up once (`LIFECYCLE_HOOKS`), and the hooks `WrapperCapability` hands over.

The kinds:

- `forward`: each implementation in order, the value (`value`) passed from one to the next (`before_*`,
  `prepare_*`);
- `reverse`: the same in reverse order (`after_*`): the first capability's runs last;
- `wrap`: each implementation around the next, the first outermost, the innermost around the `handler` given;
- `recover`: in reverse order until one returns a value; one that raises hands its exception to the next
  (`on_*_error`);
- `stream`: each implementation wraps the event stream, the first outermost (`wrap_run_event_stream`);
- `merge`: each implementation answers what the ones before it left open, the answers merged
  (`handle_deferred_tool_calls`).
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from pydantic import ValidationError

from .._tools.deferred_calls import DeferredToolResults
from ..exceptions import ModelRetry

__all__ = (
    'EVENT_STREAM_HOOK',
    'HOOKS',
    'HookKind',
    'HookGroup',
    'HookSpec',
    'LIFECYCLE_GROUPS',
    'LIFECYCLE_HOOKS',
    'folded',
    'hook_names',
)

HookKind = Literal['forward', 'reverse', 'wrap', 'recover', 'stream', 'merge']
"""How the implementations of a hook fold into one (see the module docstring)."""
HookGroup = Literal[
    'run', 'node', 'events', 'request', 'response', 'tools', 'tool_validate', 'tool_execute', 'output', 'deferred'
]
"""The hooks that a run checks together before it takes the hooked path of one of its steps."""

Fold = Callable[[Sequence[Callable[..., Any]], Any, tuple[Any, ...], dict[str, Any]], Any]
"""A hook's implementations folded into one call: `(implementations, ctx, args, kwargs)`."""


@dataclass(frozen=True)
class HookSpec:
    """One hook of `AbstractCapability`."""

    name: str
    """The method's name."""
    kind: HookKind
    """How its implementations fold into one."""
    group: HookGroup
    """The group a run checks it with."""
    value: str | None = None
    """The argument handed from one implementation to the next (`forward`, `reverse`), or the one `handler`
    takes (`wrap`); `None` when there is none."""
    errors: tuple[type[BaseException], ...] = ()
    """(`recover`) The exceptions an implementation may raise to hand the error on."""
    positional: bool = False
    """Whether `value` is passed positionally, after `ctx` (`prepare_tools(ctx, tool_defs)`)."""

    @property
    def short_name(self) -> str:
        """The name without its `wrap_`, `on_` or `handle_` prefix: the name of its `Hooks` decorator."""
        for prefix in ('wrap_', 'on_', 'handle_'):
            if self.name.startswith(prefix):
                return self.name[len(prefix) :]
        return self.name


_VALIDATION = (ValidationError, ModelRetry)

HOOKS: tuple[HookSpec, ...] = (
    HookSpec('before_run', 'forward', 'run'),
    HookSpec('after_run', 'reverse', 'run', 'result'),
    HookSpec('wrap_run', 'wrap', 'run'),
    HookSpec('on_run_error', 'recover', 'run', errors=(BaseException,)),
    HookSpec('before_node_run', 'forward', 'node', 'node'),
    HookSpec('after_node_run', 'reverse', 'node', 'result'),
    HookSpec('wrap_node_run', 'wrap', 'node', 'node'),
    HookSpec('on_node_run_error', 'recover', 'node', errors=(Exception,)),
    HookSpec('wrap_run_event_stream', 'stream', 'events', 'stream'),
    HookSpec('before_model_request', 'forward', 'request', 'request_context', positional=True),
    HookSpec('wrap_model_request', 'wrap', 'request', 'request_context'),
    HookSpec('after_model_request', 'reverse', 'response', 'response'),
    HookSpec('on_model_request_error', 'recover', 'response', errors=(Exception,)),
    HookSpec('prepare_tools', 'forward', 'tools', 'tool_defs', positional=True),
    HookSpec('prepare_output_tools', 'forward', 'tools', 'tool_defs', positional=True),
    HookSpec('before_tool_validate', 'forward', 'tool_validate', 'args'),
    HookSpec('after_tool_validate', 'reverse', 'tool_validate', 'args'),
    HookSpec('wrap_tool_validate', 'wrap', 'tool_validate', 'args'),
    HookSpec('on_tool_validate_error', 'recover', 'tool_validate', errors=_VALIDATION),
    HookSpec('before_tool_execute', 'forward', 'tool_execute', 'args'),
    HookSpec('after_tool_execute', 'reverse', 'tool_execute', 'result'),
    HookSpec('wrap_tool_execute', 'wrap', 'tool_execute', 'args'),
    HookSpec('on_tool_execute_error', 'recover', 'tool_execute', errors=(Exception,)),
    HookSpec('before_output_validate', 'forward', 'output', 'output'),
    HookSpec('after_output_validate', 'reverse', 'output', 'output'),
    HookSpec('wrap_output_validate', 'wrap', 'output', 'output'),
    HookSpec('on_output_validate_error', 'recover', 'output', errors=_VALIDATION),
    HookSpec('before_output_process', 'forward', 'output', 'output'),
    HookSpec('after_output_process', 'reverse', 'output', 'output'),
    HookSpec('wrap_output_process', 'wrap', 'output', 'output'),
    HookSpec('on_output_process_error', 'recover', 'output', errors=(Exception,)),
    HookSpec('handle_deferred_tool_calls', 'merge', 'deferred', 'requests'),
)
"""Every hook of `AbstractCapability`."""


def hook_names(*groups: HookGroup) -> frozenset[str]:
    """The names of the hooks of `groups`."""
    return frozenset(spec.name for spec in HOOKS if spec.group in groups)


EVENT_STREAM_HOOK = next(spec.name for spec in HOOKS if spec.kind == 'stream')
"""The name of the hook that wraps a run's event stream (`wrap_run_event_stream`)."""

LIFECYCLE_GROUPS: tuple[HookGroup, ...] = (
    'run', 'node', 'events', 'response', 'tool_validate', 'tool_execute', 'output'
)  # fmt: skip
"""The groups whose hooks a run looks up once (`overrides`), to skip those no capability of the run implements
(the request hooks, `prepare_*` and `handle_deferred_tool_calls` are looked up where they are used)."""
LIFECYCLE_HOOKS: tuple[str, ...] = tuple(spec.name for spec in HOOKS if spec.group in LIFECYCLE_GROUPS)
"""The names of the hooks of `LIFECYCLE_GROUPS`."""


def folded(spec: HookSpec, *, in_reverse: bool) -> Fold:
    """The fold of `spec`'s implementations (built once per hook, not per call).

    Args:
        spec: The hook.
        in_reverse: Whether `reverse` and `recover` hooks go through the implementations last to first (a
            `CombinedCapability`'s capabilities), or in their order (the functions of one `Hooks`).
    """
    backwards = in_reverse and spec.kind in ('reverse', 'recover')
    key = spec.value
    if spec.kind in ('forward', 'reverse'):
        if spec.positional:
            assert key is not None, f'{spec.name}: a positional hook hands on a value'
            return partial(_pipe_positional, key, backwards)
        return partial(_pipe, key, backwards)
    if spec.kind == 'wrap':
        return partial(_wrap, key)
    if spec.kind == 'recover':
        return partial(_recover, spec.errors, backwards)
    if spec.kind == 'stream':
        return _stream
    return _merge


def _order(implementations: Sequence[Callable[..., Any]], backwards: bool) -> Sequence[Callable[..., Any]]:
    return implementations[::-1] if backwards else implementations


async def _pipe(
    key: str | None,
    backwards: bool,
    implementations: Sequence[Callable[..., Awaitable[Any]]],
    ctx: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    if key is None:  # nothing handed on (`before_run`)
        for implementation in _order(implementations, backwards):
            await implementation(ctx, *args, **kwargs)
        return None
    for implementation in _order(implementations, backwards):
        kwargs[key] = await implementation(ctx, **kwargs)
    return kwargs[key]


async def _pipe_positional(
    key: str,
    backwards: bool,
    implementations: Sequence[Callable[..., Awaitable[Any]]],
    ctx: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    value = args[0] if args else kwargs.pop(key)
    for implementation in _order(implementations, backwards):
        value = await implementation(ctx, value, **kwargs)
    return value


async def _wrap(
    key: str | None,
    implementations: Sequence[Callable[..., Awaitable[Any]]],
    ctx: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    handler = kwargs.pop('handler')
    if key is None:  # a handler of no argument (`wrap_run`)
        for implementation in reversed(implementations):
            handler = partial(_link, implementation, ctx, handler, kwargs)
        return await handler()
    value = kwargs.pop(key)
    for implementation in reversed(implementations):
        handler = partial(_link_with, implementation, ctx, handler, kwargs, key)
    return await handler(value)


async def _link(implementation: Callable[..., Awaitable[Any]], ctx: Any, inner: Any, kwargs: dict[str, Any]) -> Any:
    return await implementation(ctx, handler=inner, **kwargs)


async def _link_with(
    implementation: Callable[..., Awaitable[Any]], ctx: Any, inner: Any, kwargs: dict[str, Any], key: str, value: Any
) -> Any:
    return await implementation(ctx, handler=inner, **{key: value}, **kwargs)


async def _recover(
    errors: tuple[type[BaseException], ...],
    backwards: bool,
    implementations: Sequence[Callable[..., Awaitable[Any]]],
    ctx: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    error = kwargs.pop('error')
    for implementation in _order(implementations, backwards):
        try:
            return await implementation(ctx, error=error, **kwargs)
        except errors as exc:
            error = exc
    raise error


async def _stream(
    implementations: Sequence[Callable[..., AsyncIterable[Any]]],
    ctx: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> AsyncIterator[Any]:
    stream = kwargs['stream']
    for implementation in reversed(implementations):
        stream = implementation(ctx, stream=stream)
    async for event in stream:
        yield event


async def _merge(
    implementations: Sequence[Callable[..., Awaitable[Any]]],
    ctx: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    merged: DeferredToolResults | None = None
    remaining = kwargs['requests']
    for implementation in implementations:
        if remaining is None:
            break
        results = await implementation(ctx, requests=remaining)
        if results is None or not (results.approvals or results.calls):
            continue
        if merged is None:
            merged = DeferredToolResults()
        merged.update(results)
        remaining = remaining.remaining(results)
    return merged
