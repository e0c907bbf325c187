"""DBOSGraph in this process (DBOS launched on a SQLite system database): runs, results, history, listing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from inline_snapshot import snapshot

from edgewise.graph import BaseNode, End, EndSnapshot, Graph, GraphRunContext, NodeSnapshot
from edgewise.graph.dbos import DBOSGraph, DBOSQueue, DBOSWorker, application_version, list_runs, load_history
from edgewise.graph.exceptions import GraphRuntimeError, GraphSetupError


@dataclass
class Count:
    seen: list[int] = field(default_factory=list)


@dataclass
class Up(BaseNode[Count, int, int]):
    n: int

    async def run(self, ctx: GraphRunContext[Count, int]) -> Up | Check:
        ctx.state.seen.append(self.n)
        return Check(self.n + ctx.deps)


@dataclass
class Check(BaseNode[Count, int, int]):
    n: int

    async def run(self, ctx: GraphRunContext[Count, int]) -> Up | End[int]:
        if self.n < 0:
            raise ValueError(f'negative: {self.n}')
        if self.n >= 3:
            return End(self.n)
        return Up(self.n)


counter = Graph(nodes=(Up, Check), name='counter')
dbos_counter = DBOSGraph(counter, deps=1)
QUEUE = DBOSQueue('in-process', worker_concurrency=2, polling_interval=0.1)


@pytest.fixture(scope='module')
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DBOSWorker]:
    url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "system.sqlite"}'
    config = {'name': 'edgewise-in-process', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[QUEUE], recovery_interval=0.2) as started:  # type: ignore[arg-type]
        yield started


def url_of(worker: DBOSWorker) -> str:
    url = worker.config.get('system_database_url')
    assert url is not None
    return url


def test_run_sync_runs_each_node_as_a_step(worker: DBOSWorker) -> None:
    result = dbos_counter.run_sync(Up(0), state=Count(), run_id='sync-run')
    assert (result.output, result.state) == (3, Count(seen=[0, 1, 2]))
    from dbos import DBOS

    steps = DBOS.list_workflow_steps('sync-run')
    assert [step['function_name'] for step in steps] == ['Up', 'Check', 'Up', 'Check', 'Up', 'Check']
    assert all(isinstance(step['output'], str) for step in steps)  # pydantic JSON, whatever DBOS's serializer


@pytest.mark.anyio
async def test_async_entry_points_on_both_backends(worker: DBOSWorker, anyio_backend: str) -> None:
    result = await dbos_counter.run(Up(1), state=Count(), run_id=f'async-{anyio_backend}')
    assert (result.output, result.state) == (3, Count(seen=[1, 2]))
    run_id = await dbos_counter.enqueue(QUEUE, Up(2), state=Count(), run_id=f'queued-{anyio_backend}')
    assert run_id == f'queued-{anyio_backend}'
    assert (await dbos_counter.result(run_id)).state == Count(seen=[2])


@pytest.mark.anyio
async def test_history_and_mermaid_path(worker: DBOSWorker, anyio_backend: str) -> None:
    run_id = await dbos_counter.start(Up(2), state=Count(), run_id=f'history-{anyio_backend}')
    await dbos_counter.result(run_id)
    history = await dbos_counter.history(run_id)
    assert [(s.kind, s.node.get_node_id() if s.kind == 'node' else None) for s in history] == [
        ('node', 'Up'),
        ('node', 'Check'),
        ('end', None),
    ]
    assert [s.status for s in history if isinstance(s, NodeSnapshot)] == ['success', 'success']
    assert isinstance(history[-1], EndSnapshot)
    assert history[-1].result.data == 3
    assert history == await load_history(url_of(worker), run_id, counter)
    assert counter.mermaid_code(history=history) == snapshot("""\
---
title: counter
---
stateDiagram-v2
  Up --> Up
  Up --> Check
  Check --> Up
  Check --> [*]

