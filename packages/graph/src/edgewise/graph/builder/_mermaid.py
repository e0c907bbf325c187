"""Mermaid state diagrams of builder graphs, in pydantic-graph 2.x's text form."""

from __future__ import annotations as _annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .decision import Decision
from .id_types import NodeID
from .join import Join
from .node import EndNode, Fork, StartNode
from .paths import DestinationMarker, LabelMarker, Path
from .step import Step

__all__ = (
    'DEFAULT_HIGHLIGHT_CSS',
    'StateDiagramDirection',
    'NodeKind',
    'MermaidNode',
    'MermaidEdge',
    'MermaidGraph',
    'build_mermaid_graph',
)

DEFAULT_HIGHLIGHT_CSS = 'fill:#fdff32'
"""The CSS used for highlighted nodes."""

StateDiagramDirection = Literal['TB', 'LR', 'RL', 'BT']
"""The direction of a diagram: top to bottom (mermaid's default), left to right, right to left, bottom to top."""

NodeKind = Literal['broadcast', 'map', 'join', 'start', 'end', 'step', 'decision']
"""What a node of a diagram stands for."""


@dataclass
class MermaidNode:
    """A node of a diagram."""

    id: str
    """The node's id."""
    kind: NodeKind
    """What it stands for."""
    label: str | None
    """The text shown for a step, if not its id."""
    note: str | None
    """A note shown next to a decision."""


@dataclass
class MermaidEdge:
    """An edge of a diagram."""

    start_id: str
    """The node it leaves from."""
    end_id: str
    """The node it goes to."""
    label: str | None
    """Its label."""


def _kind(node: Any) -> NodeKind:
    if isinstance(node, StartNode):
        return 'start'
    if isinstance(node, EndNode):
        return 'end'
    if isinstance(node, Step):
        return 'step'
    if isinstance(node, Join):
        return 'join'
    if isinstance(node, Fork):
        return 'map' if node.is_map else 'broadcast'
    assert isinstance(node, Decision), node
    return 'decision'


def _path_edges(source_id: str, path: Path) -> list[MermaidEdge]:
    edges: list[MermaidEdge] = []
    label: str | None = None
    for item in path.items:
        if isinstance(item, LabelMarker):
            label = item.label
        elif isinstance(item, DestinationMarker):
            edges.append(MermaidEdge(source_id, item.destination_id, label))
    return edges


def build_mermaid_graph(
    graph_nodes: Mapping[NodeID, Any], graph_edges_by_source: Mapping[NodeID, Sequence[Path]]
) -> MermaidGraph:
    """The diagram of a built graph's nodes and (flattened) edges."""
    nodes: list[MermaidNode] = []
    edges: list[MermaidEdge] = []
    for node_id, node in graph_nodes.items():
        kind = _kind(node)
        label = node.label if kind == 'step' else None
        note = node.note if kind == 'decision' else None
        nodes.append(MermaidNode(node_id, kind, label, note))
        for path in graph_edges_by_source.get(node_id, ()):
            edges += _path_edges(node_id, path)
        if isinstance(node, Decision):
            for branch in node.branches:
                edges += _path_edges(node_id, branch.path)
    return MermaidGraph(nodes, edges)


@dataclass
class MermaidGraph:
    """A diagram: its nodes and edges."""

    nodes: list[MermaidNode]
    """The nodes."""
    edges: list[MermaidEdge]
    """The edges."""
    title: str | None = None
    """A title shown above the diagram."""
    direction: StateDiagramDirection | None = None
    """The diagram's direction."""

    def render(
        self, direction: StateDiagramDirection | None = None, title: str | None = None, edge_labels: bool = True
    ) -> str:
        """The mermaid `stateDiagram-v2` text, nodes and edges ordered by their distance from the start.

        Args:
            direction: The diagram's direction (this graph's own when not given).
            title: A title shown above the diagram (this graph's own when not given).
            edge_labels: Whether to show edge labels.
        """
        title = title or self.title
        direction = direction or self.direction
        lines = ['---', f'title: {title}', '---'] if title else []
        lines.append('stateDiagram-v2')
        if direction is not None:
            lines.append(f'  direction {direction}')
        depth = _depths(self.edges)
        far = float('inf')
        for node in sorted(self.nodes, key=lambda n: (depth.get(n.id, far), n.id)):
            lines += _node_lines(node)
        lines.append('')
        ordered = sorted(
            self.edges, key=lambda e: (depth.get(e.start_id, far), depth.get(e.end_id, far), e.start_id, e.end_id)
        )
        for edge in ordered:
            start = '[*]' if edge.start_id == StartNode.id else edge.start_id
            end = '[*]' if edge.end_id == EndNode.id else edge.end_id
            line = f'  {start} --> {end}'
            if edge.label and edge_labels:
                line += f': {edge.label}'
            lines.append(line)
        return '\n'.join(lines)


def _depths(edges: Sequence[MermaidEdge]) -> dict[str, int]:
    """Each node's distance (in edges) from the start, breadth first."""
    following: dict[str, list[str]] = {}
    for edge in edges:
        following.setdefault(edge.start_id, []).append(edge.end_id)
    depth: dict[str, int] = {StartNode.id: 0}
    queue: deque[str] = deque([StartNode.id])
    while queue:
        node_id = queue.popleft()
        for next_id in following.get(node_id, ()):
            if next_id not in depth:
                depth[next_id] = depth[node_id] + 1
                queue.append(next_id)
    return depth


def _node_lines(node: MermaidNode) -> list[str]:
    if node.kind == 'step':
        return [f'  {node.id}: {node.label}' if node.label else f'  {node.id}']
    if node.kind == 'join':
        return [f'  state {node.id} <<join>>']
    if node.kind in ('map', 'broadcast'):
        return [f'  state {node.id} <<fork>>']
    if node.kind == 'decision':
        lines = [f'  state {node.id} <<choice>>']
        if node.note:
            lines.append(f'  note right of {node.id}\n    {node.note}\n  end note')
        return lines
    return []  # the start and the end are drawn as `[*]` in edges
