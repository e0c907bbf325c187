"""A builder run whose steps run one at a time, in a fixed order, each through a function the caller hands in.

This is how a builder graph runs as a durable workflow that is replayed from its recorded steps (DBOS, in
`edgewise.graph.dbos`): the workflow code must call its steps in the same order on every replay, so the run's
order may depend only on what the steps returned, never on which of two parallel steps finished first.

- A task for a step, a `BaseNode` or a decision is one recorded step (`run_step(task, state_json)`): it gets
  the state as JSON and gives back JSON holding its outcome (the tasks it leads to, a value for a join, or the
  end), the state after it, and the run's id counters. The run always goes on from that JSON, whether the step
  just ran or its recorded output was read back, so a replay takes exactly the same path.
- Tasks run in the order they were created; parallel branches and map items do not overlap within a run.
  So a step never sees another step's half-made state changes, and a step that runs again (it was in flight
  when its worker died) starts from the state the step before it recorded.
- The start, forks, joins (with their reducers) and the end are routing: they run in the workflow code itself,
  again on every replay, from the recorded outputs.
"""

from __future__ import annotations as _annotations

import json
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, cast

import pydantic
from anyio.abc import TaskGroup

from ..exceptions import PersistenceError, StepLimitExceeded
from ..persistence import EndSnapshot, NodeSnapshot, Snapshot
from ..persistence._redact import redact
from ._engine import RunEngine, _Streamed
from ._graph import Graph
from ._progress import ErrorMarker, GraphTask, RunProgress, TaskOutcome
from ._stored import _ANY, BuilderProgress, _Decoder, _outcome, encode_progress
from .basenode import End
from .decision import Decision
from .id_types import ForkStackItem
from .node import StartNode

__all__ = ('SequentialRun', 'RunStep')

RunStep = Callable[[GraphTask, str], str]
"""Runs one task as a recorded step: `run_step(task, state_json)` returns what `SequentialRun.task_step` returns
for it (or its recorded output)."""


class _OutOfRecords(Exception):
    """The replay reached a step that has no recorded output."""

    def __init__(self, task: GraphTask) -> None:
        super().__init__(task.node_id)
        self.task = task


class _OneAtATime(RunEngine[Any]):
    """The run engine, with the tasks that run user code queued and run one by one through `run_step`."""

    def __init__(self, run: SequentialRun, progress: RunProgress, run_step: RunStep | None) -> None:
        # No task group: this engine never starts a task of its own.
        super().__init__(run.compiled, progress, run.deps, cast(TaskGroup, None), instrument=run.graph.auto_instrument)
        self.iter_stream_sender.close()  # outcomes are taken in order, without the doorbell
        self.iter_stream_receiver.close()
        self.run = run
        self.queue: deque[GraphTask] = deque()
        self.run_step = run_step

    def _is_inline(self, task: GraphTask) -> bool:
        # A decision's predicate is user code: its choice is recorded as a step, so a replay never takes it again.
        return not isinstance(self.graph.nodes.get(task.node_id), Decision) and super()._is_inline(task)

    def _start(self, tasks: Sequence[GraphTask]) -> None:
        for task in tasks:
            self.progress.tasks[task.task_id] = task
        for task in tasks:
            if self._is_inline(task):
                self._run_inline(task)
            else:
                self.queue.append(task)

    def _record(self, outcome: TaskOutcome) -> None:
        self.progress.outcomes.append(outcome)

    async def _take_outcome(self) -> TaskOutcome:
        outcomes = self.progress.outcomes
        while not outcomes:
            task = self.queue.popleft()  # a task not finished has its outcome recorded or is queued
            if task.task_id in self.progress.tasks:  # else it was cancelled (a join cancelled its siblings)
                assert self.run_step is not None
                self.run.steps += 1
                self.run.check_steps(task)
                self._record(self.run.apply(self.progress, task, self.run_step(task, self.run.dump_state())))
        return outcomes.popleft()


