"""Mermaid state diagrams of graphs: their code, and images of them.

The code is the same text pydantic-graph 1.x produces for the same graph and options. Images come from a
mermaid.ink-compatible HTTP service (the default, as in pydantic-graph; `base_url` points at a self-hosted
one) or, without any network, from the mermaid CLI `mmdc` (`renderer='local'`).

Given a run's history (`await persistence.load_all()`), a diagram also shows the run's path: the nodes it
ran are highlighted, and the node where it stopped (or failed) gets a class of its own. With the histories
of its child runs (`await persistence.load_child_histories()`), the path goes on inside subgraphs (their
composite states) and through the branches of fan-outs.

`request_image` and `save_image` also take a builder graph (`edgewise.graph.builder`), which makes its code
itself (its `render()` text, with a stored run's path) and is rendered by the same two renderers.

The package: `_config` (`MermaidConfig` and the option types), `_service` (images from the HTTP service),
`_local` (images from `mmdc`).
"""

from __future__ import annotations as _annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from textwrap import indent
from typing import TYPE_CHECKING, Any, Protocol, cast

from typing_extensions import Unpack

from ..exceptions import DiagramNodeError
from ..nodes import NodeDef
from ._config import (
    DEFAULT_BASE_URL,
    DEFAULT_FAILED_CSS,
    DEFAULT_HIGHLIGHT_CSS,
    DEFAULT_STOPPED_CSS,
    ImageType,
    MermaidConfig,
    NodeIdent,
    Renderer,
    StateDiagramDirection,
)

if TYPE_CHECKING:
    from ..persistence import Snapshot

__all__ = (
    'NodeIdent',
    'DEFAULT_HIGHLIGHT_CSS',
    'DEFAULT_STOPPED_CSS',
    'DEFAULT_FAILED_CSS',
    'DEFAULT_BASE_URL',
    'generate_code',
    'MermaidConfig',
    'request_image',
    'save_image',
    'StateDiagramDirection',
    'ImageType',
    'Renderer',
)


class _Diagrammed(Protocol):
    """What a diagram is drawn from: a `Graph` (its node definitions), without importing `graph`."""

    @property
    def node_defs(self) -> Mapping[str, NodeDef[Any, Any, Any]]: ...


class _SelfDrawn(Protocol):
    """A graph that makes its diagram's code itself: a builder graph (`edgewise.graph.builder`)."""

    def _diagram_code(self, config: MermaidConfig, /) -> str: ...


def generate_code(
    graph: _Diagrammed,
    /,
    *,
    start_node: Sequence[NodeIdent] | NodeIdent | None = None,
    highlighted_nodes: Sequence[NodeIdent] | NodeIdent | None = None,
    highlight_css: str = DEFAULT_HIGHLIGHT_CSS,
    title: str | None = None,
    edge_labels: bool = True,
    notes: bool = True,
    direction: StateDiagramDirection | None = None,
    history: Sequence[Snapshot[Any, Any]] | None = None,
    stopped_css: str = DEFAULT_STOPPED_CSS,
    failed_css: str = DEFAULT_FAILED_CSS,
    child_histories: Mapping[str, Sequence[Snapshot[Any, Any]]] | None = None,
) -> str:
    """The mermaid `stateDiagram-v2` code of a graph.

    Args:
        graph: The graph to draw.
        start_node: The node or nodes a run may start from; each gets an arrow from the start state.
        highlighted_nodes: Nodes to highlight, in the `highlighted` class.
        highlight_css: The CSS of the `highlighted` class.
        title: The diagram's title (front matter); none when `None` or empty.
        edge_labels: Show the labels given with `Edge(label=...)`.
        notes: Show the docstrings of nodes that set `docstring_notes = True` as notes.
        direction: The direction the diagram flows in; mermaid's default (top to bottom) when `None`.
        history: A run's snapshots, oldest first (`await persistence.load_all()`): the nodes the run ran
            are highlighted, and the node where it stopped gets the `stopped` class (`failed` if it raised).
        stopped_css: The CSS of the `stopped` class.
        failed_css: The CSS of the `failed` class.
        child_histories: With `history`, the histories of the run's child runs (subgraph runs, branches of
            fan-outs) by name, as `await persistence.load_child_histories()` gives them: the nodes they ran are
            highlighted too (inside the composite state of a subgraph), and where an unfinished one stopped
            is marked as well (a fan-out that had not joined at its `<<fork>>` state).

    Returns:
        The diagram's code.

    Raises:
        DiagramNodeError: a start, highlighted or history node is not in the graph (also a `LookupError`).
    """
    node_defs = graph.node_defs
    start_ids = set(_node_ids(start_node)) if start_node else set()
    _check_known(graph, start_ids, 'Start')

    lines: list[str] = ['---', f'title: {title}', '---', 'stateDiagram-v2'] if title else ['stateDiagram-v2']
    append = lines.append
    if direction is not None:
        append(f'  direction {direction}')
    lines.extend(_body(node_defs, start_ids, edge_labels=edge_labels, notes=notes))

    highlighted = list(_node_ids(highlighted_nodes)) if highlighted_nodes else []
    _check_known(graph, highlighted, 'Highlighted')
    stopped: dict[str, str] = {}
    if history:
        visited, stopped = _run_path(graph, history, child_histories or {})
        seen = {*highlighted, *stopped}
        highlighted.extend(node_id for node_id in visited if node_id not in seen)
    if highlighted:
        lines.extend(('', f'classDef highlighted {highlight_css}'))
        lines.extend(f'class {node_id} highlighted' for node_id in highlighted)
    if stopped and not highlighted:
        lines.append('')
    for css_class in dict.fromkeys(stopped.values()):
        css = failed_css if css_class == 'failed' else stopped_css
        lines.append(f'classDef {css_class} {css}')
        lines.extend(f'class {node_id} {css_class}' for node_id, c in stopped.items() if c == css_class)
    return '\n'.join(lines)