classDef highlighted fill:#fdff32
class Up highlighted
class Check highlighted\
""")


def test_failed_node_and_listing(worker: DBOSWorker) -> None:
    run_id = dbos_counter.start_sync(Check(-1), state=Count(), run_id='fails')
    with pytest.raises(GraphRuntimeError, match="Run 'fails' of graph `counter` failed: ValueError: negative: -1"):
        dbos_counter.result_sync(run_id)
    import anyio

    history = anyio.run(dbos_counter.history, run_id)
    assert [(s.node.get_node_id(), s.status) for s in history if isinstance(s, NodeSnapshot)] == [('Check', 'error')]
    assert counter.mermaid_code(history=history).endswith('class Check failed')
    runs = {run.run_id: run for run in anyio.run(list_runs, f'dbos+{url_of(worker)}')}
    assert runs['fails'].status == 'failed'
    assert runs['fails'].graph_name == 'counter'
    assert runs['fails'].snapshot_count == 1
    assert runs['sync-run'].status == 'finished'
    assert runs['sync-run'].snapshot_count == 7


def test_max_steps(worker: DBOSWorker) -> None:
    run_id = dbos_counter.start_sync(Up(0), state=Count(), run_id='limited', max_steps=3)
    with pytest.raises(
        GraphRuntimeError, match=r'StepLimitExceeded: .* ran 3 nodes, its `max_steps`, and was about to run `Check`'
    ):
        dbos_counter.result_sync(run_id)


def test_start_node_outside_the_graph(worker: DBOSWorker) -> None:
    @dataclass
    class Stranger(BaseNode[Count, int, int]):
        async def run(self, ctx: GraphRunContext[Count, int]) -> End[int]:
            return End(0)

    with pytest.raises(GraphRuntimeError, match='is not in the graph `counter`'):
        dbos_counter.start_sync(Stranger(), state=Count())


def test_a_graph_needs_a_name() -> None:
    with pytest.raises(GraphSetupError, match='A DBOSGraph needs a stable name'):
        DBOSGraph(Graph(nodes=(Up, Check)))


def test_history_of_an_unknown_run(worker: DBOSWorker) -> None:
    import anyio

    with pytest.raises(LookupError, match="No DBOS graph run 'nope'"):
        anyio.run(dbos_counter.history, 'nope')


def test_application_version_follows_node_code() -> None:
    @dataclass
    class Other(BaseNode[Count, int, int]):
        async def run(self, ctx: GraphRunContext[Count, int]) -> End[int]:
            return End(1)

    version = application_version(counter)
    assert version == application_version(dbos_counter)
    assert version.startswith('edgewise-')
    assert version != application_version(Graph(nodes=(Up, Check, Other), name='counter'))
    assert version != application_version(counter, extra='release-2')


def test_worker_needs_a_system_database() -> None:
    with pytest.raises(ValueError, match="DBOSWorker needs config\\['system_database_url'\\]"):
        DBOSWorker({'name': 'x'})


def test_worker_executor_id(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv('DBOS__VMID', 'box-1')
    assert DBOSWorker({'name': 'x', 'system_database_url': 'sqlite:///x.sqlite'}).executor_id == 'edgewise-box-1'
    given = DBOSWorker({'name': 'x', 'system_database_url': 'sqlite:///x', 'executor_id': 'edgewise-7'})
    assert given.executor_id == 'edgewise-7'
    assert repr(given) == "<DBOSWorker 'edgewise-7'>"
    assert repr(dbos_counter) == "<DBOSGraph 'edgewise.graph/counter'>"


def test_cli_lists_runs_and_draws_a_path(worker: DBOSWorker, capsys: pytest.CaptureFixture[str]) -> None:
    from edgewise.graph.cli import main

    dbos_counter.run_sync(Up(1), state=Count(), run_id='cli-run')
    capsys.readouterr()
    store = f'dbos+{url_of(worker)}'
    assert main(['runs', 'list', '--store', store]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ['RUN', 'ID', 'GRAPH', 'STATUS', 'STARTED', '(UTC)', 'UPDATED', '(UTC)', 'STEPS']
    row = next(line.split() for line in out if line.startswith('cli-run '))
    assert (row[0], row[1], row[2], row[-1]) == ('cli-run', 'counter', 'finished', '5')

    assert main(['mermaid', 'tests.graph.dbos.test_dbos_graph:counter', '--run', 'cli-run', '--store', store]) == 0
    assert capsys.readouterr().out.endswith('class Up highlighted\nclass Check highlighted\n')

    assert main(['mermaid', 'tests.graph.dbos.test_dbos_graph:counter', '--run', 'nope', '--store', store]) == 1
    assert capsys.readouterr().err == (
        f"edgewise: error: No run 'nope' in {store} (`edgewise runs list --store URL` lists them).\n"
    )


def test_cli_reports_a_missing_or_foreign_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from edgewise.graph.cli import main

    missing = tmp_path / 'missing.sqlite'
    assert main(['runs', 'list', '--store', f'dbos+sqlite:///{missing}']) == 1
    assert capsys.readouterr().err == (
        f'edgewise: error: No DBOS system database at sqlite:///{missing}: {str(missing)!r} does not exist.\n'
    )
    assert not missing.exists()
    foreign = tmp_path / 'foreign.sqlite'
    sqlite3.connect(foreign).close()
    assert main(['runs', 'list', '--store', f'dbos+sqlite:///{foreign}']) == 1
    assert capsys.readouterr().err.startswith(
        f'edgewise: error: Cannot read the DBOS system database at sqlite:///{foreign} (is it one, made by a DBOS '
        'application?): OperationalError: (sqlite3.OperationalError) no such table'
    )


def test_run_sync_raises_the_nodes_error(worker: DBOSWorker) -> None:
    with pytest.raises(ValueError, match='negative: -2'):
        dbos_counter.run_sync(Check(-2), state=Count())


def test_public_names_are_pinned() -> None:
    import edgewise.graph.dbos

    assert sorted(edgewise.graph.dbos.__all__) == [
        'DBOSGraph',
        'DBOSQueue',
        'DBOSWorker',
        'WORKFLOW_PREFIX',
        'application_version',
        'list_runs',
        'load_history',
    ]
    assert all(hasattr(edgewise.graph.dbos, name) for name in edgewise.graph.dbos.__all__)


def test_cli_shows_a_runs_steps(worker: DBOSWorker, capsys: pytest.CaptureFixture[str]) -> None:
    from edgewise.graph.cli import main

    dbos_counter.run_sync(Up(1), state=Count(), run_id='cli-show')
    history = anyio.run(load_history, url_of(worker), 'cli-show', counter)
    nodes = [s.node.get_node_id() for s in history if isinstance(s, NodeSnapshot)]
    capsys.readouterr()
    store = f'dbos+{url_of(worker)}'
    assert main(['runs', 'show', 'cli-show', '--store', store]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith('Run cli-show of graph counter: finished, started ')
    assert out[1].split() == ['STEP', 'NODE', 'STATUS', 'STARTED', '(UTC)', 'DURATION']
    rows = [line.split() for line in out[2:]]
    assert [(row[0], row[1], row[2]) for row in rows] == [(str(i), n, 'success') for i, n in enumerate(nodes, 1)]

    assert main(['runs', 'show', 'nope', '--store', store]) == 1
    assert capsys.readouterr().err == (
        f"edgewise: error: No run 'nope' in {store} (`edgewise runs list --store URL` lists them).\n"
    )


@pytest.mark.parametrize(
    ('command', 'args'),
    [
        ('resume', ['cli-show', 'tests.graph.dbos.test_dbos_graph:counter']),
        ('fork', ['cli-show', 'some-snapshot']),
        ('delete', ['cli-show']),
        ('prune', ['--finished-before', '1d']),
    ],
)
def test_cli_refuses_what_dbos_stores_do_not_offer(
    worker: DBOSWorker, capsys: pytest.CaptureFixture[str], command: str, args: list[str]
) -> None:
    from edgewise.graph.cli import main

    store = f'dbos+{url_of(worker)}'
    assert main(['runs', command, *args, '--store', store]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f'edgewise: error: `edgewise runs {command}` does not work on DBOS stores ({store}): ')
    assert 'DBOS.fork_workflow' in err


def test_cli_shows_a_failed_run_and_a_queued_one(worker: DBOSWorker, capsys: pytest.CaptureFixture[str]) -> None:
    from edgewise.graph.cli import main

    with pytest.raises(ValueError, match='negative: -1'):
        dbos_counter.run_sync(Check(-1), state=Count(), run_id='cli-fails')
    # No worker takes runs from this queue: the run waits, with no step run.
    dbos_counter.enqueue_sync('no-worker-listens', Up(0), state=Count(), run_id='cli-waits')
    capsys.readouterr()
    store = f'dbos+{url_of(worker)}'
    assert main(['runs', 'show', 'cli-fails', '--store', store]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith('Run cli-fails of graph counter: failed, ')
    assert out[2].split()[:3] == ['1', 'Check', 'error']
    assert out[-1] == 'Error: ValueError: negative: -1'
    assert main(['runs', 'show', 'cli-waits', '--store', store]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith('Run cli-waits of graph counter: waiting, ')
    assert out[1:] == ['No step has run yet.']
