"""The ids a builder graph and its runs use: nodes, node runs, tasks, and the fork stack of a task."""

from __future__ import annotations as _annotations

import uuid
from dataclasses import dataclass
from typing import NewType

__all__ = (
    'NodeID',
    'NodeRunID',
    'JoinID',
    'ForkID',
    'TaskID',
    'ForkStackItem',
    'ForkStack',
    'generate_placeholder_node_id',
    'replace_placeholder_id',
)

NodeID = NewType('NodeID', str)
"""The id of a node (step, join, fork, decision, start or end) in a builder graph."""

NodeRunID = NewType('NodeRunID', str)
"""The id of one execution of a node within a run (a fork's runs are told apart by it)."""

JoinID = NodeID
"""A `NodeID` that names a join."""

ForkID = NodeID
"""A `NodeID` that names a fork (a map or a broadcast)."""

TaskID = NewType('TaskID', str)
"""The id of a task (one node to run with one input) within a run."""


@dataclass(frozen=True)
class ForkStackItem:
    """One fork a task descends from: which fork, which execution of it, and which of its branches."""

    fork_id: ForkID
    """The fork node."""
    node_run_id: NodeRunID
    """The execution of the fork node the task descends from."""
    thread_index: int
    """The branch of that execution: the item's index for a map, the path's index for a broadcast."""


ForkStack = tuple[ForkStackItem, ...]
"""The forks a task descends from, outermost first; joins use it to know when a fork's branches are all done."""

_PLACEHOLDER = '__placeholder__'


def generate_placeholder_node_id(label: str) -> str:
    """A unique stand-in id for a node not given one; `GraphBuilder.build` replaces it by `label` (numbered).

    Args:
        label: The readable part of the final id (`'map'`, `'decision'`, a reducer's name, ...).
    """
    return f'{_PLACEHOLDER}:{label}:{uuid.uuid4()}'


def replace_placeholder_id(node_id: NodeID) -> str:
    """The label of a placeholder id made by `generate_placeholder_node_id`; any other id unchanged."""
    prefix, sep, rest = node_id.partition(':')
    if prefix != _PLACEHOLDER or not sep:
        return node_id
    label, sep, _ = rest.partition(':')
    return label if sep else node_id
