"""How a run is opened (`RunOpening`), and what it reaches through its node contexts: its event stream, and the
child runs it starts.

A child run (a subgraph run, a branch of a fan-out) is a run of its own, in a persistence of the same kind as
its parent's: with a durable store, under the run id `'<parent run id>/<name>'`. When the parent's step is run
again (after a crash, the parent resumes at that step), each child is picked up where it stopped: a finished
child's output is read back, an unfinished one is resumed, a child never started is started.
"""

from __future__ import annotations as _annotations

import inspect
import types
import weakref
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from time import perf_counter
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import anyio

from . import _instrument
from ._copy import copy_into, deep_copy
from .exceptions import BranchFailedError, GraphRuntimeError
from .nodes import BaseNode, End
from .persistence import BaseStatePersistence
from .persistence.in_mem import FullStatePersistence, SimpleStatePersistence

if TYPE_CHECKING:
    from .fork import Fork

__all__ = ('EventSink', 'RunLink', 'RunOpening', 'drive', 'child_persistence')

_RunT = TypeVar('_RunT')


class RunOpening(Generic[_RunT]):
    """What `Graph.iter` returns: the context manager that opens a new run (a `GraphRun`, made by `make_run`) when
    entered.

    A plain class rather than `@asynccontextmanager` (a generator and its wrapper per run). A run in memory with no
    span of its own, as every agent run without a persistence is, has nothing to claim, set up or trace: it is
    opened here at once; any other run is opened by the graph's `_iter`.
    """

    __slots__ = (
        '_deps',
        '_entered',
        '_graph',
        '_infer_name',
        '_make_run',
        '_max_steps',
        '_opened',
        '_persistence',
        '_span',
        '_start',
        '_state',
    )

    def __init__(
        self,
        make_run: Callable[..., _RunT],
        graph: Any,
        start_node: BaseNode[Any, Any, Any],
        state: Any,
        deps: Any,
        persistence: BaseStatePersistence[Any, Any] | None,
        span: AbstractContextManager[Any] | None,
        infer_name: bool,
        max_steps: int | None,
    ) -> None:
        self._make_run = make_run
        self._graph = graph
        self._start = start_node
        self._state = state
        self._deps = deps
        self._persistence = persistence
        self._span = span
        self._infer_name = infer_name
        self._max_steps = max_steps
        self._opened: AbstractAsyncContextManager[_RunT] | None = None
        self._entered = False

    async def __aenter__(self) -> _RunT:
        if self._entered:
            raise RuntimeError('This `iter(...)` was entered already: call `graph.iter(...)` again for another run.')
        self._entered = True
        graph = self._graph
        if self._infer_name and graph.name is None:
            graph._infer_name(inspect.currentframe())  # (the frame above it is the `async with`'s)
        graph._check_state(self._state)
        if self._persistence is None and self._span is None and not (graph.auto_instrument and _instrument.TRACING):
            # What `_iter` yields for a new `SimpleStatePersistence`, whose `set_graph_types` and `claim_run` do
            # nothing, in the span of an untraced graph, which does nothing either.
            return self._make_run(
                graph=graph,
                start_node=self._start,
                persistence=SimpleStatePersistence(),
                state=self._state,
                deps=self._deps,
                max_steps=self._max_steps,
            )
        opened: AbstractAsyncContextManager[_RunT] = graph._iter(
            self._start, self._state, self._deps, self._persistence, self._span, self._max_steps
        )
        self._opened = opened
        return await opened.__aenter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: types.TracebackType | None
    ) -> bool | None:
        opened = self._opened
        if opened is None:
            return None
        return await opened.__aexit__(exc_type, exc, tb)


# How long a consumer that has caught up with a busy run may leave new events waiting before it looks again.
LAZY_LOOK = 0.001


