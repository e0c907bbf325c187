"""Stored snapshots read without the workflow's code: nodes, state and output as plain JSON data.

`await persistence.load_raw()` (on `FileStatePersistence`, `SqliteStatePersistence` and
`PostgresStatePersistence`) returns a run's history as these types. It needs no graph, so a tool can inspect
any stored run, also one whose node classes were since renamed or whose state no longer validates:

```python {test="skip"}
for snapshot in await SqliteStatePersistence('runs.db', 'order-42').load_raw():
    if snapshot.kind == 'node':
        print(snapshot.node.node_id, snapshot.node.fields, snapshot.status, snapshot.state)
    else:
        print('end', snapshot.result.data)
```

A `RawNodeSnapshot` is a `NodeSnapshot` and a `RawEndSnapshot` an `EndSnapshot`, so code that reads
histories (`edgewise.graph.mermaid.generate_code(graph, history=...)`, for instance) takes them as they are.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Annotated, Any

import pydantic

from ..nodes import End
from . import EndSnapshot, NodeSnapshot

__all__ = ('RawNode', 'RawNodeSnapshot', 'RawEndSnapshot', 'RawSnapshot', 'RAW_SNAPSHOT_ADAPTER')


@dataclass(frozen=True)
class RawNode:
    """A stored node as data: its id and its fields."""

    node_id: str
    """The node's id (its class name, unless the class sets `get_node_id`)."""
    fields: dict[str, Any]
    """The node's fields as stored (JSON data: dicts, lists, strings, numbers, booleans and `None`)."""

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
    """A stored node snapshot whose node is a `RawNode` and whose `state` is JSON data."""

    node: Annotated[RawNode, pydantic.PlainValidator(_raw_node)]  # type: ignore[assignment]
    """The node to run, as data."""


@dataclass(kw_only=True)
class RawEndSnapshot(EndSnapshot[Any, Any]):
    """A stored end snapshot whose `state` and output (`result.data`) are JSON data."""

    result: End[Any]
    """The end of the run, its output as data."""


RawSnapshot = RawNodeSnapshot | RawEndSnapshot
"""A stored snapshot read without its graph."""

RAW_SNAPSHOT_ADAPTER: pydantic.TypeAdapter[RawSnapshot] = pydantic.TypeAdapter(
    Annotated[RawSnapshot, pydantic.Discriminator('kind')], config=pydantic.ConfigDict(defer_build=True)
)
"""Validates one stored snapshot's JSON (as any backend writes it) into a `RawSnapshot`."""
