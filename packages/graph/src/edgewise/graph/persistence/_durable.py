"""What every durable backend (file, SQLite, PostgreSQL) shares: the contract on top of a few storage operations.

A backend implements `_op_*` methods, each one atomic in its store; this class turns them into the
`BaseStatePersistence` contract, with the rules that make runs crash-safe:

- the next snapshot is stored in the same atomic write that marks the running one `'success'` (a crash
  never leaves a finished node looking unfinished, or a finished node without its successor);
- during a claimed run, that write also stores the next snapshot already `'running'`, as the run loop runs
  it next: one write per transition. Should the loop stop before running it, releasing the claim puts it
  back to `'created'`; should the process die, the next claim does;
- a node interrupted by cancellation goes back to `'created'`, a node that raised becomes `'error'`;
- `claim_run` holds the run for one process at a time; when it is taken over from an owner that is gone,
  the step that owner left `'pending'` or `'running'` is made runnable again (at-least-once), except a node
  this object's own `load_next` handed out before the claim: pydantic-graph's resume-with-input pattern
  (`load_next`, then `iter(<a node with the input>, persistence=...)`) replaces that node, so it stays taken.

Every durable persistence is an async context manager: `aclose()` (idempotent, also on leaving `async with`)
frees what the backend holds (a database connection) and ends the object's use; any later call raises a
`PersistenceError` naming the store, rather than quietly opening the store again.
"""

from __future__ import annotations as _annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from time import perf_counter
from types import TracebackType
from typing import Any, Literal, Self

import anyio
import pydantic

from ..exceptions import PersistenceError, RunInProgressError
from ..nodes import BaseNode, End
from . import (
    BaseStatePersistence,
    EndSnapshot,
    GraphTypes,
    NodeError,
    NodeSnapshot,
    RunEndT,
    RunInfo,
    RunStatus,
    Snapshot,
    StateT,
    build_snapshot_type_adapter,
    now_utc,
    set_nodes_type_context,
)
from ._children import delete_with_children, load_child_histories, parent_run
from ._owner import Owner, current_owner, drop_lease
from .raw import RAW_SNAPSHOT_ADAPTER, RawNodeSnapshot, RawSnapshot

__all__ = (
    'DurableStatePersistence',
    'Completion',
    'duplicate_snapshot',
    'run_in_progress',
    'run_status',
    'snapshot_not_found',
)

EndStatus = Literal['success', 'error', 'created']


@dataclass(slots=True)
class Completion:
    """The running snapshot that a write also marks `'success'`: when its node started and how long it ran."""

    snapshot_id: str
    start_ts: datetime
    duration: float


@dataclass(slots=True)
class _Running:
    snapshot_id: str
    start_ts: datetime
    start: float
    completed: bool = False
    store_failed: bool = False
    """A write of the run failed while the node ran: the failure is the store's, not the node's."""


# Building a snapshot type adapter costs milliseconds; runs of one graph share one.
_adapters: dict[Any, Any] = {}


def run_in_progress(run_id: str, owner: Owner | None) -> RunInProgressError:
    """The error for a run held by another live process (or task)."""
    holder = owner.describe() if owner is not None else 'another process'
    return RunInProgressError(
        f'Run {run_id!r} is in progress elsewhere: {holder} is advancing it. Wait for that run to finish or stop '
        'it; once its process has exited, the run can be resumed (its unfinished step runs again).'
    )


def duplicate_snapshot(run_id: str, where: str, snapshot_id: str) -> PersistenceError:
    """The error for a second snapshot with an id the run already has."""
    return PersistenceError(
        f'Run {run_id!r} in {where} already has a snapshot with id {snapshot_id!r}; a node that returns itself '
        'must return a new instance instead. Nothing was changed.'
    )


def snapshot_not_found(snapshot_id: str) -> LookupError:
    """The error for an unknown snapshot id (the message matches pydantic-graph's)."""
    return LookupError(f'No snapshot found with id={snapshot_id!r}')


