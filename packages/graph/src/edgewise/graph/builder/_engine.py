"""The engine of a builder run: it starts tasks, takes in their outcomes, reduces joins and releases them.

The engine keeps nothing of a run's progress in local variables across an `advance`: it all lives in the
`RunProgress` it is given, so that the run can be looked at (and stored) between any two steps.

One `advance(reply)` applies the caller's reply to the event handed out last, then takes in outcomes of
finished tasks until there is an event to hand out: the tasks a finished task leads to, the run's end, or an
error. Values for joins are reduced without handing anything out; when no task is left, the joins whose
branches are all in are released one by one, each handed out as the tasks that take its value on.
"""

from __future__ import annotations as _annotations

import math
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Coroutine, Generator, Iterable, Sequence
from contextlib import suppress
from contextvars import Context, copy_context
from time import perf_counter
from typing import Any, Generic, Literal, get_args, get_origin

import anyio
from anyio import BrokenResourceError, CancelScope, ClosedResourceError, EndOfStream
from anyio.abc import TaskGroup
from anyio.lowlevel import checkpoint
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from typing_extensions import TypeVar

from .. import _instrument
from .._copy import deep_copy
from .._runs import EventSink
from ..events import StateEvent
from ..exceptions import GraphRuntimeError
from ._compile import CompiledGraph
from ._progress import EndMarker, ErrorMarker, GraphTask, JoinItem, JoinRelease, RunProgress, TaskOutcome
from .basenode import BaseNode, End
from .decision import Decision
from .events import JoinReleasedEvent, TaskFailedEvent, TaskFinishedEvent, TaskStartedEvent
from .id_types import ForkID, ForkStack, ForkStackItem, JoinID, NodeID, NodeRunID, TaskID
from .join import Join, JoinNode, JoinState, ReducerContext
from .node import EndNode, Fork, StartNode
from .paths import DestinationMarker, LabelMarker, Path, TransformMarker
from .step import NodeStep, Step, StepContext, StepNode
from .util import Some, unpack_type_expression

__all__ = ('RunEngine', 'Event', 'Reply')

OutputT = TypeVar('OutputT')

Event = EndMarker[Any] | ErrorMarker | Sequence[GraphTask]
"""What `advance` hands out."""
Reply = EndMarker[Any] | ErrorMarker | Sequence[GraphTask]
"""What the caller answers: the event itself to go on as planned, other tasks, or an end."""


class _Streamed:
    """A map over an async iterable: its tasks come piece by piece."""

    def __init__(self, pieces: AsyncIterator[list[GraphTask]]) -> None:
        self.pieces = pieces


