"""What the durable backends (file, SQLite, PostgreSQL) add to the contract: forks, claims, bad stored data."""

from __future__ import annotations

import re
from dataclasses import dataclass

import anyio
import pytest

from edgewise.graph import BaseNode, End, Graph, GraphRunContext, NodeSnapshot
from edgewise.graph.exceptions import GraphRuntimeError, PersistenceError, RunInProgressError
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._workflow import Fails, Finish, Middle, Start, Tally, cycle_graph, expected_trail
from .conftest import Store, run_id_of
from .test_contract import summary

pytestmark = pytest.mark.anyio


async def test_a_fork_continues_from_its_snapshot_and_leaves_the_original_alone(durable: Store) -> None:
    original = durable()
    await cycle_graph.run(Start(), state=Tally(target=2), persistence=original)
    before = summary(await original.load_all())
    branch_point = (await original.load_all())[3]  # the second Start, with count 1

    fork = durable.track(await original.fork(branch_point.id, run_id='forked-run'))
    assert run_id_of(fork) == 'forked-run'
    assert summary(await fork.load_all()) == [*before[:3], ('node', 'Start', 'created', 1)]
    async with cycle_graph.iter_from_persistence(fork) as run:
        run.state.target = 3
        async for _ in run:
            pass

    assert run.result is not None
    assert run.result.output == 3
    assert run.result.state.trail == expected_trail(3)
    assert summary(await original.load_all()) == before


async def test_a_fork_gets_a_new_run_id_when_none_is_given(durable: Store) -> None:
    original = durable()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=original)
    first = (await original.load_all())[0]

    fork = durable.track(await original.fork(first.id))

    assert run_id_of(fork) != run_id_of(original)
    assert summary(await fork.load_all()) == [('node', 'Start', 'created', 0)]


async def test_a_fork_of_an_unknown_snapshot_raises_lookup_error(durable: Store) -> None:
    original = durable()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=original)

    with pytest.raises(LookupError, match="No snapshot found with id='nope'"):
        await original.fork('nope')


async def test_a_fork_into_an_existing_run_id_is_refused(durable: Store) -> None:
    original = durable()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=original)
    first = (await original.load_all())[0]
    durable.track(await original.fork(first.id, run_id='taken'))

    with pytest.raises(PersistenceError, match=r"into 'taken'.*already exists"):
        durable.track(await original.fork(first.id, run_id='taken'))


async def test_a_second_resume_while_the_first_runs_fails_at_once(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    run_id = run_id_of(persistence)

    async with cycle_graph.iter_from_persistence(persistence) as run:
        with pytest.raises(RunInProgressError, match=f"Run '{run_id}' is in progress elsewhere: process") as caught:
            async with cycle_graph.iter_from_persistence(durable(run_id)):
                pass  # pragma: no cover
        assert isinstance(caught.value, GraphRuntimeError)
        async for _ in run:
            pass

    assert run.result is not None
    assert run.result.output == 1


async def test_the_same_object_cannot_be_resumed_twice_at_once(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))

    async with cycle_graph.iter_from_persistence(persistence):
        with pytest.raises(RunInProgressError, match='is in progress elsewhere'):
            async with cycle_graph.iter_from_persistence(persistence):
                pass  # pragma: no cover


async def test_a_run_is_free_again_once_its_holder_is_done(durable: Store) -> None:
    persistence = durable()
    async with cycle_graph.iter(Start(), state=Tally(target=1), persistence=persistence) as run:
        await run.next()

    async with cycle_graph.iter_from_persistence(durable(run_id_of(persistence))) as run:
        async for _ in run:
            pass
    assert run.result is not None
    assert run.result.state.trail == expected_trail(1)


async def test_snapshots_written_through_two_objects_of_one_run_are_appended_in_order(durable: Store) -> None:
    first = durable()
    second = durable(run_id_of(first))
    first.set_graph_types(cycle_graph)
    second.set_graph_types(cycle_graph)

    await first.snapshot_node(Tally(), Start())
    await second.snapshot_node(Tally(count=1), Middle(step=1))
    await first.snapshot_node(Tally(count=2), Finish())

    history = await second.load_all()
    assert [(type(s.node).__name__, s.state.count) for s in history] == [('Start', 0), ('Middle', 1), ('Finish', 2)]


