"""A builder run's progress in a store: as the node of a classic snapshot, so every Edgewise persistence keeps it.

After each step, the run's `RunProgress` is written as JSON data into a `BuilderProgress` node (node id
`'BuilderProgress'`), stored with the state like any node snapshot; the end is an ordinary end snapshot. A
resume reads the latest such node back: tasks that had not finished run again (at least once, as a classic
node does), outcomes already stored are taken in without running their task again, and joins start from the
value reduced so far. A run stopped by a task that raised also stores that task and its error (`failed`), for
diagrams of the run; a resume runs the task again. Values (inputs, reduced values, outputs) are stored as JSON
data; a step's input is validated back into the type its `StepContext[..., ..., InputT]` hint names, and a
`BaseNode` task back into its class.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, get_args, get_origin

import pydantic
import pydantic_core
import typing_extensions

from ..exceptions import GraphRuntimeError, PersistenceError
from ..persistence import NodeError
from ._progress import EndMarker, GraphTask, JoinItem, JoinRelease, Outcomes, RunProgress, TaskOutcome
from .basenode import BaseNode, End, GraphRunContext
from .id_types import ForkStack, ForkStackItem, JoinID, NodeID, NodeRunID, TaskID
from .join import JoinState
from .node import EndNode
from .step import NodeStep, Step, StepContext

__all__ = ('BuilderProgress', 'StoredTypes', 'encode_progress', 'decode_progress')

_ANY = pydantic.TypeAdapter[Any](Any)
_FORMAT = 1


@dataclass
class BuilderProgress(BaseNode[Any, Any, Any]):
    """A builder run's progress stored as a node: `progress` is JSON data (see `encode_progress`)."""

    progress: dict[str, Any]
    """The run's tasks, joins, pending outcomes and counters."""

    async def run(self, ctx: GraphRunContext[Any, Any]) -> BuilderProgress | End[Any]:
        """Raises: this node only stores a builder run; the builder graph's `iter_from_persistence` resumes it."""
        raise GraphRuntimeError(
            "A `BuilderProgress` snapshot holds a builder run: resume it with the builder graph's "
            '`iter_from_persistence` (or `run(persistence=...)`), not with a classic `Graph`.'
        )


class StoredTypes:
    """What a persistence needs of a builder graph: its name, state and output types, and its one node class."""

    def __init__(self, name: str | None, state_type: Any, output_type: Any) -> None:
        self._name = name
        self._types = (state_type, output_type)

    @property
    def name(self) -> str | None:
        """The graph's name."""
        return self._name

    @property
    def inferred_types(self) -> tuple[Any, Any]:
        """The state and output types."""
        return self._types

    def get_nodes(self) -> Sequence[type[BaseNode[Any, Any, Any]]]:
        """The node classes stored snapshots may hold."""
        return [BuilderProgress]


_PLAIN = frozenset({int, str, bool, type(None)})
"""Types whose values are JSON data as they are: stored without a call to pydantic (most step inputs)."""


def _dump(value: Any, node_id: str) -> Any:
    if type(value) in _PLAIN:
        return value
    try:
        return _ANY.dump_python(value, mode='json')
    except pydantic_core.PydanticSerializationError as error:
        raise PersistenceError(
            f'A value on its way to node {node_id!r} cannot be stored ({error}): a durable builder run stores the '
            'values sent between its nodes as JSON data. Send data (numbers, strings, lists, dicts, dataclasses, '
            'pydantic models) instead; the output of a `@g.stream` step cannot be stored.'
        ) from error


def _stack(stack: ForkStack) -> list[list[Any]]:
    return [[item.fork_id, item.node_run_id, item.thread_index] for item in stack]


def _task(task: GraphTask) -> dict[str, Any]:
    inputs = _dump(task.inputs, task.node_id)
    return {'id': task.task_id, 'node': task.node_id, 'inputs': inputs, 'stack': _stack(task.fork_stack)}


