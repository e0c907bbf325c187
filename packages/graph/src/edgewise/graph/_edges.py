"""Edge labels, and the members of a return hint with the label of each: the bottom of `nodes`."""

from __future__ import annotations as _annotations

import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast, get_args, get_origin

import typing_extensions

__all__ = ('Edge', 'hint_members', 'type_repr', 'comma_and')


@dataclass(frozen=True)
class Edge:
    """A label for an edge, used as `Annotated[NextNode, Edge(label='...')]` in a return hint."""

    label: str | None
    """The text shown on the edge in diagrams."""


_NO_EDGE = Edge(None)
# `type X = A | B` (3.12+) and `typing_extensions.TypeAliasType` may be distinct classes.
_ALIAS_TYPES: tuple[type, ...] = (
    typing_extensions.TypeAliasType,
    *((typing.TypeAliasType,) if hasattr(typing, 'TypeAliasType') else ()),  # pragma: no branch
)


def hint_members(tp: Any, edge: Edge = _NO_EDGE) -> Iterator[tuple[Any, Edge]]:
    """Yield each member of a (possibly aliased, annotated or nested) union with its edge label."""
    if isinstance(tp, _ALIAS_TYPES):
        yield from hint_members(cast(Any, tp).__value__, edge)
        return
    origin = get_origin(tp)
    if origin is typing_extensions.Annotated:
        inner, *metadata = get_args(tp)
        edge = next((m for m in metadata if isinstance(m, Edge)), edge)
        yield from hint_members(inner, edge)
    elif origin is typing.Union or origin is types.UnionType:
        for member in get_args(tp):
            yield from hint_members(member, edge)
    else:
        yield tp, edge


def type_repr(tp: Any) -> str:
    """A short name of a type for error messages."""
    if tp is None or tp is type(None):
        return '`None`'
    if isinstance(tp, type):
        return f'`{tp.__qualname__}`'
    return f'`{tp!r}`'


def comma_and(items: list[str]) -> str:
    """Join with commas and a final 'and' (Oxford comma)."""
    if len(items) == 1:
        return items[0]
    return ', '.join(items[:-1]) + ', and ' + items[-1]
