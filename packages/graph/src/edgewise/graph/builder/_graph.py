"""A built builder graph (`Graph`) and one run of it (`GraphRun`)."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Generic, Literal

import anyio
from anyio.abc import TaskGroup
from typing_extensions import TypeVar, Unpack

from .. import _instrument, mermaid
from .._runs import EventSink
from ..exceptions import GraphRuntimeError, GraphSetupError, PersistenceError, UnsupportedEventLoopError
from ..persistence import BaseStatePersistence, Snapshot
from ..persistence.raw import RawSnapshot
from ._compile import CompiledGraph
from ._engine import RunEngine
from ._mermaid import StateDiagramDirection, build_mermaid_graph
from ._progress import EndMarker, ErrorMarker, GraphTask, GraphTaskRequest, JoinRelease, RunProgress, TaskOutcome
from ._run_path import diagram_code
from ._stored import BuilderProgress, StoredTypes, decode_progress, encode_progress
from ._stream import BuilderEventStream, stream_builder_events
from .basenode import BaseNode, End
from .id_types import ForkStackItem, JoinID, NodeID, TaskID
from .node import StartNode
from .parent_forks import ParentFork

__all__ = ('Graph', 'GraphRun')

StateT = TypeVar('StateT')
DepsT = TypeVar('DepsT')
InputT = TypeVar('InputT')
OutputT = TypeVar('OutputT')


def _name_in_frame(obj: object, frame: FrameType | None) -> str | None:
    """The name `obj` is bound to in `frame`'s locals, or else its globals."""
    if frame is None:  # pragma: no cover - only without frame support
        return None
    for namespace in (frame.f_locals, frame.f_globals):
        for name, value in namespace.items():
            if value is obj:
                return name
    return None


def _caller_frame(depth: int) -> FrameType | None:
    frame = inspect.currentframe()
    for _ in range(depth + 1):
        if frame is None:  # pragma: no cover - only without frame support
            return None
        frame = frame.f_back
    return frame


