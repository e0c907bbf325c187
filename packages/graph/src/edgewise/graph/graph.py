"""`Graph`, the set of nodes of a workflow, and `GraphRun`, the step loop that runs it."""

from __future__ import annotations as _annotations

import inspect
import types
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, cast

import anyio
import typing_extensions

from . import _instrument, mermaid
from . import nodes as _nodes
from ._edges import comma_and
from .exceptions import (
    GraphRuntimeError,
    GraphSetupError,
    StepLimitExceeded,
    UndeclaredEdgeError,
)
from .nodes import _SNAPSHOT_ID_ATTR, BaseNode, DepsT, End, GraphRunContext, NodeDef, RunEndT, StateT
from .persistence import BaseStatePersistence, Snapshot
from .persistence.in_mem import SimpleStatePersistence

__all__ = ('Graph', 'GraphRun', 'GraphRunResult')

_T = TypeVar('_T')


class _Unset:
    """Marks an argument that was not given."""

    def __repr__(self) -> str:
        return 'UNSET'


UNSET: Any = _Unset()


@dataclass(frozen=True, slots=True)
class _Edges:
    """A node's allowed next steps, precomputed for the runtime check."""

    node_id: str
    next_ids: frozenset[str]
    can_end: bool
    any_node: bool
    next_classes: frozenset[type[Any]] = frozenset()


_NO_EDGES = _Edges('', frozenset(), can_end=False, any_node=False)


