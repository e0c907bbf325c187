"""What `GraphBuilder.build` does to the nodes and edges it gathered, pass by pass.

1. Stand-in ids (of maps, broadcasts, decisions, joins not given one) become readable ones: `map`, `map_2`, ...
2. Paths are cut at their first map or broadcast: the part before goes to the fork node, the parts after leave
   from it, so that every path left ends at one destination.
3. A node with several outgoing paths gets a broadcast fork `<id>_broadcast_fork` in between.
4. The structure is checked (unless told not to): edges from the start and to the end, no dead end, nothing
   unreachable.
5. Each join's parent fork is found, and which other joins lie between it and its fork.
"""

from __future__ import annotations as _annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

from ..exceptions import GraphBuildingError, GraphValidationError
from ._mermaid import build_mermaid_graph
from .decision import Decision
from .id_types import ForkID, JoinID, NodeID, replace_placeholder_id
from .join import Join
from .node import EndNode, Fork, StartNode
from .parent_forks import ParentFork, ParentForkFinder
from .paths import BroadcastMarker, DestinationMarker, MapMarker, Path
from .step import Step

__all__ = ('CompiledGraph', 'compile_graph')

Nodes = dict[NodeID, Any]
Edges = dict[NodeID, list[Path]]

_HOW_TO_SUPPRESS = (
    ' If this is intentional, you can suppress this error by passing `validate_graph_structure=False` to the call '
    'to `GraphBuilder.build`.'
)


@dataclass
class CompiledGraph:
    """The nodes and flattened edges of a built graph, with each join's parent fork."""

    nodes: Nodes
    edges_by_source: Edges
    parent_forks: dict[JoinID, ParentFork[NodeID]]
    intermediate_join_nodes: dict[JoinID, set[JoinID]]


def compile_graph(nodes: Nodes, edges: Edges, *, validate: bool) -> CompiledGraph:
    """Run the passes of `GraphBuilder.build` (see the module docstring) on what a builder gathered."""
    nodes, edges = _rename_placeholders(nodes, edges)
    nodes, edges = _cut_at_forks(nodes, edges)
    nodes, edges = _insert_broadcast_forks(nodes, edges)
    if validate:
        _validate(nodes, edges)
    parent_forks = _parent_forks(nodes, edges)
    intermediate = {
        join_id: {JoinID(n) for n in fork.intermediate_nodes if isinstance(nodes.get(n), Join)}
        for join_id, fork in parent_forks.items()
    }
    return CompiledGraph(nodes, edges, parent_forks, intermediate)


# 1. readable ids


def _rename_placeholders(nodes: Nodes, edges: Edges) -> tuple[Nodes, Edges]:
    counts: Counter[str] = Counter()
    renames: dict[NodeID, NodeID] = {}
    for node_id in nodes:
        label = replace_placeholder_id(node_id)
        if label != node_id:
            counts[label] += 1
            renames[node_id] = NodeID(label if counts[label] == 1 else f'{label}_{counts[label]}')

    def new(node_id: NodeID) -> NodeID:
        return renames.get(node_id, node_id)

    # The node objects are renamed in place: a `BaseNode` that returns `my_join.as_node(...)` holds the object.
    for node in nodes.values():
        if isinstance(node, Step | Join | Decision):
            node.id = new(node.id)
        elif isinstance(node, Fork):
            node.id = new(node.id)
            if node.downstream_join_id is not None:
                node.downstream_join_id = new(node.downstream_join_id)
        if isinstance(node, Decision):
            for branch in node.branches:
                _rename_in_path(branch.path, new)
    renamed_edges = {new(source): [_rename_in_path(p, new) for p in paths] for source, paths in edges.items()}
    return {new(node_id): node for node_id, node in nodes.items()}, renamed_edges


def _rename_in_path(path: Path, new: Any) -> Path:
    for item in path.items:
        if isinstance(item, MapMarker):
            item.fork_id = new(item.fork_id)
            if item.downstream_join_id is not None:
                item.downstream_join_id = new(item.downstream_join_id)
        elif isinstance(item, BroadcastMarker):
            item.fork_id = new(item.fork_id)
            for sub_path in item.paths:
                _rename_in_path(sub_path, new)
        elif isinstance(item, DestinationMarker):
            item.destination_id = new(item.destination_id)
    return path


# 2. one destination per path


def _cut(path: Path) -> tuple[Path, list[tuple[NodeID, Path]]]:
    """The path up to its first fork (ending at the fork node), and the paths that leave that fork."""
    for index, item in enumerate(path.items):
        if isinstance(item, MapMarker | BroadcastMarker):
            upstream = Path([*path.items[:index], DestinationMarker(item.fork_id)])
            if isinstance(item, MapMarker):
                return upstream, [(item.fork_id, Path(path.items[index + 1 :]))]
            return upstream, [(item.fork_id, sub_path) for sub_path in item.paths]
    return path, []


