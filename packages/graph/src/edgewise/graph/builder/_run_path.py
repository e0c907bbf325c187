"""The path of a stored builder run, read from its history, and the diagram of a graph with that path drawn on it.

A stored builder run is a list of `BuilderProgress` snapshots (see `_stored`), then an end snapshot if it ended.
Every task the run gave out is named in some snapshot (in its tasks, or in the outcome that created it); the
last snapshot tells which tasks are still in flight (started or waiting to start, their outcomes not stored),
and, when a task raised, which one. So each node gets a mark:

- `'failed'`: the task that stopped the run raised there;
- `'running'` / `'waiting'`: a task of the node is in flight, while a process advances the run (the last
  snapshot is `'running'`) or not (the run is stopped; a resume runs it);
- `'done'`: tasks of the node finished (or were cancelled, as the siblings of a `ReduceFirstValue` join are).

For each `.map()`, the items whose branch has finished (no task of theirs in flight) are counted against the
items the map gave out: `3/50 done`.
"""

from __future__ import annotations as _annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..exceptions import DiagramNodeError, PersistenceError
from ..mermaid import DEFAULT_FAILED_CSS, DEFAULT_HIGHLIGHT_CSS, DEFAULT_STOPPED_CSS
from ._mermaid import StateDiagramDirection, build_mermaid_graph
from .id_types import NodeID
from .node import EndNode, Fork, StartNode

__all__ = ('Mark', 'MapProgress', 'RunPath', 'read_run_path', 'diagram_code')

Mark = Literal['done', 'failed', 'running', 'waiting']
"""How a node of a run's path is marked."""


@dataclass
class MapProgress:
    """How far the items of a `.map()` have come (over every time the map ran)."""

    done: int
    """Items whose branch has finished."""
    total: int
    """Items the map gave out."""

    def __str__(self) -> str:
        return f'{self.done}/{self.total} done'


@dataclass
class RunPath:
    """Where a stored builder run has been, and where it stands."""

    marks: dict[str, Mark] = field(default_factory=dict[str, Mark])
    """Each node the run reached, by id, in the order first reached, with its mark."""
    maps: dict[str, MapProgress] = field(default_factory=dict[str, MapProgress])
    """The items of each `.map()` the run reached, by the map's node id."""
    ended: bool = False
    """Whether the run reached its end."""
    error: str | None = None
    """What the failed task raised (`'ValueError: ...'`), when a task stopped the run."""
    taken: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    """The edges the run took, as `(source node id, target node id)`, read from the outcomes it stored."""

    @property
    def failed(self) -> list[str]:
        """The nodes marked `'failed'`."""
        return [node_id for node_id, mark in self.marks.items() if mark == 'failed']

    @property
    def in_flight(self) -> list[str]:
        """The nodes with a task in flight (marked `'running'` or `'waiting'`)."""
        return [node_id for node_id, mark in self.marks.items() if mark in ('running', 'waiting')]

    @property
    def done(self) -> list[str]:
        """The nodes marked `'done'`."""
        return [node_id for node_id, mark in self.marks.items() if mark == 'done']


def _progress_of(snapshot: Any) -> dict[str, Any]:
    """The progress data of a snapshot of a builder run: a `BuilderProgress` node, or its raw form."""
    node = snapshot.node
    progress = getattr(node, 'progress', None)
    if progress is None:
        progress = getattr(node, 'fields', {}).get('progress')
    if not isinstance(progress, dict) or 'tasks' not in progress:
        node_id = node.node_id if hasattr(node, 'node_id') else node.get_node_id()
        raise PersistenceError(
            f'The run is not a builder run: its snapshot {snapshot.id!r} holds node {node_id!r}, not the progress '
            'of a builder run. Draw it with the classic `Graph` it belongs to.'
        )
    return progress


def _tasks_named(progress: Mapping[str, Any]) -> Iterable[dict[str, Any]]:
    """Every task a progress names: started ones, and the ones its stored outcomes lead to."""
    yield from progress['tasks']
    awaiting = progress.get('awaiting') or {}
    outcomes = [*progress.get('outcomes', ()), *([awaiting['outcome']] if 'outcome' in awaiting else [])]
    for outcome in outcomes:
        yield from outcome.get('tasks', ())
    yield from awaiting.get('release', ())


