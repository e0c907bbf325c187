"""A built builder graph (`Graph`) and one run of it (`GraphRun`)."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractContextManager, AsyncExitStack, ExitStack, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from types import FrameType, TracebackType
from typing import Any, Generic

import anyio
import sniffio
from typing_extensions import TypeVar

from .. import _instrument
from ..exceptions import GraphRuntimeError, UnsupportedEventLoopError
from ._compile import CompiledGraph
from ._engine import RunEngine
from ._mermaid import StateDiagramDirection, build_mermaid_graph
from ._progress import EndMarker, ErrorMarker, GraphTask, GraphTaskRequest, RunProgress
from .id_types import ForkStackItem, JoinID, NodeID
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

    def _infer_name(self, frame: FrameType | None) -> None:
        if self.name is None:
            self.name = _name_in_frame(self, frame)

    async def run(
        self,
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        inputs: InputT = None,  # type: ignore[assignment]
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
    ) -> OutputT:
        """Run the graph to its end and return its output.

        Args:
            state: The run's state, shared by its steps.
            deps: The run's dependencies.
            inputs: The value the start node sends on.
            span: A span to run in, instead of the `run graph <name>` span made otherwise.
            infer_name: Whether to name the graph after the variable it is assigned to, when it has no name.
        """
        if infer_name:
            self._infer_name(_caller_frame(1))
        async with self.iter(state=state, deps=deps, inputs=inputs, span=span, infer_name=False) as graph_run:
            last: Any = None
            async for last in graph_run:  # noqa: B007 - the last event is the end
                pass
            assert isinstance(last, EndMarker)
            return last.value  # type: ignore[no-any-return]

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
        if infer_name:
            self._infer_name(_caller_frame(1))
        try:
            library = sniffio.current_async_library()
        except sniffio.AsyncLibraryNotFoundError:
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
    ) -> AsyncIterator[GraphRun[StateT, DepsT, OutputT]]:
        """Run the graph step by step: the `GraphRun` yields each event (tasks to run next, then an `EndMarker`).

        Args:
            state: The run's state, shared by its steps.
            deps: The run's dependencies.
            inputs: The value the start node sends on.
            span: A span to run in, instead of the `run graph <name>` span made otherwise.
            infer_name: Whether to name the graph after the variable it is assigned to, when it has no name.
        """
        if infer_name:
            self._infer_name(_caller_frame(2))  # `asynccontextmanager` adds a frame
        with ExitStack() as stack:
            if span is not None:
                stack.enter_context(span)
            elif self.auto_instrument and _instrument.TRACING:
                stack.enter_context(_instrument.span(f'run graph {self.name}', graph=self))
            async with GraphRun[StateT, DepsT, OutputT](
                self, state=state, deps=deps, inputs=inputs, traceparent=None
            ) as graph_run:
                yield graph_run

    def render(self, *, title: str | None = None, direction: StateDiagramDirection | None = None) -> str:
        """The graph as a mermaid `stateDiagram-v2`.

        Args:
            title: A title shown above the diagram.
            direction: The diagram's direction (`'TB'`, `'LR'`, `'RL'` or `'BT'`).
        """
        return build_mermaid_graph(self.nodes, self.edges_by_source).render(title=title, direction=direction)

    def _compiled(self) -> CompiledGraph:
        return CompiledGraph(self.nodes, self.edges_by_source, self.parent_forks, self.intermediate_join_nodes)

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
        self.progress = RunProgress(state=state)
        """Where the run stands (its tasks, joins and pending outcomes)."""
        start_run = ForkStackItem(StartNode.id, self.progress.new_node_run_id(), 0)
        self._first_task = GraphTask(StartNode.id, inputs, (start_run,), self.progress.new_task_id())
        self._next: EndMarker[OutputT] | ErrorMarker | Sequence[GraphTask] | None = None
        self._engine: RunEngine[OutputT] | None = None
        self._exit_stack = AsyncExitStack()

    async def __aenter__(self) -> GraphRun[StateT, DepsT, OutputT]:
        task_group = await self._exit_stack.enter_async_context(anyio.create_task_group())
        self._engine = RunEngine(
            self.graph._compiled(), self.progress, self.deps, task_group, instrument=self.graph.auto_instrument
        )
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        if self._engine is not None:  # pragma: no branch - set by `__aenter__`
            self._engine.close()
        try:
            return await self._exit_stack.__aexit__(exc_type, exc, tb)
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
        event = await self._require_engine().advance(self._first_task, self._next)
        self._next = event
        if isinstance(event, ErrorMarker):
            raise event.error
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


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
