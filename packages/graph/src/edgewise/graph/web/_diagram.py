"""A graph drawn as SVG on the server, with a run's path marked: a small layered layout, no browser code.

Nodes are put in layers by their distance from the start (breadth first), in the order they are found; an
edge to a later layer is drawn straight down, one back to the same or an earlier layer as a curve on the
right. Marks (`done`, `failed`, `running`, `waiting`) are CSS classes on the node's group, which also carries
`data-node` (the node id) and `data-mark`, so a page or a test finds a node and its mark.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from html import escape
from typing import Any

from .._edges import Edge
from ..builder import Graph as BuilderGraph
from ..builder._mermaid import build_mermaid_graph
from ..builder._run_path import RunPath
from ..builder.node import EndNode, StartNode
from ..graph import Graph
from ..persistence.raw import RawSnapshot

__all__ = (
    'Diagram',
    'builder_marks',
    'diagram_of_builder',
    'diagram_of_graph',
    'diagram_of_history',
    'path_marks',
    'render_svg',
)

START = '[*]'
"""The start pseudo-node."""
END = 'End'
"""The end pseudo-node."""

_ROW, _GAP, _HEIGHT, _CHAR, _PAD = 90, 30, 36, 7.5, 24


@dataclass
class Diagram:
    """Nodes and edges to draw: `START` and `END` included when the graph starts and ends."""

    nodes: list[str]
    edges: list[tuple[str, str, str | None]]
    """`(source, target, label)` of each edge."""


def diagram_of_graph(graph: Graph[Any, Any, Any]) -> Diagram:
    """The nodes and edges of a graph, from the return hints of its nodes' `run`."""
    ids = list(graph.node_defs)
    edges: list[tuple[str, str, str | None]] = []
    targets: set[str] = set()
    ends = False
    for node_id, node_def in graph.node_defs.items():
        nexts = dict(node_def.next_node_edges)
        if node_def.returns_base_node:
            nexts.update((other, nexts.get(other) or Edge(None)) for other in ids)
        for target, edge in nexts.items():
            edges.append((node_id, target, edge.label))
            targets.add(target)
        if node_def.end_edge is not None:
            edges.append((node_id, END, node_def.end_edge.label))
            ends = True
    starts = [i for i in ids if i not in targets] or ids[:1]
    edges[:0] = [(START, s, None) for s in starts]
    return Diagram(nodes=[START, *ids, *([END] if ends else [])], edges=edges)


def diagram_of_builder(graph: BuilderGraph[Any, Any, Any, Any] | None, path: RunPath) -> Diagram:
    """The nodes and edges of a builder graph (`edgewise.graph.builder`), or, without it, those a stored run of one
    took; the edge leaving each `.map()` the run reached says how many of its items are done."""
    names: dict[str, str] = {StartNode.id: START, EndNode.id: END}
    if graph is not None:
        drawn = build_mermaid_graph(graph.nodes, graph.edges_by_source)
        ids = [node.id for node in drawn.nodes if node.kind not in ('start', 'end')]
        pairs = [(edge.start_id, edge.end_id, edge.label) for edge in drawn.edges]
    else:
        ids = [node_id for node_id in path.marks if node_id not in names]
        pairs = [(source, target, None) for source, target in sorted(path.taken)]
    edges: list[tuple[str, str, str | None]] = []
    for source, target, label in pairs:
        progress = path.maps.get(source)
        if progress is not None:
            label = f'{label}, {progress}' if label else str(progress)
        edges.append((names.get(source, source), names.get(target, target), label))
    ends = any(target == END for _, target, _ in edges)
    return Diagram(nodes=[START, *ids, *([END] if ends else [])], edges=edges)


def builder_marks(path: RunPath) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """The marks of a builder run's nodes and the edges it took, named as `render_svg` names them."""
    names: dict[str, str] = {StartNode.id: START, EndNode.id: END}
    marks = {names.get(node_id, node_id): str(mark) for node_id, mark in path.marks.items()}
    taken = {(names.get(a, a), names.get(b, b)) for a, b in path.taken}
    return marks, taken


def diagram_of_history(history: Sequence[RawSnapshot]) -> Diagram:
    """The nodes and edges a stored run went through, for a run whose graph is not loaded."""
    nodes: list[str] = [START]
    edges: list[tuple[str, str, str | None]] = []
    previous = START
    for snapshot in history:
        node_id = snapshot.node.node_id if snapshot.kind == 'node' else END
        if node_id not in nodes:
            nodes.append(node_id)
        if (previous, node_id, None) not in edges:
            edges.append((previous, node_id, None))
        previous = node_id
    return Diagram(nodes=nodes, edges=edges)


def path_marks(history: Sequence[RawSnapshot], running: bool) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """The mark of each node the run reached, and the edges it took.

    A node that ran is `done`; the last node is `failed` (it raised), `running` (a live process runs it, as
    `running` says) or `waiting` (it runs next); the end is `done` when the run finished.
    """
    marks: dict[str, str] = {}
    taken: set[tuple[str, str]] = set()
    previous = START
    for index, snapshot in enumerate(history):
        last = index == len(history) - 1
        if snapshot.kind == 'end':
            node_id, mark = END, 'done'
        else:
            node_id = snapshot.node.node_id
            if snapshot.status == 'error':
                mark = 'failed'
            elif not last or snapshot.status == 'success':
                mark = 'done'
            else:
                mark = 'running' if running else 'waiting'
        if not (marks.get(node_id) == 'done' and mark == 'done'):
            marks[node_id] = mark
        taken.add((previous, node_id))
        previous = node_id
    return marks, taken


