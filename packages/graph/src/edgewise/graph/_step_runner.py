"""The runtime side of a graph's edges: each node's allowed next steps, and the runner of one step's node.

`Graph` computes an `_Edges` per node once; `GraphRun` hands a `_Runner` to the persistence's `record_step`,
which runs the step's node, checks what it returned against its edges, and draws the next snapshot's id.
"""

from __future__ import annotations as _annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Generic

from . import _instrument
from . import nodes as _nodes
from .exceptions import GraphRuntimeError, UndeclaredEdgeError
from .nodes import _SNAPSHOT_ID_ATTR, BaseNode, DepsT, End, GraphRunContext, RunEndT, StateT

__all__ = ('_Edges', '_NO_EDGES', '_Runner')


@dataclass(frozen=True, slots=True)
class _Edges:
    """A node's allowed next steps, precomputed for the runtime check."""

    node_id: str
    next_ids: frozenset[str]
    can_end: bool
    any_node: bool
    next_classes: frozenset[type[Any]] = frozenset()
    """The classes of the nodes it may go to next, and `End` if it may end the run: what needs no further check."""


_NO_EDGES = _Edges('', frozenset(), can_end=False, any_node=False)


class _Runner(Generic[StateT, DepsT, RunEndT]):
    """Runs the node of each step of a `GraphRun` for `record_step` (the `StepRunner` it hands the hook).

    One per run, reused for every step, and apart from `GraphRun` so that its methods are not the run's API.
    """

    __slots__ = ('_edges_by_class', '_ids_by_class', '_traced', 'ctx', 'edges', 'snapshot_id')

    def __init__(
        self,
        ctx: GraphRunContext[StateT, DepsT],
        edges_by_class: dict[type[Any], _Edges],
        ids_by_class: dict[type[Any], str],
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
        self._ids_by_class = ids_by_class
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
        kind = type(next_node)
        if kind not in self.edges.next_classes:
            self._check_next(next_node)
        # `next_node.get_snapshot_id()`, without `get_node_id()` for `End` and the graph's own node classes.
        snapshot_id: str | None = next_node.__dict__.get(_SNAPSHOT_ID_ATTR)
        if snapshot_id is None:
            node_id = self._ids_by_class.get(kind)
            if node_id is None:
                snapshot_id = next_node.get_snapshot_id()
            else:
                # What `get_snapshot_id` stores, without `object.__setattr__` (nodes may be frozen).
                snapshot_id = next_node.__dict__[_SNAPSHOT_ID_ATTR] = _nodes.generate_snapshot_id(node_id)
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


def _declared(edges: _Edges) -> str:
    names = sorted(f'`{n}`' for n in edges.next_ids)
    if edges.can_end:
        names.append('`End`')
    return ', '.join(names) if names else 'none'
