"""Snapshots of a graph run and the contract every persistence backend implements.

A run's history is a list of snapshots: a `NodeSnapshot` each time the next step is to run a node
(with the state before it runs), and an `EndSnapshot` when the run ends. Their JSON shape matches
pydantic-graph 1.x, so histories written by one load in the other.
"""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Annotated, Any, Generic, Literal, Protocol

import pydantic
from pydantic_core import core_schema
from typing_extensions import TypeVar

from .._status import SnapshotStatus
from ..nodes import BaseNode, End

__all__ = (
    'StateT',
    'RunEndT',
    'NodeSnapshot',
    'NodeError',
    'EndSnapshot',
    'Snapshot',
    'SnapshotStatus',
    'BaseStatePersistence',
    'build_snapshot_list_type_adapter',
    'build_snapshot_type_adapter',
    'set_nodes_type_context',
    'RunInfo',
    'RunStatus',
)

StateT = TypeVar('StateT', default=Any)
"""Type of the state stored in snapshots."""
RunEndT = TypeVar('RunEndT', default=Any)
"""Type of the run's output stored in the end snapshot."""

UNSET_SNAPSHOT_ID = '__unset__'


def now_utc() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(tz=timezone.utc)


_nodes_type_context: ContextVar[Sequence[type[BaseNode[Any, Any, Any]]]] = ContextVar('_nodes_type_context')


@contextmanager
def set_nodes_type_context(nodes: Sequence[type[BaseNode[Any, Any, Any]]]) -> Iterator[None]:
    """Make `nodes` the node classes that snapshot schemas built inside this block can hold."""
    token = _nodes_type_context.set(nodes)
    try:
        yield
    finally:
        _nodes_type_context.reset(token)


class _NodeSchema:
    """Pydantic schema for `NodeSnapshot.node`: one of the graph's nodes, tagged by `node_id` in JSON."""

    def __get_pydantic_core_schema__(self, source: Any, handler: pydantic.GetCoreSchemaHandler) -> Any:
        try:
            nodes = _nodes_type_context.get()
        except LookupError:
            raise RuntimeError(
                'Unable to build a Pydantic schema for `BaseNode` without setting `nodes_type_context`: snapshot '
                "schemas need the graph's node classes, so build them inside `set_nodes_type_context(...)`, as "
                '`BaseStatePersistence.set_graph_types(graph)` does.'
            ) from None
        # A tagged union even for one node class, so a stored node of another class is refused by its tag.
        choices: dict[Any, Any] = {node.get_node_id(): handler(node) for node in nodes}
        schema: dict[str, Any] = dict(core_schema.tagged_union_schema(choices, _node_id_of))
        if not all(_tag_in_schema(_resolved(choice, handler)) for choice in choices.values()):
            # A node class pydantic does not describe as a plain dataclass: the tag is added to what it serializes to
            # (a Python dict, serialized again), which costs about twice as much.
            schema['serialization'] = core_schema.wrap_serializer_function_ser_schema(
                _serialize_node,
                return_schema=core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()),
            )
        return schema


def _resolved(schema: Any, handler: pydantic.GetCoreSchemaHandler) -> Any:
    """The schema a `definition-ref` schema stands for (the class's own, shared by every reference to it)."""
    try:
        return handler.resolve_ref_schema(schema)
    except LookupError:
        return schema


def _tag_in_schema(schema: dict[str, Any]) -> bool:
    """Make a node dataclass's serializer write its tag (`node_id`) as a computed field; `False` (and nothing
    changed) when the schema is not a plain (stdlib) dataclass's, or has a field named `node_id` or fields with
    aliases (the tag's alias is written by making the dataclass serialize by alias)."""
    if schema.get('type') != 'dataclass' or 'serialization' in schema:
        return False
    if '__pydantic_core_schema__' in vars(schema['cls']):  # a pydantic dataclass: its schema is its own, not ours
        return False
    args = schema.get('schema')
    if not isinstance(args, dict) or args.get('type') != 'dataclass-args' or args.get('computed_fields'):
        return False
    fields = args.get('fields', [])
    if any(f.get('name') == 'node_id' or f.get('serialization_alias') is not None for f in fields):
        return False
    # The schema is the node class's own (pydantic keeps one per class, by `ref`), changed in place.
    tag = core_schema.computed_field('_edgewise_node_id', core_schema.str_schema(), alias='node_id')
    args['computed_fields'] = [tag]
    schema['config'] = {**(schema.get('config') or {}), 'serialize_by_alias': True}
    return True