def _layers(diagram: Diagram) -> dict[str, int]:
    layer = {diagram.nodes[0]: 0} if diagram.nodes else {}
    queue = list(layer)
    while queue:
        current = queue.pop(0)
        for source, target, _ in diagram.edges:
            if source == current and target not in layer:
                layer[target] = layer[current] + 1
                queue.append(target)
    depth = max(layer.values(), default=-1)
    for node in diagram.nodes:  # unreachable from the start: a layer of their own below
        if node not in layer:
            layer[node] = depth + 1
    return layer


def _width(node: str) -> float:
    return 28.0 if node == START else len(node) * _CHAR + _PAD


def render_svg(
    diagram: Diagram, marks: Mapping[str, str] | None = None, taken: AbstractSet[tuple[str, str]] | None = None
) -> str:
    """The diagram as an SVG element, each node marked as `marks` says and the edges in `taken` highlighted."""
    marks = marks or {}
    taken = taken or set()
    layer = _layers(diagram)
    rows: dict[int, list[str]] = {}
    for node in diagram.nodes:
        rows.setdefault(layer[node], []).append(node)
    row_widths = {r: sum(_width(n) for n in ns) + _GAP * (len(ns) - 1) for r, ns in rows.items()}
    width = max(row_widths.values(), default=100) + 160
    place: dict[str, tuple[float, float, float]] = {}  # node -> (centre x, top y, width)
    for r, ns in rows.items():
        x = (width - 120 - row_widths[r]) / 2
        for node in ns:
            w = _width(node)
            place[node] = (x + w / 2, 20 + r * _ROW, w)
            x += w + _GAP
    height = 20 + (max(rows, default=0) + 1) * _ROW
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="diagram" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="graph diagram">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>',
    ]
    backs = 0
    for source, target, label in diagram.edges:
        sx, sy, sw = place[source]
        tx, ty, tw = place[target]
        cls = 'edge taken' if (source, target) in taken else 'edge'
        if layer[target] > layer[source]:
            path = f'M {sx:.1f} {sy + _HEIGHT:.1f} L {tx:.1f} {ty:.1f}'
            lx, ly = (sx + tx) / 2, (sy + _HEIGHT + ty) / 2
        elif source == target:  # a loop on the node's right
            right = sx + sw / 2
            path = (
                f'M {right:.1f} {sy + 10:.1f} C {right + 36:.1f} {sy - 8:.1f} {right + 36:.1f} {sy + _HEIGHT + 8:.1f} '
                f'{right:.1f} {sy + _HEIGHT - 10:.1f}'
            )
            lx, ly = right + 30, sy + _HEIGHT / 2
        elif layer[target] == layer[source]:  # across the layer: side to side
            step = 1 if tx > sx else -1
            start, end = sx + step * sw / 2, tx - step * tw / 2
            y = sy + _HEIGHT * (0.35 if step > 0 else 0.7)  # one way above the other
            path = f'M {start:.1f} {y:.1f} L {end:.1f} {y:.1f}'
            lx, ly = (start + end) / 2, y - 6
        else:  # back up: around the right of every node in the layers it spans
            spanned = range(min(layer[source], layer[target]), max(layer[source], layer[target]) + 1)
            edge_x = max(place[n][0] + place[n][2] / 2 for r in spanned for n in rows[r])
            bend = edge_x + 30 + 14 * (backs % 4)
            backs += 1
            path = (
                f'M {sx + sw / 2:.1f} {sy + _HEIGHT / 2:.1f} C {bend:.1f} {sy + _HEIGHT / 2:.1f} '
                f'{bend:.1f} {ty + _HEIGHT / 2:.1f} {tx + tw / 2:.1f} {ty + _HEIGHT / 2:.1f}'
            )
            lx, ly = bend - 6, (sy + ty + _HEIGHT) / 2
        parts.append(f'<path class="{cls}" d="{path}" marker-end="url(#arrow)"/>')
        if label:
            parts.append(f'<text class="edge-label" x="{lx:.1f}" y="{ly:.1f}">{escape(label)}</text>')
    for node in diagram.nodes:
        x, y, w = place[node]
        mark = marks.get(node, '')
        attrs = f'class="{f"node {mark}".strip()}" data-node="{escape(node)}" data-mark="{mark}"'
        if node == START:
            parts.append(f'<g {attrs}><circle cx="{x:.1f}" cy="{y + _HEIGHT / 2:.1f}" r="9"/></g>')
            continue
        shape = 'rx="18"' if node == END else 'rx="5"'
        parts.append(
            f'<g {attrs}><title>{escape(node)}{": " + mark if mark else ""}</title>'
            f'<rect x="{x - w / 2:.1f}" y="{y:.1f}" width="{w:.1f}" height="{_HEIGHT}" {shape}/>'
            f'<text x="{x:.1f}" y="{y + _HEIGHT / 2 + 4:.1f}">{escape(node)}</text></g>'
        )
    parts.append('</svg>')
    return '\n'.join(parts)
