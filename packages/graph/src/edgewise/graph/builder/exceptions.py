"""The errors of builder graphs: the classes of `edgewise.graph.exceptions`, under pydantic-graph 2.x's module name.

`GraphSetupError`, `GraphBuildingError`, `GraphValidationError`, `GraphRuntimeError` and
`UnsupportedEventLoopError` all subclass `edgewise.graph.exceptions.GraphError` (and the builtin pydantic-graph
2.x's class subclassed: `TypeError`, `ValueError` or `RuntimeError`).
"""

from __future__ import annotations as _annotations

from ..exceptions import (
    GraphBuildingError,
    GraphError,
    GraphRuntimeError,
    GraphSetupError,
    GraphValidationError,
    UnsupportedEventLoopError,
)

__all__ = (
    'GraphError',
    'GraphSetupError',
    'GraphBuildingError',
    'GraphValidationError',
    'GraphRuntimeError',
    'UnsupportedEventLoopError',
)