class EventSink:
    """Where a streamed run's events go, and where `GraphEventStream` takes them from: a bounded list of events.

    The run appends its events to `pending`; the consumer takes the whole list at once. At its flush points
    (before a node runs, when a node emits, at the end) the run waits while more than `capacity` events are
    pending: a consumer that stops reading pauses the run, and what waits stays bounded.

    Waking the consumer for every step would cost a task switch a step. So a consumer that has caught up asks
    to be woken at once only when the run had gone quiet (the last look found nothing new); while the run is
    busy, it is woken when the run waits for room, or it looks again after `LAZY_LOOK` seconds on its own.
    One producer (the run, and the runs nested in it; for a builder run, the loop that advances it, while its
    parallel tasks only add events) and one consumer, through two `anyio.Event`s.
    """

    __slots__ = (
        '_eager',
        '_lazy_reader',
        '_writer',
        'capacity',
        'closed',
        'eager_reader',
        'flush_above',
        'pending',
        'state_snapshots',
    )

    def __init__(self, capacity: int, *, state_snapshots: bool) -> None:
        self.capacity = capacity
        """How many events may be pending before the run waits."""
        self.pending: list[Any] = []
        """The events the consumer has not taken yet (one list for the whole run, emptied as they are taken): the
        `GraphEvent`s of a classic run, the `BuilderEvent`s of a builder run."""
        self.eager_reader: anyio.Event | None = None
        """Set when the consumer waits to be woken by the next flush."""
        self.flush_above = capacity
        """How many events may be pending before the run has something to flush: `capacity`, or 0 while the
        consumer waits to be woken by the next flush (one comparison a step tells the run both)."""
        self._lazy_reader: anyio.Event | None = None
        self._eager = True
        self._writer: anyio.Event | None = None
        self.closed = False
        """Whether the run has added its last event."""
        self.state_snapshots = state_snapshots
        """Whether each step also sends a `StateEvent` (a copy of the state)."""

    def wake(self) -> None:
        """Wake a consumer waiting for the next flush, without waiting for room (for a builder run's parallel
        tasks, which add events but leave the waiting to the loop that advances the run)."""
        reader = self.eager_reader
        if reader is not None:
            self.eager_reader = None
            self.flush_above = self.capacity
            reader.set()

    async def flush(self) -> None:
        """Hand the pending events over: wake a consumer waiting for them, wait while too many are pending."""
        self.wake()
        while len(self.pending) > self.capacity:
            self._wake_lazy_reader()
            writer = self._writer = anyio.Event()
            await writer.wait()

    async def put(self, event: Any) -> None:
        """Add `event` and flush."""
        self.pending.append(event)
        await self.flush()

    def close(self) -> None:
        """The run has ended: the consumer gets what is pending, then the end of the stream."""
        self.closed = True
        reader = self.eager_reader
        if reader is not None:
            self.eager_reader = None
            self.flush_above = self.capacity
            reader.set()
        self._wake_lazy_reader()

    def _wake_lazy_reader(self) -> None:
        reader = self._lazy_reader
        if reader is not None:
            self._lazy_reader = None
            reader.set()

    def take_nowait(self) -> list[Any] | None:
        """The pending events, if any."""
        pending = self.pending
        if not pending:
            return None
        events = pending.copy()  # a copy, so that the run may hold on to `pending` across its awaits
        pending.clear()
        writer = self._writer
        if writer is not None:
            self._writer = None
            writer.set()
        return events

    async def take(self) -> list[Any] | None:
        """The pending events, waiting for the run if there are none; `None` once the run has ended."""
        while (events := self.take_nowait()) is None:
            if self.closed:
                return None
            if self._eager:
                reader = self.eager_reader = anyio.Event()
                self.flush_above = 0
                await reader.wait()
                # Woken at a flush point: the run lets other tasks run between its steps, and would wake this
                # consumer at every step; look lazily while it goes on. Unless it has filled the queue since
                # (it does not let other tasks run between steps): then it wakes the consumer when full anyway.
                self._eager = self._writer is not None
            else:
                reader = self._lazy_reader = anyio.Event()
                with anyio.move_on_after(LAZY_LOOK):  # a timer: costly, but once in many steps
                    await reader.wait()
                self._lazy_reader = None
                # Eager again when the run has filled the queue, or has gone quiet (nothing new).
                self._eager = self._writer is not None or (not self.pending and not self.closed)
        return events


class _Run(Protocol):
    """The parts of a `GraphRun` that `drive` uses (`graph` sits above this module)."""

    _next_node: Any
    state: Any
    _link: RunLink

    @property
    def next_node(self) -> Any: ...

    def _step(self, node: Any) -> Any: ...


async def drive(run: _Run, sink: EventSink | None) -> End[Any]:
    """Run `run` to its end, sending its events to `sink` (with the run's path) when there is one."""
    node = run.next_node
    if sink is None:
        step = run._step
        while not isinstance(node, End):
            node = run._next_node = await step(node)
        return node
    from .events import NodeFailedEvent, NodeFinishedEvent, NodeStartedEvent, StateEvent  # (streamed runs only)

    path = run._link.path
    snapshots = sink.state_snapshots
    pending = sink.pending  # the same list for the whole run: the consumer empties it, it does not replace it
    step = run._step
    # The two events of a step are made without their dataclass `__init__`: its Python frame costs more than
    # the event's slots, and this runs twice a step (the events are the same as the constructors make).
    new = object.__new__
    now = perf_counter()
    while not isinstance(node, End):
        started = new(NodeStartedEvent)
        started.node = node
        started.path = path
        pending.append(started)
        if len(pending) > sink.flush_above:  # whether `flush` has anything to do, inline: this runs every step
            await sink.flush()
            now = perf_counter()
        start = now  # the end of the previous step, when nothing was waited for since
        try:
            next_node = run._next_node = await step(node)
        except Exception as e:
            await sink.put(NodeFailedEvent(node, e, path))
            raise
        now = perf_counter()
        finished = new(NodeFinishedEvent)
        finished.node = node
        finished.next_node = next_node
        finished.duration = now - start
        finished.path = path
        pending.append(finished)
        if snapshots:
            pending.append(StateEvent(deep_copy(run.state), path))
        node = next_node
    await sink.flush()  # once a run: a nested run's last events go out before its parent's step goes on
    return node


