"""The events of a streamed run (`Graph.stream`): what a run is doing, step by step, as typed values.

Every event names the run it comes from by `path`: `()` for the run that was started, and for the runs
inside it the names leading to them, e.g. `('payment',)` for a subgraph run under the name `payment`, or
`('Split:1f0c…', '2')` for the third branch of the fan-out stored under that snapshot id.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal

from .nodes import BaseNode, End, RunEndT, StateT

__all__ = (
    'CustomEvent',
    'GraphEvent',
    'NodeFailedEvent',
    'NodeFinishedEvent',
    'NodeStartedEvent',
    'RunEndEvent',
    'StateEvent',
)


@dataclass(slots=True)
class NodeStartedEvent:
    """A node is about to run."""

    node: BaseNode[Any, Any, Any]
    """The node that runs now."""
    path: tuple[str, ...] = ()
    """The run the node belongs to: `()` for the streamed run, names of nested runs otherwise."""
    kind: ClassVar[Literal['node_started']] = 'node_started'
    """The event's kind, for matching without `isinstance`."""


@dataclass(slots=True)
class NodeFinishedEvent:
    """A node has run and returned what comes next."""

    node: BaseNode[Any, Any, Any]
    """The node that ran."""
    next_node: BaseNode[Any, Any, Any] | End[Any]
    """What it returned: the next node, or the `End` of its run."""
    duration: float
    """How long the step took, in seconds (the node's `run` and the persistence's writes)."""
    path: tuple[str, ...] = ()
    """The run the node belongs to."""
    kind: ClassVar[Literal['node_finished']] = 'node_finished'
    """The event's kind."""


@dataclass(slots=True)
class StateEvent(Generic[StateT]):
    """The state of a run after a step (a deep copy, so that later steps do not change what was sent); sent only
    when the stream was asked for it, `stream(..., state_snapshots=True)`."""

    state: StateT
    """The state after the step."""
    path: tuple[str, ...] = ()
    """The run the state belongs to (a branch of a fan-out runs on its own copy of the state)."""
    kind: ClassVar[Literal['state']] = 'state'
    """The event's kind."""


@dataclass(slots=True)
class NodeFailedEvent:
    """A node raised: the run stops, and the stream raises `error` after handing out this event."""

    node: BaseNode[Any, Any, Any]
    """The node that raised."""
    error: BaseException
    """What it raised."""
    path: tuple[str, ...] = ()
    """The run the node belongs to."""
    kind: ClassVar[Literal['node_failed']] = 'node_failed'
    """The event's kind."""


@dataclass(slots=True)
class CustomEvent:
    """A value a node sent with `await ctx.emit(data)` while it ran (a text delta of an agent, a progress note)."""

    data: Any
    """What the node emitted."""
    node_id: str | None = None
    """The id of the node that emitted it, when known."""
    path: tuple[str, ...] = ()
    """The run of the node that emitted it."""
    kind: ClassVar[Literal['custom']] = 'custom'
    """The event's kind."""


@dataclass(slots=True)
class RunEndEvent(Generic[StateT, RunEndT]):
    """The streamed run has ended: the last event of a stream that did not fail."""

    output: RunEndT
    """The run's output, the data of its `End`."""
    state: StateT
    """The final state (the run's own object, not a copy)."""
    end: End[RunEndT] = field(repr=False)
    """The `End` the run ended with."""
    kind: ClassVar[Literal['run_end']] = 'run_end'
    """The event's kind."""


GraphEvent = (
    NodeStartedEvent | NodeFinishedEvent | StateEvent[Any] | NodeFailedEvent | CustomEvent | RunEndEvent[Any, Any]
)
"""Any event of a streamed run."""
