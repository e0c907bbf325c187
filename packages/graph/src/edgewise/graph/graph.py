"""`Graph`, the set of nodes of a workflow, and `GraphRun`, the step loop that runs it."""

from __future__ import annotations as _annotations

import inspect
import types
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

import anyio
import typing_extensions

from . import _instrument
from . import nodes as _nodes
from ._diagram_style import DEFAULT_HIGHLIGHT_CSS
from ._edges import comma_and
from ._runs import RunLink, RunOpening
from ._step_runner import _Edges, _Runner
from ._stream import GraphEventStream, stream_events
from .exceptions import (
    GraphRuntimeError,
    GraphSetupError,
    StepLimitExceeded,
)
from .nodes import _LINK_ATTR, _SNAPSHOT_ID_ATTR, BaseNode, DepsT, End, GraphRunContext, NodeDef, RunEndT, StateT
from .persistence import BaseStatePersistence, Snapshot
from .persistence.in_mem import SimpleStatePersistence

if TYPE_CHECKING:  # (loaded when a diagram is drawn: a run never needs it)
    from . import mermaid

__all__ = ('Graph', 'GraphRun', 'GraphRunResult')

_T = TypeVar('_T')


_new = object.__new__


class _Unset:
    """Marks an argument that was not given."""

    def __repr__(self) -> str:
        return 'UNSET'


