"""Errors raised by `edgewise.graph`.

Every error has one root, and each leaf also subclasses the closest builtin, so code written for
pydantic-graph 1.x that catches `TypeError` or `RuntimeError` keeps working:

```
GraphError
├── GraphSetupError (TypeError)            a graph or node is defined wrongly
└── GraphRuntimeError (RuntimeError)       something went wrong while running a graph
    ├── GraphNodeStatusError               a snapshot is not in a runnable status
    ├── UndeclaredEdgeError                a node returned a node its return hint does not declare
    ├── StepLimitExceeded                  a run took more steps than `max_steps`
    ├── RunInProgressError                 another live process is advancing the same run
    └── PersistenceError                   stored snapshots cannot be read or written
```
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .persistence import SnapshotStatus

__all__ = (
    'GraphError',
    'GraphSetupError',
    'GraphRuntimeError',
    'GraphNodeStatusError',
    'UndeclaredEdgeError',
    'StepLimitExceeded',
    'RunInProgressError',
    'PersistenceError',
)


class GraphError(Exception):
    """Root of every error raised by `edgewise.graph`."""

    message: str
    """Description of what went wrong and, where possible, what to do about it."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class GraphSetupError(GraphError, TypeError):
    """A graph or one of its nodes is defined wrongly; raised when the `Graph` is built."""


class GraphRuntimeError(GraphError, RuntimeError):
    """Something went wrong while running a graph."""


class GraphNodeStatusError(GraphRuntimeError):
    """A snapshot was asked to run while its status is `'running'`, `'success'` or `'error'`."""

    actual_status: SnapshotStatus
    """The status the snapshot had."""

    def __init__(self, actual_status: SnapshotStatus) -> None:
        self.actual_status = actual_status
        super().__init__(f"Incorrect snapshot status {actual_status!r}, must be 'created' or 'pending'.")

    @classmethod
    def check(cls, status: SnapshotStatus) -> None:
        """Raise unless `status` is `'created'` or `'pending'`."""
        if status != 'created' and status != 'pending':
            raise cls(status)


class UndeclaredEdgeError(GraphRuntimeError):
    """A node returned a node that the return hint of its `run` method does not declare."""


class StepLimitExceeded(GraphRuntimeError):
    """A run took more steps than the `max_steps` it was given."""


class RunInProgressError(GraphRuntimeError):
    """The run is being advanced by another live process or task; it cannot be resumed here now."""


class PersistenceError(GraphRuntimeError):
    """Stored snapshots cannot be read or written (a corrupt or foreign file, an unknown node, ...)."""
