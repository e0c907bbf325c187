"""Builder graphs on DBOS in this process (DBOS launched on a SQLite system database): each step, `BaseNode` and
decision a DBOS step, run one at a time in the order their tasks were made."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest

from edgewise.graph import BaseNode, End, EndSnapshot, Graph, GraphRunContext
from edgewise.graph.builder import GraphBuilder, ReduceFirstValue, StepContext, reduce_list_append
from edgewise.graph.builder._run_path import MapProgress, read_run_path
from edgewise.graph.builder.join import JoinNode
from edgewise.graph.dbos import DBOSGraph, DBOSQueue, DBOSWorker, application_version, load_history
from edgewise.graph.exceptions import GraphRuntimeError, GraphSetupError
from edgewise.graph.persistence.sqlite import SqliteStatePersistence


@dataclass
class Seen:
    order: list[str] = field(default_factory=list)


CALLS: list[str] = []
"""Every run of user code, in this process."""

g = GraphBuilder(state_type=Seen, deps_type=int, input_type=list[int], output_type=list[int])


@g.step
async def scale(ctx: StepContext[Seen, int, int]) -> int:
    if ctx.inputs < 0:
        raise ValueError(f'negative: {ctx.inputs}')
    ctx.state.order.append(f'scale {ctx.inputs}')
    CALLS.append(f'scale {ctx.inputs}')
    return ctx.inputs * ctx.deps


collect = g.join(reduce_list_append, initial_factory=list[int], node_id='collect')


@dataclass
class Halve(BaseNode[Seen, int, Any]):
    value: int

    async def run(self, ctx: GraphRunContext[Seen, int]) -> Annotated[JoinNode[Seen, int], collect]:
        ctx.state.order.append(f'halve {self.value}')
        CALLS.append(f'halve {self.value}')
        return collect.as_node(self.value // 2)


def is_big(value: int) -> bool:
    return value >= 20


route = (
    g.decision(node_id='big_or_small')
    .branch(g.match(int, matches=is_big).transform(lambda ctx: Halve(ctx.inputs)).to(Halve))
    .branch(g.match(int).to(collect))
)
g.add(
    g.edge_from(g.start_node).map().to(scale),
    g.edge_from(scale).to(route),
    g.node(Halve),
    g.edge_from(collect).to(g.end_node),
)
scaled = g.build()
dbos_scaled = DBOSGraph(scaled, name='scaled', deps=10)
QUEUE = DBOSQueue('builder-in-process', worker_concurrency=2, polling_interval=0.1)

f = GraphBuilder(input_type=list[int], output_type=int)


@f.step
async def echo(ctx: StepContext[None, None, int]) -> int:
    return ctx.inputs


@f.step
async def double(ctx: StepContext[None, None, int]) -> int:
    return ctx.inputs * 2


first = f.join(ReduceFirstValue[int](), initial=0, node_id='first')
f.add(
    f.edge_from(f.start_node).map().to(echo),
    f.edge_from(echo).to(first),
    f.edge_from(first).to(double),
    f.edge_from(double).to(f.end_node),
)
dbos_first = DBOSGraph(f.build(), name='first-value')


@pytest.fixture(scope='module')
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DBOSWorker]:
    url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "system.sqlite"}'
    config = {'name': 'edgewise-builder-in-process', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[QUEUE], recovery_interval=0.2) as started:  # type: ignore[arg-type]
        yield started


def test_each_step_base_node_and_decision_is_a_dbos_step_in_task_order(worker: DBOSWorker) -> None:
    from dbos import DBOS

    result = dbos_scaled.run_sync(inputs=[1, 3, 2], state=Seen(), run_id='builder-sync')
    assert sorted(result.output) == [10, 10, 15]  # 10 small; 30 and 20 big, halved
    assert result.state == Seen(order=['scale 1', 'scale 3', 'scale 2', 'halve 30', 'halve 20'])
    steps = DBOS.list_workflow_steps('builder-sync')
    assert [step['function_name'] for step in steps] == [
        *['scale'] * 3,
        *['big_or_small'] * 3,
        *['Halve'] * 2,
    ]
    assert all(isinstance(step['output'], str) for step in steps)  # JSON, whatever DBOS's serializer


def test_a_join_that_cancels_its_siblings_keeps_them_from_starting(worker: DBOSWorker) -> None:
    from dbos import DBOS

    assert dbos_first.run_sync(inputs=[7, 8, 9], run_id='builder-first').output == 14
    # The first value cancels the two other `echo` tasks, queued before `double`: they never run.
    assert [step['function_name'] for step in DBOS.list_workflow_steps('builder-first')] == ['echo', 'double']


def test_a_replay_reads_the_recorded_steps_back_and_takes_the_same_path(worker: DBOSWorker) -> None:
    from dbos import DBOS

    run_id = dbos_scaled.start_sync(inputs=[4, 1, 3], state=Seen(), run_id='builder-to-fork')
    original = dbos_scaled.result_sync(run_id)
    CALLS.clear()
    # DBOS replays the new workflow's code: its first five steps (three `scale`, two decisions) are read back
    # from the original's records, not run; the rest runs.
    forked = DBOS.fork_workflow(run_id, 6).get_workflow_id()
    again = dbos_scaled.result_sync(forked)
    assert (again.output, again.state) == (original.output, original.state)
    assert CALLS == ['halve 40', 'halve 30']
    names = [step['function_name'] for step in DBOS.list_workflow_steps(forked)]
    assert names == [step['function_name'] for step in DBOS.list_workflow_steps(run_id)]


@pytest.mark.anyio
async def test_async_entry_points_on_both_backends(worker: DBOSWorker, anyio_backend: str) -> None:
    result = await dbos_scaled.run(inputs=[1], state=Seen(), run_id=f'builder-async-{anyio_backend}')
    assert (result.output, result.state) == ([10], Seen(order=['scale 1']))
    run_id = await dbos_scaled.enqueue(QUEUE, inputs=[2, 4], state=Seen(), run_id=f'builder-queued-{anyio_backend}')
    assert run_id == f'builder-queued-{anyio_backend}'
    assert sorted((await dbos_scaled.result(run_id)).output) == [10, 20]  # both big, halved
    started = await dbos_scaled.start(inputs=[5], state=Seen(), run_id=f'builder-started-{anyio_backend}')
    assert (await dbos_scaled.result(started)).output == [25]
    with pytest.raises(LookupError, match="No DBOS graph run 'builder-fails-nowhere'"):
        await dbos_scaled.history('builder-fails-nowhere')


def test_a_failing_step_fails_the_run(worker: DBOSWorker) -> None:
    run_id = dbos_scaled.start_sync(inputs=[1, -1], state=Seen(), run_id='builder-fails')
    with pytest.raises(
        GraphRuntimeError, match="Run 'builder-fails' of graph `scaled` failed: ValueError: negative: -1"
    ):
        dbos_scaled.result_sync(run_id)
    with pytest.raises(ValueError, match='negative: -2'):
        dbos_scaled.run_sync(inputs=[-2], state=Seen())


def test_max_steps(worker: DBOSWorker) -> None:
    run_id = dbos_scaled.start_sync(inputs=[1, 2, 3], state=Seen(), run_id='builder-limited', max_steps=4)
    with pytest.raises(GraphRuntimeError, match=r'StepLimitExceeded: .* ran 4 steps, its `max_steps`, and was about'):
        dbos_scaled.result_sync(run_id)


def test_a_builder_graph_starts_from_its_input_not_a_node(worker: DBOSWorker) -> None:
    @dataclass
    class Start(BaseNode[None, None, int]):
        async def run(self, ctx: GraphRunContext) -> End[int]:
            return End(1)

    with pytest.raises(GraphRuntimeError, match='`scaled` is a builder graph: it starts from its input'):
        dbos_scaled.run_sync(Start(), inputs=[1])  # type: ignore[arg-type]


def test_input_that_cannot_be_stored(worker: DBOSWorker) -> None:
    from edgewise.graph.exceptions import PersistenceError

    with pytest.raises(PersistenceError, match='cannot be stored as JSON data'):
        dbos_scaled.run_sync(inputs=[object()], state=Seen())


def test_a_builder_graph_needs_a_name() -> None:
    h = GraphBuilder(output_type=int)
    h.add(h.edge_from(h.start_node).to(h.end_node))
    with pytest.raises(GraphSetupError, match='A DBOSGraph needs a stable name'):
        DBOSGraph(h.build())


async def add_one(ctx: StepContext[None, None, int]) -> int:
    return ctx.inputs + 1


async def add_two(ctx: StepContext[None, None, int]) -> int:
    return ctx.inputs + 2


def one_step_graph(call: Any) -> Any:
    h = GraphBuilder(input_type=int, output_type=int)
    step = h.step(call, node_id='step')
    h.add(h.edge_from(h.start_node).to(step), h.edge_from(step).to(h.end_node))
    return h.build()


def test_application_version_follows_a_builder_graphs_step_code() -> None:
    assert application_version(one_step_graph(add_one)) == application_version(one_step_graph(add_one))
    assert application_version(one_step_graph(add_one)) != application_version(one_step_graph(add_two))
    assert application_version(dbos_scaled) == application_version(scaled)
    assert application_version(scaled) != application_version(scaled, extra='release-2')
    assert application_version(scaled) != application_version(Graph(nodes=(), name='scaled'))


@pytest.mark.anyio
async def test_a_runs_path_is_rebuilt_from_its_recorded_steps(
    worker: DBOSWorker, anyio_backend: str, tmp_path: Path
) -> None:
    run_id = f'builder-path-{anyio_backend}'
    await dbos_scaled.run(inputs=[1, 3, 2], state=Seen(), run_id=run_id)
    history = await dbos_scaled.history(run_id)
    # The same run stored step by step gives the same path: every node done, the three map items finished.
    async with SqliteStatePersistence(tmp_path / 'runs.db', run_id) as store:
        await scaled.run(inputs=[1, 3, 2], state=Seen(), deps=10, persistence=store)
        stored = await store.load_all()
    path = read_run_path(history, scaled)
    assert path == read_run_path(stored, scaled)
    assert (path.ended, path.error, path.maps) == (True, None, {'map': MapProgress(3, 3)})
    assert sorted(path.done) == ['Halve', '__end__', '__start__', 'big_or_small', 'collect', 'map', 'scale']
    assert isinstance(history[-1], EndSnapshot)
    assert (history[-1].result.data, history[-1].state) == (
        [10, 15, 10],
        Seen(order=['scale 1', 'scale 3', 'scale 2', 'halve 30', 'halve 20']),
    )


def test_a_failed_runs_path_marks_the_step_that_raised(worker: DBOSWorker) -> None:
    run_id = dbos_scaled.start_sync(inputs=[1, -1, 30], state=Seen(), run_id='builder-path-fails')
    with pytest.raises(GraphRuntimeError, match='negative: -1'):
        dbos_scaled.result_sync(run_id)
    url = worker.config['system_database_url']
    assert url is not None
    history = anyio.run(load_history, url, run_id, scaled)
    path = read_run_path(history, scaled)
    # Item 1 waits at its decision, item -1 failed in `scale`, item 30 has not started: no item is finished.
    assert path.marks == {'__start__': 'done', 'map': 'done', 'scale': 'failed', 'big_or_small': 'waiting'}
    assert (path.ended, path.error, path.maps) == (False, 'ValueError: negative: -1', {'map': MapProgress(0, 3)})
    assert scaled.mermaid_code(history=history).endswith(
        'class map highlighted\nclassDef stopped fill:#7ec8ff,stroke:#1f6fb2,stroke-width:3px\nclass big_or_small '
        'stopped\nclassDef failed fill:#ff8a80,stroke:#c62828,stroke-width:3px\nclass scale failed'
    )


def test_the_command_line_draws_a_dbos_runs_path(worker: DBOSWorker, capsys: pytest.CaptureFixture[str]) -> None:
    from edgewise.graph.cli import main

    dbos_scaled.run_sync(inputs=[1], state=Seen(), run_id='builder-path-cli')  # small: to `collect`
    store = f'dbos+{worker.config["system_database_url"]}'
    capsys.readouterr()
    assert (
        main(['mermaid', 'tests.graph.dbos.test_builder_graph:scaled', '--run', 'builder-path-cli', '--store', store])
        == 0
    )
    out = capsys.readouterr().out
    assert '  map --> scale: 1/1 done\n' in out
    assert out.endswith(
        'class map highlighted\nclass scale highlighted\nclass big_or_small highlighted\nclass collect highlighted\n'
    )
    assert main(['mermaid', 'tests.graph.dbos.test_builder_graph:scaled', '--run', 'nope', '--store', store]) == 1
    assert capsys.readouterr().err == (
        f"edgewise: error: No run 'nope' in {store} (`edgewise runs list --store URL` lists them).\n"
    )