UNSET: Any = _Unset()


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
    state_reducer: Callable[[StateT, StateT], None] | None = field(repr=False)
    """Merges the state of each branch of a fan-out into the run's state (in place), in branch order."""

    def __init__(
        self,
        *,
        nodes: Sequence[type[BaseNode[StateT, DepsT, RunEndT]]],
        name: str | None = None,
        state_type: type[StateT] | _Unset = UNSET,
        run_end_type: type[RunEndT] | _Unset = UNSET,
        auto_instrument: bool = True,
        state_reducer: Callable[[StateT, StateT], None] | None = None,
    ) -> None:
        """Build a graph, reading and validating the edges of every node.

        Args:
            nodes: The node classes; their ids must be unique.
            name: The graph's name; inferred on first use from the variable the graph is assigned to.
            state_type: The state type, when it cannot be inferred from the nodes' generic parameters.
            run_end_type: The output type, when it cannot be inferred from the nodes' generic parameters.
            auto_instrument: Wrap runs and node runs in logfire spans.
            state_reducer: For fan-outs (`Fork`): `reducer(state, branch_state)` merges the state a branch
                ended with into the run's state, in place; called once per branch, in branch order, when
                every branch has ended. Without one, a branch that changes its copy of the state fails the
                fan-out rather than lose the change.

        Raises:
            GraphSetupError: a node lacks a return hint, returns something that is not a node or `End`,
                has the id of another node, or refers to a node that is not in `nodes`; or a `Fork` has a
                join that no branch reaches.
        """
        self.name = name
        self._state_type = state_type
        self._run_end_type = run_end_type
        self.auto_instrument = auto_instrument
        self.state_reducer = state_reducer
        parent_namespace = _parent_namespace(inspect.currentframe())
        self.node_defs = {}
        for node in nodes:
            self._register_node(node, parent_namespace)
        fork_id = ''
        if any(d.forks for d in self.node_defs.values()):
            from .fork import Fork  # (a node's `Fork[...]` hint has loaded it already)

            fork_id = Fork.get_node_id()
            if fork_id not in self.node_defs:
                # The fan-out is a step of its own (stored in a snapshot): its node class joins the graph.
                self._register_node(cast(Any, Fork), parent_namespace)
        self._validate_edges()
        self._edges = {
            node_id: _Edges(
                node_id,
                frozenset((*d.next_node_edges, fork_id) if d.forks else d.next_node_edges),
                d.end_edge is not None,
                d.returns_base_node,
            )
            for node_id, d in self.node_defs.items()
        }
        # Looking edges up by class skips `get_node_id()` on every step.
        self._edges_by_class: dict[type[Any], _Edges] = {d.node: self._edges[i] for i, d in self.node_defs.items()}
        for edges in self._edges.values():
            classes: set[type[Any]] = {self.node_defs[i].node for i in edges.next_ids if i in self.node_defs}
            if edges.can_end or edges.any_node:
                classes.add(End)
            object.__setattr__(edges, 'next_classes', frozenset(classes))
        # The node id each snapshot id starts with, by the class of the node (or end) it is drawn for.
        self._ids_by_class: dict[type[Any], str] = {d.node: i for i, d in self.node_defs.items()}
        self._ids_by_class[End] = 'end'

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

    def iter(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT],
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        persistence: BaseStatePersistence[StateT, RunEndT] | None = None,
        span: AbstractContextManager[Any] | None = None,
        infer_name: bool = True,
        max_steps: int | None = None,
    ) -> AbstractAsyncContextManager[GraphRun[StateT, DepsT, RunEndT]]:
        """Start a run that is driven step by step: `async for node in run` or `await run.next()`.

        Takes the same arguments as `run`, and `span`: a span (context manager) to run the graph in instead
        of the `run graph {name}` span it would otherwise open. The `GraphRun` yields the start node first
        (not yet run), then each node as it becomes next, and the `End` last.
        """
        return RunOpening(GraphRun, self, start_node, state, deps, persistence, span, infer_name, max_steps)

    @asynccontextmanager
    async def _iter(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT],
        state: StateT,
        deps: DepsT,
        persistence: BaseStatePersistence[StateT, RunEndT] | None,
        span: AbstractContextManager[Any] | None,
        max_steps: int | None,
    ) -> AsyncIterator[GraphRun[StateT, DepsT, RunEndT]]:
        """What `iter` opens, for any persistence and span (the state checked and the name inferred already)."""
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
                explain = getattr(persistence, 'nothing_to_resume', None)  # durable persistences only
                why = ' (the run has ended, or was never initialized).' if explain is None else f'. {await explain()}'
                raise GraphRuntimeError(
                    'Unable to restore snapshot from state persistence: '
                    f"{type(persistence).__name__} holds no node snapshot with status 'created'{why}"
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

    def stream(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT],
        *,
        state: StateT = None,  # type: ignore[assignment]
        deps: DepsT = None,  # type: ignore[assignment]
        persistence: BaseStatePersistence[StateT, RunEndT] | None = None,
        infer_name: bool = True,
        max_steps: int | None = None,
        buffer_size: int = 256,
        state_snapshots: bool = False,
    ) -> AbstractAsyncContextManager[GraphEventStream[StateT, RunEndT]]:
        """Run the graph and stream what it does: `async with graph.stream(Start()) as events: async for ...`.

        The events (`edgewise.graph.events`) are, for each step, `NodeStartedEvent`, then `NodeFinishedEvent`
        (the next node or `End`, and the duration) and, with `state_snapshots=True`, `StateEvent` (a copy of the
        state after the step), or `NodeFailedEvent` if the node raised (the stream then raises the node's
        error); `CustomEvent`s that nodes send with `await ctx.emit(...)`; and `RunEndEvent` last. Runs nested
        in this one (subgraphs, branches of fan-outs) send their events too, with their `path`.

        The run goes on in a task of its own, at most `buffer_size` events ahead of the consumer: a consumer
        that stops reading pauses it. Leaving the `async with` block before the end cancels the run; a node
        it interrupts goes back to `'created'`, so that with a durable persistence the run can be resumed
        (`stream_from_persistence` or `iter_from_persistence`).

        Takes the arguments of `run`, `buffer_size` (how many events may wait for the consumer) and
        `state_snapshots` (whether to send a `StateEvent` after each step: a deep copy of the state each step).
        """
        if infer_name and self.name is None:
            self._infer_name(inspect.currentframe())
        return stream_events(
            self,
            start_node,
            state=state,
            deps=deps,
            persistence=persistence,
            max_steps=max_steps,
            buffer_size=buffer_size,
            state_snapshots=state_snapshots,
        )

    def stream_from_persistence(
        self,
        persistence: BaseStatePersistence[StateT, RunEndT],
        *,
        deps: DepsT = None,  # type: ignore[assignment]
        infer_name: bool = True,
        max_steps: int | None = None,
        buffer_size: int = 256,
        state_snapshots: bool = False,
    ) -> AbstractAsyncContextManager[GraphEventStream[StateT, RunEndT]]:
        """Resume a run from its persistence, as `iter_from_persistence` does, and stream it as `stream` does."""
        if infer_name and self.name is None:
            self._infer_name(inspect.currentframe())
        return stream_events(
            self,
            None,
            state=None,
            deps=deps,
            persistence=persistence,
            max_steps=max_steps,
            buffer_size=buffer_size,
            state_snapshots=state_snapshots,
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

    def _child_run(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT],
        state: StateT,
        deps: DepsT,
        persistence: BaseStatePersistence[StateT, RunEndT],
    ) -> GraphRun[StateT, DepsT, RunEndT] | None:
        """A run in an in-memory persistence, for a branch of a fan-out: what `iter` yields, without its context
        manager (no claim, no new-run check, nothing to set up); `None` when runs are traced (`iter` opens
        the span)."""
        if self.auto_instrument and _instrument.TRACING:
            return None
        return GraphRun(graph=self, start_node=start_node, persistence=persistence, state=state, deps=deps)

    def _check_state(self, state: object) -> None:
        """Refuse a state that is not of the graph's state type, before a store gets a snapshot it cannot read back.

        Only a plain class is checked (not a TypedDict, a generic alias or a protocol), and `None` passes, as
        pydantic-graph lets a run start without a state.
        """
        expected: Any = self.inferred_types[0]
        if state is None or type(state) is expected:  # (the common case, with none of the checks below)
            return
        if not isinstance(expected, type) or typing_extensions.is_typeddict(expected):
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
        highlight_css: str = DEFAULT_HIGHLIGHT_CSS,
        infer_name: bool = True,
        direction: mermaid.StateDiagramDirection | None = None,
        history: Sequence[Snapshot[Any, Any]] | None = None,
        child_histories: Mapping[str, Sequence[Snapshot[Any, Any]]] | None = None,
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
            child_histories: The histories of the run's child runs, by name (`await
                persistence.load_child_histories()`): draw the path through subgraphs and fan-outs too.
        """
        if infer_name and self.name is None:
            self._infer_name(inspect.currentframe())
        if title is None and self.name:
            title = self.name
        from . import mermaid

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
            child_histories=child_histories,
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
        from . import mermaid

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
        from . import mermaid

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
            fork_ids = [i for fork in node_def.forks for i in (*fork.branch_ids, fork.join_id)]
            for next_id in (*node_def.next_node_edges, *fork_ids):
                if next_id not in self.node_defs:
                    bad_edges.setdefault(next_id, []).append(f'`{node_id}`')
        if bad_edges:
            lines = [f'`{k}` is referenced by {comma_and(v)}' for k, v in bad_edges.items()]
            if len(lines) == 1:
                raise GraphSetupError(f'{lines[0]} but not included in the graph.')
            listed = '\n'.join(f' {line}' for line in lines)
            raise GraphSetupError(f'Nodes are referenced in the graph but not included in the graph:\n{listed}')
        for node_id, node_def in self.node_defs.items():
            for fork in node_def.forks:
                if not any(self._can_end(branch_id) for branch_id in fork.branch_ids):
                    raise GraphSetupError(
                        f'The join `{fork.join_id}` of the fan-out of node `{node_id}` is reached by no branch: '
                        'no node '
                        f'reachable from {comma_and([f"`{b}`" for b in fork.branch_ids])} returns `End`, which ends a '
                        'branch with its result. Add `End[...]` to the return hint of a branch node.'
                    )

    def _can_end(self, start_id: str) -> bool:
        """Whether a run from node `start_id` may reach an `End` (which ends a branch of a fan-out)."""
        seen = {start_id}
        todo = [start_id]
        while todo:
            node_def = self.node_defs[todo.pop()]
            if node_def.end_edge is not None or node_def.returns_base_node:
                return True
            for next_id in (*node_def.next_node_edges, *(fork.join_id for fork in node_def.forks)):
                if next_id not in seen:
                    seen.add(next_id)
                    todo.append(next_id)
        return False

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
        self._link = RunLink(graph, persistence, self)
        self._runner: _Runner[StateT, DepsT, RunEndT] = _Runner(
            self._context(),
            graph._edges_by_class,
            graph._ids_by_class,
            traced=graph.auto_instrument and _instrument.TRACING,
            snapshot_id=snapshot_id,
        )

    def _context(self) -> GraphRunContext[StateT, DepsT]:
        """The context nodes run with, linked to this run (for `ctx.emit`, `ctx.run_subgraph` and fan-outs)."""
        # `GraphRunContext(state=self.state, deps=self.deps)` and the link, without its `__init__` (once a run).
        ctx: GraphRunContext[StateT, DepsT] = _new(GraphRunContext)
        ctx.__dict__ = {'state': self.state, 'deps': self.deps, _LINK_ATTR: self._link}
        return ctx

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
        of_graph_class = edges is not None
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
            runner.ctx = self._context()
        self.steps += 1
        runner.edges = edges
        # `node.get_snapshot_id()`, without the call once the node has its id, nor `get_node_id()` for the graph's
        # own node classes (a start node, the only one without an id yet).
        snapshot_id = node.__dict__.get(_SNAPSHOT_ID_ATTR)
        if snapshot_id is None:
            if of_graph_class:
                # What `get_snapshot_id` stores, without `object.__setattr__` (nodes may be frozen).
                snapshot_id = node.__dict__[_SNAPSHOT_ID_ATTR] = _nodes.generate_snapshot_id(edges.node_id)
            else:
                snapshot_id = node.get_snapshot_id()
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


async def _ready(value: _T) -> _T:
    return value


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