def _node_id_of(data: Any) -> str | None:
    if isinstance(data, dict):
        node_id = data.get('node_id')
        return node_id if isinstance(node_id, str) else None
    if isinstance(data, BaseNode):
        return data.get_node_id()
    return None


def _serialize_node(node: Any, handler: pydantic.SerializerFunctionWrapHandler) -> dict[str, Any]:
    data: dict[str, Any] = handler(node)
    data['node_id'] = node.get_node_id()
    return data


_TRACEBACK_FRAMES = 20
"""Frames of a traceback kept with a failed snapshot: the last ones, nearest the error."""
_MESSAGE_LIMIT = 2000
"""Characters of an error's message kept with a failed snapshot."""
_TRACEBACK_LIMIT = 8000
"""Characters of a traceback kept with a failed snapshot (its start and end, when it is longer)."""


@dataclass(kw_only=True)
class NodeError:
    """What a node raised, stored with its snapshot (status `'error'`); secrets in it are replaced by `***`."""

    type: str
    """The exception's class, e.g. `'ValueError'` (with its module unless it is a builtin)."""
    message: str
    """The exception's message."""
    traceback: str
    """The traceback, trimmed to its last frames."""

    @classmethod
    def from_exception(cls, error: BaseException) -> NodeError:
        """The stored form of `error`: its type, message and trimmed traceback, with secrets redacted."""
        import traceback  # (loaded by the first failure stored, not with the graph)

        from ._redact import redact

        kind = type(error)
        name = kind.__qualname__ if kind.__module__ == 'builtins' else f'{kind.__module__}.{kind.__qualname__}'
        text = ''.join(traceback.format_exception(error, limit=-_TRACEBACK_FRAMES))
        if len(text) > _TRACEBACK_LIMIT:
            half = _TRACEBACK_LIMIT // 2
            text = f'{text[:half]}\n[... {len(text) - 2 * half} characters left out ...]\n{text[-half:]}'
        message = str(error)
        if len(message) > _MESSAGE_LIMIT:
            message = message[: _MESSAGE_LIMIT - 3] + '...'
        return cls(type=name, message=redact(message), traceback=redact(text))


@dataclass(kw_only=True)
class NodeSnapshot(Generic[StateT, RunEndT]):
    """A step of a run's history: the next node to run, with the state before it runs."""

    state: StateT
    """The state of the run before the node runs."""
    node: Annotated[BaseNode[StateT, Any, RunEndT], _NodeSchema()]
    """The node to run."""
    start_ts: datetime | None = None
    """When the node started running; `None` until it does."""
    duration: float | None = None
    """How long the node ran, in seconds; `None` until it has run."""
    status: SnapshotStatus = 'created'
    """Where the snapshot is in its life: created, pending, running, success or error."""
    kind: Literal['node'] = 'node'
    """Discriminator between node and end snapshots in serialized histories."""
    id: str = UNSET_SNAPSHOT_ID
    """The snapshot's unique id; taken from the node when not given."""
    error: Annotated[NodeError | None, pydantic.Field(exclude_if=lambda error: error is None)] = field(
        default=None, compare=False, repr=False
    )
    """What the node raised, when its status is `'error'` (`None` otherwise, and in stores written before Edgewise
    kept it); left out of the snapshot's JSON when `None`, which keeps pydantic-graph's shape, and out of
    comparisons and the repr, which keep snapshots equal to pydantic-graph's and printed as it prints them."""

    def __post_init__(self) -> None:
        if self.id == UNSET_SNAPSHOT_ID:
            self.id = self.node.get_snapshot_id()

    @classmethod
    def fast(
        cls, state: StateT, node: BaseNode[StateT, Any, RunEndT], snapshot_id: str
    ) -> NodeSnapshot[StateT, RunEndT]:
        """A new `'created'` snapshot, built without the dataclass `__init__` (used on the hot path)."""
        snapshot = object.__new__(cls)
        snapshot.__dict__.update(
            state=state,
            node=node,
            start_ts=None,
            duration=None,
            status='created',
            kind='node',
            id=snapshot_id,
            error=None,
        )
        return snapshot


@dataclass(kw_only=True)
class EndSnapshot(Generic[StateT, RunEndT]):
    """The last step of a finished run: its output and final state."""

    state: StateT
    """The state of the run when it ended."""
    result: End[RunEndT]
    """The end of the run, holding its output."""
    ts: datetime = field(default_factory=now_utc)
    """When the run ended."""
    kind: Literal['end'] = 'end'
    """Discriminator between node and end snapshots in serialized histories."""
    id: str = UNSET_SNAPSHOT_ID
    """The snapshot's unique id; taken from the `End` when not given."""

    def __post_init__(self) -> None:
        if self.id == UNSET_SNAPSHOT_ID:
            self.id = self.result.get_snapshot_id()

    @property
    def node(self) -> End[RunEndT]:
        """The `result`, so that `[s.node for s in history]` works on any snapshot."""
        return self.result


