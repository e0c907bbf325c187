"""Errors raised by `edgewise.graph`.

Every error has one root, and each leaf also subclasses the closest builtin, so code written for
pydantic-graph 1.x that catches `TypeError` or `RuntimeError` keeps working:

```
GraphError
├── GraphSetupError (TypeError)            a graph or node is defined wrongly
├── GraphRuntimeError (RuntimeError)       something went wrong while running a graph
│   ├── GraphNodeStatusError               a snapshot is not in a runnable status
│   ├── UndeclaredEdgeError                a node returned a node its return hint does not declare
│   ├── StepLimitExceeded                  a run took more steps than `max_steps`
│   ├── RunInProgressError                 another live process is advancing the same run
│   └── PersistenceError                   stored snapshots cannot be read or written
└── DiagramError                           a diagram cannot be drawn or rendered
    ├── DiagramNodeError (LookupError)     a start, highlighted or visited node is not in the graph
    └── DiagramRenderError (RuntimeError)  an image of a diagram cannot be rendered
        ├── DiagramTooLongError (ValueError)           the diagram does not fit in a GET URL of the service
        ├── MermaidServiceError (httpx.HTTPStatusError)  the rendering service answered with an error status
        └── LocalRendererError             the mermaid CLI is missing, cannot do what was asked, or failed
```
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._mermaid_service import MermaidServiceError
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
    'DiagramError',
    'DiagramNodeError',
    'DiagramRenderError',
    'DiagramTooLongError',
    'MermaidServiceError',
    'LocalRendererError',
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


class DiagramError(GraphError):
    """A diagram of a graph cannot be drawn or rendered."""


class DiagramNodeError(DiagramError, LookupError):
    """A start, highlighted or visited node given for a diagram is not in the graph."""


class DiagramRenderError(DiagramError, RuntimeError):
    """An image of a diagram cannot be rendered (the rendering service cannot be reached, ...)."""


class DiagramTooLongError(DiagramRenderError, ValueError):
    """The diagram is too long to be sent in the GET URL of the rendering service."""

    url_length: int
    """The length of the URL the diagram needed, in characters."""
    status_code: int | None
    """The HTTP status the service answered with (414 or 431), or `None` if the request was not sent."""

    def __init__(self, message: str, *, url_length: int, status_code: int | None = None) -> None:
        self.url_length = url_length
        self.status_code = status_code
        super().__init__(message)


class LocalRendererError(DiagramRenderError):
    """The mermaid CLI (`mmdc`) is not installed, cannot render what was asked, or failed."""


def __getattr__(name: str) -> Any:
    # `MermaidServiceError` subclasses `httpx.HTTPStatusError`; defining it here would import httpx (tens of
    # milliseconds) with every `import edgewise.graph`. It lives beside the service renderer and is loaded
    # on first use of the name.
    if name == 'MermaidServiceError':
        from ._mermaid_service import MermaidServiceError

        return MermaidServiceError
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
