"""A builder run's progress as plain data: what a persistence would store after every step.

Everything the engine needs to go on is here, not in the local variables of coroutines: the state, the tasks
still to run (each with its input and fork stack), each join's value reduced so far, the outputs of finished
tasks not yet taken in, the event handed to the caller and waiting for its reply, and the id counters.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Generic

from typing_extensions import TypeVar

from .id_types import ForkStack, JoinID, NodeID, NodeRunID, TaskID
from .join import JoinState
from .util import Maybe

__all__ = (
    'EndMarker',
    'ErrorMarker',
    'JoinItem',
    'GraphTaskRequest',
    'GraphTask',
    'TaskOutcome',
    'JoinRelease',
    'Outcomes',
    'RunProgress',
)

OutputT = TypeVar('OutputT')


class EndMarker(Generic[OutputT]):
    """The end of a run, with its output: the last event of `GraphRun` iteration."""

    __slots__ = ('_value',)

    def __init__(self, value: OutputT) -> None:
        self._value = value

    @property
    def value(self) -> OutputT:
        """The run's output."""
        return self._value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EndMarker) and bool(other._value == self._value)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f'EndMarker(value={self._value!r})'


@dataclass
class ErrorMarker:
    """A task raised `error`; the caller may recover with `GraphRun.override_next` before the next step."""

    error: BaseException
    """The exception."""


@dataclass(slots=True)
class JoinItem:
    """A value on its way into a join, with the fork stack of the branch it comes from."""

    join_id: JoinID
    """The join."""
    inputs: Any
    """The value."""
    fork_stack: ForkStack
    """The forks the value's branch descends from."""


@dataclass(slots=True)
class GraphTaskRequest:
    """A node to run with an input (what `GraphRun.next` and `override_next` accept)."""

    node_id: NodeID
    """The node."""
    inputs: Any
    """Its input."""
    fork_stack: ForkStack = field(repr=False)
    """The forks the task descends from (joins read it to know when a fork's branches are all in)."""


@dataclass(slots=True)
class GraphTask(GraphTaskRequest):
    """A task of a run: a `GraphTaskRequest` with the id the run gave it."""

    task_id: TaskID = field(repr=False)
    """The task's id within the run."""

    @staticmethod
    def from_request(request: GraphTaskRequest, get_task_id: Callable[[], TaskID]) -> GraphTask:
        """`request` itself when it is a task already, else a task made from it with a new id."""
        if isinstance(request, GraphTask):
            return request
        return GraphTask(request.node_id, request.inputs, request.fork_stack, get_task_id())


@dataclass(slots=True)
class TaskOutcome:
    """What a finished task (or a piece of a streamed map) produced, waiting to be taken in by the run."""

    task: GraphTask
    """The task."""
    result: EndMarker[Any] | Sequence[GraphTask] | JoinItem
    """The tasks to run next, the run's end, or a value for a join."""
    task_finished: bool = True
    """False for a piece of a map over an async iterable: more pieces follow from the same task."""
    error: Exception | None = None
    """What the task raised, instead of a result."""


@dataclass(slots=True)
class JoinRelease:
    """A join whose branches are all in, handed to the caller as the tasks that take its value on."""

    tasks: list[GraphTask]
    """The tasks."""


class Outcomes:
    """A first-in first-out queue of outcomes: a list read from a moving head.

    A `deque` would do, but an empty one takes most of a kilobyte, and every run in flight holds one.
    """

    __slots__ = ('_head', '_items')

    def __init__(self, outcomes: Iterable[TaskOutcome] = ()) -> None:
        self._items: list[Any] = list(outcomes)
        self._head = 0

    def append(self, outcome: TaskOutcome) -> None:
        """Add `outcome` at the end."""
        self._items.append(outcome)

    def popleft(self) -> TaskOutcome:
        """Take the oldest outcome out.

        Raises:
            IndexError: the queue is empty.
        """
        items, head = self._items, self._head
        if head >= len(items):
            raise IndexError('pop from an empty queue of outcomes')
        outcome: TaskOutcome = items[head]
        if head + 1 == len(items):
            items.clear()
            self._head = 0
        elif head >= 32 and 2 * head >= len(items):
            del items[: head + 1]  # drop the taken ones, a copy of the rest now and then: O(1) per item on average
            self._head = 0
        else:
            items[head] = None  # taken: not kept alive by the queue
            self._head = head + 1
        return outcome

    def __iter__(self) -> Iterator[TaskOutcome]:
        return islice(self._items, self._head, None)

    def __len__(self) -> int:
        return len(self._items) - self._head

    def __bool__(self) -> bool:
        return len(self._items) > self._head

    def __repr__(self) -> str:
        return f'Outcomes({list(self)!r})'


@dataclass(slots=True)
class RunProgress:
    """Where a builder run stands; see the module docstring."""

    state: Any
    """The run's state."""
    tasks: dict[TaskID, GraphTask] = field(default_factory=dict[TaskID, GraphTask])
    """The tasks started or to start, by id."""
    joins: dict[tuple[JoinID, NodeRunID], JoinState] = field(default_factory=dict[tuple[JoinID, NodeRunID], JoinState])
    """Each join's reduction, by join and execution of its parent fork."""
    outcomes: Outcomes = field(default_factory=Outcomes)
    """Outputs of finished tasks not yet taken in, oldest first."""
    awaiting: TaskOutcome | JoinRelease | None = None
    """The event handed to the caller, whose reply (the same tasks, others, or an end) is still to apply."""
    releasing: list[tuple[JoinID, NodeRunID]] = field(default_factory=list[tuple[JoinID, NodeRunID]])
    """Joins to release one by one, once no task is left (a pass over the joins in progress)."""
    started: bool = False
    """Whether the first task was started."""
    output: Maybe[Any] = None
    """The run's output, once it ended."""
    task_count: int = 0
    """How many task ids were given out."""
    node_run_count: int = 0
    """How many node-run ids were given out."""

    def new_task_id(self) -> TaskID:
        """A new task id, `'task:<n>'`."""
        task_id = TaskID(f'task:{self.task_count}')
        self.task_count += 1
        return task_id

    def new_node_run_id(self) -> NodeRunID:
        """A new id for an execution of a fork."""
        run_id = NodeRunID(f'task:{self.node_run_count}')
        self.node_run_count += 1
        return run_id