@dataclass(repr=False)
class Graph(Generic[StateT, DepsT, InputT, OutputT]):
    """A builder graph, ready to run; made by `GraphBuilder.build()`."""

    name: str | None
    """The graph's name (in span names); found from the variable it is assigned to on first run when not given."""
    state_type: type[StateT]
    """The type of the run's state."""
    deps_type: type[DepsT]
    """The type of the run's dependencies."""
    input_type: type[InputT]
    """The type of the run's input."""
    output_type: type[OutputT]
    """The type of the run's output."""
    auto_instrument: bool
    """Whether runs make logfire spans (`run graph <name>`, `run node <id>`)."""
    nodes: dict[NodeID, Any]
    """The nodes, by id."""
    edges_by_source: dict[NodeID, list[Any]]
    """The paths leaving each node (one destination each, after `build`)."""
    parent_forks: dict[JoinID, ParentFork[NodeID]]
    """Each join's parent fork."""
    intermediate_join_nodes: dict[JoinID, set[JoinID]]
    """For each join, the other joins between it and its parent fork."""

    def get_parent_fork(self, join_id: JoinID) -> ParentFork[NodeID]:
        """The parent fork of join `join_id`.

        Raises:
            GraphRuntimeError: `join_id` is not a join of this graph.
        """
        parent = self.parent_forks.get(join_id)
        if parent is None:
            raise GraphRuntimeError(f'Node {join_id!r} is not a join node of this graph, so it has no parent fork.')
        return parent

    def is_final_join(self, join_id: JoinID) -> bool:
        """Whether no other join has `join_id` between itself and its parent fork."""
        return not any(join_id in joins for joins in self.intermediate_join_nodes.values())

    @property
    def inferred_types(self) -> tuple[type[StateT], type[OutputT]]:
        """The state type and the output type, as a classic `Graph` gives them to `persistence.set_graph_types`."""
        return self.state_type, self.output_type

    def get_nodes(self) -> Sequence[type[BaseNode[Any, Any, Any]]]:
        """The node classes a stored builder run's snapshots hold, for `persistence.set_graph_types(graph)`.

        A builder run stores its progress as `BuilderProgress` snapshots, so that is the one class.
        """
        return [BuilderProgress]

    def _infer_name(self, frame: FrameType | None) -> None:
        self.name = _name_in_frame(self, frame)

    async def run(
        self,
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        inputs: InputT = None,  # type: ignore[assignment]
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
        persistence: BaseStatePersistence[Any, Any] | None = None,
    ) -> OutputT:
        """Run the graph to its end and return its output.

        Args:
            state: The run's state, shared by its steps.
            deps: The run's dependencies.
            inputs: The value the start node sends on.
            span: A span to run in, instead of the `run graph <name>` span made otherwise.
            infer_name: Whether to name the graph after the variable it is assigned to, when it has no name.
            persistence: Where to store the run's progress after every step (any Edgewise persistence), so that
                `iter_from_persistence` can resume it after a crash.
        """
        if infer_name and self.name is None:  # looking for the name materializes frame objects: once
            self._infer_name(_caller_frame(1))
        if persistence is None:
            # What `iter` does without persistence, without its context manager: less to hold per run in flight.
            with self._span(span):
                async with GraphRun(self, state=state, deps=deps, inputs=inputs, traceparent=None) as graph_run:
                    return await _output(graph_run)
        async with self.iter(
            state=state, deps=deps, inputs=inputs, span=span, infer_name=False, persistence=persistence
        ) as graph_run:
            return await _output(graph_run)

    def run_sync(
        self,
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        inputs: InputT = None,  # type: ignore[assignment]
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
    ) -> OutputT:
        """`run`, from synchronous code (it runs an event loop of its own).

        Raises:
            UnsupportedEventLoopError: called from async code, where an event loop already runs.
        """
        if infer_name and self.name is None:  # looking for the name materializes frame objects: once
            self._infer_name(_caller_frame(1))
        library = _running_async_library()
        if library is None:
            return anyio.run(partial(self.run, state=state, deps=deps, inputs=inputs, span=span, infer_name=False))
        raise UnsupportedEventLoopError(
            f'`Graph.run_sync` cannot run inside a running {library} event loop: use `await graph.run(...)` there.'
        )

    @asynccontextmanager
    async def iter(
        self,
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        inputs: InputT = None,  # type: ignore[assignment]
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
        persistence: BaseStatePersistence[Any, Any] | None = None,
    ) -> AsyncIterator[GraphRun[StateT, DepsT, OutputT]]:
        """Run the graph step by step: the `GraphRun` yields each event (tasks to run next, then an `EndMarker`).

        Args:
            state: The run's state, shared by its steps.
            deps: The run's dependencies.
            inputs: The value the start node sends on.
            span: A span to run in, instead of the `run graph <name>` span made otherwise.
            infer_name: Whether to name the graph after the variable it is assigned to, when it has no name.
            persistence: Where to store the run's progress after every step (see `run`).
        """
        if infer_name and self.name is None:  # looking for the name materializes frame objects: once
            self._infer_name(_caller_frame(2))  # `asynccontextmanager` adds a frame
        async with self._open(state, deps, inputs, span, persistence, None) as graph_run:
            yield graph_run

    @asynccontextmanager
    async def _open(
        self,
        state: Any,
        deps: Any,
        inputs: Any,
        span: AbstractContextManager[Any] | None,
        persistence: BaseStatePersistence[Any, Any] | None,
        sink: EventSink | None,
    ) -> AsyncIterator[GraphRun[StateT, DepsT, OutputT]]:
        """A new run, as `iter` opens it; its events go to `sink` when it is given (`stream`)."""
        with self._span(span):
            if persistence is None:
                async with GraphRun(self, state=state, deps=deps, inputs=inputs, sink=sink) as graph_run:
                    yield graph_run
                return
            persistence.set_graph_types(StoredTypes(self.name, self.state_type, self.output_type))
            async with persistence.claim_run():
                # Durable stores refuse a run id that is stored already.
                ensure_new_run = getattr(persistence, 'ensure_new_run', None)
                if ensure_new_run is not None:
                    await ensure_new_run()
                graph_run = GraphRun(self, state=state, deps=deps, inputs=inputs, persistence=persistence, sink=sink)
                await graph_run._store_start()
                async with graph_run:
                    yield graph_run

    @asynccontextmanager
    async def iter_from_persistence(
        self,
        persistence: BaseStatePersistence[Any, Any],
        *,
        deps: DepsT = None,  # type: ignore[assignment]
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
    ) -> AsyncIterator[GraphRun[StateT, DepsT, OutputT]]:
        """Resume a run stored by `run(persistence=...)` / `iter(persistence=...)`, in this process.

        Tasks that had not finished run again; stored outcomes and reduced join values are kept. The state is
        the stored one.

        Raises:
            GraphRuntimeError: the persistence holds no builder run waiting to go on (it ended, or never began).
            PersistenceError: the stored run does not fit this graph (a node renamed or removed, a stored input
                that no longer validates); nothing stored is changed.
            RunInProgressError: another live process is advancing the run (durable stores).
        """
        if infer_name and self.name is None:  # looking for the name materializes frame objects: once
            self._infer_name(_caller_frame(2))
        async with self._resume(persistence, deps, span, None) as graph_run:
            yield graph_run

    @asynccontextmanager
    async def _resume(
        self,
        persistence: BaseStatePersistence[Any, Any],
        deps: Any,
        span: AbstractContextManager[Any] | None,
        sink: EventSink | None,
    ) -> AsyncIterator[GraphRun[StateT, DepsT, OutputT]]:
        """A stored run, as `iter_from_persistence` resumes it; its events go to `sink` when it is given."""
        persistence.set_graph_types(StoredTypes(self.name, self.state_type, self.output_type))
        with self._span(span):
            async with persistence.claim_run():
                snapshot = await persistence.load_next()
                if snapshot is None:
                    run_id = getattr(persistence, 'run_id', None)
                    raise GraphRuntimeError(
                        f'{type(persistence).__name__} holds no builder run waiting to go on'
                        f'{"" if run_id is None else f" for run {run_id!r}"} (it has ended, or was never started).'
                    )
                if not isinstance(snapshot.node, BuilderProgress):
                    raise PersistenceError(
                        f'The stored run is not a builder run (its next node is {snapshot.node.get_node_id()!r}): '
                        'resume it with the classic `Graph` it belongs to.'
                    )
                progress = decode_progress(snapshot.node.progress, snapshot.state, self.nodes)
                graph_run = GraphRun(
                    self,
                    state=snapshot.state,
                    deps=deps,
                    inputs=None,
                    persistence=persistence,
                    progress=progress,
                    snapshot_id=snapshot.id,
                    sink=sink,
                )
                async with graph_run:
                    yield graph_run

    def stream(
        self,
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        inputs: InputT = None,  # type: ignore[assignment]
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
        persistence: BaseStatePersistence[Any, Any] | None = None,
        buffer_size: int = 256,
        state_snapshots: bool = False,
    ) -> AbstractAsyncContextManager[BuilderEventStream[StateT, OutputT]]:
        """Run the graph and stream what it does: `async with graph.stream(inputs=...) as events: async for ...`.

        The events (`edgewise.graph.builder.events`) are, for each task, `TaskStartedEvent`, then
        `TaskFinishedEvent` (what it led to: the next tasks, a value for a join, the end) or `TaskFailedEvent`
        (the stream then raises the task's error); `JoinReleasedEvent` when a join's branches are all in; with
        `state_snapshots=True`, a `StateEvent` (a copy of the state) after each step; and `RunEndEvent` last.

        The run goes on in a task of its own, at most `buffer_size` events ahead of the consumer (a consumer that
        stops reading pauses it). Leaving the `async with` block before the end cancels the run; with a durable
        persistence, it can be resumed (`stream_from_persistence` or `iter_from_persistence`).

        Takes the arguments of `run`, `buffer_size` (how many events may wait for the consumer) and
        `state_snapshots` (whether to send a `StateEvent` after each step: a deep copy of the state each step).
        """
        if infer_name and self.name is None:  # looking for the name materializes frame objects: once
            self._infer_name(_caller_frame(1))
        return stream_builder_events(
            partial(self._open, state, deps, inputs, span, persistence),
            buffer_size=buffer_size,
            state_snapshots=state_snapshots,
        )

    def stream_from_persistence(
        self,
        persistence: BaseStatePersistence[Any, Any],
        *,
        deps: DepsT = None,  # type: ignore[assignment]
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
        buffer_size: int = 256,
        state_snapshots: bool = False,
    ) -> AbstractAsyncContextManager[BuilderEventStream[StateT, OutputT]]:
        """Resume a stored run, as `iter_from_persistence` does, and stream it as `stream` does."""
        if infer_name and self.name is None:  # looking for the name materializes frame objects: once
            self._infer_name(_caller_frame(1))
        return stream_builder_events(
            partial(self._resume, persistence, deps, span), buffer_size=buffer_size, state_snapshots=state_snapshots
        )

    def _span(self, span: AbstractContextManager[Any] | None) -> AbstractContextManager[Any]:
        if span is not None:
            return span
        if self.auto_instrument and _instrument.TRACING:
            return _instrument.span(f'run graph {self.name}', graph=self)
        return nullcontext()

    def render(self, *, title: str | None = None, direction: StateDiagramDirection | None = None) -> str:
        """The graph as a mermaid `stateDiagram-v2`.

        Args:
            title: A title shown above the diagram.
            direction: The diagram's direction (`'TB'`, `'LR'`, `'RL'` or `'BT'`).
        """
        return build_mermaid_graph(self.nodes, self.edges_by_source).render(title=title, direction=direction)

    def mermaid_code(
        self,
        *,
        title: str | Literal[False] | None = None,
        edge_labels: bool = True,
        notes: bool = True,
        highlighted_nodes: Sequence[Any] | Any = None,
        highlight_css: str = mermaid.DEFAULT_HIGHLIGHT_CSS,
        infer_name: bool = True,
        direction: StateDiagramDirection | None = None,
        history: Sequence[Snapshot[Any, Any]] | Sequence[RawSnapshot] | None = None,
    ) -> str:
        """The graph's mermaid code (the text of `render()`), optionally with a stored run's path drawn on it.

        Args:
            title: The diagram's title; the graph's name when `None`, no title when `False`.
            edge_labels: Show edge labels.
            notes: Show the notes of decisions.
            highlighted_nodes: Nodes to highlight: ids, or the graph's steps, joins and decisions.
            highlight_css: The CSS of highlighted nodes (and of the nodes the run finished).
            infer_name: Infer the graph's name from the caller's variables when it has none.
            direction: The direction the diagram flows in.
            history: A stored run's snapshots (`await persistence.load_all()` or `load_raw()`): the nodes it
                finished are highlighted, those with a task in flight get the `stopped` class, the one whose task
                raised the `failed` class, and the edge leaving each `.map()` says how many items are done.

        Raises:
            DiagramNodeError: a highlighted node, or a node of the history, is not in the graph.
            PersistenceError: `history` is not the history of a builder run.
        """
        if infer_name and self.name is None:
            self._infer_name(_caller_frame(1))
        if title is None and self.name:
            title = self.name
        return diagram_code(
            self,
            title=title or None,
            direction=direction,
            edge_labels=edge_labels,
            notes=notes,
            highlighted_nodes=highlighted_nodes,
            highlight_css=highlight_css,
            history=history,
        )

    def mermaid_image(self, infer_name: bool = True, **kwargs: Unpack[mermaid.MermaidConfig]) -> bytes:
        """An image of the graph's diagram, titled with the graph's name unless `title` is given.

        Rendered by a mermaid.ink-compatible service (the default), or offline by the mermaid CLI with
        `renderer='local'`, as for classic graphs (see `edgewise.graph.mermaid.MermaidConfig`; `history` draws a
        stored run's path as `mermaid_code` does; `start_node` and `child_histories` are for classic graphs).
        """
        if infer_name and self.name is None:
            self._infer_name(_caller_frame(1))
        if 'title' not in kwargs and self.name:
            kwargs['title'] = self.name
        return mermaid.request_image(self, **kwargs)

    def mermaid_save(
        self, path: Path | str, /, *, infer_name: bool = True, **kwargs: Unpack[mermaid.MermaidConfig]
    ) -> None:
        """Render an image of the graph's diagram (see `mermaid_image`) and write it to `path`, whose suffix picks
        the format unless `image_type` is given."""
        if infer_name and self.name is None:
            self._infer_name(_caller_frame(1))
        if 'title' not in kwargs and self.name:
            kwargs['title'] = self.name
        mermaid.save_image(path, self, **kwargs)

    def _diagram_code(self, config: mermaid.MermaidConfig, /) -> str:
        """The code `edgewise.graph.mermaid` renders for `config` (its `request_image` and `save_image`)."""
        for option in ('start_node', 'child_histories'):
            if config.get(option) is not None:
                raise GraphSetupError(
                    f'`{option}` applies to classic graphs; a builder graph starts at its start node and draws a '
                    'stored run with `history` alone.'
                )
        return diagram_code(
            self,
            title=config.get('title'),
            direction=config.get('direction'),
            edge_labels=config.get('edge_labels', True),
            notes=config.get('notes', True),
            highlighted_nodes=config.get('highlighted_nodes'),
            highlight_css=config.get('highlight_css', mermaid.DEFAULT_HIGHLIGHT_CSS),
            history=config.get('history'),
            stopped_css=config.get('stopped_css', mermaid.DEFAULT_STOPPED_CSS),
            failed_css=config.get('failed_css', mermaid.DEFAULT_FAILED_CSS),
        )

    def _compiled(self) -> CompiledGraph:
        compiled: CompiledGraph | None = self.__dict__.get('_compiled_graph')
        if (
            compiled is None
            or compiled.nodes is not self.nodes
            or compiled.edges_by_source is not self.edges_by_source
            or compiled.parent_forks is not self.parent_forks
            or compiled.intermediate_join_nodes is not self.intermediate_join_nodes
        ):
            # Made once and shared by the graph's runs (again if a field was replaced since).
            compiled = CompiledGraph(self.nodes, self.edges_by_source, self.parent_forks, self.intermediate_join_nodes)
            self.__dict__['_compiled_graph'] = compiled
        return compiled

    def __repr__(self) -> str:
        plain = object.__repr__(self)
        return f'{plain[:-1]}\n{self.render()}\n{plain[-1]}'

    def __str__(self) -> str:
        return self.render()


