"""Nodes, the end marker, edge labels and the run context: the pieces a workflow is written with."""

from __future__ import annotations as _annotations

import inspect
import itertools
import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field, is_dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Never, Protocol, Self, get_args, get_origin

import typing_extensions
from typing_extensions import TypeVar

from ._copy import deep_copy
from ._edges import Edge, hint_members, type_repr
from .exceptions import GraphRuntimeError, GraphSetupError

__all__ = (
    'GraphRunContext',
    'BaseNode',
    'End',
    'Edge',
    'NodeDef',
    'DepsT',
    'StateT',
    'RunEndT',
    'NodeRunEndT',
    'generate_snapshot_id',
    'ForkDef',
)

StateT = TypeVar('StateT', default=None)
"""Type of a graph's state."""
RunEndT = TypeVar('RunEndT', covariant=True, default=None)
"""Type of the value a graph run ends with."""
NodeRunEndT = TypeVar('NodeRunEndT', covariant=True, default=Never)
"""Type of the value a node may end the run with (`Never` for nodes that never end it)."""
DepsT = TypeVar('DepsT', default=None, contravariant=True)
"""Type of a graph's dependencies."""

_SNAPSHOT_ID_ATTR = '__snapshot_id'
_LINK_ATTR = '_edgewise_link'
_T = TypeVar('_T')


class RunLink(Protocol):
    """What a run context reaches its run through (implemented by the graph's run machinery)."""

    async def emit(self, data: Any) -> None:
        """Hand `data` to the run's event stream, if the run is streamed."""
        ...

    async def run_subgraph(
        self, graph: Any, start_node: BaseNode[Any, Any, Any], name: str, state: Any, deps: Any
    ) -> Any:
        """Run `graph` from `start_node` as a child run called `name`; its output."""
        ...

    async def fan_out(self, fork: Any, state: Any, deps: Any) -> BaseNode[Any, Any, Any]:
        """Run the branches of `fork` and return its join node."""
        ...


@dataclass(kw_only=True)
class GraphRunContext(Generic[StateT, DepsT]):
    """What a node's `run` method receives: the run's state and its dependencies."""

    state: StateT
    """The state of the run, shared by every node and persisted with each snapshot."""
    deps: DepsT
    """The dependencies of the run (clients, configuration, ...); never persisted."""

    async def emit(self, data: Any) -> None:
        """Send `data` to whoever consumes the run's events (`Graph.stream`), as a `CustomEvent`.

        Waits while the consumer's buffer is full (the run is paused with it); does nothing when the run is
        not streamed, so a node may always call it.
        """
        link: RunLink | None = self.__dict__.get(_LINK_ATTR)
        if link is not None:
            await link.emit(data)

    async def run_subgraph(
        self,
        graph: Any,
        start_node: BaseNode[Any, Any, Any],
        *,
        name: str,
        state: Any = None,
        deps: Any = None,
    ) -> Any:
        """Run another graph as part of this node's step, and return the data of its `End`.

        The sub-run is a child run of this one: with a durable persistence it is stored under the run id
        `'<this run's id>/<name>'`, and a resumed parent resumes the child where it stopped (a finished child
        is not run again: its output is read back). Its events go to this run's stream, with `name` in their
        `path`. List the graph in the node's `subgraphs` class variable to have diagrams draw it.

        Args:
            graph: The `Graph` to run.
            start_node: The node it starts from.
            name: The child run's name, unique within this run (a node that runs in a loop adds a counter).
            state: The child run's state: its own object, or a part of this run's state (mutated in place).
            deps: The child run's dependencies; this run's when `None`.

        Raises:
            GraphRuntimeError: the context does not belong to a graph run (it was built by hand).
        """
        link: RunLink | None = self.__dict__.get(_LINK_ATTR)
        if link is None:
            raise GraphRuntimeError(
                f'Cannot run subgraph {name!r}: this `GraphRunContext` was not made by a graph run. Call '
                '`run_subgraph` on the context a node receives from its run.'
            )
        return await link.run_subgraph(graph, start_node, name, state, self.deps if deps is None else deps)