def run_status(kind: str | None, status: str | None, held: bool) -> RunStatus:
    """A run's status, from the kind and status of its last snapshot and whether a live process holds the run.

    A node left `'running'` by a process that has died is not running any more: the run is `'waiting'` to be
    resumed (which runs that node again).
    """
    if kind == 'end':
        return 'finished'
    if status == 'error':
        return 'failed'
    if status in ('running', 'pending') and held:
        return 'running'
    return 'waiting'


class DurableStatePersistence(BaseStatePersistence[StateT, RunEndT]):
    """Base of the persistence backends that store runs outside the process (file, SQLite, PostgreSQL)."""

    _adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]] | None = None
    _pending_types: tuple[Sequence[type[BaseNode[Any, Any, Any]]], Any, Any] | None = None
    _graph: GraphTypes | None = None
    _running: _Running | None = None
    _owner: Owner | None = None
    _prestarted: str | None = None
    """The snapshot this object stored already `'running'`, for the run loop to run next."""
    _prestarted_ts: datetime | None = None
    """The start time stored with `_prestarted` (the instant of the write that stored it)."""
    _handed_out: str | None = None
    """The snapshot this object's `load_next` handed out outside a claimed run; a claim leaves it `'pending'`."""
    _loaded: str | None = None
    """The snapshot this object's `load_next` marked `'pending'` while holding the run, until `record_run` starts
    it: a run let go of before that (a Ctrl-C between two steps) puts it back to `'created'`, as it was."""
    _closed: bool = False
    """Set by `aclose()`: every later use raises `PersistenceError`."""
    _lease_claims: bool = False
    """Claims take a lease (see `_owner`): for backends whose hold is only a record in the store, which a failed
    write could leave behind."""
    _has_read: bool = False
    """This object has loaded the run's snapshots: a `Graph.iter` on it continues the run (as in pydantic-graph's
    documented pattern of `load_next` and then `iter` with a node of the caller's choosing)."""

    @property
    @abstractmethod
    def run_id(self) -> str:
        """The id of the run this persistence holds."""

    @abstractmethod
    def _describe(self) -> str:
        """Where the run is stored, for error messages (never with a password)."""

    @property
    def store_description(self) -> str:
        """Where the run is stored, as error messages name it (never with a password)."""
        return self._describe()

    # --- storage operations, each atomic -------------------------------------------------------------

    @abstractmethod
    async def _op_insert(
        self, snapshot: Snapshot[StateT, RunEndT], complete: Completion | None, if_new: bool, start: datetime | None
    ) -> bool:
        """Append `snapshot` (unless `if_new` and its id is stored), `'running'` since `start` when given, and apply
        `complete`; whether it was stored."""

    @abstractmethod
    async def _op_start(self, snapshot_id: str, start_ts: datetime) -> None:
        """Mark a `'created'`/`'pending'` node snapshot `'running'`, or raise as `record_run` documents."""

    @abstractmethod
    async def _op_finish(
        self, snapshot_id: str, status: EndStatus, start_ts: datetime | None, duration: float, error: NodeError | None
    ) -> None:
        """Set the status, start time and duration of a node snapshot that was running."""

    @abstractmethod
    async def _op_load_next(self) -> NodeSnapshot[StateT, RunEndT] | None:
        """Return the first `'created'` node snapshot, decoded, and mark it `'pending'`."""

    @abstractmethod
    async def _op_load_all(
        self, adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]] | None
    ) -> list[Snapshot[StateT, RunEndT]]:
        """Return every snapshot in order, decoded with `adapter` (`None`: the graph's types, see `_decode`)."""

    @abstractmethod
    async def _op_info(self) -> RunInfo | None:
        """The run as `list_runs` lists it, or `None` when nothing of it is stored."""

    @abstractmethod
    async def _op_claim(self, owner: Owner, keep: str | None) -> None:
        """Hold the run for `owner`, or raise `RunInProgressError`; recover the step a gone owner left, unless it
        is the snapshot `keep`."""

    @abstractmethod
    async def _op_release(self, owner: Owner, unstarted: str | None) -> None:
        """Stop holding the run, putting the snapshot `unstarted` (if still `'pending'` or `'running'`: this object
        made it ready to run, and it never ran) back to `'created'`."""

    @abstractmethod
    async def _op_fork(self, snapshot_id: str, run_id: str | None) -> Self:
        """Copy the history up to `snapshot_id` into a new run and return a persistence for it."""

    @abstractmethod
    async def _op_checkpoint(self, snapshot: NodeSnapshot[StateT, RunEndT]) -> None:
        """Replace the data of the stored node snapshot with `snapshot`'s id (not yet finished), keeping its status
        and place; raise `PersistenceError` when there is no such unfinished snapshot."""

    @abstractmethod
    async def _op_delete(self) -> bool:
        """Remove every stored snapshot of the run (the run being held by this object); whether there were any."""

    def _child(self, name: str) -> Self:
        """A persistence of the same store for the child run `name` of this run (see `child`)."""
        return self._related(f'{self.run_id}/{name}')

    @abstractmethod
    def _related(self, run_id: str) -> Self:
        """A persistence of the same store for the run `run_id` (a parent or child run of this one)."""

    @abstractmethod
    async def _op_child_runs(self) -> list[RunInfo]:
        """The stored runs below this one (run ids `'<run id>/...'`, any depth), oldest first."""

    async def _op_close(self) -> None:
        """Free what the backend holds (a connection), if anything; called by `aclose()`, and harmless twice."""

    # --- lifetime ------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Free what this object holds (a database connection, for SQL backends); it cannot be used afterwards.

        Calling it again does nothing; leaving an `async with persistence:` block calls it. The stored run is
        unaffected: a new persistence object for it goes on with it. Closed while a graph run is advancing the
        run, it lets go of the run (so that another process may resume it), and that graph run's next step
        raises `PersistenceError`.
        """
        if self._closed:
            return
        # Taken before the await, so that the claim's own exit (or a second `aclose`) finds it released.
        owner, self._owner = self._owner, None
        unstarted = self._unstarted()
        try:
            if owner is not None:
                with anyio.CancelScope(shield=True):
                    await self._op_release(owner, unstarted)
        finally:
            if owner is not None:
                drop_lease(owner)
            self._closed = True
            await self._op_close()  # idempotent in every backend, should two calls overlap

    def _unstarted(self) -> str | None:
        """The snapshot this object made ready to run (stored `'running'` with its predecessor's end, or loaded
        `'pending'`) and never ran, forgotten: letting go of the run puts it back to `'created'`."""
        unstarted = self._prestarted or self._loaded
        self._prestarted = self._loaded = None
        return unstarted

    async def __aenter__(self) -> Self:
        self._check_open()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise self._closed_error()

    def _closed_error(self) -> PersistenceError:
        return PersistenceError(
            f'{type(self).__name__} of run {self.run_id!r} in {self._describe()} is closed (`aclose()` was called); '
            'nothing was read or written. Create a new persistence object for the run to use it again.'
        )

    # --- the contract --------------------------------------------------------------------------------

    async def snapshot_node(self, state: StateT, next_node: BaseNode[StateT, Any, RunEndT]) -> None:
        await self._store(NodeSnapshot(state=state, node=next_node), if_new=False)

    async def snapshot_node_if_new(
        self, snapshot_id: str, state: StateT, next_node: BaseNode[StateT, Any, RunEndT]
    ) -> None:
        await self._store(NodeSnapshot(state=state, node=next_node, id=snapshot_id), if_new=True)

    async def snapshot_end(self, state: StateT, end: End[RunEndT]) -> None:
        await self._store(EndSnapshot(state=state, result=end), if_new=False)

    async def _store(self, snapshot: Snapshot[StateT, RunEndT], *, if_new: bool) -> None:
        if self._closed:
            raise self._closed_error()
        running = self._running
        complete = None
        start = None
        if running is not None and not running.completed and not if_new:
            if snapshot.id == running.snapshot_id:
                raise duplicate_snapshot(self.run_id, self._describe(), snapshot.id)
            # The successor of the running node: store it and finish that node in one atomic write.
            complete = Completion(running.snapshot_id, running.start_ts, perf_counter() - running.start)
            if self._owner is not None and isinstance(snapshot, NodeSnapshot):
                start = now_utc()
        try:
            stored = await self._op_insert(snapshot, complete, if_new, start)
        except Exception:
            if running is not None:
                running.store_failed = True
            raise
        if stored and self._loaded is not None:
            self._loaded = None  # the run goes on from the new snapshot (the caller ran another node)
        if complete is not None and running is not None:
            running.completed = True
        if start is not None:
            self._prestarted = snapshot.id
            self._prestarted_ts = start

    async def checkpoint(self, state: StateT, node: BaseNode[StateT, Any, RunEndT]) -> None:
        self._check_open()
        await self._op_checkpoint(NodeSnapshot(state=state, node=node, id=node.get_snapshot_id()))

    def checkpoint_missing(self, snapshot_id: str) -> PersistenceError:
        """The error for a checkpoint of a snapshot that is not stored, or has finished."""
        return PersistenceError(
            f'Run {self.run_id!r} in {self._describe()} has no unfinished snapshot {snapshot_id!r} to checkpoint: '
            'the node is not running in this run (it finished, or the run was changed elsewhere). Nothing was written.'
        )

    async def ensure_new_run(self) -> None:
        """Refuse to start a run under the id of a stored one, whose snapshots the new run's would be appended to.

        `Graph.iter` calls it once it holds the run. A run is replaced by starting the new one under another id.
        An object that has loaded the run's snapshots (`load_next`, `load_all`) continues it instead, as in
        pydantic-graph.

        Raises:
            PersistenceError: the run has stored snapshots; the error names the run and the store.
        """
        self._check_open()
        if self._has_read:
            return
        info = await self._op_info()
        if info is not None and info.snapshot_count > 0:
            if info.status == 'failed':
                advice = f'{await self._fork_advice()} Or start the new run under another run id.'
            else:
                advice = 'Resume it with `Graph.iter_from_persistence`, or start the new run under another run id.'
            raise PersistenceError(
                f'Run {self.run_id!r} already exists in {self._describe()} ({info.snapshot_count} snapshots, '
                f'{info.status}); a new run cannot start under its id, and nothing was written. {advice}'
            )

    async def nothing_to_resume(self) -> str:
        """Why the run has no node snapshot waiting to run, and what to do: no such run is stored, it finished, or
        it failed (`Graph.iter_from_persistence` says so)."""
        where = f'Nothing to resume for run {self.run_id!r} in {self._describe()}'
        info = await self._op_info()
        if info is None or not info.snapshot_count:
            return f'{where}: no run of that id is stored (check the id; `list_runs` lists the runs of a store).'
        if info.status == 'finished':
            return (
                f'{where}: it has finished (its result is in its last snapshot, see `load_all()`). To run a part of '
                'it again, fork it at a snapshot (`fork(snapshot_id)`) and resume the fork.'
            )
        if info.status == 'failed':
            return f'{where}: it failed. {await self._fork_advice()}'
        return f'{where}: its last snapshot is {info.status}.'  # pragma: no cover - `claim_run` refuses a held run

    async def _fork_advice(self) -> str:
        """How to retry a failed run: fork it at its failed snapshot (which runs the failed node again)."""
        failed = (await self.load_raw())[-1]
        assert isinstance(failed, RawNodeSnapshot)  # a failed run ends with the snapshot of the node that raised
        return (
            f'A failed run does not resume: fork it at the failed snapshot, `fork({failed.id!r})`, which runs node '
            f'`{failed.node.node_id}` again in a new run (or at an earlier snapshot), and resume the fork.'
        )

    def record_run(self, snapshot_id: str) -> _RecordRun:
        return _RecordRun(self, snapshot_id)

    async def load_next(self) -> NodeSnapshot[StateT, RunEndT] | None:
        self._check_open()
        self._has_read = True
        snapshot = await self._op_load_next()
        if snapshot is not None:
            if self._owner is None:
                self._handed_out = snapshot.id
            else:
                self._loaded = snapshot.id
        return snapshot

    async def load_all(self) -> list[Snapshot[StateT, RunEndT]]:
        self._check_open()
        self._has_read = True
        return await self._op_load_all(None)

    async def load_raw(self) -> list[RawSnapshot]:
        """The run's whole history as `load_all()` returns it, but read without the graph: nodes as
        `RawNode`s (id and fields), state and output as JSON data (see `edgewise.graph.persistence.raw`).

        Needs no graph types and changes nothing stored, so any stored run can be inspected, also one whose
        node classes were since renamed or removed. An empty list when nothing of the run is stored.

        Raises:
            PersistenceError: a stored snapshot is not a snapshot at all (a damaged store), or the store
                cannot be read.
        """
        self._check_open()
        adapter: Any = RAW_SNAPSHOT_ADAPTER
        snapshots: list[Any] = await self._op_load_all(adapter)
        return snapshots

    async def load_raw_steps(self, first: int, count: int) -> list[RawSnapshot]:
        """Up to `count` snapshots of `load_raw()` from snapshot number `first` (numbered from 1) on.

        A SQL store reads and decodes only those, so one step of a long run whose state grew is cheap to show.

        Raises:
            PersistenceError: a stored snapshot is not a snapshot at all, or the store cannot be read.
        """
        self._check_open()
        adapter: Any = RAW_SNAPSHOT_ADAPTER
        snapshots: list[Any] = await self._op_load_range(adapter, max(first, 1) - 1, max(count, 0))
        return snapshots

    async def _op_load_range(
        self, adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]], offset: int, count: int
    ) -> list[Snapshot[StateT, RunEndT]]:
        """Snapshots `offset` to `offset + count` (from 0) of `_op_load_all`; a store may read only those."""
        return (await self._op_load_all(adapter))[offset : offset + count]

    async def info(self) -> RunInfo | None:
        """This run as the store's `list_runs` lists it: status, times, number of snapshots.

        Reads no snapshot's data, so it needs no graph types. `None` when nothing of the run is stored.
        """
        self._check_open()
        return await self._op_info()

    async def delete(self) -> bool:
        """Remove the run from the store, with its child runs (subgraph runs, branches of fan-outs): every
        snapshot of them, whatever their status.

        The run is held while it is removed, so a run that a live process is advancing is refused, never cut
        from under it. Nothing else of the store changes; a fork of the run is a run of its own and stays.
        A child run is not removed on its own while the run above it may still resume (it would read it back):
        remove that run instead. `child_runs()` lists what goes with the run.

        Returns:
            Whether the store held anything of the run (or of its child runs).

        Raises:
            RunInProgressError: a live process (or task) is advancing the run or one of its child runs.
            PersistenceError: the run is a child run of a run that has not ended.
        """
        self._check_open()
        return await delete_with_children(self)

    async def child_runs(self) -> list[RunInfo]:
        """The runs this run started and that are stored (subgraph runs, branches of fan-outs), and theirs, at
        any depth: the runs whose id is this run's id, `/` and a name, oldest first.

        Reads no snapshot's data, so it needs no graph types.
        """
        self._check_open()
        return await self._op_child_runs()

    async def load_child_histories(self) -> dict[str, list[RawSnapshot]]:
        """The histories of this run's child runs (as `load_raw()` reads them), by name below this run
        (`'payment'`, `'Fork:1a2b/0'`, `'payment/Fork:3c4d/1'`): what `generate_code(..., child_histories=...)`
        draws a run's path through its subgraphs and fan-outs from."""
        self._check_open()
        return await load_child_histories(self)

    async def parent_run(self) -> RunInfo | None:
        """The stored run this run is a child run of (its id is that run's id, `/` and a name), if any."""
        self._check_open()
        return await parent_run(self)

    def claim_run(self) -> _ClaimRun:
        return _ClaimRun(self)

    async def fork(self, snapshot_id: str, run_id: str | None = None) -> Self:
        """Start a new run whose history is this run's up to `snapshot_id` (time travel).

        The new run's last snapshot is `snapshot_id`, ready to run again (`'created'`), so that
        `Graph.iter_from_persistence` continues from there; this run is left untouched.

        Args:
            snapshot_id: The snapshot to branch at; usually a node snapshot from `load_all()`.
            run_id: The id of the new run; generated when not given.

        Returns:
            A persistence of the same kind for the new run (with this one's graph types).

        Raises:
            LookupError: this run has no snapshot with that id.
            PersistenceError: a run with `run_id` already exists.
        """
        self._check_open()
        forked = await self._op_fork(snapshot_id, run_id)
        forked._graph = self._graph
        forked._adapter = self._adapter
        forked._pending_types = self._pending_types
        return forked

    def child(self, name: str) -> Self:
        """A persistence of the same store for the child run `name` of this run (a subgraph run, a branch of a
        fan-out), with this one's graph types: run id `'<run id>/<name>'` in the SQL stores; for the file
        store, the file `<name>.json` in a folder named after this run's file (created here).

        Nothing is read or written until the child run is used.
        """
        self._check_open()
        return self._child(name)

    # --- types and serialization ---------------------------------------------------------------------

    def should_set_types(self) -> bool:
        return self._adapter is None and self._pending_types is None

    def set_graph_types(self, graph: GraphTypes) -> None:
        self._graph = graph
        # Building a type adapter costs milliseconds: defer it until a snapshot is written or read.
        if self.should_set_types():
            self._pending_types = (graph.get_nodes(), *graph.inferred_types)

    def set_types(self, state_type: type[StateT], run_end_type: type[RunEndT]) -> None:
        self._adapter = build_snapshot_type_adapter(state_type, run_end_type)

    @property
    def graph_name(self) -> str | None:
        """The name of the graph that last used this persistence, if it has one."""
        return self._graph.name if self._graph is not None else None

    def _type_adapter(self) -> pydantic.TypeAdapter[Snapshot[StateT, RunEndT]]:
        if self._adapter is None:
            if self._pending_types is None:
                raise PersistenceError(
                    f"{type(self).__name__} needs the graph's types to read or write snapshots of run "
                    f'{self.run_id!r}: pass it to a graph run, or call `persistence.set_graph_types(graph)` first.'
                )
            nodes, state_type, run_end_type = self._pending_types
            key: tuple[Any, ...] = (tuple(nodes), state_type, run_end_type)
            try:
                self._adapter = _adapters.get(key)
            except TypeError:  # pragma: no cover - an unhashable type: build the adapter every time
                key = ()
            if self._adapter is None:
                with set_nodes_type_context(nodes):
                    self.set_types(state_type, run_end_type)
                if key:
                    _adapters[key] = self._adapter
            assert self._adapter is not None
        return self._adapter

    def _dump(self, snapshot: Snapshot[StateT, RunEndT]) -> bytes:
        # The adapter's serializer itself: `TypeAdapter.dump_json` adds microseconds of argument handling
        # per call, with the same output for the default options.
        return self._type_adapter().serializer.to_json(snapshot)

    def _decode(
        self,
        data: str | bytes,
        snapshot_id: str,
        adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]] | None = None,
    ) -> Snapshot[StateT, RunEndT]:
        """Validate one stored snapshot with `adapter` (default: the graph's types), or raise a `PersistenceError`
        naming the run and the snapshot."""
        try:
            return (adapter or self._type_adapter()).validate_json(data)
        except pydantic.ValidationError as e:
            raise self._bad_snapshot(snapshot_id, e, raw=adapter is not None) from None

    def _bad_snapshot(self, snapshot_id: str, error: pydantic.ValidationError, *, raw: bool) -> PersistenceError:
        unknown = [str(err.get('ctx', {}).get('tag')) for err in error.errors() if err['type'] == 'union_tag_invalid']
        details = '; '.join(f'{_location(err["loc"])}: {err["msg"]}' for err in error.errors()[:3])
        advice = 'load it with the version of the graph that wrote it, or fork the run from an earlier snapshot'
        if raw:
            reason = f'it is not a snapshot ({details})'
            advice = 'it was not written by Edgewise or pydantic-graph, or was damaged since'
        elif unknown:
            reason = f'its node `{unknown[0]}` is not a node of this graph (renamed or removed?)'
        else:
            reason = f"it does not validate against the graph's types ({details})"
        return PersistenceError(
            f'Snapshot {snapshot_id!r} of run {self.run_id!r} in {self._describe()} cannot be loaded: {reason}. '
            f'Nothing was changed; {advice}.'
        )


