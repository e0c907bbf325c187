"""Small typing helpers of the builder API: `TypeExpression` for types that are not classes, and `Some`."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Any, Generic, cast, get_args, get_origin

from typing_extensions import TypeAliasType, TypeVar

__all__ = (
    'TypeExpression',
    'TypeOrTypeExpression',
    'unpack_type_expression',
    'Some',
    'Maybe',
    'get_callable_name',
)

T = TypeVar('T')


class TypeExpression(Generic[T]):
    """Wraps a type that is not a class (a union, `Any`, a `Literal`) where a `type[T]` is expected.

    Write `input_type=TypeExpression[int | str]` instead of `input_type=int | str`, which type checkers reject.
    """


TypeOrTypeExpression = TypeAliasType('TypeOrTypeExpression', type[TypeExpression[T]] | type[T], type_params=(T,))
"""A class, or any type wrapped in `TypeExpression[...]`."""


def unpack_type_expression(type_: TypeOrTypeExpression[T]) -> type[T]:
    """The type inside `TypeExpression[...]`, or `type_` itself when it is not wrapped."""
    if get_origin(type_) is TypeExpression:
        return cast('type[T]', get_args(type_)[0])
    return cast('type[T]', type_)


@dataclass
class Some(Generic[T]):
    """A value that is present (possibly `None`), as opposed to no value at all (`None` in a `Maybe`)."""

    value: T
    """The value."""


Maybe = TypeAliasType('Maybe', Some[T] | None, type_params=(T,))
"""`Some(value)` when there is a value, `None` when there is none."""


def get_callable_name(callable_: Any) -> str:
    """The `__name__` of a function or class; `str()` of anything without one."""
    return getattr(callable_, '__name__', None) or str(callable_)