class BaseNode(ABC, Generic[StateT, DepsT, NodeRunEndT]):
    """Base class of every node of a graph.

    Subclass it (usually as a dataclass), implement `run`, and annotate `run`'s return type with the
    nodes it may go to next, and `End[T]` if it may end the run: the graph's edges are read from that hint.
    """

    docstring_notes: ClassVar[bool] = False
    """Set to `True` to show the class docstring as a note on mermaid diagrams."""
    subgraphs: ClassVar[tuple[Any, ...]] = ()
    """The graphs this node runs with `ctx.run_subgraph(...)`, for diagrams to draw inside it."""

    @abstractmethod
    async def run(self, ctx: GraphRunContext[StateT, DepsT]) -> BaseNode[StateT, DepsT, Any] | End[NodeRunEndT]:
        """Run the node and return the next node to run, or `End` to finish the run.

        The return type hint is read at graph construction to find the node's outgoing edges.

        Args:
            ctx: The run context, with the run's state and dependencies.
        """
        ...

    @property
    def _edgewise_node_id(self) -> str:
        """`get_node_id()`, read by the serializer of stored snapshots (which writes it as `node_id`)."""
        return self.get_node_id()

    def get_snapshot_id(self) -> str:
        """The id of the snapshot this node instance is (or will be) stored under."""
        snapshot_id: str | None = self.__dict__.get(_SNAPSHOT_ID_ATTR)
        if snapshot_id is None:
            snapshot_id = generate_snapshot_id(self.get_node_id())
            object.__setattr__(self, _SNAPSHOT_ID_ATTR, snapshot_id)
        return snapshot_id

    def set_snapshot_id(self, snapshot_id: str) -> None:
        """Bind this node instance to an existing snapshot id (used when restoring from persistence)."""
        object.__setattr__(self, _SNAPSHOT_ID_ATTR, snapshot_id)

    if TYPE_CHECKING:
        # Typed as a plain classmethod, so that subclasses can override it without a type error.
        @classmethod
        def get_node_id(cls) -> str:
            """The node's id in its graph; the class name unless overridden."""
            ...
    else:

        @classmethod
        @cache
        def get_node_id(cls) -> str:
            """The node's id in its graph; the class name unless overridden."""
            return cls.__name__

    @classmethod
    def get_note(cls) -> str | None:
        """The note shown on mermaid diagrams: the cleaned docstring when `docstring_notes` is set."""
        if not cls.docstring_notes:
            return None
        docstring = cls.__doc__
        # A dataclass without a docstring gets its signature as one; that is not a note.
        if not docstring or (is_dataclass(cls) and docstring.startswith(f'{cls.__name__}(')):
            return None
        return inspect.cleandoc(docstring)

    @classmethod
    def get_node_def(cls, local_ns: dict[str, Any] | None) -> NodeDef[StateT, DepsT, NodeRunEndT]:
        """Read this node's outgoing edges from the return hint of `run`.

        Args:
            local_ns: Extra namespace to resolve forward references in (where the graph is defined).
        """
        node_id = cls.get_node_id()
        try:
            hints = typing_extensions.get_type_hints(cls.run, localns=local_ns, include_extras=True)
        except NameError as e:
            raise GraphSetupError(
                f'Node `{node_id}`: cannot resolve the type hints of `run` ({e}). Define the referenced class '
                'before building the graph, or in the scope where `Graph(...)` is called.'
            ) from e
        try:
            return_hint = hints['return']
        except KeyError:
            raise GraphSetupError(
                f'Node {cls} is missing a return type hint on its `run` method; annotate it with the nodes it '
                'may return next, e.g. `-> NextNode | End[int]`.'
            ) from None

        next_node_edges: dict[str, Edge] = {}
        end_edge: Edge | None = None
        returns_base_node = False
        forks: list[ForkDef] = []
        for return_type, edge in hint_members(return_hint):
            origin = get_origin(return_type) or return_type
            if getattr(origin, '_edgewise_fork', False):
                forks.append(_fork_def(node_id, return_type, edge))
            elif origin is End:
                end_edge = edge
            elif origin is BaseNode:
                returns_base_node = True
            elif isinstance(origin, type) and issubclass(origin, BaseNode):
                next_node_edges[origin.get_node_id()] = edge
            else:
                raise GraphSetupError(
                    f'Invalid return type: {return_type} in the hint of `{node_id}.run`; each member must be '
                    'a `BaseNode` subclass or `End[...]`.'
                )
        return NodeDef(
            node=cls,
            node_id=node_id,
            note=cls.get_note(),
            next_node_edges=next_node_edges,
            end_edge=end_edge,
            returns_base_node=returns_base_node,
            forks=forks,
        )

    def deep_copy(self) -> Self:
        """A deep copy of the node, keeping its snapshot id."""
        return deep_copy(self)


