"""Names for the kinds of nodes of a builder graph: those a value can leave from, and those it can go to."""

from __future__ import annotations as _annotations

from typing import Any, TypeGuard

from typing_extensions import TypeAliasType, TypeVar

from .decision import Decision
from .join import Join
from .node import EndNode, Fork, StartNode
from .step import Step

__all__ = (
    'MiddleNode',
    'SourceNode',
    'DestinationNode',
    'AnySourceNode',
    'AnyDestinationNode',
    'AnyNode',
    'is_source',
    'is_destination',
)

StateT = TypeVar('StateT')
DepsT = TypeVar('DepsT')
InputT = TypeVar('InputT')
OutputT = TypeVar('OutputT')

MiddleNode = TypeAliasType(
    'MiddleNode',
    Step[StateT, DepsT, InputT, OutputT] | Join[StateT, DepsT, InputT, OutputT] | Fork[InputT, OutputT],
    type_params=(StateT, DepsT, InputT, OutputT),
)
"""A node that takes a value and sends one on: a step, a join or a fork."""
SourceNode = TypeAliasType(
    'SourceNode', MiddleNode[StateT, DepsT, Any, OutputT] | StartNode[OutputT], type_params=(StateT, DepsT, OutputT)
)
"""A node an edge can leave from."""
DestinationNode = TypeAliasType(
    'DestinationNode',
    MiddleNode[StateT, DepsT, InputT, Any] | Decision[StateT, DepsT, InputT] | EndNode[InputT],
    type_params=(StateT, DepsT, InputT),
)
"""A node an edge can go to."""
AnySourceNode = TypeAliasType('AnySourceNode', SourceNode[Any, Any, Any])
"""A source node of any types."""
AnyDestinationNode = TypeAliasType('AnyDestinationNode', DestinationNode[Any, Any, Any])
"""A destination node of any types."""
AnyNode = TypeAliasType('AnyNode', AnySourceNode | AnyDestinationNode)
"""Any node of a builder graph."""


def is_source(node: AnyNode) -> TypeGuard[AnySourceNode]:
    """Whether an edge can leave from `node` (the start, a step or a join)."""
    return isinstance(node, StartNode | Step | Join)


def is_destination(node: AnyNode) -> TypeGuard[AnyDestinationNode]:
    """Whether an edge can go to `node` (the end, a step, a join or a decision)."""
    return isinstance(node, EndNode | Step | Join | Decision)
