"""Helpers under the private module name pydantic-ai gives them, for code that imports them from there.

Where sync functions run (`disable_threads`, `using_thread_executor`, `run_in_executor`) lives in
`edgewise.agent._threads`; `Some`, `get_first_param_type` and `field_defaults` (for the fast constructors of the
run's hot path) are defined here.
"""

from __future__ import annotations as _annotations

import dataclasses
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


def field_defaults(
    cls: type[Any], *, names: Callable[[dataclasses.Field[Any]], bool] = lambda field: True
) -> tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...]]:
    """What a fast constructor of dataclass `cls` starts from, made once: a dict of its fields (those `names` keeps)
    in their order, each with its default (`None` for a required field or one made by a factory), and the names and
    factories of the fields made by a factory. Copying the dict and setting the given fields and the factories' values
    over it builds the `__dict__` that `__init__` would, at once rather than field by field."""
    fields = [field for field in dataclasses.fields(cls) if names(field)]
    defaults = {field.name: None if field.default is dataclasses.MISSING else field.default for field in fields}
    factories = tuple(
        (field.name, field.default_factory) for field in fields if field.default_factory is not dataclasses.MISSING
    )
    return defaults, factories