Snapshot = NodeSnapshot[StateT, RunEndT] | EndSnapshot[StateT, RunEndT]
"""One step of a run's history."""


class GraphTypes(Protocol):
    """What a persistence learns from the graph that runs it (a `Graph` has it): its name, nodes and types.

    The persistence contract names this rather than `Graph`, which sits above it.
    """

    @property
    def name(self) -> str | None:
        """The graph's name, if it has one."""
        ...

    @property
    def inferred_types(self) -> tuple[Any, Any]:
        """The state type and the output type of the graph."""
        ...

    def get_nodes(self) -> Sequence[type[BaseNode[Any, Any, Any]]]:
        """The graph's node classes."""
        ...


class StepRunner(Protocol[StateT, RunEndT]):
    """What `GraphRun` hands `BaseStatePersistence.record_step` to run the node of a step.

    Two plain methods rather than one coroutine wrapping the node's `run`, so that a step costs no coroutine
    beyond the hook's own and the node's.
    """

    def run(self, node: BaseNode[StateT, Any, RunEndT]) -> Awaitable[BaseNode[StateT, Any, RunEndT] | End[RunEndT]]:
        """Start `node`'s `run` (in its span, when tracing); await what it returns, once."""
        ...

    def finish(self, next_node: BaseNode[StateT, Any, RunEndT] | End[RunEndT]) -> str:
        """Check what the node returned against its edges, and return the id of its snapshot, drawn now.

        Raises:
            UndeclaredEdgeError: the node returned a node (or `End`) its return hint does not declare.
            GraphRuntimeError: the node returned something that is neither a node nor `End`.
        """
        ...


