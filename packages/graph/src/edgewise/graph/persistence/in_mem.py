"""In-memory persistence: the latest snapshot only (the default), or the whole history."""

from __future__ import annotations as _annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from time import perf_counter
from types import TracebackType
from typing import Any

import pydantic

from .._copy import deep_copy
from ..exceptions import GraphNodeStatusError, GraphRuntimeError
from ..nodes import BaseNode, End
from . import (
    BaseStatePersistence,
    EndSnapshot,
    GraphTypes,
    NodeError,
    NodeSnapshot,
    RunEndT,
    Snapshot,
    StateT,
    StepRunner,
    build_snapshot_list_type_adapter,
    now_utc,
    set_nodes_type_context,
)

__all__ = ('SimpleStatePersistence', 'FullStatePersistence')


class _RecordRun:
    """Marks a node snapshot running on entry and success or error on exit.

    A plain class rather than `@asynccontextmanager`: it sits on the hot path of every step.
    """

    __slots__ = ('_snapshot', '_start')

    def __init__(self, snapshot: NodeSnapshot[Any, Any]) -> None:
        GraphNodeStatusError.check(snapshot.status)
        self._snapshot = snapshot
        self._start = 0.0

    async def __aenter__(self) -> None:
        snapshot = self._snapshot
        snapshot.status = 'running'
        snapshot.start_ts = now_utc()
        self._start = perf_counter()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        snapshot = self._snapshot
        snapshot.duration = perf_counter() - self._start
        snapshot.status = 'success' if exc_type is None else 'error'
        if isinstance(exc, Exception):
            snapshot.error = NodeError.from_exception(exc)


def _not_found(snapshot_id: str) -> LookupError:
    return LookupError(f'No snapshot found with id={snapshot_id!r}')


def _node_snapshot(snapshot: Snapshot[Any, Any] | None, snapshot_id: str) -> NodeSnapshot[Any, Any]:
    if snapshot is None:
        raise _not_found(snapshot_id)
    if not isinstance(snapshot, NodeSnapshot):
        raise GraphRuntimeError(f'Snapshot {snapshot_id!r} is the end of the run; only node snapshots can be run.')
    return snapshot


_new = object.__new__
_now = datetime.now
_UTC = timezone.utc
_STEP_METHODS = ('snapshot_node', 'snapshot_node_if_new', 'snapshot_end', 'record_run')


