"""Paths: what happens to a value between a node and the next ones (transform, map, broadcast, label, go to).

An edge is a `Path` from one or more source nodes: a list of markers read in order. `GraphBuilder.edge_from(...)`
starts an `EdgePathBuilder`, whose methods add markers and whose `to(...)` ends the path at its destinations.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, Self, cast, get_origin, overload

from typing_extensions import TypeAliasType, TypeVar

from ..exceptions import GraphBuildingError
from .id_types import ForkID, JoinID, NodeID, generate_placeholder_node_id
from .step import NodeStep, StepContext

__all__ = (
    'TransformFunction',
    'TransformMarker',
    'MapMarker',
    'BroadcastMarker',
    'LabelMarker',
    'DestinationMarker',
    'PathItem',
    'Path',
    'PathBuilder',
    'EdgePath',
    'EdgePathBuilder',
)

StateT = TypeVar('StateT')
DepsT = TypeVar('DepsT')
OutputT = TypeVar('OutputT', covariant=True)  # builders only hand their value type on
InputT = TypeVar('InputT')
T = TypeVar('T')
OutputT_co = TypeVar('OutputT_co', covariant=True)
StateT_contra = TypeVar('StateT_contra', contravariant=True)
DepsT_contra = TypeVar('DepsT_contra', contravariant=True)
InputT_contra = TypeVar('InputT_contra', contravariant=True)


class TransformFunction(Protocol[StateT_contra, DepsT_contra, InputT_contra, OutputT_co]):
    """A plain (not async) function taking a `StepContext` and returning the transformed value."""

    def __call__(self, ctx: StepContext[StateT_contra, DepsT_contra, InputT_contra]) -> OutputT_co:
        """Transform `ctx.inputs`."""
        ...


@dataclass
class TransformMarker:
    """The value is replaced by what `transform` returns for it."""

    transform: TransformFunction[Any, Any, Any, Any]
    """The function."""


@dataclass
class MapMarker:
    """The (iterable) value is split: each item goes down the rest of the path in a branch of its own."""

    fork_id: ForkID
    """The id of the map's fork node."""
    downstream_join_id: JoinID | None
    """The join that still fires, with its initial value, when the iterable is empty."""


@dataclass
class BroadcastMarker:
    """The value goes down each of `paths`, in parallel."""

    paths: Sequence[Path]
    """The paths."""
    fork_id: ForkID
    """The id of the broadcast's fork node."""


@dataclass
class LabelMarker:
    """A label for the edge at this point (shown on diagrams)."""

    label: str
    """The label."""


@dataclass
class DestinationMarker:
    """The value goes to the node `destination_id`; the end of a path."""

    destination_id: NodeID
    """The destination."""


PathItem = TypeAliasType('PathItem', TransformMarker | MapMarker | BroadcastMarker | LabelMarker | DestinationMarker)
"""One marker of a path."""


@dataclass
class Path:
    """The markers of an edge, in order."""

    items: list[PathItem]
    """The markers."""

    @property
    def last_fork(self) -> BroadcastMarker | MapMarker | None:
        """The last map or broadcast on the path, if any."""
        forks = [item for item in self.items if isinstance(item, BroadcastMarker | MapMarker)]
        return forks[-1] if forks else None

    @property
    def next_path(self) -> Path:
        """The path after its first marker."""
        return Path(self.items[1:])


def _as_destinations(destinations: Sequence[Any]) -> list[Any]:
    """Destination nodes, with `BaseNode` classes (or their parametrized aliases) made into `NodeStep`s."""
    nodes: list[Any] = []
    for destination in destinations:
        destination = get_origin(destination) or destination
        nodes.append(  # a class here is a `BaseNode` subclass
            NodeStep(cast(Any, destination)) if inspect.isclass(destination) else destination
        )
    return nodes


def _fork_id(fork_id: str | None, kind: str) -> ForkID:
    return ForkID(NodeID(fork_id or generate_placeholder_node_id(kind)))


@dataclass
class PathBuilder(Generic[StateT, DepsT, OutputT]):
    """Builds a `Path` marker by marker; each method returns a new builder (builders are never changed)."""

    working_items: Sequence[PathItem]
    """The markers so far."""

    def to(self, destination: Any, /, *extra_destinations: Any, fork_id: str | None = None) -> Path:
        """End the path at `destination`, or broadcast to every destination given.

        Args:
            destination: The node the value goes to.
            *extra_destinations: More nodes: the value goes to each, in parallel (a broadcast).
            fork_id: The id of that broadcast's fork node.
        """
        if not extra_destinations:
            return Path([*self.working_items, DestinationMarker(destination.id)])
        branches = [Path([DestinationMarker(d.id)]) for d in (destination, *extra_destinations)]
        return Path([*self.working_items, BroadcastMarker(paths=branches, fork_id=_fork_id(fork_id, 'broadcast'))])

    def broadcast(self, forks: Sequence[Path], /, *, fork_id: str | None = None) -> Path:
        """End the path with a broadcast: the value goes down each of `forks`, in parallel."""
        return Path([*self.working_items, BroadcastMarker(paths=forks, fork_id=_fork_id(fork_id, 'broadcast'))])

    def transform(self, func: TransformFunction[StateT, DepsT, OutputT, T], /) -> PathBuilder[StateT, DepsT, T]:
        """Replace the value by `func(ctx)`."""
        return PathBuilder[StateT, DepsT, T]([*self.working_items, TransformMarker(func)])

    @overload
    def map(
        self: PathBuilder[StateT, DepsT, Iterable[T]],
        *,
        fork_id: str | None = None,
        downstream_join_id: str | None = None,
    ) -> PathBuilder[StateT, DepsT, T]: ...
    @overload
    def map(
        self: PathBuilder[StateT, DepsT, AsyncIterable[T]],
        *,
        fork_id: str | None = None,
        downstream_join_id: str | None = None,
    ) -> PathBuilder[StateT, DepsT, T]: ...
    def map(
        self: PathBuilder[StateT, DepsT, Any], *, fork_id: str | None = None, downstream_join_id: str | None = None
    ) -> PathBuilder[StateT, DepsT, Any]:
        """Split the (sync or async) iterable value: the rest of the path runs once per item, in parallel.

        Args:
            fork_id: The id of the map's fork node.
            downstream_join_id: The join that must still fire, with its initial value, if the iterable is empty.
        """
        marker = MapMarker(
            fork_id=_fork_id(fork_id, 'map'),
            downstream_join_id=None if downstream_join_id is None else JoinID(NodeID(downstream_join_id)),
        )
        return PathBuilder[StateT, DepsT, Any]([*self.working_items, marker])

    def label(self, label: str, /) -> PathBuilder[StateT, DepsT, OutputT]:
        """Label the edge at this point (diagrams show it)."""
        return PathBuilder[StateT, DepsT, OutputT]([*self.working_items, LabelMarker(label)])


