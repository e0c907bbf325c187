"""Fixtures for the graph tests: deterministic snapshot ids."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import edgewise.graph.nodes
from edgewise.graph import BaseStatePersistence, FullStatePersistence, SimpleStatePersistence


@pytest.fixture
def snapshot_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make snapshot ids `'<node_id>:1'`, `'<node_id>:2'`, ... in the order they are generated."""
    counter = itertools.count(1)
    monkeypatch.setattr(edgewise.graph.nodes, 'generate_snapshot_id', lambda node_id: f'{node_id}:{next(counter)}')


@pytest.fixture(params=['simple', 'full'])
def persistence(request: pytest.FixtureRequest) -> BaseStatePersistence[Any, Any]:
    """Each in-memory persistence: the default one has its own inlined path in the step loop."""
    if request.param == 'simple':
        return SimpleStatePersistence()
    return FullStatePersistence()
