"""The events of a streamed builder run (`Graph.stream` of `edgewise.graph.builder`), as typed values.

A builder run is made of tasks (a node to run with an input), many of which may run at once. Each task sends
`TaskStartedEvent`, then `TaskFinishedEvent` (what it led to) or `TaskFailedEvent`. The routing nodes (the
start, decisions, forks, joins, the end) are tasks too, so the stream shows the whole path: a fan-out is the
`TaskFinishedEvent` of a fork's task, whose `next_tasks` are its branches; a value on its way into a join is
the `TaskFinishedEvent` of a task at the join, whose `result` is a `JoinItem`; a join whose branches are all in
sends `JoinReleasedEvent`. With `state_snapshots=True`, each step that ran user code is followed by a
`StateEvent` (a copy of the state); the run ends with a `RunEndEvent`. `StateEvent` and `RunEndEvent` are the
classic ones of `edgewise.graph.events`.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..events import RunEndEvent, StateEvent
from ._progress import EndMarker, GraphTask, JoinItem
from .id_types import JoinID

__all__ = (
    'BuilderEvent',
    'JoinReleasedEvent',
    'RunEndEvent',
    'StateEvent',
    'TaskFailedEvent',
    'TaskFinishedEvent',
    'TaskStartedEvent',
)


@dataclass(slots=True)
class TaskStartedEvent:
    """A task is about to run."""

    task: GraphTask
    """The task: its `node_id`, `inputs`, `fork_stack` and `task_id`."""
    kind: ClassVar[Literal['task_started']] = 'task_started'
    """The event's kind, for matching without `isinstance`."""


@dataclass(slots=True)
class TaskFinishedEvent:
    """A task has run and produced what comes next."""

    task: GraphTask
    """The task that ran."""
    result: Sequence[GraphTask] | EndMarker[Any] | JoinItem
    """What it led to: the tasks to run next (the branches of a fork), the run's end, or a value for a join."""
    duration: float
    """How long the task ran, in seconds (0 for the routing nodes, which run no user code)."""
    kind: ClassVar[Literal['task_finished']] = 'task_finished'
    """The event's kind."""

    @property
    def next_tasks(self) -> Sequence[GraphTask]:
        """The tasks the task led to (none when it ended the run or sent a value to a join)."""
        return self.result if isinstance(self.result, Sequence) else ()


@dataclass(slots=True)
class TaskFailedEvent:
    """A task raised: the run stops, and the stream raises `error` after handing out this event."""

    task: GraphTask
    """The task that raised."""
    error: BaseException
    """What it raised."""
    kind: ClassVar[Literal['task_failed']] = 'task_failed'
    """The event's kind."""


@dataclass(slots=True)
class JoinReleasedEvent:
    """Every branch of a join's fork is in: the join sends its reduced value on."""

    join_id: JoinID
    """The join."""
    value: Any
    """The value it reduced."""
    tasks: Sequence[GraphTask]
    """The tasks that take the value on."""
    kind: ClassVar[Literal['join_released']] = 'join_released'
    """The event's kind."""


BuilderEvent = (
    TaskStartedEvent | TaskFinishedEvent | TaskFailedEvent | JoinReleasedEvent | StateEvent[Any] | RunEndEvent[Any, Any]
)
"""Any event of a streamed builder run."""