class BaseStatePersistence(ABC, Generic[StateT, RunEndT]):
    """The contract of a persistence backend; one instance holds the history of one run."""

    @abstractmethod
    async def snapshot_node(self, state: StateT, next_node: BaseNode[StateT, Any, RunEndT]) -> None:
        """Store a `NodeSnapshot`: the next step is to run `next_node` on `state`."""
        raise NotImplementedError

    @abstractmethod
    async def snapshot_node_if_new(
        self, snapshot_id: str, state: StateT, next_node: BaseNode[StateT, Any, RunEndT]
    ) -> None:
        """Store a `NodeSnapshot` unless one with `snapshot_id` is already stored (atomically)."""
        raise NotImplementedError

    @abstractmethod
    async def snapshot_end(self, state: StateT, end: End[RunEndT]) -> None:
        """Store an `EndSnapshot`: the run ended with `end`."""
        raise NotImplementedError

    @abstractmethod
    def record_run(self, snapshot_id: str) -> AbstractAsyncContextManager[None]:
        """Record the run of a node snapshot around the node's `run` call.

        On entry the status becomes `'running'` with `start_ts` set; on exit `'success'` or `'error'`
        with `duration` set.

        Raises:
            LookupError: no snapshot has that id.
            GraphNodeStatusError: the snapshot is not `'created'` or `'pending'`.
        """
        raise NotImplementedError

    async def record_step(
        self,
        snapshot_id: str,
        state: StateT,
        node: BaseNode[StateT, Any, RunEndT],
        runner: StepRunner[StateT, RunEndT],
        stored: bool = False,
    ) -> BaseNode[StateT, Any, RunEndT] | End[RunEndT]:
        """Take one step of a run: store the snapshot of `node` unless it is stored, run it, store what follows.

        `GraphRun` calls this once per node. The default is made of the other methods of the contract, so that
        a backend written against them alone works unchanged: `snapshot_node_if_new` (skipped when `stored`),
        then, inside `record_run(snapshot_id)`, `await runner.run(node)` and `runner.finish(next_node)`, and
        the snapshot of what the node returned is stored (`snapshot_node` or `snapshot_end`) before the node's
        snapshot is marked done, so that a crash in between never leaves a run with nothing to resume from.
        A backend may override it with a cheaper equivalent.

        Args:
            snapshot_id: The id of the snapshot of `node`.
            state: The run's state.
            node: The node to run.
            runner: Runs `node` (in its span) and checks what it returned; call each method once.
            stored: The run knows the snapshot of `node` is already stored.

        Returns:
            What the node returned: the next node, or the `End` of the run.
        """
        if not stored:
            await self.snapshot_node_if_new(snapshot_id, state, node)
        async with self.record_run(snapshot_id):
            next_node = await runner.run(node)
            runner.finish(next_node)  # checks it, and draws the next snapshot's id before anything is stored
            if isinstance(next_node, End):
                await self.snapshot_end(state, next_node)
            else:
                await self.snapshot_node(state, next_node)
        return next_node

    async def checkpoint(self, state: StateT, node: BaseNode[StateT, Any, RunEndT]) -> None:
        """Store `state` as the state of the snapshot of `node` while `node` runs, so that a resume starts it again
        from there (an agent's tool calls, say, checkpointed one by one as they finish).

        The node's snapshot keeps its id, place and status; only its state (and node data) is replaced. The
        default does nothing: an in-memory run does not outlive its process.
        """

    @abstractmethod
    async def load_next(self) -> NodeSnapshot[StateT, RunEndT] | None:
        """Return the first `'created'` node snapshot after marking it `'pending'`, or `None`."""
        raise NotImplementedError

    @abstractmethod
    async def load_all(self) -> list[Snapshot[StateT, RunEndT]]:
        """Return the whole history of the run."""
        raise NotImplementedError

    def claim_run(self) -> AbstractAsyncContextManager[None]:
        """Hold the run for the current process while a `GraphRun` advances it (entered by `Graph.iter` and
        `Graph.iter_from_persistence`).

        Durable backends raise `RunInProgressError` when a live process holds the run, and when they take it
        over from a process that is gone, make the step it left unfinished runnable again. The default does
        nothing, so in-memory and custom backends work unchanged.
        """
        return _NO_CLAIM

    def set_graph_types(self, graph: GraphTypes) -> None:
        """Learn the state, output and node types of `graph`, when `should_set_types()` says so.

        `graph` is a classic `Graph` or a builder graph (`edgewise.graph.builder.Graph`): either can read back
        the runs it stored with `load_all()` / `load_next()` once given here.
        """
        if self.should_set_types():
            with set_nodes_type_context(graph.get_nodes()):
                self.set_types(*graph.inferred_types)

    def should_set_types(self) -> bool:
        """Whether `set_types` still needs to be called; backends that serialize return `True` until it was."""
        return False

    def set_types(self, state_type: type[StateT], run_end_type: type[RunEndT]) -> None:
        """Build what is needed to (de)serialize snapshots of these types (e.g. a type adapter)."""


class _NoClaim:
    __slots__ = ()

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *args: object) -> None:
        return None


_NO_CLAIM = _NoClaim()

RunStatus = Literal['running', 'waiting', 'finished', 'failed']
"""Where a stored run is: a live process is `'running'` a node of it, the next node is `'waiting'` to run
(also when the process that was running it died: resuming runs that node again), the run has `'finished'`
(it has an end snapshot), or it `'failed'` (its last node raised)."""


@dataclass(kw_only=True, frozen=True)
class RunInfo:
    """A stored run, as listed by `SqliteStatePersistence.list_runs` and `PostgresStatePersistence.list_runs`."""

    run_id: str
    """The run's id."""
    graph_name: str | None
    """The name of the graph that ran it, when known."""
    status: RunStatus
    """Where the run is: running, waiting, finished or failed."""
    created: datetime
    """When the run was first stored (UTC)."""
    updated: datetime
    """When the run was last written (UTC)."""
    snapshot_count: int
    """How many snapshots its history holds."""


def build_snapshot_list_type_adapter(
    state_t: type[StateT], run_end_t: type[RunEndT]
) -> pydantic.TypeAdapter[list[Snapshot[StateT, RunEndT]]]:
    """A type adapter for a list of snapshots; call it inside `set_nodes_type_context` (from `set_types`)."""
    return pydantic.TypeAdapter(list[Annotated[Snapshot[state_t, run_end_t], pydantic.Discriminator('kind')]])  # type: ignore[valid-type]


def build_snapshot_type_adapter(
    state_t: type[StateT], run_end_t: type[RunEndT]
) -> pydantic.TypeAdapter[Snapshot[StateT, RunEndT]]:
    """A type adapter for one snapshot; call it inside `set_nodes_type_context` (from `set_types`)."""
    return pydantic.TypeAdapter(Annotated[Snapshot[state_t, run_end_t], pydantic.Discriminator('kind')])  # type: ignore[valid-type,misc,arg-type]
