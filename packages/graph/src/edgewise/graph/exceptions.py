"""Errors raised by `edgewise.graph`.

Every error has one root, and each leaf also subclasses the closest builtin, so code written for
pydantic-graph 1.x that catches `TypeError` or `RuntimeError` keeps working:

```
GraphError
├── GraphSetupError (TypeError)            a graph or node is defined wrongly
├── GraphBuildingError (ValueError)        a builder graph is put together wrongly (`edgewise.graph.builder`)
├── GraphValidationError (ValueError)      a built builder graph has a dead end, an unreachable node, ...
├── GraphRuntimeError (RuntimeError)       something went wrong while running a graph
│   ├── GraphNodeStatusError               a snapshot is not in a runnable status
│   ├── UndeclaredEdgeError                a node returned a node its return hint does not declare
│   ├── StepLimitExceeded                  a run took more steps than `max_steps`
│   ├── RunInProgressError                 another live process is advancing the same run
│   ├── BranchFailedError                  a branch of a fan-out raised (its siblings were cancelled)
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
    import httpx

    from ._status import SnapshotStatus

__all__ = (
    'GraphError',
    'GraphSetupError',
    'GraphRuntimeError',
    'GraphNodeStatusError',
    'UndeclaredEdgeError',
    'StepLimitExceeded',
    'RunInProgressError',
    'BranchFailedError',
    'PersistenceError',
    'GraphBuildingError',
    'GraphValidationError',
    'UnsupportedEventLoopError',
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


class GraphBuildingError(GraphError, ValueError):
    """A builder graph (`edgewise.graph.builder.GraphBuilder`) is put together wrongly: clashing node ids, a join
    without a dominating fork, a broadcast without branches, ..."""


class GraphValidationError(GraphError, ValueError):
    """A builder graph fails the structure checks of `GraphBuilder.build` (no edge from the start or to the end,
    a dead end, an unreachable node); `build(validate_graph_structure=False)` skips them."""


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


class BranchFailedError(GraphRuntimeError):
    """A branch of a fan-out (`Fork`) raised; the other branches were cancelled. The cause is the branch's error."""

    branch: int
    """The failed branch's position in the fork, from 0."""
    node_id: str
    """The id of the branch node that raised."""
    run_id: str | None
    """The id of the branch's child run, with a durable persistence (its snapshots show the failure)."""

    def __init__(self, message: str, *, branch: int, node_id: str, run_id: str | None) -> None:
        self.branch = branch
        self.node_id = node_id
        self.run_id = run_id
        super().__init__(message)


class PersistenceError(GraphRuntimeError):
    """Stored snapshots cannot be read or written (a corrupt or foreign file, an unknown node, ...)."""


class UnsupportedEventLoopError(GraphRuntimeError):
    """A synchronous `run_sync` was called where the current event loop cannot be driven by it (a loop that only
    its own runtime may run); call the asynchronous method instead."""


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


if TYPE_CHECKING:
    # What type checkers see; at run time the class is built on first use (below), with the same bases.

    class MermaidServiceError(DiagramRenderError, httpx.HTTPStatusError):
        status_code: int
        service_message: str

        def __init__(self, message: str, *, request: httpx.Request, response: httpx.Response) -> None: ...


def _define_mermaid_service_error() -> Any:
    import httpx

    class MermaidServiceError(DiagramRenderError, httpx.HTTPStatusError):
        """The mermaid rendering service answered with an error status.

        Also an `httpx.HTTPStatusError`, which is what pydantic-graph 1.x raised in this case.
        """

        status_code: int
        """The HTTP status of the service's answer."""
        service_message: str
        """The body of the service's answer: its explanation of the error."""

        def __init__(self, message: str, *, request: httpx.Request, response: httpx.Response) -> None:
            self.message = message
            self.status_code = response.status_code
            self.service_message = response.text
            httpx.HTTPStatusError.__init__(self, message, request=request, response=response)

    MermaidServiceError.__qualname__ = 'MermaidServiceError'
    return MermaidServiceError


def __getattr__(name: str) -> Any:
    # `MermaidServiceError` subclasses `httpx.HTTPStatusError`; defining it at import would import httpx (tens
    # of milliseconds) with every `import edgewise.graph`. It is defined here on first use of the name.
    # `setdefault`: two threads racing here still get the same class.
    if name == 'MermaidServiceError':
        return globals().setdefault(name, _define_mermaid_service_error())
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