def _in_flight(progress: Mapping[str, Any]) -> set[str]:
    """The ids of the tasks a progress has in flight: started and not finished, or waiting to start."""
    awaiting = progress.get('awaiting') or {}
    outcomes = [*progress.get('outcomes', ()), *([awaiting['outcome']] if 'outcome' in awaiting else [])]
    finished = {outcome['task'] for outcome in outcomes if outcome.get('finished', True)}
    return {task['id'] for task in _tasks_named(progress) if task['id'] not in finished}


def read_run_path(history: Sequence[Any], graph: Any = None) -> RunPath:
    """The path of a stored builder run, from its history (`await persistence.load_all()` or `load_raw()`).

    Args:
        history: The run's snapshots, oldest first.
        graph: The builder graph of the run, if known: its `.map()` items are counted, and the edges the stored
            outcomes do not name (a join's release) are read from it (without it, only the edges stored outcomes
            name are taken).

    Raises:
        PersistenceError: a snapshot is not one of a builder run.
    """
    path = RunPath()
    nodes: dict[str, str] = {}  # task id -> node id, in the order first named
    stacks: dict[str, list[list[Any]]] = {}
    joins: dict[str, None] = {}
    last: Mapping[str, Any] | None = None
    last_status = 'created'
    for snapshot in history:
        if snapshot.kind == 'end':
            path.ended = True
            continue
        last = _progress_of(snapshot)
        last_status = snapshot.status
        for task in _tasks_named(last):
            nodes.setdefault(task['id'], task['node'])
            stacks.setdefault(task['id'], task['stack'])
        # A value a join took in between two snapshots leaves no task behind: the join's reduction shows it.
        joins.update((join['join'], None) for join in last.get('joins', ()))
        _take_edges(path.taken, last, nodes)
    flying: set[str] = set()
    joining: set[str] = set()
    failed: Mapping[str, Any] | None = None
    if last is not None and not path.ended:
        flying = _in_flight(last)
        joining = {join['join'] for join in last.get('joins', ())}
        failed = last.get('failed')
    if failed is not None:
        flying.discard(failed['task'])
        path.error = f'{failed["type"]}: {failed["message"]}'
    in_flight_mark: Mark = 'running' if last_status in ('running', 'pending') else 'waiting'
    reached = [(node_id, _mark(task_id, failed, flying, in_flight_mark)) for task_id, node_id in nodes.items()]
    reached += [(join_id, in_flight_mark if join_id in joining else 'done') for join_id in joins]
    for node_id, mark in reached:
        if _RANK[mark] > _RANK.get(path.marks.get(node_id, ''), -1):
            path.marks[node_id] = mark
    if path.ended:
        path.marks[EndNode.id] = 'done'
    if graph is not None:
        maps = {node_id for node_id, node in graph.nodes.items() if isinstance(node, Fork) and node.is_map}
        _count_map_items(path, maps, stacks, flying | ({failed['task']} if failed is not None else set()))
        # A join's release leaves no outcome (nor, in runs stored before the answers a join's step replaced were
        # kept as `taken`, such an answer): its edges are the graph's edges between nodes the run reached (the
        # nodes with a stored outcome keep theirs).
        recorded = {source for source, _ in path.taken}
        for edge in build_mermaid_graph(graph.nodes, graph.edges_by_source).edges:
            if edge.start_id not in recorded and edge.start_id in path.marks and edge.end_id in path.marks:
                path.taken.add((edge.start_id, edge.end_id))
    return path


def _mark(task_id: str, failed: Mapping[str, Any] | None, flying: set[str], in_flight: Mark) -> Mark:
    if failed is not None and task_id == failed['task']:
        return 'failed'
    return in_flight if task_id in flying else 'done'


def _take_edges(taken: set[tuple[str, str]], progress: Mapping[str, Any], nodes: Mapping[str, str]) -> None:
    """The edges the stored outcomes of `progress` name: from a task's node to the nodes it led to."""
    awaiting = progress.get('awaiting') or {}
    for outcome in [*progress.get('outcomes', ()), *([awaiting['outcome']] if 'outcome' in awaiting else [])]:
        source = nodes.get(outcome['task'])
        if source is None:  # pragma: no cover - a stored outcome names a task of its own progress
            continue
        targets = [task['node'] for task in outcome.get('tasks', ())]
        if 'end' in outcome and source != EndNode.id:
            targets.append(EndNode.id)
        taken.update((source, target) for target in targets)
    # A join's step that replaced the snapshot holding an outcome kept the edges of its answer.
    taken.update((source, target) for source, target in progress.get('taken', ()))


_RANK: dict[str, int] = {'done': 0, 'waiting': 1, 'running': 1, 'failed': 2}