@dataclass(init=False)
class Graph(Generic[StateT, DepsT, RunEndT]):
    """A workflow: a set of node classes whose edges come from the return hints of their `run` methods.

    Build it once, at module level, and run it as often as needed with `run`, `run_sync` or `iter`.
    """

    name: str | None
    """The graph's name, used in spans and diagrams; inferred from the variable it is assigned to."""
    node_defs: dict[str, NodeDef[StateT, DepsT, RunEndT]]
    """The definitions of the graph's nodes, by node id."""
    _state_type: type[StateT] | _Unset = field(repr=False)
    _run_end_type: type[RunEndT] | _Unset = field(repr=False)
    auto_instrument: bool = field(repr=False)
    """Whether runs and node runs are wrapped in logfire spans."""

    def __init__(
        self,
        *,
        nodes: Sequence[type[BaseNode[StateT, DepsT, RunEndT]]],
        name: str | None = None,
        state_type: type[StateT] | _Unset = UNSET,
        run_end_type: type[RunEndT] | _Unset = UNSET,
        auto_instrument: bool = True,
    ) -> None:
        """Build a graph, reading and validating the edges of every node.

        Args:
            nodes: The node classes; their ids must be unique.
            name: The graph's name; inferred on first use from the variable the graph is assigned to.
            state_type: The state type, when it cannot be inferred from the nodes' generic parameters.
            run_end_type: The output type, when it cannot be inferred from the nodes' generic parameters.
            auto_instrument: Wrap runs and node runs in logfire spans.

        Raises:
            GraphSetupError: a node lacks a return hint, returns something that is not a node or `End`,
                has the id of another node, or refers to a node that is not in `nodes`.
        """
        self.name = name
        self._state_type = state_type
        self._run_end_type = run_end_type
        self.auto_instrument = auto_instrument
        parent_namespace = _parent_namespace(inspect.currentframe())
        self.node_defs = {}
        for node in nodes:
            self._register_node(node, parent_namespace)
        self._validate_edges()
        self._edges = {
            node_id: _Edges(node_id, frozenset(d.next_node_edges), d.end_edge is not None, d.returns_base_node)
            for node_id, d in self.node_defs.items()
        }
        # Looking edges up by class skips `get_node_id()` on every step.
        self._edges_by_class: dict[type[Any], _Edges] = {d.node: self._edges[i] for i, d in self.node_defs.items()}
        for edges in self._edges.values():
            classes = frozenset(self.node_defs[i].node for i in edges.next_ids if i in self.node_defs)
            object.__setattr__(edges, 'next_classes', classes)

    async def run(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT],
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        persistence: BaseStatePersistence[StateT, RunEndT] | None = None,
        infer_name: bool = True,
        max_steps: int | None = None,
    ) -> GraphRunResult[StateT, RunEndT]:
        """Run the graph from `start_node` to its end.

        Args:
            start_node: The first node to run.
            state: The initial state, shared by every node.
            deps: The dependencies, available to nodes as `ctx.deps`; never persisted.
            persistence: Where snapshots go; `SimpleStatePersistence` (latest snapshot, in memory) if `None`.
            infer_name: Infer the graph's name from the caller's variables when it has none.
            max_steps: Stop with `StepLimitExceeded` before running more than this many nodes.

        Returns:
            The run's output, final state and persistence.
        """
        if infer_name and self.name is None:
            self._infer_name(inspect.currentframe())
        async with self.iter(
            start_node, state=state, deps=deps, persistence=persistence, infer_name=False, max_steps=max_steps
        ) as graph_run:
            # `async for _ in graph_run`, without `__anext__` and `next`'s coroutine on every step: what
            # `next` does, `_step` and the assignment of `_next_node`.
            step = graph_run._step
            node = graph_run.next_node
            while not isinstance(node, End):
                node = graph_run._next_node = await step(node)
        result = graph_run.result
        assert result is not None
        return result

    def run_sync(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT],
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        persistence: BaseStatePersistence[StateT, RunEndT] | None = None,
        infer_name: bool = True,
        max_steps: int | None = None,
    ) -> GraphRunResult[StateT, RunEndT]:
        """Run the graph to its end from synchronous code (starts an event loop; not for use inside one).

        Takes the same arguments as `run`.
        """
        if infer_name and self.name is None:
            self._infer_name(inspect.currentframe())
        run = partial(
            self.run, start_node, state=state, deps=deps, persistence=persistence, infer_name=False, max_steps=max_steps
        )
        return anyio.run(run)

    @asynccontextmanager
    async def iter(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT],
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        persistence: BaseStatePersistence[StateT, RunEndT] | None = None,
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
        max_steps: int | None = None,
    ) -> AsyncIterator[GraphRun[StateT, DepsT, RunEndT]]:
        """Start a run that is driven step by step: `async for node in run` or `await run.next()`.

        Takes the same arguments as `run`, and `span`: a span (context manager) to run the graph in instead
        of the `run graph {name}` span it would otherwise open. The `GraphRun` yields the start node first
        (not yet run), then each node as it becomes next, and the `End` last.
        """
        if infer_name and self.name is None:
            self._infer_name(_caller(inspect.currentframe()))
        self._check_state(state)
        if persistence is None:
            persistence = SimpleStatePersistence()
        persistence.set_graph_types(self)
        async with persistence.claim_run():
            # Durable persistences refuse a run id that is stored already (`DurableStatePersistence.ensure_new_run`);
            # looked up by name, as importing the durable base here would build its pydantic adapters at import.
            if (ensure_new_run := getattr(persistence, 'ensure_new_run', None)) is not None:
                await ensure_new_run()
            with self._run_span() if span is None else span:
                yield GraphRun(
                    graph=self,
                    start_node=start_node,
                    persistence=persistence,
                    state=state,
                    deps=deps,
                    traceparent=None,
                    max_steps=max_steps,
                )

    @asynccontextmanager
    async def iter_from_persistence(
        self,
        persistence: BaseStatePersistence[StateT, RunEndT],
        *,
        deps: DepsT = None,  # type: ignore[assignment]
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
        max_steps: int | None = None,
    ) -> AsyncIterator[GraphRun[StateT, DepsT, RunEndT]]:
        """Resume a run from its persistence: the next node and the state come from its latest snapshot.

        Takes `deps`, `span`, `infer_name` and `max_steps` as `iter` does.

        Raises:
            GraphRuntimeError: the persistence holds no node snapshot waiting to run.
            RunInProgressError: another live process (or task) is advancing the run (durable backends).
        """
        if infer_name and self.name is None:
            self._infer_name(_caller(inspect.currentframe()))
        persistence.set_graph_types(self)
        # Durable backends hold the run for this process (or raise `RunInProgressError`) before the next
        # snapshot is loaded, so that a step left unfinished by a dead process is runnable again.
        async with persistence.claim_run():
            snapshot = await persistence.load_next()
            if snapshot is None:
                store = getattr(persistence, 'store_description', None)  # durable persistences only
                run_id = getattr(persistence, 'run_id', None)
                where = '' if store is None else f' Nothing to resume for run {run_id!r} in {store}.'
                raise GraphRuntimeError(
                    f'Unable to restore snapshot from state persistence: {type(persistence).__name__} holds no '
                    f"node snapshot with status 'created' (the run has ended, or was never initialized).{where}"
                )
            snapshot.node.set_snapshot_id(snapshot.id)
            with self._run_span() if span is None else span:
                yield GraphRun(
                    graph=self,
                    start_node=snapshot.node,
                    persistence=persistence,
                    state=snapshot.state,
                    deps=deps,
                    snapshot_id=snapshot.id,
                    traceparent=None,
                    max_steps=max_steps,
                )

    async def initialize(
        self,
        node: BaseNode[StateT, DepsT, RunEndT],
        persistence: BaseStatePersistence[StateT, RunEndT],
        *,
        state: StateT = None,  # type: ignore[assignment]
        infer_name: bool = True,
    ) -> None:
        """Store the first snapshot of a run without running it, to be run later by `iter_from_persistence`."""
        if infer_name and self.name is None:
            self._infer_name(inspect.currentframe())
        self._check_state(state)
        persistence.set_graph_types(self)
        await persistence.snapshot_node(state, node)

    def _check_state(self, state: object) -> None:
        """Refuse a state that is not of the graph's state type, before a store gets a snapshot it cannot read back.

        Only a plain class is checked (not a TypedDict, a generic alias or a protocol), and `None` passes, as
        pydantic-graph lets a run start without a state.
        """
        expected: Any = self.inferred_types[0]
        if state is None or not isinstance(expected, type) or typing_extensions.is_typeddict(expected):
            return
        try:
            matches = isinstance(state, expected) or (expected is float and isinstance(state, int))
        except TypeError:  # a protocol that is not runtime-checkable, ...
            return
        if not matches:
            raise GraphSetupError(
                f'Graph {self.name or "(unnamed)"!r} expects a state of type {expected.__qualname__}, '
                f'got {type(state).__qualname__}: {state!r:.80}. Nothing was run or stored.'
            )

    def mermaid_code(
        self,
        *,
        start_node: Sequence[mermaid.NodeIdent] | mermaid.NodeIdent | None = None,
        title: str | Literal[False] | None = None,
        edge_labels: bool = True,
        notes: bool = True,
        highlighted_nodes: Sequence[mermaid.NodeIdent] | mermaid.NodeIdent | None = None,
        highlight_css: str = mermaid.DEFAULT_HIGHLIGHT_CSS,
        infer_name: bool = True,
        direction: mermaid.StateDiagramDirection | None = None,
        history: Sequence[Snapshot[Any, Any]] | None = None,
    ) -> str:
        """The graph's mermaid state diagram code (see `edgewise.graph.mermaid.generate_code`).

        Args:
            start_node: The node or nodes a run may start from.
            title: The diagram's title; the graph's name when `None`, no title when `False`.
            edge_labels: Show edge labels.
            notes: Show node notes.
            highlighted_nodes: Nodes to highlight.
            highlight_css: The CSS of highlighted nodes.
            infer_name: Infer the graph's name from the caller's variables when it has none.
            direction: The direction the diagram flows in.
            history: A run's snapshots: draw the run's path (nodes it ran, and where it stopped or failed).
        """
        if infer_name and self.name is None:
            self._infer_name(inspect.currentframe())
        if title is None and self.name:
            title = self.name
        return mermaid.generate_code(
            self,
            start_node=start_node,
            highlighted_nodes=highlighted_nodes,
            highlight_css=highlight_css,
            title=title or None,
            edge_labels=edge_labels,
            notes=notes,
            direction=direction,
            history=history,
        )

    def mermaid_image(
        self, infer_name: bool = True, **kwargs: typing_extensions.Unpack[mermaid.MermaidConfig]
    ) -> bytes:
        """An image of the graph's diagram, titled with the graph's name unless `title` is given.

        Rendered by a mermaid.ink-compatible service (mermaid.ink by default, a free service not
        affiliated with Edgewise), or offline by the mermaid CLI with `renderer='local'`.

        Args:
            infer_name: Infer the graph's name from the caller's variables when it has none.
            **kwargs: The diagram's and the image's options (see `edgewise.graph.mermaid.MermaidConfig`).
        """
        if infer_name and self.name is None:
            self._infer_name(inspect.currentframe())
        if 'title' not in kwargs and self.name:
            kwargs['title'] = self.name
        return mermaid.request_image(self, **kwargs)

    def mermaid_save(
        self, path: Path | str, /, *, infer_name: bool = True, **kwargs: typing_extensions.Unpack[mermaid.MermaidConfig]
    ) -> None:
        """Render an image of the graph's diagram (see `mermaid_image`) and write it to `path`.

        Args:
            path: Where to write the image; its suffix picks the format unless `image_type` is given.
            infer_name: Infer the graph's name from the caller's variables when it has none.
            **kwargs: The diagram's and the image's options (see `edgewise.graph.mermaid.MermaidConfig`).
        """
        if infer_name and self.name is None:
            self._infer_name(inspect.currentframe())
        if 'title' not in kwargs and self.name:
            kwargs['title'] = self.name
        mermaid.save_image(path, self, **kwargs)

    def get_nodes(self) -> Sequence[type[BaseNode[StateT, DepsT, RunEndT]]]:
        """The graph's node classes."""
        return [node_def.node for node_def in self.node_defs.values()]

    @cached_property
    def inferred_types(self) -> tuple[type[StateT], type[RunEndT]]:
        """The state and output types: as given, else from the nodes' `BaseNode[...]` parameters, else `None`."""
        state_type: Any = self._state_type
        run_end_type: Any = self._run_end_type
        for node_def in self.node_defs.values():
            if state_type is not UNSET and run_end_type is not UNSET:
                break
            for base in typing_extensions.get_original_bases(node_def.node):
                if typing_extensions.get_origin(base) is BaseNode:
                    args = typing_extensions.get_args(base)
                    if state_type is UNSET and args:
                        state_type = args[0]
                    if run_end_type is UNSET and len(args) == 3 and args[2] is not typing_extensions.Never:
                        run_end_type = args[2]
                    break
        return cast(
            tuple[type[StateT], type[RunEndT]],
            (None if state_type is UNSET else state_type, None if run_end_type is UNSET else run_end_type),
        )

    def _register_node(
        self, node: type[BaseNode[StateT, DepsT, RunEndT]], parent_namespace: dict[str, Any] | None
    ) -> None:
        if not (isinstance(node, type) and issubclass(node, BaseNode)):
            raise GraphSetupError(f'Graph nodes must be `BaseNode` subclasses, got {node!r}.')
        node_id = node.get_node_id()
        if existing := self.node_defs.get(node_id):
            raise GraphSetupError(
                f'Node ID `{node_id}` is not unique — found on {existing.node} and {node}. '
                'Rename one of the classes or override `get_node_id`.'
            )
        self.node_defs[node_id] = node.get_node_def(parent_namespace)

    def _validate_edges(self) -> None:
        bad_edges: dict[str, list[str]] = {}
        for node_id, node_def in self.node_defs.items():
            for next_id in node_def.next_node_edges:
                if next_id not in self.node_defs:
                    bad_edges.setdefault(next_id, []).append(f'`{node_id}`')
        if bad_edges:
            lines = [f'`{k}` is referenced by {comma_and(v)}' for k, v in bad_edges.items()]
            if len(lines) == 1:
                raise GraphSetupError(f'{lines[0]} but not included in the graph.')
            listed = '\n'.join(f' {line}' for line in lines)
            raise GraphSetupError(f'Nodes are referenced in the graph but not included in the graph:\n{listed}')

    def _infer_name(self, function_frame: types.FrameType | None) -> None:
        """Take the name of the variable holding this graph in the frame that called `function_frame`."""
        if function_frame is None or (caller := function_frame.f_back) is None:  # pragma: no cover
            return
        for name, item in caller.f_locals.items():
            if item is self:
                self.name = name
                return
        if caller.f_locals is not caller.f_globals:
            for name, item in caller.f_globals.items():
                if item is self:
                    self.name = name
                    return

    def _run_span(self) -> Any:
        if self.auto_instrument and _instrument.TRACING:
            return _instrument.span(f'run graph {self.name}', graph=self)
        return _NULL_CONTEXT


