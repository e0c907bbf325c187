"""`durable_operation`: marks an async capability method as a durable operation, with a stable name (as pydantic-ai
2.68's decorator).

In pydantic-ai 2.68 a durable engine (Temporal, DBOS, Prefect) runs a marked method as one of its activities or steps
and records its result, so a replayed run does not call it again. Edgewise's durable runs (a SQLite, PostgreSQL or file
persistence, or `EdgewiseDurability`) do the same with their own journal (`_run/operation_journal.py`): a call made
while a node runs (with the run's `RunContext` among its arguments) runs once, its result is checkpointed into the
node's snapshot, and the node, resumed after a crash, gets the stored result back. Elsewhere the method is awaited in
place.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator, Sequence
from functools import wraps
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast, get_type_hints

from ..exceptions import UserError
from ..tools import RunContext
from .abstract import AbstractCapability
from .combined import CombinedCapability
from .wrapper import WrapperCapability

if TYPE_CHECKING:
    from .._run.operation_journal import Operation

__all__ = ('durable_operation', 'operation_name', 'run_operations')

P = ParamSpec('P')
A = TypeVar('A', bound=Awaitable[Any])

_MARKER = '__edgewise_durable_operation__'
_SYNC_HOOKS_NEVER_DURABLE = frozenset({'get_toolset', 'get_wrapper_toolset', 'get_wrapper_model'})
"""Sync hooks that are marked all the same, so an engine can say why they cannot be durable (they return live
objects)."""
_HANDLER_HOOKS = (
    'wrap_run',
    'wrap_node_run',
    'wrap_model_request',
    'wrap_tool_validate',
    'wrap_tool_execute',
    'wrap_output_validate',
    'wrap_output_process',
)
_NEVER_DURABLE = {
    **{
        hook: f'`{hook}` receives a handler callable, which cannot cross a durable boundary.' for hook in _HANDLER_HOOKS
    },
    'wrap_run_event_stream': '`wrap_run_event_stream` receives a live stream and cannot be a durable operation.',
    'get_toolset': '`get_toolset` returns a live toolset and cannot be a durable operation.',
    'get_wrapper_toolset': '`get_wrapper_toolset` returns a live toolset and cannot be a durable operation.',
    'get_wrapper_model': '`get_wrapper_model` returns a live model and cannot be a durable operation.',
    'get_workspace': '`get_workspace` returns a live workspace backend and cannot be a durable operation.',
}


def durable_operation(name: str) -> Callable[[Callable[P, A]], Callable[P, A]]:
    """Mark an async capability method as a durable operation named `name`.

    The method keeps its signature. `name` is meant to be stored by a durable engine, within the capability's stable
    `id`, so it must not change; the method itself can be renamed.

    ```py
    from edgewise.agent.capabilities import AbstractCapability, durable_operation
    from edgewise.agent.tools import RunContext


    class Audit(AbstractCapability):
        id = 'audit'

        @durable_operation(name='record')
        async def record(self, ctx: RunContext, message: str) -> bool:
            return bool(message)
    ```

    Raises:
        TypeError: no name was given (the decorator was used bare), the name is not a string, or the method is not
            async.
        ValueError: the name is empty.
    """
    if callable(name):
        raise TypeError(
            '`durable_operation` requires an explicit operation name because it becomes persisted compatibility data '
            "and must not change when the function is renamed. Use `@durable_operation(name='operation_name')`."
        )
    if not isinstance(name, str):
        raise TypeError(f'`durable_operation` name must be a string, got {type(name).__name__}')
    if not name:
        raise ValueError('`durable_operation` name must not be empty')

    def decorate(target: Callable[P, A]) -> Callable[P, A]:
        if not inspect.iscoroutinefunction(target):
            if target.__name__ in _SYNC_HOOKS_NEVER_DURABLE:
                setattr(target, _MARKER, name)
                return target
            raise TypeError('`durable_operation` can only decorate async methods')

        function = cast(Callable[..., Awaitable[Any]], target)

        @wraps(target)
        async def decorated(self: Any, *args: Any, **kwargs: Any) -> Any:
            ctx = next((value for value in (*args, *kwargs.values()) if isinstance(value, RunContext)), None)
            operations = None if ctx is None else ctx._durable_operations
            capability_id: str | None = getattr(self, 'id', None)
            dispatch = None if operations is None or capability_id is None else operations.get((capability_id, name))
            if dispatch is None:  # not in a durable run's node: awaited in place
                return await function(self, *args, **kwargs)
            return await dispatch(ctx, lambda: function(self, *args, **kwargs))

        setattr(decorated, _MARKER, name)
        return cast(Callable[P, A], decorated)

    return decorate


def operation_name(method: object) -> str | None:
    """The name `durable_operation` gave `method` (a function or a bound method), or `None` when it is not one."""
    found = getattr(method, _MARKER, None)
    return found if isinstance(found, str) else None


def run_operations(capabilities: Sequence[AbstractCapability[Any]]) -> list[Operation]:
    """The `durable_operation` methods of `capabilities` (and of the capabilities they combine or wrap).

    Raises:
        UserError: a capability with operations has no `id`, has two operations of one name, or marks a hook that
            cannot be durable.
    """
    found: list[Operation] = []
    for capability in _leaves(capabilities):
        names: set[str] = set()
        for attribute, member in inspect.getmembers(type(capability)):
            name = operation_name(member)
            if name is None:
                continue
            if reason := _NEVER_DURABLE.get(attribute):
                raise UserError(reason)
            kind = type(capability).__name__
            if capability.id is None:
                raise UserError(
                    f'Capability {kind!r} contributes durable operations and needs an explicit `id` because '
                    'persisted operation identity and worker-side recovery must remain stable. '
                    f"Construct it as `{kind}(id='...')`."
                )
            if name in names:
                raise UserError(
                    f'Duplicate durable operation name {name!r} on capability {capability.id!r}. '
                    'Use `@durable_operation(name=...)` or change the hook key.'
                )
            names.add(name)
            from .._run.operation_journal import Operation  # (loaded by the first capability with operations)

            found.append(Operation(capability.id, name, _result_type(member)))
    return found


def _leaves(capabilities: Sequence[AbstractCapability[Any]]) -> Iterator[AbstractCapability[Any]]:
    for capability in capabilities:
        if isinstance(capability, CombinedCapability):
            yield from _leaves(capability.capabilities)
            continue
        yield capability
        if isinstance(capability, WrapperCapability):
            yield from _leaves([capability.wrapped])


def _result_type(method: Callable[..., Any]) -> Any:
    """The return annotation of `method` (`Any` without one, or when it cannot be resolved)."""
    try:
        return get_type_hints(method).get('return', Any)
    except Exception:  # an annotation naming what its module does not define: its results stored as they are
        return Any
