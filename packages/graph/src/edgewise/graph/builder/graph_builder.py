"""The builder API of pydantic-graph 2.x's `graph_builder` module: `GraphBuilder`, `Graph`, `GraphRun`, the events
of a run, and the mermaid helpers behind `Graph.render()`."""

from __future__ import annotations as _annotations

from collections.abc import Callable
from typing import Any

from anyio.abc import TaskGroup

from ..exceptions import GraphBuildingError, GraphValidationError
from ._builder import GraphBuilder
from ._engine import RunEngine
from ._graph import Graph, GraphRun
from ._mermaid import (
    DEFAULT_HIGHLIGHT_CSS,
    MermaidEdge,
    MermaidGraph,
    MermaidNode,
    NodeKind,
    StateDiagramDirection,
    build_mermaid_graph,
)
from ._progress import EndMarker, ErrorMarker, GraphTask, GraphTaskRequest, JoinItem, RunProgress
from .id_types import NodeRunID, TaskID

__all__ = (
    'GraphBuilder',
    'Graph',
    'GraphRun',
    'GraphTask',
    'GraphTaskRequest',
    'EndMarker',
    'ErrorMarker',
    'JoinItem',
    'GraphBuildingError',
    'GraphValidationError',
    'DEFAULT_HIGHLIGHT_CSS',
    'StateDiagramDirection',
    'NodeKind',
    'MermaidNode',
    'MermaidEdge',
    'MermaidGraph',
    'build_mermaid_graph',
)


class _GraphIterator(RunEngine[Any]):
    """The run engine under pydantic-graph 2.x's private name and constructor, for code that drives it directly."""

    def __init__(
        self,
        graph: Graph[Any, Any, Any, Any],
        state: Any,
        deps: Any,
        task_group: TaskGroup,
        get_next_node_run_id: Callable[[], NodeRunID],
        get_next_task_id: Callable[[], TaskID],
    ) -> None:
        super().__init__(
            graph._compiled(), RunProgress(state=state), deps, task_group, instrument=graph.auto_instrument
        )
        self.new_node_run_id = get_next_node_run_id
        self.new_task_id = get_next_task_id


# Reprs and pickles name the public module, as pydantic-graph's do.
for _public in (GraphBuilder, Graph, GraphRun, GraphTask, GraphTaskRequest, EndMarker, ErrorMarker, JoinItem):
    _public.__module__ = __name__