class _NullContext:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


_NULL_CONTEXT = _NullContext()


def _caller(frame: types.FrameType | None) -> types.FrameType | None:
    """Skip the `asynccontextmanager` frame between `iter(...)` and its caller."""
    return frame.f_back if frame is not None else None


def _parent_namespace(frame: types.FrameType | None) -> dict[str, Any] | None:
    """The locals of the code that called `Graph(...)`, to resolve hints of classes defined in functions."""
    back = frame.f_back if frame is not None else None
    # `Graph[S, D, R](...)` goes through `typing`'s generic alias, which adds a frame.
    while back is not None and back.f_globals.get('__name__') == 'typing':
        back = back.f_back
    return back.f_locals if back is not None else None


class GraphRun(Generic[StateT, DepsT, RunEndT]):
    """A run of a graph, driven node by node.

    Get one from `Graph.iter` or `Graph.iter_from_persistence`; iterate it with `async for`, or call
    `next()` to run one node at a time (and to inspect or replace the next node before it runs).
    """

    def __init__(
        self,
        *,
        graph: Graph[StateT, DepsT, RunEndT],
        start_node: BaseNode[StateT, DepsT, RunEndT],
        persistence: BaseStatePersistence[StateT, RunEndT],
        state: StateT,
        deps: DepsT,
        traceparent: str | None = None,
        snapshot_id: str | None = None,
        max_steps: int | None = None,
    ) -> None:
        if max_steps is not None and max_steps < 0:
            raise ValueError(f'max_steps must be a non-negative integer or None, got {max_steps!r}')
        self.graph = graph
        """The graph being run."""
        self.persistence = persistence
        """Where this run's snapshots are stored."""
        self.state = state
        """The run's state, shared by every node."""
        self.deps = deps
        """The run's dependencies."""
        self.max_steps = max_steps
        """The most nodes this run may run, or `None` for no limit."""
        self.steps = 0
        """How many nodes this run has run so far."""
        self._next_node: BaseNode[StateT, DepsT, RunEndT] | End[RunEndT] = start_node
        self._is_started = False
        self._edges_by_class = graph._edges_by_class
        self._runner = _Runner[StateT, DepsT, RunEndT](
            GraphRunContext(state=state, deps=deps),
            graph._edges_by_class,
            traced=graph.auto_instrument and _instrument.TRACING,
            snapshot_id=snapshot_id,
        )

    @property
    def next_node(self) -> BaseNode[StateT, DepsT, RunEndT] | End[RunEndT]:
        """The node `async for` or `next()` will run next, or the `End` once the run has finished."""
        return self._next_node

    @property
    def result(self) -> GraphRunResult[StateT, RunEndT] | None:
        """The result once the run has ended, else `None`."""
        if not isinstance(self._next_node, End):
            return None
        return GraphRunResult(self._next_node.data, state=self.state, persistence=self.persistence)

    async def next(
        self, node: BaseNode[StateT, DepsT, RunEndT] | None = None
    ) -> BaseNode[StateT, DepsT, RunEndT] | End[RunEndT]:
        """Run one node (by default `next_node`) and return what comes after it.

        Args:
            node: The node to run instead of `next_node`.

        Raises:
            GraphRuntimeError: the node is not in the graph, or returned something that is neither a node
                nor `End`.
            UndeclaredEdgeError: the node returned a node (or `End`) its return hint does not declare.
            StepLimitExceeded: the run already ran `max_steps` nodes.
        """
        next_node = self._next_node = await self._step(node)
        return next_node

    def _step(
        self, node: BaseNode[StateT, DepsT, RunEndT] | None
    ) -> Awaitable[BaseNode[StateT, DepsT, RunEndT] | End[RunEndT]]:
        """Check and count a step, and start it: the persistence's `record_step`, to be awaited once.

        What `next` does but the assignment of `_next_node`; a plain method, so that `Graph.run` drives the
        steps without a coroutine of `next` around each.
        """
        if node is None:
            node = cast(BaseNode[StateT, DepsT, RunEndT], self._next_node)
        edges = self._edges_by_class.get(type(node))
        if edges is None:
            if not isinstance(node, BaseNode):
                raise TypeError(f'`next` must be called with a `BaseNode` instance, got {node!r}.')
            edges = self.graph._edges.get(node.get_node_id())
            if edges is None:
                raise GraphRuntimeError(f'Node `{node}` is not in the graph.')
        if self.max_steps is not None and self.steps >= self.max_steps:
            raise StepLimitExceeded(
                f'Graph `{self.graph.name or "[unnamed]"}` ran {self.steps} nodes, its `max_steps`, and was about to '
                f'run `{edges.node_id}`; it is likely in a runaway cycle. Raise `max_steps` if it needs more steps.'
            )
        runner = self._runner
        ctx = runner.ctx
        if ctx.state is not self.state or ctx.deps is not self.deps:
            runner.ctx = GraphRunContext(state=self.state, deps=self.deps)
        self.steps += 1
        runner.edges = edges
        # `node.get_snapshot_id()`, without the call once the node has its id.
        snapshot_id = node.__dict__.get(_SNAPSHOT_ID_ATTR) or node.get_snapshot_id()
        return self.persistence.record_step(snapshot_id, self.state, node, runner, snapshot_id == runner.snapshot_id)

    def __aiter__(self) -> AsyncIterator[BaseNode[StateT, DepsT, RunEndT] | End[RunEndT]]:
        return self

    def __anext__(self) -> Awaitable[BaseNode[StateT, DepsT, RunEndT] | End[RunEndT]]:
        # A plain method handing back `next()`'s coroutine saves a coroutine frame per step.
        if not self._is_started:
            self._is_started = True
            return _ready(self._next_node)
        if isinstance(self._next_node, End):
            raise StopAsyncIteration
        return self.next(self._next_node)

    def __repr__(self) -> str:
        return f'<GraphRun graph={self.graph.name or "[unnamed]"}>'