_BLANK_LINES = re.compile('\n{2,}')


def _body(
    node_defs: Mapping[str, NodeDef[Any, Any, Any]],
    start_ids: set[str],
    *,
    edge_labels: bool,
    notes: bool,
    prefix: str = '  ',
) -> list[str]:
    """The states and transitions of a graph's nodes; a fan-out is drawn as `<<fork>>` and `<<join>>` states
    (the `Fork` step itself is not drawn), a node's `subgraphs` as composite states."""
    lines: list[str] = []
    append = lines.append
    joins = _branch_joins(node_defs)
    for node_id, node_def in node_defs.items():
        if getattr(node_def.node, '_edgewise_fork', False):
            continue
        if node_id in start_ids:
            append(f'{prefix}[*] --> {node_id}')
        for graph in node_def.node.subgraphs:
            append(f'{prefix}state {node_id} {{')
            lines.extend(_body(graph.node_defs, set(), edge_labels=edge_labels, notes=notes, prefix=prefix + '  '))
            append(f'{prefix}}}')
        if node_def.returns_base_node:
            # An edge to every node, unlabelled: a bare `BaseNode` says nothing about where it goes.
            lines.extend(
                [f'{prefix}{node_id} --> {i}' for i, d in node_defs.items() if not getattr(d.node, '_edgewise_fork', 0)]
            )
        elif edge_labels:
            for next_id, edge in node_def.next_node_edges.items():
                label = edge.label
                append(f'{prefix}{node_id} --> {next_id}: {label}' if label else f'{prefix}{node_id} --> {next_id}')
        else:
            lines.extend([f'{prefix}{node_id} --> {next_id}' for next_id in node_def.next_node_edges])
        for index, fork in enumerate(node_def.forks):
            fork_state, join_state = _fork_states(node_id, index)
            label = fork.edge.label if edge_labels else None
            append(f'{prefix}state {fork_state} <<fork>>')
            append(f'{prefix}{node_id} --> {fork_state}: {label}' if label else f'{prefix}{node_id} --> {fork_state}')
            lines.extend(f'{prefix}{fork_state} --> {branch_id}' for branch_id in fork.branch_ids)
            append(f'{prefix}state {join_state} <<join>>')
            append(f'{prefix}{join_state} --> {fork.join_id}')
        end_edge = node_def.end_edge
        if end_edge is not None:
            label = end_edge.label if edge_labels else None
            end = joins.get(node_id, '[*]')
            append(f'{prefix}{node_id} --> {end}: {label}' if label else f'{prefix}{node_id} --> {end}')
        if notes and node_def.note:
            append(f'{prefix}note right of {node_id}\n{_note_text(node_def.note)}\n{prefix}end note')
    return lines


def _fork_states(node_id: str, index: int) -> tuple[str, str]:
    suffix = '' if index == 0 else str(index + 1)
    return f'{node_id}_fork{suffix}', f'{node_id}_join{suffix}'