async def test_two_tasks_resuming_one_run_advance_it_once(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=2, node_delay=0.01))
    outcomes: list[str] = []

    async def resume() -> None:
        try:
            async with cycle_graph.iter_from_persistence(durable(run_id_of(persistence))) as run:
                async for _ in run:
                    pass
            outcomes.append('finished')
        except RunInProgressError:
            outcomes.append('refused')

    async with anyio.create_task_group() as tg:
        tg.start_soon(resume)
        tg.start_soon(resume)

    assert sorted(outcomes) == ['finished', 'refused']
    history = await persistence.load_all()
    assert history[-1].state.trail == expected_trail(2)


# --- bad stored data ---------------------------------------------------------------------------------


@dataclass
class Renamed(BaseNode[Tally, None, int]):
    async def run(self, ctx: GraphRunContext[Tally]) -> End[int]:
        return End(0)  # pragma: no cover


@dataclass
class Other(BaseNode[Tally, None, int]):
    async def run(self, ctx: GraphRunContext[Tally]) -> End[int]:
        return End(0)  # pragma: no cover


graph_without_start = Graph(nodes=(Renamed, Other), name='graph_without_start')


@dataclass
class Strict:
    count: list[int]


@dataclass
class StrictStart(BaseNode[Strict, None, int]):
    async def run(self, ctx: GraphRunContext[Strict]) -> End[int]:
        return End(0)  # pragma: no cover

    @classmethod
    def get_node_id(cls) -> str:
        return 'Start'


@dataclass
class StrictOther(BaseNode[Strict, None, int]):
    async def run(self, ctx: GraphRunContext[Strict]) -> End[int]:
        return End(0)  # pragma: no cover


graph_with_other_state = Graph(nodes=(StrictStart, StrictOther), name='graph_with_other_state')


async def stored(persistence: object) -> object:
    """The raw stored form of a run, to show that a failed load changed nothing."""
    if isinstance(persistence, FileStatePersistence):
        return persistence.json_file.read_bytes()
    if isinstance(persistence, SqliteStatePersistence):
        import sqlite3

        with sqlite3.connect(persistence.path) as conn:
            return conn.execute('SELECT * FROM edgewise_snapshots ORDER BY run_id, seq').fetchall()
    return [(s.id, s.status) for s in await persistence.load_all()]  # type: ignore[attr-defined]


async def test_a_snapshot_whose_node_class_is_gone_is_reported_and_left_alone(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally())
    snapshot_id = (await persistence.load_all())[0].id
    before = await stored(persistence)

    other = durable(run_id_of(persistence))
    with pytest.raises(PersistenceError) as caught:
        async with graph_without_start.iter_from_persistence(other):
            pass  # pragma: no cover

    run_id = run_id_of(persistence)
    assert f'Snapshot {snapshot_id!r} of run {run_id!r}' in caught.value.message
    assert 'its node `Start` is not a node of this graph (renamed or removed?)' in caught.value.message
    assert 'Nothing was changed' in caught.value.message
    if not isinstance(persistence, FileStatePersistence | SqliteStatePersistence):
        other = durable(run_id)
        other.set_graph_types(cycle_graph)
        persistence = other
    assert await stored(persistence) == before


async def test_a_state_that_no_longer_validates_is_reported_and_left_alone(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally())
    snapshot_id = (await persistence.load_all())[0].id
    before = await stored(persistence)

    other = durable(run_id_of(persistence))
    with pytest.raises(PersistenceError) as caught:
        async with graph_with_other_state.iter_from_persistence(other):
            pass  # pragma: no cover

    assert f'Snapshot {snapshot_id!r} of run {run_id_of(persistence)!r}' in caught.value.message
    assert re.search(
        r"it does not validate against the graph's types \(state.count: Input should be a valid (list|array)",
        caught.value.message,
    )
    assert await stored(persistence) == before
    async with cycle_graph.iter_from_persistence(durable(run_id_of(persistence))) as run:
        async for _ in run:
            pass
    assert run.result is not None