def _now(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """The result of a coroutine that never suspends (the engine's, with no task of its own to wait for)."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    coroutine.close()  # pragma: no cover - defensive: the engine awaits nothing here
    raise AssertionError('the sequential builder run awaited')  # pragma: no cover


class SequentialRun:
    """One builder run, advanced one recorded step at a time (see the module's docstring)."""

    def __init__(self, graph: Graph[Any, Any, Any, Any], deps: Any, max_steps: int | None = None) -> None:
        self.graph = graph
        self.compiled = graph._compiled()
        self.deps = deps
        self.max_steps = max_steps
        self.steps = 0
        self._state_adapter = pydantic.TypeAdapter[Any](graph.state_type)
        self._input_adapter = pydantic.TypeAdapter[Any](graph.input_type)
        self._decoder = _Decoder(graph.nodes)
        self.progress = RunProgress(state=None)

    # -- the JSON a run starts from and ends with

    def start_json(self, state: Any, inputs: Any) -> str:
        """The run's start, as JSON: its state and its input."""
        state_data = self._state_adapter.dump_python(state, mode='json')
        try:
            inputs_data = _ANY.dump_python(inputs, mode='json')
        except Exception as error:
            raise PersistenceError(f'The run input {inputs!r} cannot be stored as JSON data: {error}') from error
        return json.dumps({'state': state_data, 'inputs': inputs_data})

    def end_of(self, output_json: str) -> tuple[Any, Any]:
        """The output and the state of a run from the JSON its `run` returned."""
        data = json.loads(output_json)
        output = pydantic.TypeAdapter[Any](self.graph.output_type).validate_python(data['output'])
        return output, self._state_adapter.validate_python(data['state'])

    def dump_state(self) -> str:
        """The run's current state, as JSON."""
        return self._state_adapter.dump_json(self.progress.state).decode()

    # -- the run

    def run(self, start_json: str, run_step: RunStep, *, on_step: Callable[[], None] | None = None) -> str:
        """Run the graph from `start_json` to its end, each task through `run_step`, and return the end as JSON.

        `on_step` is called at each step of the run (where a store would save the run's progress).

        Raises:
            Exception: what a step raised (or `run_step` raised for it).
            StepLimitExceeded: the run was about to take more than `max_steps` steps.
        """
        start = json.loads(start_json)
        progress = self.progress = RunProgress(state=self._state_adapter.validate_python(start['state']))
        inputs = self._input_adapter.validate_python(start['inputs'])
        start_run = ForkStackItem(StartNode.id, progress.new_node_run_id(), 0)
        first = GraphTask(StartNode.id, inputs, (start_run,), progress.new_task_id())
        progress.tasks[first.task_id] = first
        engine = _OneAtATime(self, progress, run_step)
        reply: Any = None
        while True:
            try:
                event = _now(engine.advance(first, reply))
            except StopAsyncIteration:
                break
            if isinstance(event, ErrorMarker):  # pragma: no cover - a step's error leaves `run_step` at once
                raise event.error
            if on_step is not None:
                on_step()
            reply = event  # go on as planned
        assert progress.output is not None
        output = _ANY.dump_python(progress.output.value, mode='json')
        return json.dumps({'state': self._state_adapter.dump_python(progress.state, mode='json'), 'output': output})

    def recorded_history(
        self, start_json: str, outputs: Sequence[str], *, failure: tuple[str, str] | None, running: bool
    ) -> list[Snapshot[Any, Any]]:
        """The run's history as a store would hold it (`BuilderProgress` snapshots, then the end), rebuilt from its
        start and the recorded outputs of its steps, in order (a DBOS run's steps): the routing is replayed, no
        user code runs. For drawing the run's path (`read_run_path`), not for resuming it.

        Args:
            start_json: The run's start (`start_json`).
            outputs: The recorded outputs of its steps, in the order they ran.
            failure: What the step after them raised, as its type's name and its message (secrets are redacted),
                when it failed (it is then marked `'failed'`).
            running: Whether a worker is advancing the run (the step after them is then `'running'`, else it waits
                for one).
        """
        history: list[Snapshot[Any, Any]] = []
        recorded = iter(outputs)

        def save() -> None:
            progress = BuilderProgress(progress=encode_progress(self.progress))
            history.append(NodeSnapshot(state=self.progress.state, node=progress, status='success'))

        def replay_step(task: GraphTask, state_json: str) -> str:
            output = next(recorded, None)
            if output is None:
                save()  # the task in flight
                raise _OutOfRecords(task)
            return output

        try:
            end = self.run(start_json, replay_step, on_step=save)
        except _OutOfRecords as stop:
            last = history[-1]
            assert isinstance(last, NodeSnapshot)
            assert isinstance(last.node, BuilderProgress)
            last.status = 'running' if running else 'created'
            if failure is not None:
                last.status = 'error'
                last.node.progress['failed'] = {
                    'task': stop.task.task_id, 'node': stop.task.node_id, 'type': failure[0],
                    'message': redact(failure[1]),
                }  # fmt: skip
            return history
        output, state = self.end_of(end)
        history.append(EndSnapshot(state=state, result=End(output)))
        return history

    def check_steps(self, task: GraphTask) -> None:
        """Raises: `StepLimitExceeded`, when the run is about to take more than `max_steps` steps."""
        if self.max_steps is not None and self.steps > self.max_steps:
            raise StepLimitExceeded(
                f'Graph `{self.graph.name}` ran {self.max_steps} steps, its `max_steps`, and was about to run '
                f'{task.node_id!r}; it is likely in a runaway cycle.'
            )

    async def task_step(self, task: GraphTask, state_json: str) -> str:
        """Run one task on the state `state_json` (what a recorded step does) and return its outcome as JSON.

        Each call starts from the state it is given, so a retried step never sees a state it half changed.
        """
        progress = RunProgress(
            state=self._state_adapter.validate_json(state_json),
            task_count=self.progress.task_count,
            node_run_count=self.progress.node_run_count,
        )
        engine = _OneAtATime(self, progress, None)
        result = await engine._run_task(task)
        # Values reach tasks through JSON (a `@g.stream` step's output cannot be stored): never an async iterable.
        assert not isinstance(result, _Streamed)
        stored = _outcome(TaskOutcome(task, result))
        return json.dumps(
            {
                'state': self._state_adapter.dump_python(progress.state, mode='json'),
                'outcome': stored,
                'task_count': progress.task_count,
                'node_run_count': progress.node_run_count,
            }
        )

    def apply(self, progress: RunProgress, task: GraphTask, output_json: str) -> TaskOutcome:
        """Take in a step's output (fresh or recorded): the state after it, the id counters and its outcome."""
        data = json.loads(output_json)
        progress.state = self._state_adapter.validate_python(data['state'])
        progress.task_count = data['task_count']
        progress.node_run_count = data['node_run_count']
        return self._decoder.outcome(data['outcome'], {task.task_id: task})
