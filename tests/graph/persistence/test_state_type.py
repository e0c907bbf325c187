"""A run's state is checked against the graph's state type before anything is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgewise.graph.exceptions import GraphSetupError
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._workflow import Start, Tally, cycle_graph

pytestmark = pytest.mark.anyio


async def test_a_state_of_another_type_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    expected = r"Graph 'cycle_graph' expects a state of type Tally, got str: 'x'"
    with pytest.raises(GraphSetupError, match=expected) as info:
        await cycle_graph.run(Start(), state='x', persistence=SqliteStatePersistence(db, 'wrong'))  # type: ignore[arg-type]

    assert isinstance(info.value, TypeError)
    assert await SqliteStatePersistence.list_runs(db) == []


async def test_initialize_refuses_a_state_of_another_type(tmp_path: Path) -> None:
    persistence = FileStatePersistence(tmp_path / 'run.json')
    with pytest.raises(GraphSetupError, match='expects a state of type Tally, got int'):
        await cycle_graph.initialize(Start(), persistence, state=3)  # type: ignore[arg-type]

    assert not (tmp_path / 'run.json').exists()


async def test_a_state_of_the_graphs_type_runs(tmp_path: Path) -> None:
    persistence = SqliteStatePersistence(tmp_path / 'r.db')
    result = await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)

    assert result.output is not None
