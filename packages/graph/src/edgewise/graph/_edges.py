"""Reading a node's outgoing edges from the return hint of its `run` method."""

from __future__ import annotations as _annotations

import types
import typing
from collections.abc import Iterator
from typing import Any, cast, get_args, get_origin

import typing_extensions

from .exceptions import GraphSetupError
from .nodes import BaseNode, Edge, End, NodeDef

__all__ = ('node_def_from_hints', 'comma_and')

_NO_EDGE = Edge(None)
# `type X = A | B` (3.12+) and `typing_extensions.TypeAliasType` may be distinct classes.
_ALIAS_TYPES: tuple[type, ...] = (
    typing_extensions.TypeAliasType,
    *((typing.TypeAliasType,) if hasattr(typing, 'TypeAliasType') else ()),  # pragma: no branch
)


def node_def_from_hints(node: type[BaseNode[Any, Any, Any]], local_ns: dict[str, Any] | None) -> NodeDef[Any, Any, Any]:
    """Build the `NodeDef` of `node` from the return hint of its `run` method."""
    node_id = node.get_node_id()
    try:
        hints = typing_extensions.get_type_hints(node.run, localns=local_ns, include_extras=True)
    except NameError as e:
        raise GraphSetupError(
            f'Node `{node_id}`: cannot resolve the type hints of `run` ({e}). Define the referenced class '
            'before building the graph, or in the scope where `Graph(...)` is called.'
        ) from e
    try:
        return_hint = hints['return']
    except KeyError:
        raise GraphSetupError(
            f'Node `{node_id}` is missing a return type hint on its `run` method; annotate it with the '
            'nodes it may return next, e.g. `-> NextNode | End[int]`.'
        ) from None

    next_node_edges: dict[str, Edge] = {}
    end_edge: Edge | None = None
    returns_base_node = False
    for return_type, edge in _flatten(return_hint, _NO_EDGE):
        origin = get_origin(return_type) or return_type
        if origin is End:
            end_edge = edge
        elif origin is BaseNode:
            returns_base_node = True
        elif isinstance(origin, type) and issubclass(origin, BaseNode):
            next_node_edges[origin.get_node_id()] = edge
        else:
            raise GraphSetupError(
                f'Node `{node_id}`: invalid return type {_type_repr(return_type)} in the hint of `run`; '
                'each member must be a `BaseNode` subclass or `End[...]`.'
            )
    return NodeDef(
        node=node,
        node_id=node_id,
        note=node.get_note(),
        next_node_edges=next_node_edges,
        end_edge=end_edge,
        returns_base_node=returns_base_node,
    )


def _flatten(tp: Any, edge: Edge) -> Iterator[tuple[Any, Edge]]:
    """Yield each member of a (possibly aliased, annotated or nested) union with its edge label."""
    if isinstance(tp, _ALIAS_TYPES):
        yield from _flatten(cast(Any, tp).__value__, edge)
        return
    origin = get_origin(tp)
    if origin is typing_extensions.Annotated:
        inner, *metadata = get_args(tp)
        edge = next((m for m in metadata if isinstance(m, Edge)), edge)
        yield from _flatten(inner, edge)
    elif origin is typing.Union or origin is types.UnionType:
        for member in get_args(tp):
            yield from _flatten(member, edge)
    else:
        yield tp, edge


def _type_repr(tp: Any) -> str:
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