class RunEngine(Generic[OutputT]):
    """Runs the tasks of one builder run in `task_group`, its progress kept in `progress`."""

    sink: Any = None
    """Where a streamed run's events go, if it is streamed: its steps then run in tasks of their own, where their
    events are made, never in the caller's task."""

    def __init__(
        self,
        graph: CompiledGraph,
        progress: RunProgress,
        deps: Any,
        task_group: TaskGroup,
        *,
        instrument: bool = True,
        sink: EventSink | None = None,
    ) -> None:
        self.graph = graph
        self.progress = progress
        self.deps = deps
        self.task_group = task_group
        self.instrument = instrument and _instrument.TRACING
        self.new_task_id: Callable[[], TaskID] = progress.new_task_id
        self._scopes: dict[TaskID, CancelScope] = {}
        self.sink = sink
        """Where a streamed run's events go (`Graph.stream`), else `None`."""
        self._deferred: GraphTask | None = None
        """A lone step task not started yet: run in the caller's task if nothing else runs when it is waited on."""
        self.after_join_step: Callable[[], Awaitable[None]] | None = None
        """Called after each value a join takes in (a step that hands no event out), e.g. to store the progress."""
        # Rings when an outcome is added to `progress.outcomes` (the outcomes themselves are in the progress). Made
        # on first need: a run whose steps all run in its caller's task never waits for a bell (and a stream is
        # a few kilobytes of every run in flight).
        self._doorbell: tuple[MemoryObjectSendStream[None], MemoryObjectReceiveStream[None]] | None = None

    @property
    def iter_stream_sender(self) -> MemoryObjectSendStream[None]:
        """The doorbell's sending end: rung (with `None`) when an outcome is recorded."""
        return self._bell()[0]

    @property
    def iter_stream_receiver(self) -> MemoryObjectReceiveStream[None]:
        """The doorbell's receiving end: waited on when no outcome is pending."""
        return self._bell()[1]

    def _bell(self) -> tuple[MemoryObjectSendStream[None], MemoryObjectReceiveStream[None]]:
        if self._doorbell is None:
            self._doorbell = anyio.create_memory_object_stream[None](math.inf)
        return self._doorbell

    # -- the step protocol

    async def advance(self, first_task: GraphTask, reply: Reply | None) -> Event:
        """Apply `reply` to the last event and run until the next one.

        Args:
            first_task: The task to start with, on the first call.
            reply: The caller's answer to the last event (ignored on the first call).

        Raises:
            StopAsyncIteration: the run has ended (its output is in `progress.output`).
        """
        progress = self.progress
        if progress.output is not None:
            raise StopAsyncIteration
        if not progress.started:
            progress.started = True
            self._start([first_task])
        else:
            awaiting, progress.awaiting = progress.awaiting, None
            if isinstance(awaiting, TaskOutcome):
                assert reply is not None
                await self._apply_reply(awaiting, reply)
            elif isinstance(awaiting, JoinRelease):  # pragma: no branch - `None` only after an advance that raised
                assert reply is not None
                assert not isinstance(reply, ErrorMarker)
                self._apply_release_reply(awaiting, reply)
        if progress.output is not None:
            raise StopAsyncIteration
        # The next event, in this frame (not a coroutine of its own): a run in flight waits here.
        while True:
            if not progress.tasks and not progress.releasing:
                if not progress.joins:
                    raise GraphRuntimeError(
                        'The graph run has no task left and reached no end node: every path of the graph must '
                        'lead to the end node. If a `.map()` got an empty iterable, no item reached its join: '
                        'pass `downstream_join_id=` to `.map()` so that the join still fires with its initial value.'
                    )
                # No task is left: a pass over the joins in progress releases those whose branches are all in.
                progress.releasing = list(progress.joins)
            if progress.releasing:
                release = self._next_release()
                if release is not None:
                    progress.awaiting = release
                    self._spawn_deferred()
                    return release.tasks
                if not progress.tasks:  # pragma: no cover - defensive: joins never wait on each other in a cycle
                    stuck = ', '.join(repr(join_id) for join_id, _ in progress.joins)
                    raise GraphRuntimeError(
                        f'The graph run is stuck: joins {stuck} wait for each other and no task is left.'
                    )
            outcome = await self._take_outcome()
            if outcome.task.task_id not in progress.tasks:
                continue  # the task was cancelled after it finished: its outcome is dropped
            if outcome.error is not None:
                progress.awaiting = outcome
                self._spawn_deferred()
                return ErrorMarker(outcome.error)
            if isinstance(outcome.result, JoinItem):
                await self._apply_reply(outcome, None)
                if self.after_join_step is not None:
                    await self.after_join_step()
                continue
            progress.awaiting = outcome
            self._spawn_deferred()
            return outcome.result

    async def _take_outcome(self) -> TaskOutcome:
        """The oldest outcome not taken in yet, waiting for one if need be."""
        outcomes = self.progress.outcomes
        if not outcomes:
            deferred = self._deferred
            if deferred is not None and not self._scopes:
                # A lone step and nothing else running: it runs here, in the caller's task, as it would in a task
                # of its own (in a copy of the context; nothing else could hand out an event meanwhile).
                self._deferred = None
                try:
                    result = await self._run_task(deferred, in_caller=True)
                except Exception as error:
                    self._record(TaskOutcome(deferred, [], error=error))
                else:
                    assert not isinstance(result, _Streamed)  # only forks stream, and they are never deferred
                    self._record(TaskOutcome(deferred, result))
                # Let other tasks run, and cancellation in, as waiting for a task's outcome would.
                await checkpoint()
            else:
                self._spawn_deferred()
                while not outcomes:
                    try:
                        await self.iter_stream_receiver.receive()
                    except (EndOfStream, ClosedResourceError):  # pragma: no cover - the run is being torn down
                        await anyio.sleep_forever()
        return outcomes.popleft()

    async def _apply_reply(self, outcome: TaskOutcome, reply: Reply | None) -> None:
        """Go on from a task's outcome as the caller answered (`None`: a join item, reduced here)."""
        progress = self.progress
        if isinstance(reply, ErrorMarker):
            assert outcome.error is not None
            raise outcome.error
        if isinstance(reply, EndMarker):
            self._finish(outcome.task.task_id)
            self.cancel_all()
            progress.output = Some(reply.value)
            return
        if reply is None:
            assert isinstance(outcome.result, JoinItem)
            self._reduce(outcome.result)
        else:
            for task in reply:
                progress.tasks[task.task_id] = task
        released: list[GraphTask] = []
        for key in self._completed_fork_runs(outcome.task):
            join_state = progress.joins.pop(key)
            released += self._continue_from_join(key[0], join_state)
        if released:
            self._start(released)
        if reply is not None:
            # The caller's own list is the event itself when it goes on as planned: nothing of it to finish.
            if reply is not outcome.result and not isinstance(outcome.result, JoinItem | EndMarker):
                kept = {task.task_id for task in reply}
                for task in outcome.result:
                    if task.task_id not in kept:
                        self._finish(task.task_id)
            self._start(reply)
        if outcome.task_finished:
            self._finish(outcome.task.task_id)

    def _apply_release_reply(self, release: JoinRelease, reply: EndMarker[Any] | Sequence[GraphTask]) -> None:
        if isinstance(reply, EndMarker):
            self.cancel_all()
            self.progress.output = Some(reply.value)
            return
        kept = {task.task_id for task in reply}
        for task in release.tasks:
            if task.task_id not in kept:
                self._finish(task.task_id)
        self._start(reply)

    def resume(self) -> None:
        """Start again the tasks of a stored run that had not finished (their outcomes were not stored)."""
        progress = self.progress
        finished = {o.task.task_id for o in progress.outcomes if o.task_finished}
        if isinstance(progress.awaiting, TaskOutcome) and progress.awaiting.task_finished:
            finished.add(progress.awaiting.task.task_id)
        self._start([task for task_id, task in progress.tasks.items() if task_id not in finished])

    # -- joins

    def _reduce(self, item: JoinItem) -> None:
        join = self._join(item.join_id)
        fork_run_id, downstream = self._fork_run_of(item.join_id, item.fork_stack)
        key = (item.join_id, fork_run_id)
        join_state = self.progress.joins.get(key)
        if join_state is None:
            join_state = self.progress.joins[key] = JoinState(join.initial_factory(), downstream)
        context = ReducerContext(state=self.progress.state, deps=self.deps, join_state=join_state)
        join_state.current = join.reduce(context, join_state.current, item.inputs)
        if join_state.cancelled_sibling_tasks:
            self._cancel_siblings(self.graph.parent_forks[item.join_id].fork_id, fork_run_id)

    def _join(self, join_id: JoinID) -> Join[Any, Any, Any, Any]:
        join = self.graph.nodes.get(join_id)
        if not isinstance(join, Join):
            raise GraphRuntimeError(f'Node {join_id!r} is not a join of this graph; values can only be sent to joins.')
        return join

    def _is_final_join(self, join_id: JoinID) -> bool:
        return not any(join_id in joins for joins in self.graph.intermediate_join_nodes.values())

    def _fork_run_of(self, join_id: JoinID, fork_stack: ForkStack) -> tuple[NodeRunID, ForkStack]:
        """The execution of the join's parent fork a value belongs to, and the fork stack the join goes on with."""
        parent_fork_id = self.graph.parent_forks[join_id].fork_id
        for depth in range(len(fork_stack) - 1, -1, -1):
            if fork_stack[depth].fork_id == parent_fork_id:
                # A final join goes on above its fork; one that feeds another join keeps the whole stack, so
                # that its output still belongs to the same execution of the outer join's fork.
                downstream = fork_stack[: depth + 1] if self._is_final_join(join_id) else fork_stack
                return fork_stack[depth].node_run_id, downstream
        raise GraphRuntimeError(
            f'A value reached join {join_id!r} from a branch that does not descend from its parent fork '
            f'{parent_fork_id!r}; send values to a join only from inside its fork.'
        )

    def _completed_fork_runs(self, task: GraphTask) -> list[tuple[JoinID, NodeRunID]]:
        if not self.progress.joins:
            return []
        in_stack = {item.node_run_id for item in task.fork_stack}
        tasks = list(self.progress.tasks.values())
        return [
            (join_id, run_id)
            for join_id, run_id in self.progress.joins
            if run_id in in_stack and self._fork_run_done(tasks, join_id, run_id)
        ]

    def _fork_run_done(self, tasks: Iterable[GraphTask], join_id: JoinID, run_id: NodeRunID) -> bool:
        """Whether no task of the fork execution `run_id` is still upstream of the join (or at it)."""
        upstream = self.graph.parent_forks[join_id].intermediate_nodes
        for task in tasks:
            if (task.node_id == join_id or task.node_id in upstream) and any(
                item.node_run_id == run_id for item in task.fork_stack
            ):
                return False
        return True

    def _next_release(self) -> JoinRelease | None:
        """The next join of the current pass whose branches are all in, taken out of the joins in progress."""
        progress = self.progress
        while progress.releasing:
            key = progress.releasing.pop(0)
            join_state = progress.joins.get(key)
            if join_state is None or self._waits_for_inner_join(key[0], join_state):
                continue
            if not self._fork_run_done(progress.tasks.values(), *key):
                # A join released earlier in this pass sent a value towards this one: it is still on its way.
                continue
            del progress.joins[key]
            return JoinRelease(self._continue_from_join(key[0], join_state))
        return None

    def _waits_for_inner_join(self, join_id: JoinID, join_state: JoinState) -> bool:
        """Whether a join between this one and its fork still reduces for the same execution of that fork."""
        fork_id = self.graph.parent_forks[join_id].fork_id
        run_id = _run_of(join_state.downstream_fork_stack, fork_id)
        inner = self.graph.intermediate_join_nodes.get(join_id, set())
        for (other_id, _), other_state in self.progress.joins.items():
            if (
                other_id in inner
                and run_id is not None
                and run_id == _run_of(other_state.downstream_fork_stack, fork_id)
            ):
                return True
        return False

    def _continue_from_join(self, join_id: JoinID, join_state: JoinState) -> list[GraphTask]:
        tasks = self._follow_single_edge(join_id, join_state.current, join_state.downstream_fork_stack)
        if self.sink is not None:
            self.sink.pending.append(JoinReleasedEvent(join_id, join_state.current, tasks))
        return tasks

    def _cancel_siblings(self, fork_id: ForkID, run_id: NodeRunID) -> None:
        for task in list(self.progress.tasks.values()):
            if any(item.fork_id == fork_id and item.node_run_id == run_id for item in task.fork_stack):
                self._finish(task.task_id)

    # -- tasks

    def _start(self, tasks: Sequence[GraphTask]) -> None:
        for task in tasks:
            self.progress.tasks[task.task_id] = task
        if all(self._is_inline(task) for task in tasks):
            # Routing nodes (the start, decisions, joins, forks over a list, the end) run no user coroutine: their
            # outcomes are recorded now, in order, instead of costing a task each.
            for task in tasks:
                self._run_inline(task)
            return
        if (
            len(tasks) == 1
            and self._deferred is None
            and self.sink is None
            and isinstance(self.graph.nodes.get(tasks[0].node_id), Step)
        ):
            # A lone step: started when the run waits for it, in the caller's task if no other task runs by then
            # (`_take_outcome`), or in a task of its own as soon as anything else starts or an event is handed out.
            self._deferred = tasks[0]
            return
        self._spawn_deferred()
        for task in tasks:
            self._spawn(task)

    def _spawn(self, task: GraphTask) -> None:
        scope = self._scopes[task.task_id] = CancelScope()
        self.task_group.start_soon(self._run_tracked_task, task, scope)

    def _spawn_deferred(self) -> None:
        deferred = self._deferred
        if deferred is not None:
            self._deferred = None
            self._spawn(deferred)

    def _is_inline(self, task: GraphTask) -> bool:
        node = self.graph.nodes.get(task.node_id)
        if node is None or isinstance(node, Step):
            return False
        return not isinstance(node, Fork) or not node.is_map or isinstance(task.inputs, Iterable)

    def _run_inline(self, task: GraphTask) -> None:
        sink = self.sink
        if sink is not None:
            sink.pending.append(TaskStartedEvent(task))
        try:
            result = self._run_routing(self.graph.nodes[task.node_id], task)
        except Exception as error:
            if sink is not None:
                sink.pending.append(TaskFailedEvent(task, error))
            self._record(TaskOutcome(task, [], error=error))
        else:
            assert not isinstance(result, _Streamed)  # maps over async iterables run in a task (`_is_inline`)
            if sink is not None:
                sink.pending.append(TaskFinishedEvent(task, result, 0.0))
            self._record(TaskOutcome(task, result))

    def _finish(self, task_id: TaskID) -> None:
        if self._deferred is not None and self._deferred.task_id == task_id:  # pragma: no cover - defensive
            self._deferred = None  # never started (an event hands it to a task first): nothing to cancel
        scope = self._scopes.pop(task_id, None)
        if scope is not None:
            scope.cancel()
        self.progress.tasks.pop(task_id, None)

    def cancel_all(self) -> None:
        """Cancel every task still running (the run ended, or its caller left it)."""
        for task_id in list(self.progress.tasks):
            self._finish(task_id)

    def close(self) -> None:
        """Cancel every task still running and close the doorbell (the run is left)."""
        self.cancel_all()
        if self._doorbell is not None:
            self._doorbell[0].close()
            self._doorbell[1].close()

    def _record(self, outcome: TaskOutcome) -> None:
        self.progress.outcomes.append(outcome)
        if self._doorbell is not None:  # else nobody waits: the outcome is taken before waiting for a bell
            # A closed doorbell means the run is being torn down: nobody takes the outcome in.
            with suppress(BrokenResourceError, ClosedResourceError):
                self._doorbell[0].send_nowait(None)

    async def _run_tracked_task(self, task: GraphTask, scope: CancelScope | None = None) -> None:
        if self.sink is not None:
            await self._run_streamed_task(task, scope, self.sink)
            return
        with scope or CancelScope():
            try:
                result = await self._run_task(task)
                if isinstance(result, _Streamed):
                    async for tasks in result.pieces:
                        self._record(TaskOutcome(task, tasks, task_finished=False))
                    result = []
            except Exception as error:
                self._record(TaskOutcome(task, [], error=error))
            else:
                self._record(TaskOutcome(task, result))
        if scope is not None and self._scopes.get(task.task_id) is scope:
            # Done: nothing is left to cancel (cancelling an exited scope still costs anyio a walk of its tasks).
            del self._scopes[task.task_id]

    async def _run_streamed_task(self, task: GraphTask, scope: CancelScope | None, sink: EventSink) -> None:
        """`_run_tracked_task`, adding the task's events to `sink` (kept apart, so that a run that is not streamed
        pays nothing for it).

        Tasks only add events: the loop that advances the run hands them over (`flush`), one producer for the
        sink. A reader that stops reading stops that loop, so no new task starts; what the tasks in flight add
        meanwhile is bounded by their number.
        """
        pending = sink.pending
        with scope or CancelScope():
            pending.append(TaskStartedEvent(task))
            if len(pending) > sink.flush_above:
                sink.wake()  # a reader waiting for news learns that the task started, not only when it ends
            start = perf_counter()
            try:
                result = await self._run_task(task)
                shown = result
                if isinstance(result, _Streamed):
                    # A map over an async iterable: its branches were handed out piece by piece; the event lists
                    # them all, once the iterable is exhausted.
                    shown = []
                    async for tasks in result.pieces:
                        shown += tasks
                        self._record(TaskOutcome(task, tasks, task_finished=False))
                    result = []
            except Exception as error:
                pending.append(TaskFailedEvent(task, error))
                self._record(TaskOutcome(task, [], error=error))
            else:
                assert not isinstance(shown, _Streamed)
                pending.append(TaskFinishedEvent(task, shown, perf_counter() - start))
                if sink.state_snapshots and isinstance(self.graph.nodes.get(task.node_id), Step):
                    pending.append(StateEvent(deep_copy(self.progress.state)))
                if len(pending) > sink.flush_above:
                    sink.wake()
                self._record(TaskOutcome(task, result))
        if scope is not None and self._scopes.get(task.task_id) is scope:
            del self._scopes[task.task_id]

    async def _run_task(
        self, task: GraphTask, *, in_caller: bool = False
    ) -> EndMarker[Any] | list[GraphTask] | JoinItem | _Streamed:
        """Run one task (`in_caller`: a step run in the caller's task, see `advance`)."""
        node = self.graph.nodes.get(task.node_id)
        if node is None:
            raise GraphRuntimeError(f'Task {task.task_id!r} names node {task.node_id!r}, which is not in this graph.')
        if isinstance(node, Step):
            return await self._run_step(task, node, in_caller=in_caller)
        return self._run_routing(node, task)

    async def _run_step(
        self, task: GraphTask, node: Step[Any, Any, Any, Any], *, in_caller: bool = False
    ) -> EndMarker[Any] | list[GraphTask] | JoinItem:
        """Run a step's function and follow its output; `in_caller`: in a copy of the caller's context."""
        if self.instrument:
            with _instrument.span(f'run node {node.id}', node_id=node.id, node=node):
                output: Any = await self._call(task, node, in_caller)
        else:
            output = await self._call(task, node, in_caller)
        if isinstance(node, NodeStep):
            after: EndMarker[Any] | list[GraphTask] | JoinItem = self._after_node(output, task.fork_stack)
            return after
        return self._follow_single_edge(node.id, output, task.fork_stack)

    def _call(self, task: GraphTask, node: Step[Any, Any, Any, Any], in_caller: bool) -> Awaitable[Any]:
        call = node.call(StepContext(state=self.progress.state, deps=self.deps, inputs=task.inputs))
        if not in_caller:
            return call
        # In the caller's task, the step runs in a copy of its context (made here, inside the step's span).
        return _InContext(call if isinstance(call, Coroutine) else _awaited(call), copy_context())

    def _run_routing(self, node: Any, task: GraphTask) -> EndMarker[Any] | list[GraphTask] | JoinItem | _Streamed:
        """The outcome of a task for a node that is not a step (no user coroutine runs)."""
        if isinstance(node, Fork):
            return self._fork(node, task)
        if isinstance(node, StartNode):
            return self._follow_single_edge(node.id, task.inputs, task.fork_stack)
        if isinstance(node, Join):
            return JoinItem(node.id, task.inputs, task.fork_stack)
        if isinstance(node, Decision):
            return self._decide(node, task.inputs, task.fork_stack)
        assert isinstance(node, EndNode), node
        return EndMarker(task.inputs)

    def _after_node(self, returned: BaseNode[Any, Any, Any] | End[Any], fork_stack: ForkStack) -> Any:
        if isinstance(returned, End):
            return EndMarker(returned.data)
        if isinstance(returned, StepNode):
            return [GraphTask(returned.step.id, returned.inputs, fork_stack, self.new_task_id())]
        if isinstance(returned, JoinNode):
            return JoinItem(returned.join.id, returned.inputs, fork_stack)
        if isinstance(returned, BaseNode):
            node_id = NodeID(returned.get_node_id())
            if not isinstance(self.graph.nodes.get(node_id), NodeStep):
                raise GraphRuntimeError(
                    f'A node returned `{type(returned).__name__}`, which is not in this graph: declare it in the '
                    'return hint of its `run` method, or add it with `GraphBuilder.node`.'
                )
            return [GraphTask(node_id, returned, fork_stack, self.new_task_id())]
        raise GraphRuntimeError(
            f'A `BaseNode.run` in a builder graph returned {returned!r}; it must return a node or `End`.'
        )

    # -- edges

    def _follow_single_edge(self, node_id: NodeID, value: Any, fork_stack: ForkStack) -> list[GraphTask]:
        paths = self.graph.edges_by_source.get(node_id, [])
        if not paths:
            raise GraphRuntimeError(
                f'Node {node_id!r} has no outgoing edge to send its output on: add an edge from it.'
            )
        return self._follow(paths[0], value, fork_stack)

    def _follow(self, path: Path, value: Any, fork_stack: ForkStack) -> list[GraphTask]:
        for item in path.items:
            if isinstance(item, TransformMarker):
                value = item.transform(StepContext(state=self.progress.state, deps=self.deps, inputs=value))
            elif isinstance(item, DestinationMarker):
                return [GraphTask(item.destination_id, value, fork_stack, self.new_task_id())]
            else:
                assert isinstance(item, LabelMarker), item
        return []

    def _fork(self, fork: Fork[Any, Any], task: GraphTask) -> list[GraphTask] | _Streamed:
        paths = self.graph.edges_by_source.get(fork.id, [])
        value, fork_stack = task.inputs, task.fork_stack
        # Named after the fork's task, so that a resumed run that runs the task again continues the same fork run.
        run_id = NodeRunID(f'{fork.id}@{task.task_id}')
        if not fork.is_map:
            tasks: list[GraphTask] = []
            for index, path in enumerate(paths):
                tasks += self._follow(path, value, (*fork_stack, ForkStackItem(fork.id, run_id, index)))
            return tasks
        if fork.downstream_join_id is not None:
            # The join fires with its initial value even if no item ever reaches it (an empty iterable).
            join = self._join(fork.downstream_join_id)
            fork_run_id, downstream = self._fork_run_of(join.id, (*fork_stack, ForkStackItem(fork.id, run_id, 0)))
            self.progress.joins.setdefault((join.id, fork_run_id), JoinState(join.initial_factory(), downstream))
        path = paths[0]
        if isinstance(value, Iterable):
            tasks = []
            for index, item in enumerate(value):
                tasks += self._follow(path, item, (*fork_stack, ForkStackItem(fork.id, run_id, index)))
            return tasks
        if isinstance(value, AsyncIterable):
            return _Streamed(self._stream_map(fork.id, run_id, path, value, fork_stack))
        raise GraphRuntimeError(
            f'Cannot map non-iterable value: {value!r} (sent to map {fork.id!r}); a `.map()` needs an iterable '
            'or an async iterable.'
        )

    async def _stream_map(
        self, fork_id: ForkID, run_id: NodeRunID, path: Path, values: AsyncIterable[Any], fork_stack: ForkStack
    ) -> AsyncIterator[list[GraphTask]]:
        index = 0
        async for item in values:
            yield self._follow(path, item, (*fork_stack, ForkStackItem(fork_id, run_id, index)))
            index += 1

    def _decide(self, decision: Decision[Any, Any, Any], value: Any, fork_stack: ForkStack) -> list[GraphTask]:
        for branch in decision.branches:
            if branch.matches is not None:
                matched = branch.matches(value)
            else:
                matched = _matches_type(unpack_type_expression(branch.source), value)
            if matched:
                return self._follow(branch.path, value, fork_stack)
        raise GraphRuntimeError(
            f'No branch matched inputs {value!r} for decision node {decision.id!r}: add a branch for it '
            '(`g.match(object)` takes anything).'
        )


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


