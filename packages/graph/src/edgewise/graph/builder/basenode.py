"""`BaseNode` classes in builder graphs: the classic node classes of `edgewise.graph.nodes`, shared.

A node class written for `edgewise.graph.Graph` works unchanged in a builder graph (`GraphBuilder.node(MyNode)`),
and the other way round: these are the same classes, not copies.
"""

from __future__ import annotations as _annotations

from ..nodes import BaseNode, DepsT, Edge, End, GraphRunContext, NodeRunEndT, RunEndT, StateT

__all__ = ('GraphRunContext', 'BaseNode', 'End', 'Edge', 'DepsT', 'StateT', 'RunEndT', 'NodeRunEndT')