class EdgePath(Generic[StateT, DepsT]):
    """A finished edge: its source nodes, its path, and the nodes the path may reach (for `GraphBuilder.add`)."""

    def __init__(self, sources: Sequence[Any], path: Path, destinations: list[Any]) -> None:
        self._sources = sources
        self.path = path
        """The path."""
        self.destinations = destinations
        """The nodes the path may reach."""

    @property
    def sources(self) -> Sequence[Any]:
        """The nodes the edge leaves from."""
        return self._sources

    def __repr__(self) -> str:
        return f'EdgePath(sources={list(self._sources)!r}, path={self.path!r})'


class EdgePathBuilder(Generic[StateT, DepsT, OutputT]):
    """Builds an edge from source nodes; made by `GraphBuilder.edge_from(...)`."""

    def __init__(self, sources: Sequence[Any], path_builder: PathBuilder[StateT, DepsT, OutputT]) -> None:
        self.sources = sources
        """The nodes the edge leaves from."""
        self._path_builder = path_builder

    def to(self, destination: Any, /, *extra_destinations: Any, fork_id: str | None = None) -> EdgePath[StateT, DepsT]:
        """End the edge at `destination`, or broadcast to every destination given.

        Args:
            destination: A node of the graph, or a `BaseNode` class.
            *extra_destinations: More destinations: the value goes to each, in parallel (a broadcast).
            fork_id: The id of that broadcast's fork node.
        """
        nodes = _as_destinations((destination, *extra_destinations))
        return EdgePath(self.sources, self._path_builder.to(*nodes, fork_id=fork_id), nodes)

    def broadcast(
        self, get_forks: Callable[[Self], Sequence[EdgePath[StateT, DepsT]]], /, *, fork_id: str | None = None
    ) -> EdgePath[StateT, DepsT]:
        """Broadcast to several edges built from this one: `get_forks(self)` returns them.

        Raises:
            GraphBuildingError: `get_forks` returned no edge.
        """
        branches = get_forks(self)
        if not branches:
            raise GraphBuildingError(
                f'The call to {get_forks} returned no branches, but must return at least one: return the edges '
                'to broadcast to.'
            )
        path = self._path_builder.broadcast([Path(list(b.path.items)) for b in branches], fork_id=fork_id)
        return EdgePath(self.sources, path, [d for b in branches for d in b.destinations])

    @overload
    def map(
        self: EdgePathBuilder[StateT, DepsT, Iterable[T]],
        *,
        fork_id: str | None = None,
        downstream_join_id: str | None = None,
    ) -> EdgePathBuilder[StateT, DepsT, T]: ...
    @overload
    def map(
        self: EdgePathBuilder[StateT, DepsT, AsyncIterable[T]],
        *,
        fork_id: str | None = None,
        downstream_join_id: str | None = None,
    ) -> EdgePathBuilder[StateT, DepsT, T]: ...
    def map(
        self: EdgePathBuilder[StateT, DepsT, Any], *, fork_id: str | None = None, downstream_join_id: str | None = None
    ) -> EdgePathBuilder[StateT, DepsT, Any]:
        """Split the iterable value: the rest of the edge runs once per item, in parallel (see `PathBuilder.map`).

        Raises:
            NotImplementedError: the edge has several sources (add one edge per source instead).
        """
        if len(self.sources) > 1:
            raise NotImplementedError(
                'Map is not currently supported with multiple source nodes. Add a separate edge with its own '
                '`.map()` for each source instead.'
            )
        return EdgePathBuilder(
            self.sources, self._path_builder.map(fork_id=fork_id, downstream_join_id=downstream_join_id)
        )

    def transform(self, func: TransformFunction[StateT, DepsT, OutputT, T], /) -> EdgePathBuilder[StateT, DepsT, T]:
        """Replace the value by `func(ctx)`."""
        return EdgePathBuilder(self.sources, self._path_builder.transform(func))

    def label(self, label: str) -> EdgePathBuilder[StateT, DepsT, OutputT]:
        """Label the edge at this point (diagrams show it)."""
        return EdgePathBuilder(self.sources, self._path_builder.label(label))