def _location(loc: tuple[int | str, ...]) -> str:
    # The first part is the tag of the snapshot kind ('node' or 'end'), not a field.
    parts = loc[1:] if loc and loc[0] in ('node', 'end') else loc
    return '.'.join(str(p) for p in parts) or '(root)'


class _RecordRun:
    """`record_run`: `'running'` on entry; on exit `'success'`, `'error'` (the node raised) or back to
    `'created'` (the node was cancelled or interrupted, so that a resume runs it again)."""

    __slots__ = ('_persistence', '_snapshot_id')

    def __init__(self, persistence: DurableStatePersistence[Any, Any], snapshot_id: str) -> None:
        self._persistence = persistence
        self._snapshot_id = snapshot_id

    async def __aenter__(self) -> None:
        persistence = self._persistence
        if persistence._closed:
            raise persistence._closed_error()
        if persistence._loaded == self._snapshot_id:
            persistence._loaded = None
        if persistence._prestarted == self._snapshot_id and persistence._prestarted_ts is not None:
            # Stored `'running'` already, by the write that finished its predecessor: it started at that write.
            start_ts = persistence._prestarted_ts
            persistence._prestarted = None
        else:
            start_ts = now_utc()
            await persistence._op_start(self._snapshot_id, start_ts)
        persistence._running = _Running(self._snapshot_id, start_ts, perf_counter())

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        persistence = self._persistence
        running = persistence._running
        persistence._running = None
        if running is None or running.completed:
            return
        if running.store_failed:
            # The node ran; storing what came next failed. The node is left as stored (`'running'`), so that the
            # next claim runs it again: marking it `'error'` would end a run that did not fail, and the store
            # that just failed may refuse this write too.
            return
        duration = perf_counter() - running.start
        status: EndStatus
        if exc_type is None:
            status = 'success'
        elif issubclass(exc_type, Exception):
            status = 'error'
        else:
            status = 'created'
        error = NodeError.from_exception(exc) if status == 'error' and exc is not None else None
        with anyio.CancelScope(shield=True):
            await persistence._op_finish(running.snapshot_id, status, running.start_ts, duration, error)


