"""Helpers under the private module name pydantic-ai gives them, for code that imports them from there.

Where sync functions run (`disable_threads`, `using_thread_executor`, `run_in_executor`) lives in
`edgewise.agent._threads`; `Some` and `get_first_param_type` are defined here.
"""

from __future__ import annotations as _annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from ._threads import disable_threads, using_thread_executor
from ._threads import run_in_thread as run_in_executor
from .exceptions import UserError

__all__ = ('Some', 'get_first_param_type', 'disable_threads', 'run_in_executor', 'using_thread_executor')

T = TypeVar('T')


@dataclass(frozen=True)
class Some(Generic[T]):
    """A value that is there, even when it is `None`: `Some(None)` set, and `None` (no `Some`) unset."""

    value: T
    """The value."""


def get_first_param_type(function: Callable[..., Any]) -> Any:
    """The resolved annotation of the first parameter of `function` (a function, method, partial or callable
    object), or `None` when it has no parameter, no annotation or no signature. It decides how some user functions
    are called (a history processor with or without the `RunContext`, a `FallbackModel` handler of responses or of
    exceptions), so an annotation that does not resolve (a name imported only under `if TYPE_CHECKING:`) is an
    error, not taken for no annotation (as in pydantic-ai 2.x).

    Raises:
        UserError: the annotations name something that is not defined at run time.
    """
    try:
        parameters = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None
    if not parameters:
        return None
    target: Any = function
    while isinstance(target, partial):
        target = target.func
    name = getattr(target, '__name__', None)
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        call = getattr(type(target), '__call__', None)  # noqa: B004 - the class's own `__call__`, for its hints
        if call is None:  # pragma: no cover - `inspect.signature` found no signature for it then
            return None
        target, name = call, type(target).__name__
    try:
        hints = typing.get_type_hints(target)
    except NameError as error:
        raise UserError(
            f'Unable to resolve the type annotations of {name!r}: {error}. A name its signature uses is not '
            'defined when the program runs, typically one imported under `if TYPE_CHECKING:` in a module with '
            '`from __future__ import annotations`; import it at run time, since the annotations decide how the '
            'function is called.'
        ) from error
    except (TypeError, AttributeError):
        return None
    return hints.get(parameters[0])