def _outcome(outcome: TaskOutcome) -> dict[str, Any] | None:
    result = outcome.result
    if outcome.error is not None:
        return None  # the task runs again on resume
    data: dict[str, Any] = {'task': outcome.task.task_id, 'finished': outcome.task_finished}
    if isinstance(result, EndMarker):
        data['end'] = _dump(result.value, 'end')
    elif isinstance(result, JoinItem):
        inputs = _dump(result.inputs, result.join_id)
        data['join'] = {'join': result.join_id, 'inputs': inputs, 'stack': _stack(result.fork_stack)}
    else:
        data['tasks'] = [_task(t) for t in result]
    return data


def encode_progress(progress: RunProgress, *, answered: tuple[Any, Any] = (None, None)) -> dict[str, Any]:
    """The progress as JSON data (the state is stored beside it, by the persistence).

    `answered` is the outcome the step in progress answered and the answer (the tasks it led to, or the end),
    when this data replaces the snapshot that held the outcome (a join's step): the edges the answer took are kept
    as `taken`, `[source node id, target node id]` pairs, so the run's stored path still names them.
    """
    outcomes = [o for o in (_outcome(outcome) for outcome in progress.outcomes) if o is not None]
    awaiting: dict[str, Any] | None = None
    if isinstance(progress.awaiting, TaskOutcome):
        stored = _outcome(progress.awaiting)
        awaiting = None if stored is None else {'outcome': stored}
    elif isinstance(progress.awaiting, JoinRelease):
        awaiting = {'release': [_task(t) for t in progress.awaiting.tasks]}
    data: dict[str, Any] = {
        'format': _FORMAT,
        'tasks': [_task(t) for t in progress.tasks.values()],
        'joins': [
            {
                'join': join_id,
                'run': run_id,
                'current': _dump(join_state.current, join_id),
                'stack': _stack(join_state.downstream_fork_stack),
                'cancelled': join_state.cancelled_sibling_tasks,
            }
            for (join_id, run_id), join_state in progress.joins.items()
        ],
        'outcomes': outcomes,
        'awaiting': awaiting,
        'releasing': [list(key) for key in progress.releasing],
        'task_count': progress.task_count,
        'node_run_count': progress.node_run_count,
    }
    if isinstance(progress.awaiting, TaskOutcome) and progress.awaiting.error is not None:
        data['failed'] = _failure(progress.awaiting)
    outcome, answer = answered
    if isinstance(outcome, TaskOutcome) and outcome.error is None:
        source = outcome.task.node_id
        if isinstance(answer, EndMarker):
            data['taken'] = [[source, EndNode.id]]
        elif isinstance(answer, Sequence):
            data['taken'] = [[source, task.node_id] for task in answer]
    return data


def _failure(outcome: TaskOutcome) -> dict[str, Any]:
    """The task that raised, and what it raised (secrets redacted): read by diagrams of the run, not by a resume,
    which runs the task again."""
    assert outcome.error is not None
    error = NodeError.from_exception(outcome.error)
    return {'task': outcome.task.task_id, 'node': outcome.task.node_id, 'type': error.type, 'message': error.message}


def _input_type(node: Any) -> Any:
    """The type a task for `node` takes, to validate stored inputs back into; `Any` when it cannot be told."""
    if isinstance(node, NodeStep):
        return node.node_type
    if not isinstance(node, Step):
        return Any
    try:
        hints = typing_extensions.get_type_hints(node.call)
    except NameError:
        return Any
    parameters = list(inspect.signature(node.call).parameters)
    hint = hints.get(parameters[0]) if parameters else None
    if get_origin(hint) is StepContext and len(get_args(hint)) == 3:
        return get_args(hint)[2]
    return Any


