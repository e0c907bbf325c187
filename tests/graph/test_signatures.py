"""The public signatures are pydantic-graph 1.x's (parameter names, order and kinds), plus Edgewise's additions."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from edgewise.graph import (
    BaseStatePersistence,
    EndSnapshot,
    FullStatePersistence,
    Graph,
    GraphRun,
    GraphRunResult,
    NodeSnapshot,
    SimpleStatePersistence,
)
from edgewise.graph.persistence import build_snapshot_list_type_adapter


def _params(fn: Callable[..., Any]) -> list[str]:
    marks: dict[inspect._ParameterKind, str] = {
        inspect.Parameter.KEYWORD_ONLY: '*',
        inspect.Parameter.POSITIONAL_OR_KEYWORD: '',
    }
    return [marks[p.kind] + name for name, p in inspect.signature(fn).parameters.items() if name != 'self']


@pytest.mark.parametrize(
    ('fn', 'params'),
    [
        # `state_reducer` is Edgewise's own (fan-outs), after pydantic-graph's parameters.
        (Graph.__init__, ['*nodes', '*name', '*state_type', '*run_end_type', '*auto_instrument', '*state_reducer']),
        (Graph.run, ['start_node', '*state', '*deps', '*persistence', '*infer_name', '*max_steps']),
        (Graph.run_sync, ['start_node', '*state', '*deps', '*persistence', '*infer_name', '*max_steps']),
        (Graph.iter, ['start_node', '*state', '*deps', '*persistence', '*span', '*infer_name', '*max_steps']),
        (Graph.iter_from_persistence, ['persistence', '*deps', '*span', '*infer_name', '*max_steps']),
        (Graph.initialize, ['node', 'persistence', '*state', '*infer_name']),
        (GraphRun.next, ['node']),
        (GraphRunResult, ['output', 'state', 'persistence', 'traceparent']),
        # pydantic-graph's fields, then the error Edgewise keeps with a failed snapshot (docs/compatibility.md).
        (NodeSnapshot, ['*state', '*node', '*start_ts', '*duration', '*status', '*kind', '*id', '*error']),
        (EndSnapshot, ['*state', '*result', '*ts', '*kind', '*id']),
        (FullStatePersistence, ['deep_copy', 'history']),
        (SimpleStatePersistence, ['last_snapshot']),
        (BaseStatePersistence.snapshot_node, ['state', 'next_node']),
        (BaseStatePersistence.snapshot_node_if_new, ['snapshot_id', 'state', 'next_node']),
        (BaseStatePersistence.snapshot_end, ['state', 'end']),
        (BaseStatePersistence.record_run, ['snapshot_id']),
        (BaseStatePersistence.load_next, []),
        (BaseStatePersistence.load_all, []),
        (BaseStatePersistence.set_graph_types, ['graph']),
        (BaseStatePersistence.should_set_types, []),
        (BaseStatePersistence.set_types, ['state_type', 'run_end_type']),
        (FullStatePersistence.dump_json, ['*indent']),
        (FullStatePersistence.load_json, ['json_data']),
        (build_snapshot_list_type_adapter, ['state_t', 'run_end_t']),
    ],
    ids=lambda v: getattr(v, '__qualname__', None),
)
def test_signature(fn: Callable[..., Any], params: list[str]) -> None:
    assert _params(fn) == params
