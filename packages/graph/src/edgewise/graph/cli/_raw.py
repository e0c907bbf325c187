"""Reading a stored run without its graph: snapshots whose nodes, state and output stay plain JSON data.

`edgewise runs show` and `runs fork` work on any store without importing the workflow's code, and a run
whose nodes were since renamed or whose state no longer validates can still be inspected.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Annotated, Any, cast

import pydantic

from ..nodes import End
from ..persistence import EndSnapshot, NodeSnapshot, Snapshot
from ..persistence._durable import DurableStatePersistence

__all__ = ('RawNode', 'RawNodeSnapshot', 'RawEndSnapshot', 'RawSnapshot', 'raw_history', 'use_raw_types')


@dataclass(frozen=True)
class RawNode:
    """A stored node as data: its id and its fields."""

    node_id: str
    """The node's id (its class name, usually)."""
    fields: dict[str, Any]
    """The node's fields, as stored."""

    def get_node_id(self) -> str:
        """The node's id, as `BaseNode.get_node_id` gives it."""
        return self.node_id


def _raw_node(value: Any) -> RawNode:
    if not isinstance(value, dict) or not isinstance(value.get('node_id'), str):
        raise ValueError('a stored node is an object with a `node_id`')
    fields = {key: item for key, item in value.items() if key != 'node_id'}
    return RawNode(node_id=value['node_id'], fields=fields)


@dataclass(kw_only=True)
class RawNodeSnapshot(NodeSnapshot[Any, Any]):
    """A stored node snapshot whose node is a `RawNode`."""

    node: Annotated[RawNode, pydantic.PlainValidator(_raw_node)]  # type: ignore[assignment]
    """The node to run, as data."""


@dataclass(kw_only=True)
class RawEndSnapshot(EndSnapshot[Any, Any]):
    """A stored end snapshot whose output is JSON data."""

    result: End[Any]
    """The end of the run, its output as data."""


RawSnapshot = RawNodeSnapshot | RawEndSnapshot
"""A stored snapshot read without its graph."""

_RAW_ADAPTER: pydantic.TypeAdapter[RawSnapshot] = pydantic.TypeAdapter(
    Annotated[RawSnapshot, pydantic.Discriminator('kind')]
)


def use_raw_types(persistence: DurableStatePersistence[Any, Any]) -> None:
    """Make `persistence` read snapshots without a graph: nodes as `RawNode`s, state and output as JSON data."""
    # The backends decode every stored snapshot with the persistence's type adapter: a graph-less one here.
    persistence._adapter = cast('pydantic.TypeAdapter[Snapshot[Any, Any]]', _RAW_ADAPTER)


async def raw_history(persistence: DurableStatePersistence[Any, Any]) -> list[RawSnapshot]:
    """The run's snapshots, read without its graph (see `use_raw_types`)."""
    use_raw_types(persistence)
    return cast(list[RawSnapshot], await persistence.load_all())