@dataclass
class SimpleStatePersistence(BaseStatePersistence[StateT, RunEndT]):
    """Keeps only the latest snapshot, in memory; the default when a run is given no persistence."""

    last_snapshot: Snapshot[StateT, RunEndT] | None = None
    """The latest snapshot."""

    async def snapshot_node(self, state: StateT, next_node: BaseNode[StateT, Any, RunEndT]) -> None:
        self.last_snapshot = NodeSnapshot(state=state, node=next_node)

    async def snapshot_node_if_new(
        self, snapshot_id: str, state: StateT, next_node: BaseNode[StateT, Any, RunEndT]
    ) -> None:
        if self.last_snapshot is None or self.last_snapshot.id != snapshot_id:
            self.last_snapshot = NodeSnapshot(state=state, node=next_node)

    async def snapshot_end(self, state: StateT, end: End[RunEndT]) -> None:
        self.last_snapshot = EndSnapshot(state=state, result=end)

    def record_run(self, snapshot_id: str) -> _RecordRun:
        last = self.last_snapshot
        return _RecordRun(_node_snapshot(last if last is not None and last.id == snapshot_id else None, snapshot_id))

    async def record_step(
        self,
        snapshot_id: str,
        state: StateT,
        node: BaseNode[StateT, Any, RunEndT],
        runner: StepRunner[StateT, RunEndT],
        stored: bool = False,
    ) -> BaseNode[StateT, Any, RunEndT] | End[RunEndT]:
        # The default step with the other methods inlined (the hot path of most runs): the same snapshots,
        # statuses and ids, without their calls and context manager. `stored` is not needed: the latest
        # snapshot says whether the node's is stored.
        last = self.last_snapshot
        if last is None or last.id != snapshot_id:
            snapshot = self.last_snapshot = NodeSnapshot.fast(state, node, snapshot_id)
        elif isinstance(last, NodeSnapshot):
            snapshot = last
        else:  # pragma: no cover - ids of ends never match a node's
            snapshot = _node_snapshot(last, snapshot_id)
        if snapshot.status != 'created' and snapshot.status != 'pending':
            raise GraphNodeStatusError(snapshot.status)
        snapshot.status = 'running'
        snapshot.start_ts = _now(_UTC)  # `now_utc()`, without its call
        start = perf_counter()
        try:
            next_node = await runner.run(node)
            next_id = runner.finish(next_node)
        except BaseException as e:
            snapshot.duration = perf_counter() - start
            snapshot.status = 'error'
            if isinstance(e, Exception):
                snapshot.error = NodeError.from_exception(e)
            raise
        if isinstance(next_node, End):
            # `EndSnapshot(state=state, result=next_node, id=next_id)`, without its `__init__` and `__post_init__`.
            end_snapshot = self.last_snapshot = _new(EndSnapshot)
            end_snapshot.__dict__ = {
                'state': state,
                'result': next_node,
                'ts': _now(_UTC),
                'kind': 'end',
                'id': next_id,
            }
        else:
            # `NodeSnapshot.fast(state, next_node, next_id)`, without its call.
            next_snapshot = self.last_snapshot = _new(NodeSnapshot)
            next_snapshot.__dict__ = {
                'state': state,
                'node': next_node,
                'start_ts': None,
                'duration': None,
                'status': 'created',
                'kind': 'node',
                'id': next_id,
            }
        snapshot.duration = perf_counter() - start
        snapshot.status = 'success'
        return next_node

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The inlined step stands for this class's own methods: a subclass that changes one of them (and not
        # the step itself) gets the step made of its methods.
        if 'record_step' not in cls.__dict__ and any(
            getattr(cls, name) is not getattr(SimpleStatePersistence, name) for name in _STEP_METHODS
        ):
            cls.record_step = BaseStatePersistence.record_step  # type: ignore[method-assign]

    async def load_next(self) -> NodeSnapshot[StateT, RunEndT] | None:
        last = self.last_snapshot
        if isinstance(last, NodeSnapshot) and last.status == 'created':
            last.status = 'pending'
            return copy.deepcopy(last)
        return None

    async def load_all(self) -> list[Snapshot[StateT, RunEndT]]:
        raise NotImplementedError(
            'SimpleStatePersistence keeps only the latest snapshot; use FullStatePersistence for the history'
        )


