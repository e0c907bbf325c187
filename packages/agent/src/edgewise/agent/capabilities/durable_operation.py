"""`durable_operation`: marks an async capability method as a durable operation, with a stable name (as pydantic-ai
2.68's decorator).

In pydantic-ai 2.68 a durable engine (Temporal, DBOS, Prefect) runs a marked method as one of its activities or steps
and records its result, so a replayed run does not call it again. Edgewise's durable runs do not journal capability
operations yet: the decorator checks and records the name (`operation_name`), and a marked method is awaited in place,
in durable runs too.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar, cast

__all__ = ('durable_operation', 'operation_name')

P = ParamSpec('P')
A = TypeVar('A', bound=Awaitable[Any])

_MARKER = '__edgewise_durable_operation__'
_SYNC_HOOKS_NEVER_DURABLE = frozenset({'get_toolset', 'get_wrapper_toolset', 'get_wrapper_model'})
"""Sync hooks that are marked all the same, so an engine can say why they cannot be durable (they return live
objects)."""


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

        @wraps(target)
        async def decorated(*args: Any, **kwargs: Any) -> Any:
            return await cast(Callable[..., Awaitable[Any]], target)(*args, **kwargs)

        setattr(decorated, _MARKER, name)
        return cast(Callable[P, A], decorated)

    return decorate


def operation_name(method: object) -> str | None:
    """The name `durable_operation` gave `method` (a function or a bound method), or `None` when it is not one."""
    found = getattr(method, _MARKER, None)
    return found if isinstance(found, str) else None