async def test_snapshots_cannot_be_read_before_the_graph_types_are_known(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally())

    with pytest.raises(PersistenceError, match="needs the graph's types"):
        await durable(run_id_of(persistence)).load_all()


async def test_a_node_returning_itself_is_refused_without_losing_the_run(durable: Store) -> None:
    @dataclass
    class Loop(BaseNode[Tally, None, int]):
        async def run(self, ctx: GraphRunContext[Tally]) -> Loop | End[int]:
            return self

    loop_graph = Graph(nodes=(Loop,), name='loop_graph')
    persistence = durable()
    with pytest.raises(PersistenceError, match='already has a snapshot with id'):
        await loop_graph.run(Loop(), state=Tally(), persistence=persistence)

    [snapshot] = await persistence.load_all()
    assert isinstance(snapshot, NodeSnapshot)
    assert snapshot.status == 'error'


async def test_a_step_left_running_by_a_gone_process_runs_again(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    [snapshot] = await persistence.load_all()
    abandoned = persistence.record_run(snapshot.id)
    await abandoned.__aenter__()  # the node started; its process "dies" here, holding no claim
    assert summary(await persistence.load_all()) == [('node', 'Start', 'running', 0)]

    async with cycle_graph.iter_from_persistence(durable(run_id_of(persistence))) as run:
        async for _ in run:
            pass

    assert run.result is not None
    assert run.result.state.trail == expected_trail(1)
    assert summary(await persistence.load_all())[0] == ('node', 'Start', 'success', 0)


async def test_info_gives_the_run_as_its_store_lists_it(durable: Store) -> None:
    persistence = durable()
    assert await persistence.info() is None  # nothing stored yet

    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    waiting = await durable.reopen(persistence).info()
    async with cycle_graph.iter_from_persistence(durable.reopen(persistence)) as run:
        await run.next()
        running = await durable.reopen(persistence).info()  # held by this process, its next node started
        async for _ in run:
            pass
    finished = await durable.reopen(persistence).info()

    graph_name = None if durable.kind == 'file' else 'cycle_graph'
    assert (waiting.run_id, waiting.graph_name, waiting.status, waiting.snapshot_count) == (
        run_id_of(persistence),
        graph_name,
        'waiting',
        1,
    )
    assert (running.status, running.snapshot_count) == ('running', 2)
    assert (finished.status, finished.snapshot_count) == ('finished', 4)
    assert running.created == finished.created <= finished.updated
    if durable.kind != 'file':  # a file records no creation time: until its first node runs, its mtime stands in
        assert waiting.created == running.created


async def test_starting_a_run_under_the_id_of_a_stored_one_is_refused(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)
    again = durable(run_id_of(persistence))

    with pytest.raises(PersistenceError, match=rf"Run '{run_id_of(persistence)}' already exists in .*4 snapshots"):
        await cycle_graph.run(Start(), state=Tally(target=1), persistence=again)

    reader = durable(run_id_of(persistence))
    reader.set_graph_types(cycle_graph)
    history = await reader.load_all()
    assert [type(s).__name__ for s in history] == ['NodeSnapshot', 'NodeSnapshot', 'NodeSnapshot', 'EndSnapshot']


async def test_nothing_to_resume_names_the_run_and_the_store(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)
    again = durable(run_id_of(persistence))

    with pytest.raises(GraphRuntimeError, match=r'^Unable to restore snapshot from state persistence: ') as info:
        async with cycle_graph.iter_from_persistence(again):
            pass  # pragma: no cover

    assert f'Nothing to resume for run {run_id_of(persistence)!r} in ' in info.value.message
    assert again.store_description in info.value.message


async def _nothing_to_resume(persistence: object) -> str:
    with pytest.raises(GraphRuntimeError) as info:
        async with cycle_graph.iter_from_persistence(persistence):  # type: ignore[arg-type]
            pass  # pragma: no cover
    return info.value.message


@pytest.mark.usefixtures('snapshot_ids')
async def test_nothing_to_resume_says_whether_the_run_is_unknown_finished_or_failed(durable: Store) -> None:
    finished, failed = durable(), durable()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=finished)
    with pytest.raises(ValueError, match='always fails'):
        await cycle_graph.run(Fails(), state=Tally(), persistence=failed)
    unknown = durable('run-unknown')
    where = {
        p: f'Unable to restore snapshot from state persistence: {type(p).__name__} holds no node snapshot with '
        f"status 'created'. Nothing to resume for run {run_id_of(p)!r} in {p.store_description}: "
        for p in (finished, failed, unknown)
    }

    assert await _nothing_to_resume(durable.reopen(unknown)) == (
        where[unknown] + 'no run of that id is stored (check the id; `list_runs` lists the runs of a store).'
    )
    assert await _nothing_to_resume(durable.reopen(finished)) == (
        where[finished] + 'it has finished (its result is in its last snapshot, see `load_all()`). To run a part of '
        'it again, fork it at a snapshot (`fork(snapshot_id)`) and resume the fork.'
    )
    assert await _nothing_to_resume(durable.reopen(failed)) == (
        where[failed] + "it failed. A failed run does not resume: fork it at the failed snapshot, `fork('Fails:5')`, "
        'which runs node `Fails` again in a new run (or at an earlier snapshot), and resume the fork.'
    )


