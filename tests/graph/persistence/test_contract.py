"""The persistence contract, on every backend: memory, file, SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from dirty_equals import IsDatetime, IsFloat, IsStr

from edgewise.graph import (
    BaseNode,
    End,
    EndSnapshot,
    Graph,
    GraphNodeStatusError,
    GraphRunContext,
    GraphRuntimeError,
    NodeSnapshot,
)
from edgewise.graph.persistence import NodeError

from ._workflow import Fails, Finish, Middle, Start, Tally, cycle_graph, expected_trail
from .conftest import Store

pytestmark = pytest.mark.anyio


def summary(history: list[Any]) -> list[tuple[str, str, str | None, int]]:
    """Each snapshot as (kind, node, status, count in its state)."""
    return [
        (s.kind, type(s.node).__name__, s.status if isinstance(s, NodeSnapshot) else None, s.state.count)
        for s in history
    ]


async def test_a_finished_run_stores_every_step_in_order(store: Store) -> None:
    persistence = store()
    result = await cycle_graph.run(Start(), state=Tally(target=2), persistence=persistence)

    assert result.output == 2
    history = await persistence.load_all()
    assert summary(history) == [
        ('node', 'Start', 'success', 0),
        ('node', 'Middle', 'success', 1),
        ('node', 'Finish', 'success', 1),
        ('node', 'Start', 'success', 1),
        ('node', 'Middle', 'success', 2),
        ('node', 'Finish', 'success', 2),
        ('end', 'End', None, 2),
    ]
    first = history[0]
    assert isinstance(first, NodeSnapshot)
    assert first.start_ts == IsDatetime()
    assert first.duration == IsFloat(ge=0)
    assert history[1].node == Middle(step=1)
    assert [s.id for s in history] == [IsStr(regex=r'(Start|Middle|Finish|end):\w+')] * 7
    assert len({s.id for s in history}) == 7
    end = history[-1]
    assert isinstance(end, EndSnapshot)
    assert end.result.data == 2
    assert end.state.trail == expected_trail(2)


async def test_a_snapshot_keeps_the_state_as_it_was_then(store: Store) -> None:
    persistence = store()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)

    history = await persistence.load_all()
    assert [s.state.trail for s in history] == [[], ['Start'], ['Start', 'Middle'], ['Start', 'Middle', 'Finish']]


async def test_an_initialized_run_is_run_by_iter_from_persistence(store: Store) -> None:
    persistence = store()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=2))

    resumed = store.reopen(persistence)
    async with cycle_graph.iter_from_persistence(resumed) as run:
        nodes = [type(node).__name__ async for node in run]

    assert nodes == ['Start', 'Middle', 'Finish', 'Start', 'Middle', 'Finish', 'End']
    assert run.result is not None
    assert run.result.output == 2
    assert run.result.state.trail == expected_trail(2)


async def test_a_run_stopped_between_steps_resumes_where_it_stopped(store: Store) -> None:
    persistence = store()
    async with cycle_graph.iter(Start(), state=Tally(target=2), persistence=persistence) as run:
        await run.next()
        await run.next()  # Start and Middle have run; Finish is next

    resumed = store.reopen(persistence)
    async with cycle_graph.iter_from_persistence(resumed) as run:
        assert run.next_node == Finish()
        async for _ in run:
            pass

    assert run.result is not None
    assert run.result.state.trail == expected_trail(2)
    assert [s.status for s in await resumed.load_all() if isinstance(s, NodeSnapshot)] == ['success'] * 6


async def test_load_next_hands_out_a_created_snapshot_once(store: Store) -> None:
    persistence = store()
    await cycle_graph.initialize(Start(), persistence, state=Tally())

    first = await persistence.load_next()
    second = await persistence.load_next()

    assert first is not None
    assert (type(first.node), first.status, first.state) == (Start, 'pending', Tally())
    assert second is None


async def test_a_node_that_raises_leaves_its_snapshot_in_error(store: Store) -> None:
    persistence = store()
    with pytest.raises(ValueError, match='this node always fails'):
        await cycle_graph.run(Fails(), state=Tally(), persistence=persistence)

    assert summary(await persistence.load_all()) == [('node', 'Fails', 'error', 0)]
    with pytest.raises(GraphRuntimeError, match='holds no node snapshot'):
        async with cycle_graph.iter_from_persistence(store.reopen(persistence)):
            pass  # pragma: no cover


@dataclass
class Leaks(BaseNode[Tally, None, int]):
    async def run(self, ctx: GraphRunContext[Tally]) -> End[int]:
        raise ConnectionError('no postgresql://app:hunter2@db/runs; api_key=sk-proj-abcdefghijklmnop Bearer tok3n')


leaky_graph = Graph(nodes=(Leaks,), name='leaky_graph')


async def test_a_failed_snapshot_keeps_the_error_with_secrets_redacted(store: Store) -> None:
    persistence = store()
    with pytest.raises(ConnectionError):
        await leaky_graph.run(Leaks(), state=Tally(), persistence=persistence)
    reader = store.reopen(persistence)
    reader.set_graph_types(leaky_graph)

    [failed] = await reader.load_all()
    assert isinstance(failed, NodeSnapshot)
    assert isinstance(failed.error, NodeError)
    assert (failed.error.type, failed.error.message) == (
        'ConnectionError',
        'no postgresql://app:***@db/runs; api_key=*** Bearer ***',
    )
    lines = failed.error.traceback.splitlines()
    assert (lines[0], lines[-1]) == (
        'Traceback (most recent call last):',
        'ConnectionError: no postgresql://app:***@db/runs; api_key=*** Bearer ***',
    )
    assert "raise ConnectionError('no postgresql://app:***@db/runs; api_key=*** Bearer ***')" in lines[-2]
    assert not any(secret in failed.error.traceback for secret in ('hunter2', 'abcdefghijklmnop', 'tok3n'))
    if store.kind != 'memory':
        [raw] = await reader.load_raw()
        assert raw.error == failed.error


async def test_a_node_that_succeeds_stores_no_error(store: Store) -> None:
    persistence = store()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)
    reader = store.reopen(persistence)
    reader.set_graph_types(cycle_graph)
    assert [s.error for s in await reader.load_all() if isinstance(s, NodeSnapshot)] == [None, None, None]


async def test_record_run_of_an_unknown_snapshot_raises_lookup_error(store: Store) -> None:
    persistence = store()
    await cycle_graph.initialize(Start(), persistence, state=Tally())

    with pytest.raises(LookupError, match="No snapshot found with id='nope'"):
        async with persistence.record_run('nope'):
            pass  # pragma: no cover


async def test_record_run_of_a_finished_snapshot_raises_status_error(store: Store) -> None:
    persistence = store()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)
    first = (await persistence.load_all())[0]

    with pytest.raises(GraphNodeStatusError, match="Incorrect snapshot status 'success'"):
        async with persistence.record_run(first.id):
            pass  # pragma: no cover


async def test_snapshot_node_if_new_stores_a_snapshot_once(store: Store) -> None:
    persistence = store()
    persistence.set_graph_types(cycle_graph)
    node = Start()
    await persistence.snapshot_node_if_new(node.get_snapshot_id(), Tally(), node)
    await persistence.snapshot_node_if_new(node.get_snapshot_id(), Tally(count=5), node)

    assert summary(await persistence.load_all()) == [('node', 'Start', 'created', 0)]


async def test_snapshot_end_stores_the_output(store: Store) -> None:
    persistence = store()
    persistence.set_graph_types(cycle_graph)
    await persistence.snapshot_end(Tally(count=4), End(4))

    [end] = await persistence.load_all()
    assert isinstance(end, EndSnapshot)
    assert (end.result.data, end.state.count) == (4, 4)
    assert end.ts == IsDatetime()


async def test_a_cancelled_node_can_run_again_on_resume(durable: Store, tmp_path: Path) -> None:
    store = durable
    persistence = store()
    effects = tmp_path / 'effects.log'
    effects.touch()
    state = Tally(target=1, node_delay=3600, effects_log=str(effects))
    async with anyio.create_task_group() as tg:  # cancelled once the node is running, however busy the machine
        tg.start_soon(partial(cycle_graph.run, Start(), state=state, persistence=persistence))
        while not effects.read_text():  # noqa: ASYNC110 (the node signals only through its effects file)
            await anyio.sleep(0.005)
        tg.cancel_scope.cancel()

    assert summary(await persistence.load_all()) == [('node', 'Start', 'created', 0)]
    resumed = store.reopen(persistence)
    async with cycle_graph.iter_from_persistence(resumed) as run:
        run.state.node_delay = 0
        async for _ in run:
            pass
    assert run.result is not None
    assert run.result.state.trail == expected_trail(1)


async def test_record_run_of_an_end_snapshot_is_refused(store: Store) -> None:
    persistence = store()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)
    end = (await persistence.load_all())[-1]

    with pytest.raises(GraphRuntimeError, match=r"Snapshot '.*' is the end of the run; only node snapshots can be run"):
        async with persistence.record_run(end.id):
            pass  # pragma: no cover