@dataclass
class End(Generic[RunEndT]):
    """Returned by a node to end the run with `data` as its output."""

    data: RunEndT
    """The output of the run."""

    def deep_copy_data(self) -> End[RunEndT]:
        """A copy of this end whose data is deep-copied, keeping the snapshot id."""
        if self.data is None:
            return self
        end = End(deep_copy(self.data))
        end.set_snapshot_id(self.get_snapshot_id())
        return end

    def get_snapshot_id(self) -> str:
        """The id of the end snapshot for this value."""
        snapshot_id: str | None = self.__dict__.get(_SNAPSHOT_ID_ATTR)
        if snapshot_id is None:
            snapshot_id = self.__dict__[_SNAPSHOT_ID_ATTR] = generate_snapshot_id('end')
        return snapshot_id

    def set_snapshot_id(self, snapshot_id: str) -> None:
        """Bind this end to an existing snapshot id."""
        self.__dict__[_SNAPSHOT_ID_ATTR] = snapshot_id


@dataclass(kw_only=True)
class NodeDef(Generic[StateT, DepsT, NodeRunEndT]):
    """A node's definition in a graph: its id, note and outgoing edges, read from its `run` hint."""

    node: type[BaseNode[StateT, DepsT, NodeRunEndT]]
    """The node class."""
    node_id: str
    """The node's id."""
    note: str | None
    """The note shown on mermaid diagrams."""
    next_node_edges: dict[str, Edge]
    """The ids of the nodes it may go to next, with the edge of each."""
    end_edge: Edge | None
    """The edge to the end of the run, if the node may end it."""
    returns_base_node: bool
    """Whether `run` is annotated to return bare `BaseNode`, so that it may go to any node."""
    forks: list[ForkDef] = field(default_factory=list['ForkDef'], repr=False)
    """The fan-outs the node may start (`Fork[...]` members of its return hint)."""


@dataclass(frozen=True, kw_only=True)
class ForkDef:
    """A fan-out declared by `Fork[Branches, Join]` in a node's return hint."""

    branch_ids: tuple[str, ...]
    """The ids of the nodes a branch may start at."""
    join_id: str
    """The id of the node that receives the branches' results."""
    edge: Edge
    """The edge label given with `Annotated[Fork[...], Edge(...)]`."""


def _fork_def(node_id: str, hint: Any, edge: Edge) -> ForkDef:
    args = get_args(hint)
    if len(args) != 2:
        raise GraphSetupError(
            f'Node `{node_id}`: `Fork` in the hint of `run` needs two parameters, `Fork[BranchNodes, JoinNode]`.'
        )
    branch_ids: list[str] = []
    for member, _ in hint_members(args[0]):
        if not (isinstance(member, type) and issubclass(member, BaseNode)):
            raise GraphSetupError(
                f'Node `{node_id}`: the branches of `Fork[...]` must be node classes, got {type_repr(member)}.'
            )
        branch_ids.append(member.get_node_id())
    join = args[1]
    if not (isinstance(join, type) and issubclass(join, BaseNode)):
        raise GraphSetupError(f'Node `{node_id}`: the join of `Fork[...]` must be a node class, got {type_repr(join)}.')
    if 'results' not in inspect.signature(join).parameters:
        raise GraphSetupError(
            f'Node `{node_id}`: the join node `{join.get_node_id()}` must take the branch results as a `results` '
            'argument (e.g. a dataclass field `results: list[int]`).'
        )
    return ForkDef(branch_ids=tuple(branch_ids), join_id=join.get_node_id(), edge=edge)


# Snapshot ids must be unique, not secret or unguessable. Each process (and each forked child) draws
# 64 random bits once and appends a counter: several times cheaper per id than uuid4, no syscall per id.
# The counter's 16 hex digits are made in C (`int.to_bytes(8).hex()` in a `map`): half the cost of formatting it
# with `:016x`, and `next` on it is atomic, so threads never draw the same id. It starts below 2**32, and so never
# reaches 2**64, where `to_bytes(8)` would fail.
_id_prefix = ''
_id_digits: Iterator[str] = iter(())


def _reseed_ids() -> None:
    global _id_prefix, _id_digits
    _id_prefix = os.urandom(8).hex()
    counter = itertools.count(int.from_bytes(os.urandom(4), 'big'))
    _id_digits = map(bytes.hex, map(int.to_bytes, counter, itertools.repeat(8)))


_reseed_ids()
if hasattr(os, 'register_at_fork'):  # pragma: no branch
    os.register_at_fork(after_in_child=_reseed_ids)


def generate_snapshot_id(node_id: str) -> str:
    """A new snapshot id, `'<node_id>:<32 hex digits>'`, unique across processes and machines.

    A module-level function so that tests can patch it for deterministic ids.
    """
    return f'{node_id}:{_id_prefix}{next(_id_digits)}'