def _branch_joins(node_defs: Mapping[str, NodeDef[Any, Any, Any]]) -> dict[str, str]:
    """For the nodes that run inside a branch of a fan-out: the join state their `End` leads to."""
    joins: dict[str, str] = {}
    for node_id, node_def in node_defs.items():
        for index, fork in enumerate(node_def.forks):
            join_state = _fork_states(node_id, index)[1]
            todo = [b for b in fork.branch_ids if b in node_defs]
            while todo:
                branch_id = todo.pop()
                if branch_id in joins:
                    continue
                joins[branch_id] = join_state
                todo.extend(n for n in node_defs[branch_id].next_node_edges if n in node_defs)
    return joins


@lru_cache(maxsize=1024)
def _note_text(note: str) -> str:
    """A note's lines, indented; mermaid takes a blank line inside a note for the end of the note."""
    return indent(_BLANK_LINES.sub('\n', note), '    ')


def _node_ids(node_idents: Sequence[NodeIdent] | NodeIdent) -> Iterator[str]:
    if isinstance(node_idents, str) or not isinstance(node_idents, Sequence):
        node_idents = (node_idents,)
    for node in node_idents:
        yield node if isinstance(node, str) else node.get_node_id()


def _check_known(graph: _Diagrammed, node_ids: Sequence[str] | set[str], role: str) -> None:
    unknown = list(dict.fromkeys(node_id for node_id in node_ids if node_id not in graph.node_defs))
    if not unknown:
        return
    if isinstance(node_ids, set):
        unknown.sort()
    known = ', '.join(graph.node_defs)
    if len(unknown) == 1:
        raise DiagramNodeError(f'{role} node "{unknown[0]}" is not in the graph; its nodes are: {known}.')
    names = ', '.join(f'"{node_id}"' for node_id in unknown)
    raise DiagramNodeError(f'{role} nodes {names} are not in the graph; its nodes are: {known}.')


def _all_node_defs(graph: _Diagrammed) -> dict[str, NodeDef[Any, Any, Any]]:
    """The node definitions of a graph and of the subgraphs drawn inside its nodes, at any depth."""
    found: dict[str, NodeDef[Any, Any, Any]] = {}
    todo = [graph]
    while todo:
        for node_id, node_def in todo.pop().node_defs.items():
            if node_id not in found:
                found[node_id] = node_def
                todo.extend(node_def.node.subgraphs)
    return found


def _run_path(
    graph: _Diagrammed,
    history: Sequence[Snapshot[Any, Any]],
    child_histories: Mapping[str, Sequence[Snapshot[Any, Any]]],
) -> tuple[list[str], dict[str, str]]:
    """The ids of the nodes a run (and its child runs) ran, in order of first run, and the states where they
    stopped, with the class to mark each."""
    node_defs = _all_node_defs(graph) if child_histories else graph.node_defs
    visited: dict[str, None] = {}
    stopped: dict[str, str] = {}
    for run in (history, *child_histories.values()):
        for snapshot in run:
            if snapshot.kind == 'node' and snapshot.status == 'success' and not _is_fork(snapshot.node):
                visited[snapshot.node.get_node_id()] = None
        last = run[-1] if run else None
        if last is not None and last.kind == 'node':
            state = _fork_state_of(run, node_defs) if _is_fork(last.node) else last.node.get_node_id()
            if state is not None:
                stopped.setdefault(state, 'failed' if last.status == 'error' else 'stopped')
    fork_states = {_fork_states(i, n)[0] for i, d in node_defs.items() for n in range(len(d.forks))}
    checked = [node_id for node_id in (*visited, *stopped) if node_id not in fork_states]
    if child_histories:
        unknown = [node_id for node_id in checked if node_id not in node_defs]
        if unknown:
            raise DiagramNodeError(
                f'Run history node "{unknown[0]}" is in neither the graph nor its subgraphs; their nodes are: '
                f'{", ".join(node_defs)}.'
            )
    else:
        _check_known(graph, checked, 'Run history')
    return list(visited), stopped


def _is_fork(node: Any) -> bool:
    return bool(getattr(node, '_edgewise_fork', False)) or node.get_node_id() == 'Fork'