class GraphRun(Generic[StateT, DepsT, OutputT]):
    """One run of a builder graph, stepped through by iterating it (or with `next`); made by `Graph.iter`."""

    def __init__(
        self,
        graph: Graph[StateT, DepsT, Any, OutputT],
        *,
        state: StateT,
        deps: DepsT,
        inputs: Any,
        traceparent: str | None = None,
        persistence: BaseStatePersistence[Any, Any] | None = None,
        progress: RunProgress | None = None,
        snapshot_id: str | None = None,
        sink: EventSink | None = None,
    ) -> None:
        self.graph = graph
        """The graph."""
        self.state = state
        """The run's state."""
        self.deps = deps
        """The run's dependencies."""
        self.inputs = inputs
        """The run's input."""
        self.traceparent = traceparent
        """The trace context the run was started in, if known."""
        self.persistence = persistence
        """Where the run's progress is stored after every step, if anywhere."""
        self._snapshot_id = snapshot_id
        self._ended = False
        self._resumed = progress is not None
        self._next: EndMarker[OutputT] | ErrorMarker | Sequence[GraphTask] | None = None
        # The event the step in progress answers and its reply, for a join's step that replaces the stored snapshot.
        self._answered: tuple[Any, Any] = (None, None)
        if progress is None:
            progress = RunProgress(state=state)
            start_run = ForkStackItem(StartNode.id, progress.new_node_run_id(), 0)
            self._first_task = GraphTask(StartNode.id, inputs, (start_run,), progress.new_task_id())
            progress.tasks[self._first_task.task_id] = self._first_task
        else:
            self._first_task = GraphTask(StartNode.id, inputs, (), TaskID('task:0'))
            self._next = _default_reply(progress)
        self.progress = progress
        """Where the run stands (its tasks, joins and pending outcomes)."""
        self._sink = sink
        self._engine: RunEngine[OutputT] | None = None
        self._task_group: TaskGroup | None = None

    async def __aenter__(self) -> GraphRun[StateT, DepsT, OutputT]:
        # A task group held directly (not in an exit stack): a run in flight is a few objects less.
        task_group = self._task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._engine = RunEngine(
            self.graph._compiled(),
            self.progress,
            self.deps,
            task_group,
            instrument=self.graph.auto_instrument,
            sink=self._sink,
        )
        if self.persistence is not None:
            self._engine.after_join_step = self._store_join_step
        if self._resumed:
            self._engine.resume()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        if self._engine is not None:  # pragma: no branch - set by `__aenter__`
            self._engine.close()
        try:
            assert self._task_group is not None
            return await self._task_group.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            raise _first_leaf(group) from None

    def _require_engine(self) -> RunEngine[OutputT]:
        if self._engine is None:
            raise GraphRuntimeError('This `GraphRun` was not entered: use it as `async with graph.iter(...) as run:`.')
        return self._engine

    def __aiter__(self) -> AsyncIterator[EndMarker[OutputT] | Sequence[GraphTask]]:
        return self

    async def __anext__(self) -> EndMarker[OutputT] | Sequence[GraphTask]:
        """The next event: the tasks a finished task leads to, or the `EndMarker`.

        Raises:
            StopAsyncIteration: the run has ended.
            Exception: what a step raised, unless `override_next` recovers from it before the next call.
        """
        engine = self._require_engine()
        if self.persistence is None:
            event = await engine.advance(self._first_task, self._next)
        else:
            event = await self._stored_advance(engine)
        self._next = event
        if isinstance(event, ErrorMarker):
            raise event.error
        return event

    async def _store_start(self) -> None:
        assert self.persistence is not None
        node = BuilderProgress(encode_progress(self.progress))
        await self.persistence.snapshot_node(self.state, node)
        self._snapshot_id = node.get_snapshot_id()

    async def _store_join_step(self) -> None:
        assert self.persistence is not None
        assert self._snapshot_id is not None
        # The snapshot replaced held the outcome this step answered: the edges of the answer stay named in it.
        node = BuilderProgress(encode_progress(self.progress, answered=self._answered))
        node.set_snapshot_id(self._snapshot_id)
        await self.persistence.checkpoint(self.state, node)

    async def _stored_advance(self, engine: RunEngine[OutputT]) -> Any:
        """One step, recorded as the run of the current snapshot, whose successor is stored before it is done."""
        persistence = self.persistence
        assert persistence is not None
        assert self._snapshot_id is not None
        if self._ended:
            raise StopAsyncIteration
        next_node: BuilderProgress | None = None
        self._answered = (self.progress.awaiting, self._next)
        async with persistence.record_run(self._snapshot_id):
            try:
                event = await engine.advance(self._first_task, self._next)
            except StopAsyncIteration:
                self._ended = True
                assert self.progress.output is not None
                await persistence.snapshot_end(self.state, End(self.progress.output.value))
            else:
                next_node = BuilderProgress(encode_progress(self.progress))
                await persistence.snapshot_node(self.state, next_node)
        if next_node is None:
            raise StopAsyncIteration
        self._snapshot_id = next_node.get_snapshot_id()
        return event

    async def next(
        self, value: EndMarker[OutputT] | Sequence[GraphTaskRequest] | None = None
    ) -> EndMarker[OutputT] | Sequence[GraphTask]:
        """Go on by one event; `value` replaces the last event (other tasks, or an `EndMarker` to end the run).

        Raises:
            StopAsyncIteration: the run has ended.
        """
        if self._next is None:
            await self.__anext__()
        if value is not None:
            self._set_next(value)
        return await self.__anext__()

    def override_next(self, value: Sequence[GraphTaskRequest] | EndMarker[OutputT]) -> None:
        """Replace the last event (between two steps): run these tasks instead, or end with this output.

        After a step raised, this is how the run recovers; without it, the next step raises the error again.
        """
        self._set_next(value)

    def _set_next(self, value: Sequence[GraphTaskRequest] | EndMarker[OutputT]) -> None:
        if isinstance(value, EndMarker):
            self._next = value
        else:
            self._next = [GraphTask.from_request(request, self.progress.new_task_id) for request in value]

    @property
    def next_task(self) -> EndMarker[OutputT] | ErrorMarker | Sequence[GraphTask]:
        """The last event (what runs next unless replaced); the first task before the run started."""
        return self._next or [self._first_task]

    @property
    def output(self) -> OutputT | None:
        """The run's output once it has ended, else `None`."""
        if isinstance(self._next, EndMarker):
            return self._next.value
        return None


async def _output(graph_run: GraphRun[Any, Any, OutputT]) -> OutputT:
    """Step `graph_run` through to its end; its output."""
    last: Any = None
    async for last in graph_run:  # noqa: B007 - the last event is the end
        pass
    assert isinstance(last, EndMarker)
    return last.value  # type: ignore[no-any-return]


def _default_reply(progress: RunProgress) -> Any:
    """The reply that goes on as planned from the event a stored run was waiting on."""
    awaiting = progress.awaiting
    if isinstance(awaiting, TaskOutcome):
        return list(awaiting.result) if isinstance(awaiting.result, Sequence) else awaiting.result
    if isinstance(awaiting, JoinRelease):
        return list(awaiting.tasks)
    return []


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def _running_async_library() -> str | None:
    """The name of the async library whose event loop runs in this thread (`'asyncio'`, `'trio'`), else `None`.

    anyio answers whether a loop runs; sniffio, when installed (older anyio releases depend on it), names it.
    """
    try:
        anyio.get_current_task()
    except RuntimeError:
        return None
    try:
        import sniffio
    except ModuleNotFoundError:  # pragma: no cover - anyio releases without sniffio
        return 'async'
    return sniffio.current_async_library()
