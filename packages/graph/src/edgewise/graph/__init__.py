"""Edgewise graph engine: workflows as node classes, edges from type hints, durable resumable runs.

Source-compatible with the classic pydantic-graph 1.x API: replace `pydantic_graph` with
`edgewise.graph` in imports.
"""

from .exceptions import GraphNodeStatusError, GraphRuntimeError, GraphSetupError
from .fork import BranchFailure, Fork
from .graph import Graph, GraphRun, GraphRunResult
from .nodes import BaseNode, Edge, End, GraphRunContext
from .persistence import BaseStatePersistence, EndSnapshot, NodeSnapshot, Snapshot, SnapshotStatus
from .persistence.in_mem import FullStatePersistence, SimpleStatePersistence

__all__ = (
    'BaseNode',
    'BaseStatePersistence',
    'BranchFailure',
    'Edge',
    'End',
    'EndSnapshot',
    'Fork',
    'FullStatePersistence',
    'Graph',
    'GraphNodeStatusError',
    'GraphRun',
    'GraphRunContext',
    'GraphRunResult',
    'GraphRuntimeError',
    'GraphSetupError',
    'NodeSnapshot',
    'SimpleStatePersistence',
    'Snapshot',
    'SnapshotStatus',
)