@pytest.mark.usefixtures('snapshot_ids')
async def test_starting_a_run_under_the_id_of_a_failed_one_advises_a_fork(durable: Store) -> None:
    failed = durable()
    with pytest.raises(ValueError, match='always fails'):
        await cycle_graph.run(Fails(), state=Tally(), persistence=failed)

    with pytest.raises(PersistenceError) as info:
        await cycle_graph.run(Start(), state=Tally(), persistence=durable(run_id_of(failed)))

    assert info.value.message.endswith(
        '(1 snapshots, failed); a new run cannot start under its id, and nothing was written. A failed run does not '
        "resume: fork it at the failed snapshot, `fork('Fails:1')`, which runs node `Fails` again in a new run (or at "
        'an earlier snapshot), and resume the fork. Or start the new run under another run id.'
    )


async def test_an_object_that_loaded_the_run_continues_it_with_a_node_of_the_callers_choosing(durable: Store) -> None:
    # pydantic-graph's documented pattern: `load_next`, then `iter` with another node on the same persistence.
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    again = durable(run_id_of(persistence))
    again.set_graph_types(cycle_graph)
    snapshot = await again.load_next()
    assert snapshot is not None

    result = await cycle_graph.run(Middle(step=1), state=snapshot.state, persistence=again)

    assert result.output is not None


async def test_a_run_let_go_of_before_its_loaded_node_starts_leaves_that_node_created(durable: Store) -> None:
    # As a Ctrl-C between two steps does: the loaded node never started, so the run is waiting, not interrupted.
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    async with cycle_graph.iter_from_persistence(persistence):
        assert summary(await persistence.load_all()) == [('node', 'Start', 'pending', 0)]

    assert summary(await persistence.load_all()) == [('node', 'Start', 'created', 0)]
    info = await persistence.info()
    assert info is not None
    assert info.status == 'waiting'


async def test_a_run_closed_before_its_loaded_node_starts_leaves_that_node_created(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    run_id = run_id_of(persistence)
    async with cycle_graph.iter_from_persistence(persistence):
        await persistence.aclose()  # lets go of the run at once

    reopened = durable(run_id)
    reopened.set_graph_types(cycle_graph)
    assert summary(await reopened.load_all()) == [('node', 'Start', 'created', 0)]


async def test_a_loaded_node_the_caller_replaced_is_not_reset_when_the_run_is_let_go_of(durable: Store) -> None:
    persistence = durable()
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    async with cycle_graph.iter_from_persistence(persistence) as run:
        await run.next(Middle(step=1))  # another node than the loaded one; its successor is stored

    # The loaded node stays as the step left it, not `'created'` in the middle of the run (which a resume would
    # run again); the successor of the node that ran goes back to `'created'` as before.
    assert summary(await persistence.load_all()) == [
        ('node', 'Start', 'pending', 0),
        ('node', 'Middle', 'success', 0),
        ('node', 'Finish', 'created', 0),
    ]
    async with cycle_graph.iter_from_persistence(durable(run_id_of(persistence))) as run:
        assert isinstance(run.next_node, Finish)
