"""Removing a run (`delete()`), and runs that never stored a snapshot, which no store keeps or lists."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.graph.exceptions import GraphRuntimeError, RunInProgressError
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._workflow import Start, Tally, cycle_graph
from .conftest import Store

pytestmark = pytest.mark.anyio


async def _listed(persistence: Any) -> list[str]:
    """The run ids the store of `persistence` lists."""
    if isinstance(persistence, FileStatePersistence):
        runs = await FileStatePersistence.list_runs(persistence.json_file.parent)
    elif isinstance(persistence, SqliteStatePersistence):
        runs = await SqliteStatePersistence.list_runs(persistence.path)
    else:
        assert isinstance(persistence, PostgresStatePersistence)
        runs = await PostgresStatePersistence.list_runs(persistence._dsn)
    return [run.run_id for run in runs]


async def test_delete_removes_the_run_and_leaves_the_others(durable: Store) -> None:
    kept = durable('kept')
    gone = durable('gone')
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=kept)
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=gone)

    assert await durable('gone').delete() is True
    assert await durable('gone').info() is None
    assert await durable('gone').load_raw() == []
    assert await _listed(kept) == ['kept']
    assert len(await durable('kept').load_raw()) == 4
    assert await durable('gone').delete() is False  # nothing left to remove


async def test_a_run_a_live_task_advances_is_not_deleted(durable: Store) -> None:
    persistence = durable('r')
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    async with cycle_graph.iter_from_persistence(persistence) as run:
        await run.next()
        with pytest.raises(RunInProgressError, match=r"^Run 'r' is in progress elsewhere: process "):
            await durable('r').delete()
    assert len(await durable('r').load_raw()) == 2


async def test_resuming_an_unknown_run_leaves_no_run_behind(durable: Store) -> None:
    other = durable('other')
    await cycle_graph.initialize(Start(), other, state=Tally())
    ghost = durable('ghost')
    with pytest.raises(GraphRuntimeError, match=r"^Unable to restore snapshot from state persistence: .*'ghost'"):
        async with cycle_graph.iter_from_persistence(ghost):
            pass  # pragma: no cover - never entered
    assert await _listed(other) == ['other']
    assert await durable('ghost').info() is None


async def test_a_run_left_before_its_first_step_is_not_listed(durable: Store) -> None:
    persistence = durable('early')
    async with cycle_graph.iter(Start(), state=Tally(), persistence=persistence):
        pass
    assert await _listed(persistence) == []
    assert await durable('early').info() is None