@dataclass
class FullStatePersistence(BaseStatePersistence[StateT, RunEndT]):
    """Keeps the whole history in memory; snapshots are found by id in O(1)."""

    deep_copy: bool = True
    """Store deep copies of state and nodes, so that later mutation does not rewrite history."""
    history: list[Snapshot[StateT, RunEndT]] = field(default_factory=list[Snapshot[StateT, RunEndT]])
    """Every snapshot of the run, in order."""
    _snapshots_type_adapter: pydantic.TypeAdapter[list[Snapshot[StateT, RunEndT]]] | None = field(
        default=None, init=False, repr=False
    )
    _pending_types: tuple[Sequence[type[BaseNode[Any, Any, Any]]], type[StateT], type[RunEndT]] | None = field(
        default=None, init=False, repr=False
    )
    # Index over `history`, rebuilt whenever `history` was replaced or grown from outside.
    _index: dict[str, Snapshot[StateT, RunEndT]] = field(default_factory=dict, init=False, repr=False)
    _indexed_history: list[Snapshot[StateT, RunEndT]] | None = field(default=None, init=False, repr=False)
    _indexed_len: int = field(default=0, init=False, repr=False)
    _next_created: int = field(default=0, init=False, repr=False)

    def _lookup(self, snapshot_id: str) -> Snapshot[StateT, RunEndT] | None:
        history = self.history
        if history is not self._indexed_history or len(history) != self._indexed_len:
            self._index = {s.id: s for s in history}
            self._indexed_history = history
            self._indexed_len = len(history)
            self._next_created = 0
        return self._index.get(snapshot_id)

    def _append(self, snapshot: Snapshot[StateT, RunEndT]) -> None:
        self._lookup(snapshot.id)  # bring the index up to date first
        self.history.append(snapshot)
        self._index[snapshot.id] = snapshot
        self._indexed_len += 1

    async def snapshot_node(self, state: StateT, next_node: BaseNode[StateT, Any, RunEndT]) -> None:
        # Give the node its id before copying it, so that the caller's node and the stored copy share it.
        snapshot_id = next_node.get_snapshot_id()
        node = next_node.deep_copy() if self.deep_copy else next_node
        self._append(NodeSnapshot.fast(self._prep_state(state), node, snapshot_id))

    async def snapshot_node_if_new(
        self, snapshot_id: str, state: StateT, next_node: BaseNode[StateT, Any, RunEndT]
    ) -> None:
        if self._lookup(snapshot_id) is None:
            await self.snapshot_node(state, next_node)

    async def snapshot_end(self, state: StateT, end: End[RunEndT]) -> None:
        result = end.deep_copy_data() if self.deep_copy else end
        self._append(EndSnapshot(state=self._prep_state(state), result=result))

    def record_run(self, snapshot_id: str) -> _RecordRun:
        return _RecordRun(_node_snapshot(self._lookup(snapshot_id), snapshot_id))

    async def load_next(self) -> NodeSnapshot[StateT, RunEndT] | None:
        self._lookup('')  # refresh the index (and the scan position) if history changed
        history = self.history
        # Snapshots before `_next_created` are known not to be 'created': amortised O(1) per call.
        for i in range(self._next_created, len(history)):
            snapshot = history[i]
            if isinstance(snapshot, NodeSnapshot) and snapshot.status == 'created':
                self._next_created = i + 1
                snapshot.status = 'pending'
                return copy.deepcopy(snapshot)
        self._next_created = len(history)
        return None

    async def load_all(self) -> list[Snapshot[StateT, RunEndT]]:
        return self.history

    def should_set_types(self) -> bool:
        return self._snapshots_type_adapter is None and self._pending_types is None

    def set_graph_types(self, graph: GraphTypes) -> None:
        # Building a type adapter costs milliseconds; defer it until `dump_json`/`load_json` need it.
        if self.should_set_types():
            self._pending_types = (graph.get_nodes(), *graph.inferred_types)

    def set_types(self, state_type: type[StateT], run_end_type: type[RunEndT]) -> None:
        self._snapshots_type_adapter = build_snapshot_list_type_adapter(state_type, run_end_type)

    def dump_json(self, *, indent: int | None = None) -> bytes:
        """The history as JSON (the snapshot list format shared with pydantic-graph 1.x)."""
        return self._type_adapter('dump_json').dump_json(self.history, indent=indent)

    def load_json(self, json_data: str | bytes | bytearray) -> None:
        """Replace the history with the snapshots in `json_data`."""
        self.history = self._type_adapter('load_json').validate_json(json_data)

    def _type_adapter(self, method: str) -> pydantic.TypeAdapter[list[Snapshot[StateT, RunEndT]]]:
        if self._snapshots_type_adapter is None and self._pending_types is not None:
            nodes, state_type, run_end_type = self._pending_types
            with set_nodes_type_context(nodes):
                self.set_types(state_type, run_end_type)
        if self._snapshots_type_adapter is None:
            raise RuntimeError(
                f"FullStatePersistence.{method} needs the graph's types: pass the persistence to a graph run first, "
                'or call `persistence.set_graph_types(graph)`.'
            )
        return self._snapshots_type_adapter

    def _prep_state(self, state: StateT) -> StateT:
        """The state as stored: a deep copy unless `deep_copy` is off."""
        if not self.deep_copy or state is None:
            return state
        return deep_copy(state)
