"""pydantic-graph 2.x's builder API on Edgewise: code written for it runs after renaming `pydantic_graph` to
`edgewise.graph.builder` (submodules included: `.graph_builder`, `.step`, `.join`, `.decision`, `.paths`, ...).

Build a graph from async steps with `GraphBuilder`, join parallel branches with reducers, route with
decisions, run it with `Graph.run`, step through it with `Graph.iter` or stream it with `Graph.stream`, and draw
it with `Graph.render()` (images and stored runs' paths with `Graph.mermaid_image` and `mermaid_code`).
`BaseNode` classes are the classic ones of `edgewise.graph.nodes`: one node class works in both kinds of graph.

Map of the subpackage:

- `id_types`, `util`, `basenode`, `node`: ids, typing helpers, `BaseNode`, the start, end and fork nodes.
- `step`, `join`, `paths`, `decision`, `node_types`: what a graph is made of.
- `parent_forks`: which fork each join waits for.
- `_compile`: what `build()` does; `_mermaid`: diagrams; `_run_path`: a stored run's path drawn on them.
- `_progress`: a run's progress as plain data; `_engine`: the engine that advances it; `_stored`: the progress
  in a store; `_sequential`: a run advanced one recorded step at a time, in a fixed order (how
  `edgewise.graph.dbos` runs a builder graph as a DBOS workflow); `_graph`: `Graph` and `GraphRun`; `_builder`:
  `GraphBuilder`; `graph_builder`: pydantic-graph 2.x's module of those names.
- `events`, `_stream`: a streamed run's events (`Graph.stream`), an Edgewise addition.
"""

from .basenode import BaseNode, Edge, End, GraphRunContext
from .decision import Decision
from .exceptions import GraphBuildingError, GraphRuntimeError, GraphSetupError, GraphValidationError
from .graph_builder import (
    EndMarker,
    ErrorMarker,
    Graph,
    GraphBuilder,
    GraphRun,
    GraphTask,
    GraphTaskRequest,
    JoinItem,
)
from .join import (
    Join,
    JoinNode,
    ReduceFirstValue,
    ReducerContext,
    ReducerFunction,
    reduce_dict_update,
    reduce_list_append,
    reduce_list_extend,
    reduce_null,
    reduce_sum,
)
from .node import EndNode, Fork, StartNode
from .step import Step, StepContext, StepNode
from .util import TypeExpression

__all__ = (
    'BaseNode',
    'Decision',
    'Edge',
    'End',
    'EndMarker',
    'EndNode',
    'ErrorMarker',
    'Fork',
    'Graph',
    'GraphBuilder',
    'GraphBuildingError',
    'GraphRun',
    'GraphRunContext',
    'GraphRuntimeError',
    'GraphSetupError',
    'GraphTask',
    'GraphTaskRequest',
    'GraphValidationError',
    'Join',
    'JoinItem',
    'JoinNode',
    'ReduceFirstValue',
    'ReducerContext',
    'ReducerFunction',
    'Step',
    'StepContext',
    'StepNode',
    'StartNode',
    'TypeExpression',
    'reduce_dict_update',
    'reduce_list_append',
    'reduce_list_extend',
    'reduce_null',
    'reduce_sum',
)