class _Decoder:
    def __init__(self, nodes: dict[NodeID, Any]) -> None:
        self.nodes = nodes
        self._adapters: dict[NodeID, pydantic.TypeAdapter[Any]] = {}

    def stack(self, data: list[list[Any]]) -> ForkStack:
        return tuple(ForkStackItem(NodeID(f), NodeRunID(r), int(i)) for f, r, i in data)

    def task(self, data: dict[str, Any]) -> GraphTask:
        node_id = NodeID(data['node'])
        node = self.nodes.get(node_id)
        if node is None:
            raise PersistenceError(
                f'The stored builder run has a task for node {node_id!r}, which this graph does not have: resume it '
                'with the graph it was started with (or one that still has that node).'
            )
        adapter = self._adapters.get(node_id)
        if adapter is None:
            adapter = self._adapters[node_id] = pydantic.TypeAdapter(_input_type(node))
        try:
            inputs = adapter.validate_python(data['inputs'])
        except pydantic.ValidationError as error:
            raise PersistenceError(
                f'The stored input of a task for node {node_id!r} no longer fits its type: {error}'
            ) from error
        return GraphTask(node_id, inputs, self.stack(data['stack']), TaskID(data['id']))

    def outcome(self, data: dict[str, Any], tasks: dict[TaskID, GraphTask]) -> TaskOutcome:
        source = tasks.get(TaskID(data['task']))
        if source is None:
            raise PersistenceError(f'A stored outcome names task {data["task"]!r}, which the stored run does not hold.')
        result: EndMarker[Any] | list[GraphTask] | JoinItem
        if 'end' in data:
            result = EndMarker(data['end'])
        elif 'join' in data:
            item = data['join']
            self.join(item['join'])
            result = JoinItem(JoinID(item['join']), item['inputs'], self.stack(item['stack']))
        else:
            result = [self.task(t) for t in data['tasks']]
        return TaskOutcome(source, result, task_finished=data['finished'])

    def join(self, join_id: str) -> JoinID:
        from .join import Join

        if not isinstance(self.nodes.get(NodeID(join_id)), Join):
            raise PersistenceError(
                f'The stored builder run holds a value for join {join_id!r}, which this graph does not have as a '
                'join: resume it with the graph it was started with.'
            )
        return JoinID(join_id)

    def join_value(self, join_id: JoinID, current: Any) -> Any:
        """A join's stored value, checked against the type of the join's initial value (when it has one)."""
        from .join import Join

        join = self.nodes[join_id]
        assert isinstance(join, Join)
        initial = join.initial_factory()
        if initial is None:
            return current  # e.g. `ReduceFirstValue`: the value's type is not known before the first value
        try:
            pydantic.TypeAdapter(type(initial)).validate_python(current)
        except pydantic.ValidationError as error:
            raise PersistenceError(
                f'The stored value of join {join_id!r} no longer fits the join: its initial value is now a '
                f'{type(initial).__name__} ({error.error_count()} validation error(s)); the join was changed since '
                'the run was stored (its reducer or initial value). Resume the run with the graph it was started '
                'with.'
            ) from error
        except pydantic.PydanticSchemaGenerationError:
            pass  # an initial value pydantic cannot describe: not checked
        return current


def decode_progress(data: dict[str, Any], state: Any, nodes: dict[NodeID, Any]) -> RunProgress:
    """The progress `encode_progress` stored, checked against the graph's nodes.

    Raises:
        PersistenceError: the stored run does not fit the graph (a node renamed or removed, an input that no
            longer validates) or is not a builder run's progress.
    """
    if not isinstance(data, dict) or data.get('format') != _FORMAT:
        raise PersistenceError('The stored node is not the progress of a builder run this version can read.')
    decoder = _Decoder(nodes)
    tasks = {task.task_id: task for task in (decoder.task(t) for t in data['tasks'])}
    joins = {
        (decoder.join(j['join']), NodeRunID(j['run'])): JoinState(
            decoder.join_value(JoinID(j['join']), j['current']), decoder.stack(j['stack']), j['cancelled']
        )
        for j in data['joins']
    }
    outcomes = Outcomes(decoder.outcome(o, tasks) for o in data['outcomes'])
    awaiting: TaskOutcome | JoinRelease | None = None
    stored_awaiting = data['awaiting']
    if stored_awaiting is not None and 'outcome' in stored_awaiting:
        awaiting = decoder.outcome(stored_awaiting['outcome'], tasks)
    elif stored_awaiting is not None:
        awaiting = JoinRelease([decoder.task(t) for t in stored_awaiting['release']])
    return RunProgress(
        state=state,
        tasks=tasks,
        joins=joins,
        outcomes=outcomes,
        awaiting=awaiting,
        releasing=[(JoinID(j), NodeRunID(r)) for j, r in data['releasing']],
        started=True,
        task_count=data['task_count'],
        node_run_count=data['node_run_count'],
    )