def _count_map_items(path: RunPath, maps: set[str], stacks: Mapping[str, list[list[Any]]], open_: set[str]) -> None:
    items: dict[str, set[tuple[str, int]]] = {}
    unfinished: dict[str, set[tuple[str, int]]] = {}
    for task_id, stack in stacks.items():
        for fork_id, run_id, index in stack:
            if fork_id in maps:
                items.setdefault(fork_id, set()).add((run_id, index))
                if task_id in open_:
                    unfinished.setdefault(fork_id, set()).add((run_id, index))
    order = {node_id: index for index, node_id in enumerate(path.marks)}
    for fork_id in sorted(items, key=lambda node_id: order.get(node_id, len(order))):
        total = len(items[fork_id])
        path.maps[fork_id] = MapProgress(total - len(unfinished.get(fork_id, ())), total)


def diagram_code(
    graph: Any,
    *,
    title: str | None = None,
    direction: StateDiagramDirection | None = None,
    edge_labels: bool = True,
    notes: bool = True,
    highlighted_nodes: Sequence[Any] | Any = None,
    highlight_css: str = DEFAULT_HIGHLIGHT_CSS,
    history: Sequence[Any] | None = None,
    stopped_css: str = DEFAULT_STOPPED_CSS,
    failed_css: str = DEFAULT_FAILED_CSS,
) -> str:
    """The mermaid code of a builder graph (its `render()` text), with highlighted nodes and a stored run's path.

    Nodes the run finished are in the `highlighted` class, nodes with a task in flight in `stopped`, the node whose
    task raised in `failed` (the classes of classic diagrams); the edge leaving each `.map()` the run reached says
    how many of its items are done (`3/50 done`).

    Raises:
        DiagramNodeError: a highlighted node, or a node of the run's history, is not in the graph.
        PersistenceError: `history` is not the history of a builder run.
    """
    diagram = build_mermaid_graph(graph.nodes, graph.edges_by_source)
    if not notes:
        for node in diagram.nodes:
            node.note = None
    highlighted = [_node_id(node) for node in _as_list(highlighted_nodes)]
    _check_known(graph.nodes, highlighted, 'Highlighted')
    marks: dict[str, Mark] = {}
    maps_done: dict[str, MapProgress] = {}
    if history:
        path = read_run_path(history, graph)
        _check_known(graph.nodes, list(path.marks), 'Run history')
        marks, maps_done = path.marks, path.maps
    for edge in diagram.edges:
        shown = edge.label if edge_labels else None
        progress = maps_done.get(edge.start_id)
        edge.label = f'{shown}, {progress}' if shown and progress else str(progress) if progress else shown
    code = diagram.render(title=title, direction=direction)
    lines = [code]
    drawn = {node.id for node in diagram.nodes if node.kind not in ('start', 'end')}
    done = [node_id for node_id, mark in marks.items() if mark == 'done' and node_id in drawn]
    classes: dict[str, list[str]] = {
        'highlighted': list(dict.fromkeys([*highlighted, *(i for i in done if i not in highlighted)])),
        'stopped': [i for i, mark in marks.items() if mark in ('running', 'waiting') and i in drawn],
        'failed': [i for i, mark in marks.items() if mark == 'failed' and i in drawn],
    }
    css = {'highlighted': highlight_css, 'stopped': stopped_css, 'failed': failed_css}
    if any(classes.values()):
        lines.append('')
    for css_class, node_ids in classes.items():
        if node_ids:
            lines.append(f'classDef {css_class} {css[css_class]}')
            lines.extend(f'class {node_id} {css_class}' for node_id in node_ids)
    return '\n'.join(lines)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        return [value]
    return list(value)


def _node_id(node: Any) -> str:
    """The id of a node given by id, as a step, join or decision of the graph, or as a `BaseNode` class."""
    if isinstance(node, str):
        return node
    node_id = getattr(node, 'id', None)
    if isinstance(node_id, str):
        return node_id
    return str(node.get_node_id())


def _check_known(nodes: Mapping[NodeID, Any], node_ids: Sequence[str], role: str) -> None:
    unknown = [node_id for node_id in dict.fromkeys(node_ids) if node_id not in nodes]
    if unknown:
        known = ', '.join(node_id for node_id in nodes if node_id not in (StartNode.id, EndNode.id))
        names = ', '.join(f'"{node_id}"' for node_id in unknown)
        raise DiagramNodeError(
            f'{role} node{"s" if len(unknown) > 1 else ""} {names} {"are" if len(unknown) > 1 else "is"} not in the '
            f'graph; its nodes are: {known}.'
        )