class _InContext:
    """Awaits a coroutine with each of its steps run in `context` (as `Context.run` does for a plain call)."""

    __slots__ = ('_context', '_coroutine')

    def __init__(self, coroutine: Coroutine[Any, Any, Any], context: Context) -> None:
        self._coroutine = coroutine
        self._context = context

    def __await__(self) -> Generator[Any, Any, Any]:
        run, coroutine = self._context.run, self._coroutine
        sent: Any = None
        thrown: BaseException | None = None
        try:
            while True:
                try:
                    if thrown is None:
                        yielded = run(coroutine.send, sent)
                    else:
                        error, thrown = thrown, None
                        yielded = run(coroutine.throw, error)
                except StopIteration as stop:
                    return stop.value
                try:
                    sent = yield yielded
                except GeneratorExit:
                    raise
                except BaseException as error:  # a cancellation (or an error) thrown in by the event loop
                    sent, thrown = None, error
        finally:
            coroutine.close()  # a no-op once it returned or raised


def _matches_type(source: Any, value: Any) -> bool:
    if source is Any or source is object:
        return True
    if get_origin(source) is Literal:
        return value in get_args(source)
    try:
        return isinstance(value, source)
    except TypeError as error:
        raise GraphRuntimeError(
            f'Decision branch source {source!r} cannot be tested with `isinstance`; give the branch a '
            '`matches=` predicate.'
        ) from error


def _run_of(fork_stack: ForkStack, fork_id: ForkID) -> NodeRunID | None:
    return next((item.node_run_id for item in fork_stack if item.fork_id == fork_id), None)