def _cut_at_forks(nodes: Nodes, edges: Edges) -> tuple[Nodes, Edges]:
    pending: list[tuple[NodeID, Path]] = []
    for node in nodes.values():
        if isinstance(node, Decision):
            for branch in node.branches:
                branch.path, downstream = _cut(branch.path)
                pending += downstream
    pending += [(source, path) for source, paths in edges.items() for path in paths]
    cut: Edges = {}
    # Last in, first out: the order of the cut paths (and so of a broadcast's branches) is pydantic-graph's.
    while pending:
        source, path = pending.pop()
        upstream, downstream = _cut(path)
        cut.setdefault(source, []).append(upstream)
        pending += downstream
    return dict(nodes), cut


# 3. several outgoing paths go through a broadcast


def _insert_broadcast_forks(nodes: Nodes, edges: Edges) -> tuple[Nodes, Edges]:
    new_nodes = dict(nodes)
    new_edges: Edges = {}
    for source, paths in edges.items():
        node = nodes[source]
        if len(paths) == 1 or (isinstance(node, Fork) and not node.is_map):
            new_edges[source] = paths
            continue
        fork = Fork[Any, Any](id=ForkID(NodeID(f'{node.id}_broadcast_fork')), is_map=False, downstream_join_id=None)
        new_nodes[fork.id] = fork
        new_edges[source] = [Path([DestinationMarker(fork.id)])]
        new_edges[fork.id] = paths
    return new_nodes, new_edges


# 4. structure checks


def _destinations(path: Path) -> Iterator[NodeID]:
    return (item.destination_id for item in path.items if isinstance(item, DestinationMarker))


def _outgoing(node: Any, edges: Edges) -> list[Path]:
    paths = list(edges.get(node.id, ()))
    if isinstance(node, Decision):
        paths += [branch.path for branch in node.branches]
    return paths


def _validate(nodes: Nodes, edges: Edges) -> None:
    if not edges.get(StartNode.id):
        raise GraphValidationError('The graph has no edges from the start node.' + _HOW_TO_SUPPRESS)
    targets = {d for node in nodes.values() for path in _outgoing(node, edges) for d in _destinations(path)}
    targets |= {d for paths in edges.values() for path in paths for d in _destinations(path)}
    if EndNode.id not in targets:
        raise GraphValidationError('The graph has no edges to the end node.' + _HOW_TO_SUPPRESS)
    dead_ends = [
        node_id for node_id, node in nodes.items() if not isinstance(node, EndNode) and not _outgoing(node, edges)
    ]
    if dead_ends:
        raise GraphValidationError(f'The following nodes have no outgoing edges: {dead_ends}.' + _HOW_TO_SUPPRESS)
    reachable = {StartNode.id}
    frontier = [StartNode.id]
    while frontier:
        node_id = frontier.pop()
        node = nodes.get(node_id)
        paths = _outgoing(node, edges) if node is not None else edges.get(node_id, [])
        for destination in (d for path in paths for d in _destinations(path)):
            if destination not in reachable:
                reachable.add(destination)
                frontier.append(destination)
    unreachable = [node_id for node_id in nodes if node_id not in reachable]
    if unreachable:
        raise GraphValidationError(
            f'The following nodes are not reachable from the start node: {unreachable}.' + _HOW_TO_SUPPRESS
        )


# 5. parent forks


def _parent_forks(nodes: Nodes, edges: Edges) -> dict[JoinID, ParentFork[NodeID]]:
    successors: dict[NodeID, list[NodeID]] = {}
    for node_id, node in nodes.items():
        for path in _outgoing(node, edges) if isinstance(node, Decision) else edges.get(node_id, []):
            successors.setdefault(node_id, []).extend(islice(_destinations(path), 1))
    # The start counts as a fork: a join with no fork above it waits for the whole run.
    fork_ids = {StartNode.id} | {node_id for node_id, node in nodes.items() if isinstance(node, Fork)}
    finder = ParentForkFinder(nodes=set(nodes), start_ids={StartNode.id}, fork_ids=fork_ids, edges=successors)
    parent_forks: dict[JoinID, ParentFork[NodeID]] = {}
    for join in (node for node in nodes.values() if isinstance(node, Join)):
        parent = finder.find_parent_fork(
            join.id, parent_fork_id=join.parent_fork_id, prefer_closest=join.preferred_parent_fork == 'closest'
        )
        if parent is None:
            diagram = build_mermaid_graph(nodes, edges).render()
            raise GraphBuildingError(
                f'Join {join.id!r} has no dominating fork, so the run could not tell when its branches are all in.\n\n'
                'For every Join J in the graph, there must be a Fork F between the StartNode and J satisfying:\n'
                '* every path from the StartNode to J passes through F, and\n'
                '* every cycle through J passes through F.\n'
                'Route the branches that reach the join through one fork (a `.map()` or a broadcast), or give '
                '`parent_fork_id=` to `GraphBuilder.join`.\n\n'
                f'Mermaid diagram:\n{diagram}'
            )
        parent_forks[join.id] = parent
    return parent_forks