def child_persistence(parent: BaseStatePersistence[Any, Any], name: str) -> BaseStatePersistence[Any, Any]:
    """A persistence of the same kind as `parent` for its child run `name`."""
    child = getattr(parent, 'child', None)  # the durable stores
    if child is not None:
        persistence: BaseStatePersistence[Any, Any] = child(name)
        return persistence
    if isinstance(parent, FullStatePersistence):
        return FullStatePersistence(deep_copy=parent.deep_copy)
    return SimpleStatePersistence()


class _BranchTypes:
    """The types of a branch run: the graph's nodes and state type, and any output (the branch's result)."""

    def __init__(self, graph: Any) -> None:
        self._graph = graph
        self.name: str | None = graph.name
        self.inferred_types: tuple[Any, Any] = (graph.inferred_types[0], Any)

    def get_nodes(self) -> Any:
        return self._graph.get_nodes()


class _ChildFailed(Exception):
    """A child run raised: which node, and in which run (the original error is the cause)."""

    def __init__(self, node_id: str, run_id: str | None, error: BaseException) -> None:
        self.node_id = node_id
        self.run_id = run_id
        self.error = error
        super().__init__(node_id)


class RunLink:
    """What a run's node contexts reach the run through: `ctx.emit`, `ctx.run_subgraph` and `Fork` steps."""

    __slots__ = ('_names', '_run', 'graph', 'path', 'persistence', 'sink')

    def __init__(self, graph: Any, persistence: BaseStatePersistence[Any, Any], run: Any) -> None:
        # A weak reference: the run holds its link (and its contexts do), so a strong one would make every run a
        # reference cycle, freed only by the cyclic garbage collector rather than as the run is dropped.
        self._run = weakref.ref(run)
        self.graph = graph
        """The graph of the run."""
        self.persistence = persistence
        """The run's persistence; child runs get persistences of the same kind."""
        self.path: tuple[str, ...] = ()
        """The names leading from the streamed run to this one (`()` for the streamed run itself)."""
        self.sink: EventSink | None = None
        """Where the run's events go, when it is streamed."""
        self._names: set[str] = set()

    async def emit(self, data: Any) -> None:
        if self.sink is not None:
            # The node of the step in progress: the run's next node until the step returns.
            run = self._run()
            assert run is not None  # a run's contexts emit while it runs, and it is alive then
            node = run.next_node
            node_id = node.get_node_id() if isinstance(node, BaseNode) else None
            from .events import CustomEvent  # (loaded by the first streamed run, not with the graph)

            await self.sink.put(CustomEvent(data, node_id, self.path))

    async def run_subgraph(
        self, graph: Any, start_node: BaseNode[Any, Any, Any], name: str, state: Any, deps: Any
    ) -> Any:
        if name in self._names:
            raise GraphRuntimeError(
                f'Subgraph run name {name!r} was used twice in this run; each child run needs its own name '
                '(add a counter to the name of a subgraph run inside a loop).'
            )
        self._names.add(name)
        persistence = child_persistence(self.persistence, name)
        try:
            end, end_state = await self._run_child(graph, persistence, start_node, state, deps, (*self.path, name))
        except _ChildFailed as failed:
            raise failed.error from None
        # A child run picked up from the store (after a crash) ran on the state it loaded: its changes belong to
        # the state it was given, a part of this run's state, as they would have without the crash.
        copy_into(state, end_state)
        return end.data

    async def _run_child(
        self,
        graph: Any,
        persistence: BaseStatePersistence[Any, Any],
        start_node: BaseNode[Any, Any, Any],
        state: Any,
        deps: Any,
        path: tuple[str, ...],
    ) -> tuple[End[Any], Any]:
        aclose = getattr(persistence, 'aclose', None)  # the durable stores hold a connection
        try:
            return await self._resume_or_start(graph, persistence, start_node, state, deps, path)
        finally:
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()

    async def _resume_or_start(
        self,
        graph: Any,
        persistence: BaseStatePersistence[Any, Any],
        start_node: BaseNode[Any, Any, Any],
        state: Any,
        deps: Any,
        path: tuple[str, ...],
    ) -> tuple[End[Any], Any]:
        run_id: str | None = getattr(persistence, 'run_id', None)
        if run_id is not None:  # a durable store: the child may have run before the parent's step was interrupted
            info = await persistence.info()  # type: ignore[attr-defined]
            if info is not None and info.snapshot_count:
                persistence.set_graph_types(graph)
                if info.status == 'finished':
                    last = (await persistence.load_all())[-1]
                    return last.node, last.state  # type: ignore[return-value]
                if info.status == 'failed':
                    error = GraphRuntimeError(f'Child run {run_id!r} failed in an earlier attempt; see its snapshots.')
                    raise _ChildFailed(start_node.get_node_id(), run_id, error)
                async with graph.iter_from_persistence(persistence, deps=deps, infer_name=False) as run:
                    return await self._drive_child(run, path, run_id)
        if run_id is None and (run := graph._child_run(start_node, state, deps, persistence)) is not None:
            return await self._drive_child(run, path, run_id)
        async with graph.iter(start_node, state=state, deps=deps, persistence=persistence, infer_name=False) as run:
            return await self._drive_child(run, path, run_id)

    async def _drive_child(self, run: Any, path: tuple[str, ...], run_id: str | None) -> tuple[End[Any], Any]:
        link: RunLink = run._link
        link.path = path
        link.sink = self.sink
        try:
            end = await drive(run, self.sink)
        except Exception as e:
            node = run.next_node
            raise _ChildFailed(node.get_node_id(), run_id, e) from e
        return end, run.state

    async def fan_out(self, fork: Fork[Any, Any], state: Any, deps: Any) -> BaseNode[Any, Any, Any]:
        from .fork import BranchFailure  # (loaded with the first graph that fans out, not with the package)

        graph = self.graph
        fork_id = fork.get_snapshot_id()
        branches = fork.branches
        results: list[Any] = [None] * len(branches)
        branch_states: list[Any] = [None] * len(branches)
        failed: list[tuple[int, _ChildFailed]] = []
        limiter = anyio.CapacityLimiter(fork.max_concurrency) if fork.max_concurrency is not None else None
        collect = fork.on_error == 'collect'

        async def run_branch(index: int, node: BaseNode[Any, Any, Any], cancel: anyio.CancelScope) -> None:
            name = f'{fork_id}/{index}'
            persistence = child_persistence(self.persistence, name)
            if persistence.should_set_types():
                # A stored branch ends with its result, whose type is not the run's output type.
                persistence.set_graph_types(_BranchTypes(graph))
            try:
                if limiter is None:
                    end, branch_states[index] = await self._run_child(
                        graph, persistence, node, deep_copy(state), deps, (*self.path, fork_id, str(index))
                    )
                else:
                    async with limiter:
                        end, branch_states[index] = await self._run_child(
                            graph, persistence, node, deep_copy(state), deps, (*self.path, fork_id, str(index))
                        )
            except _ChildFailed as failure:
                if collect:
                    error = failure.error
                    results[index] = BranchFailure(
                        branch=index, node_id=failure.node_id, error=f'{type(error).__name__}: {error}'
                    )
                else:
                    failed.append((index, failure))
                    cancel.cancel()
                return
            results[index] = end.data

        async with anyio.create_task_group() as tg:
            for index, node in enumerate(branches):
                tg.start_soon(run_branch, index, node, tg.cancel_scope)
        if failed:
            index, failure = failed[0]
            where = f' (child run {failure.run_id!r})' if failure.run_id is not None else ''
            raise BranchFailedError(
                f'Branch {index} of the fan-out {fork_id!r} failed in node `{failure.node_id}`{where}: '
                f'{type(failure.error).__name__}: {failure.error}. The other branches were cancelled; to let them '
                "finish and hand the join the failures instead, return `Fork(..., on_error='collect')`.",
                branch=index,
                node_id=failure.node_id,
                run_id=failure.run_id,
            ) from failure.error
        succeeded = [
            (i, s)
            for i, (r, s) in enumerate(zip(results, branch_states, strict=True))
            if not isinstance(r, BranchFailure)
        ]
        self._merge_states(fork_id, state, succeeded)
        join_node: BaseNode[Any, Any, Any] = graph.node_defs[fork.join].node(results=results)
        return join_node

    def _merge_states(self, fork_id: str, state: Any, branch_states: list[tuple[int, Any]]) -> None:
        """Merge the branches' states into the run's, in branch order, through the graph's reducer."""
        reducer = self.graph.state_reducer
        if reducer is not None:
            for _, branch_state in branch_states:
                reducer(state, branch_state)
            return
        for index, branch_state in branch_states:
            if branch_state != state:
                raise GraphRuntimeError(
                    f'Branch {index} of the fan-out {fork_id!r} changed its copy of the state, and the graph has no '
                    '`state_reducer` to merge it into the run state: the change would be lost. Give the graph one, '
                    '`Graph(..., state_reducer=merge)` with `merge(state, branch_state)` updating `state` in place.'
                )
