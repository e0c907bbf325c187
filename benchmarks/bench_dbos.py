"""Graph runs on DBOS: runs per second with 1, 2 and 3 worker processes, and the cost per step against Edgewise's
own SQLite persistence.

- Throughput: a five-node graph whose nodes do nothing, `RUNS` runs put on a queue at once through a
  `DBOSClient`, taken by 1, 2 and 3 worker processes on one PostgreSQL system database (a new database per
  measurement; the workers' start-up is not counted). Measured when `EDGEWISE_BENCH_POSTGRES_DSN` or
  `EDGEWISE_TEST_POSTGRES_DSN` is set, or a local server answers (see `benchmarks/_postgres.py`).
- Per step: the same graph run to its end in this process, `DBOSGraph.run_sync` on a SQLite system database
  (and on PostgreSQL when set) against `Graph.run` with `SqliteStatePersistence`; and the same five steps as a
  builder graph on DBOS (each `@g.step` a DBOS step).

Every worker competes for the same cores as the database server here: on a 2-core machine more workers
add little; the figures show the cost of the machinery, not the scaling of a cluster.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._dbos_graph import QUEUE, S1, Steps, config, dbos_builder_five_steps, dbos_five_steps, five_steps
from benchmarks._harness import Case, Result, measure, report
from benchmarks._postgres import postgres_dsn
from edgewise.graph.dbos import DBOSWorker
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

RUNS = 60
STEPS = 5
ROOT = Path(__file__).parents[1]


class _Database:
    """A new PostgreSQL database on the server of `dsn`, dropped on exit."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.name = f'edgewise_bench_{os.urandom(5).hex()}'
        base = dsn.rsplit('/', 1)[0]
        self.url = f'{base}/{self.name}'

    def __enter__(self) -> str:
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE {self.name}')
        return self.url

    def __exit__(self, *args: object) -> None:
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE {self.name} WITH (FORCE)')


def _throughput(dsn: str, workers: int) -> float:
    from dbos import DBOSClient

    with _Database(dsn) as url:
        env = {**os.environ, 'PYTHONPATH': str(ROOT)}
        processes: list[subprocess.Popen[str]] = []
        try:
            for _ in range(workers):
                process = subprocess.Popen(
                    [sys.executable, '-m', 'benchmarks._dbos_graph', url],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
                processes.append(process)
                assert process.stdout is not None
                assert process.stdout.readline() == 'ready\n'
            client = DBOSClient(system_database_url=url)
            try:
                start = time.perf_counter()
                ids = [dbos_five_steps.enqueue_sync(QUEUE, S1(), state=Steps(), client=client) for _ in range(RUNS)]
                for run_id in ids:
                    assert dbos_five_steps.result_sync(run_id, client=client).output == STEPS
                return RUNS / (time.perf_counter() - start)
            finally:
                client.destroy()
        finally:
            for process in processes:
                process.send_signal(signal.SIGKILL)
                process.wait()


def _per_step(directory: Path) -> Result:
    runs = 10

    def sqlite_persistence() -> None:
        import anyio

        async def run() -> None:
            for _ in range(runs):
                persistence = SqliteStatePersistence(directory / 'edgewise.db')
                try:
                    result = await five_steps.run(S1(), state=Steps(), persistence=persistence)
                    assert result.output == STEPS
                finally:
                    persistence.close()

        anyio.run(run)

    def on_dbos() -> None:
        for _ in range(runs):
            assert dbos_five_steps.run_sync(S1(), state=Steps()).output == STEPS

    def builder_on_dbos() -> None:
        for _ in range(runs):
            assert dbos_builder_five_steps.run_sync(inputs=0, state=Steps()).output == STEPS

    results: list[Result] = []
    urls = {'DBOS, SQLite system database': f'sqlite:///{directory / "dbos.sqlite"}'}
    dsn = postgres_dsn()
    databases: list[_Database] = []
    if dsn is not None:
        databases.append(_Database(dsn))
        urls['DBOS, PostgreSQL system database'] = databases[0].__enter__()
    try:
        for name, url in urls.items():
            with DBOSWorker(config(url)):  # type: ignore[arg-type]
                cases = [Case('Edgewise SqliteStatePersistence', sqlite_persistence, units=runs * STEPS)]
                cases.append(Case(name, on_dbos, units=runs * STEPS))
                cases.append(Case(name.replace('DBOS,', 'DBOS builder graph,'), builder_on_dbos, units=runs * STEPS))
                results.append(measure('per step', 'step', cases, repeats=3))
    finally:
        for database in databases:
            database.__exit__()
    merged = Result('A five-node graph run to its end in this process', 'step')
    for result in results:
        merged.per_unit.update(result.per_unit)
    return merged


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        print(report(_per_step(Path(directory)), anchor='Edgewise SqliteStatePersistence'))
    dsn = postgres_dsn()
    if dsn is None:
        print('## Runs per second: skipped (no PostgreSQL: set EDGEWISE_BENCH_POSTGRES_DSN)')
        return
    print(f'## Runs per second, {RUNS} queued runs of a five-node graph, PostgreSQL system database')
    rates: dict[int, Any] = {}
    for workers in (1, 2, 3):
        rates[workers] = _throughput(dsn, workers)
        label = f'{workers} worker{"s" if workers > 1 else ""}'
        print(f'  {label:<10} {rates[workers]:8.1f} runs/s   {rates[workers] / rates[1]:5.2f}x 1 worker', flush=True)


if __name__ == '__main__':
    main()