def _fork_state_of(run: Sequence[Snapshot[Any, Any]], node_defs: Mapping[str, NodeDef[Any, Any, Any]]) -> str | None:
    """The `<<fork>>` state of the fan-out a run stopped in: the one of the node before the `Fork` that joins
    at the `Fork`'s join node."""
    fork = run[-1].node
    join = getattr(fork, 'join', None)
    if join is None:  # a raw node: its fields
        join = getattr(fork, 'fields', {}).get('join')
    before = next((s for s in reversed(run[:-1]) if s.kind == 'node'), None)
    node_id = before.node.get_node_id() if before is not None else ''
    forks = node_defs[node_id].forks if node_id in node_defs else ()
    # None when the graph has changed since the run (no such fan-out any more): nothing to mark.
    index = next((i for i, fork in enumerate(forks) if fork.join_id == join), None)
    return None if index is None else _fork_states(node_id, index)[0]


def request_image(graph: _Diagrammed | _SelfDrawn, /, **kwargs: Unpack[MermaidConfig]) -> bytes:
    """An image of a graph's diagram, rendered by the mermaid service (default) or the mermaid CLI.

    Args:
        graph: The graph to draw: a classic `Graph`, or a builder graph of `edgewise.graph.builder`.
        **kwargs: The diagram's options and the image's (see `MermaidConfig`).

    Returns:
        The image's bytes.

    Raises:
        DiagramNodeError: a start, highlighted or history node is not in the graph.
        DiagramTooLongError: the diagram is too long for the service's GET URL.
        MermaidServiceError: the service answered with an error status.
        LocalRendererError: the mermaid CLI is missing (with `renderer='local'`), or failed.
        DiagramRenderError: the service cannot be reached.
    """
    return _render(graph, kwargs, kwargs.get('image_type'))


def save_image(path: Path | str, graph: _Diagrammed | _SelfDrawn, /, **kwargs: Unpack[MermaidConfig]) -> None:
    """Render an image of a graph's diagram (see `request_image`) and write it to `path`.

    Args:
        path: Where to write the image; unless `image_type` is given, its suffix picks the format
            (`.png`, `.webp`, `.svg`, `.pdf`; anything else gets the service's default, JPEG).
        graph: The graph to draw: a classic `Graph`, or a builder graph of `edgewise.graph.builder`.
        **kwargs: The diagram's options and the image's (see `MermaidConfig`).
    """
    path = Path(path)
    image_type = kwargs.get('image_type')
    if image_type is None:
        image_type = _SUFFIX_TYPES.get(path.suffix.lower())
        # Like pydantic-graph, JPEG (the service's default) is not asked for by name.
        if image_type is not None and image_type != 'jpeg':
            kwargs['image_type'] = image_type
    path.write_bytes(_render(graph, kwargs, image_type))


_SUFFIX_TYPES: dict[str, ImageType] = {
    '.png': 'png',
    '.webp': 'webp',
    '.svg': 'svg',
    '.pdf': 'pdf',
    '.jpg': 'jpeg',
    '.jpeg': 'jpeg',
}


def _code_for_config(graph: _Diagrammed | _SelfDrawn, config: MermaidConfig) -> str:
    """The diagram code that `request_image`, `save_image` (and `edgewise mermaid`) render for `config`."""
    code_of = getattr(graph, '_diagram_code', None)
    if code_of is not None:
        return cast(str, code_of(config))
    return generate_code(
        cast(_Diagrammed, graph),
        start_node=config.get('start_node'),
        highlighted_nodes=config.get('highlighted_nodes'),
        highlight_css=config.get('highlight_css', DEFAULT_HIGHLIGHT_CSS),
        title=config.get('title'),
        edge_labels=config.get('edge_labels', True),
        notes=config.get('notes', True),
        direction=config.get('direction'),
        history=config.get('history'),
        stopped_css=config.get('stopped_css', DEFAULT_STOPPED_CSS),
        failed_css=config.get('failed_css', DEFAULT_FAILED_CSS),
        child_histories=config.get('child_histories'),
    )


def _render(graph: _Diagrammed | _SelfDrawn, config: MermaidConfig, image_type: ImageType | None) -> bytes:
    code = _code_for_config(graph, config)
    renderer = config.get('renderer', 'service')
    if renderer != 'service':
        from . import _local as _mermaid_local

        if renderer == 'local' or _mermaid_local.can_render(config, image_type):
            return _mermaid_local.render(code, config, image_type)
    from . import _service as _mermaid_service

    return _mermaid_service.render(code, config)
