"""The public API of `edgewise.graph` is curated: `__all__` is pinned and every name in it resolves."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

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


def test_the_fan_out_loads_on_first_use() -> None:
    # In a fresh process, importing the package leaves `edgewise.graph.fork` unloaded; the names resolve to it.
    code = 'import sys, edgewise.graph as g; print("edgewise.graph.fork" in sys.modules, "Fork" in dir(g))'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ['False', 'True']
    from edgewise.graph import fork

    assert edgewise.graph.Fork is fork.Fork
    assert edgewise.graph.BranchFailure is fork.BranchFailure
    assert set(edgewise.graph.__all__) <= set(dir(edgewise.graph))
    with pytest.raises(AttributeError, match=r"module 'edgewise\.graph' has no attribute 'Nothing'"):
        edgewise.graph.Nothing  # noqa: B018
