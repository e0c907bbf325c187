"""The public API of `edgewise.graph` is curated: `__all__` is pinned and every name in it resolves."""

from __future__ import annotations

import importlib

import edgewise.graph


def test_all_is_pinned() -> None:
    assert sorted(edgewise.graph.__all__) == [
        'BaseNode',
        'BaseStatePersistence',
        'BranchFailure',
        'Edge',
        'End',
        'EndSnapshot',
        'Fork',
        'FullStatePersistence',
        'Graph',
        'GraphNodeStatusError',
        'GraphRun',
        'GraphRunContext',
        'GraphRunResult',
        'GraphRuntimeError',
        'GraphSetupError',
        'NodeSnapshot',
        'SimpleStatePersistence',
        'Snapshot',
        'SnapshotStatus',
    ]


def test_every_exported_name_resolves() -> None:
    for name in edgewise.graph.__all__:
        assert getattr(edgewise.graph, name) is not None


def test_public_modules_match_pydantic_graph() -> None:
    for module in ('nodes', 'graph', 'exceptions', 'persistence', 'persistence.in_mem'):
        importlib.import_module(f'edgewise.graph.{module}')
