"""Edgewise graph engine: workflows as node classes, edges from type hints, durable resumable runs.

Source-compatible with the classic pydantic-graph 1.x API: replace `pydantic_graph` with
`edgewise.graph` in imports.
"""

from typing import TYPE_CHECKING, Any

from . import _dataclass_code  # noqa: F401  (first: it has the package's dataclasses made from kept code)
from .exceptions import GraphNodeStatusError, GraphRuntimeError, GraphSetupError
from .graph import Graph, GraphRun, GraphRunResult
from .nodes import BaseNode, Edge, End, GraphRunContext
from .persistence import BaseStatePersistence, EndSnapshot, NodeSnapshot, Snapshot, SnapshotStatus
from .persistence.in_mem import FullStatePersistence, SimpleStatePersistence

if TYPE_CHECKING:
    from .fork import BranchFailure, Fork

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


def __getattr__(name: str) -> Any:
    # The fan-out (`Fork`, `BranchFailure`) loads on first use: most graphs, and every agent run, never fork.
    if name in ('BranchFailure', 'Fork'):
        from . import fork

        return getattr(fork, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__() -> list[str]:
    return sorted({*globals(), 'BranchFailure', 'Fork'})