class _Runner(Generic[StateT, DepsT, RunEndT]):
    """Runs the node of each step of a `GraphRun` for `record_step` (the `StepRunner` it hands the hook).

    One per run, reused for every step, and apart from `GraphRun` so that its methods are not the run's API.
    """

    __slots__ = ('_edges_by_class', '_traced', 'ctx', 'edges', 'snapshot_id')

    def __init__(
        self,
        ctx: GraphRunContext[StateT, DepsT],
        edges_by_class: dict[type[Any], _Edges],
        *,
        traced: bool,
        snapshot_id: str | None,
    ) -> None:
        self.ctx = ctx
        """The context nodes run with; replaced when the run's state or deps are."""
        self.edges = _NO_EDGES
        """The edges of the node of the step in progress."""
        self.snapshot_id = snapshot_id
        """The id of the latest snapshot the run knows is stored (or about to be)."""
        self._edges_by_class = edges_by_class
        self._traced = traced

    def run(self, node: BaseNode[StateT, DepsT, RunEndT]) -> Awaitable[BaseNode[StateT, DepsT, RunEndT] | End[RunEndT]]:
        """The coroutine of `node.run`, in its span when tracing."""
        if self._traced:
            return self._run_traced(node)
        return node.run(self.ctx)

    async def _run_traced(
        self, node: BaseNode[StateT, DepsT, RunEndT]
    ) -> BaseNode[StateT, DepsT, RunEndT] | End[RunEndT]:
        node_id = self.edges.node_id
        with _instrument.span(f'run node {node_id}', node_id=node_id, node=node):
            return await node.run(self.ctx)

    def finish(self, next_node: BaseNode[StateT, DepsT, RunEndT] | End[RunEndT]) -> str:
        """Check what the node returned against its edges, and draw the id of its snapshot."""
        if type(next_node) not in self.edges.next_classes:
            self._check_next(next_node)
        # `next_node.get_snapshot_id()`, without `get_node_id()` for the graph's own node classes.
        snapshot_id: str | None = next_node.__dict__.get(_SNAPSHOT_ID_ATTR)
        if snapshot_id is None:
            next_edges = self._edges_by_class.get(type(next_node))
            if next_edges is None:
                snapshot_id = next_node.get_snapshot_id()
            else:
                # What `get_snapshot_id` stores, without `object.__setattr__` (nodes may be frozen).
                snapshot_id = next_node.__dict__[_SNAPSHOT_ID_ATTR] = _nodes.generate_snapshot_id(next_edges.node_id)
        self.snapshot_id = snapshot_id
        return snapshot_id

    def _check_next(self, next_node: object) -> None:
        """Check that what a node returned is a node or `End` that its return hint declares."""
        edges = self.edges
        if isinstance(next_node, End):
            if not (edges.can_end or edges.any_node):
                raise UndeclaredEdgeError(
                    f'Node `{edges.node_id}` returned `End`, but the return hint of its `run` method does not '
                    f'declare `End`; declared next nodes: {_declared(edges)}. Add `End[...]` to the hint.'
                )
        elif isinstance(next_node, BaseNode):
            if edges.any_node:
                return
            next_edges = self._edges_by_class.get(type(next_node))
            next_id = next_edges.node_id if next_edges is not None else next_node.get_node_id()
            if next_id not in edges.next_ids:
                raise UndeclaredEdgeError(
                    f'Node `{edges.node_id}` returned `{next_id}`, which the return hint of its `run` method does '
                    f'not declare; declared: {_declared(edges)}. Add `{next_id}` to the hint.'
                )
        else:
            raise GraphRuntimeError(
                f'Invalid node return type: `{type(next_node).__name__}`. Expected `BaseNode` or `End`. It was '
                f'returned by node `{edges.node_id}`.'
            )


async def _ready(value: _T) -> _T:
    return value


def _declared(edges: _Edges) -> str:
    names = sorted(f'`{n}`' for n in edges.next_ids)
    if edges.can_end:
        names.append('`End`')
    return ', '.join(names) if names else 'none'


@dataclass(init=False)
class GraphRunResult(Generic[StateT, RunEndT]):
    """The result of a finished run."""

    output: RunEndT
    """The data the run ended with."""
    state: StateT
    """The final state."""
    persistence: BaseStatePersistence[StateT, RunEndT] = field(repr=False)
    """The run's persistence, holding its history."""

    def __init__(
        self,
        output: RunEndT,
        state: StateT,
        persistence: BaseStatePersistence[StateT, RunEndT],
        traceparent: str | None = None,
    ) -> None:
        self.output = output
        self.state = state
        self.persistence = persistence