class _ClaimRun:
    """`claim_run`: hold the run for this process while a `GraphRun` advances it."""

    __slots__ = ('_owner', '_persistence')

    def __init__(self, persistence: DurableStatePersistence[Any, Any]) -> None:
        self._persistence = persistence
        self._owner: Owner | None = None

    async def __aenter__(self) -> None:
        persistence = self._persistence
        persistence._check_open()
        if persistence._owner is not None:
            raise run_in_progress(persistence.run_id, persistence._owner)
        owner = current_owner(lease=persistence._lease_claims)
        # Taken before the await, so that a second task using the same object fails at once.
        persistence._owner = owner
        try:
            await persistence._op_claim(owner, persistence._handed_out)
        except BaseException:
            persistence._owner = None
            drop_lease(owner)
            raise
        self._owner = owner

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        persistence = self._persistence
        owner = self._owner
        if owner is None or persistence._owner is not owner:
            return  # `aclose()` released the run already
        persistence._owner = None
        unstarted = persistence._unstarted()
        with anyio.CancelScope(shield=True):
            try:
                await persistence._op_release(owner, unstarted)
            except Exception:
                # The store refused the write (a full disk, a lost connection). The run is free all the same:
                # the lease (or the session lock) that made the hold binding goes below. The run's own error,
                # if any, says more than this one.
                if exc_type is None:
                    raise
            finally:
                drop_lease(owner)
