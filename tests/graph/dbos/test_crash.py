"""Many runs, several worker processes, workers killed with SIGKILL: every run finishes exactly once.

Worker processes share only the system database URL. While they run queued five-node graphs, the test
kills a worker (SIGKILL) each time another share of the runs has finished and starts a new one at once;
the survivors hand the dead worker's runs back to the queue (PostgreSQL: its advisory lock is free), or
the restarted worker recovers its own (SQLite: the same executor id). Then, from the runs' results and the
effects table: every run finished once with its own key, each node of each run was recorded once, a node
ran again only when the process that ran it first was killed, and the queue's limits held.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edgewise.graph import EndSnapshot

from ._workload import EFFECTS_TABLE, N1, QUEUE, Trail, dbos_five_nodes
from .conftest import ROOT

DEADLINE = 900.0  # seconds: only a broken run gets near it, however loaded the machine


class Workers:
    """Worker processes, their logs in `directory`; `killed` holds the pids sent SIGKILL."""

    def __init__(
        self, url: str, effects: str, directory: Path, vmid: str | None = None, module: str = 'tests.graph.dbos._worker'
    ) -> None:
        self.url, self.effects, self.directory, self.vmid, self.module = url, effects, directory, vmid, module
        self.live: list[subprocess.Popen[bytes]] = []
        self.killed: set[int] = set()
        self.started = 0

    def start(self) -> subprocess.Popen[bytes]:
        self.started += 1
        env = {**os.environ, 'PYTHONPATH': str(ROOT), 'EDGEWISE_TEST_EFFECTS': self.effects}
        env['LOGFIRE_IGNORE_NO_CONFIG'] = '1'
        if self.vmid is not None:
            env['DBOS__VMID'] = self.vmid
        log = open(self.directory / f'worker-{self.started}.log', 'wb')  # noqa: SIM115 - closed with the process
        worker = subprocess.Popen(
            [sys.executable, '-m', self.module, self.url], cwd=ROOT, env=env, stdout=log, stderr=log
        )
        log.close()
        self.live.append(worker)
        return worker

    def wait_ready(self, worker: subprocess.Popen[bytes]) -> None:
        log = self.directory / f'worker-{self.live.index(worker) + 1}.log'
        deadline = time.monotonic() + DEADLINE
        while b'ready' not in log.read_bytes():
            assert worker.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)

    def kill_one(self, rng: random.Random) -> None:
        worker = rng.choice(self.live)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        self.killed.add(worker.pid)
        self.live.remove(worker)

    def stop_all(self) -> None:
        for worker in self.live:
            worker.send_signal(signal.SIGKILL)
            worker.wait()

    def logs(self) -> str:
        return '\n'.join(p.read_text(errors='replace')[-3000:] for p in sorted(self.directory.glob('worker-*.log')))


def enqueue_graph_runs(client: Any, runs: int) -> dict[str, str]:
    """Put `runs` five-node graph runs on the queue: their ids by key."""
    return {
        f'run-{i}': dbos_five_nodes.enqueue_sync(QUEUE, N1(), state=Trail(key=f'run-{i}'), client=client)
        for i in range(runs)
    }


def run_with_kills(
    url: str,
    effects: str,
    tmp_path: Path,
    *,
    workers: int,
    runs: int,
    kills: int,
    vmid: str | None,
    enqueue: Callable[[Any], dict[str, str]] | None = None,
    module: str = 'tests.graph.dbos._worker',
) -> tuple[dict[str, str], dict[str, Any], set[int]]:
    """Start the workers, put the runs on the queue (`enqueue(client)`; by default `runs` graph runs), kill workers
    as the runs finish, and return the runs' ids and results by key, and the killed pids."""
    from dbos import DBOSClient

    pool = Workers(url, effects, tmp_path, vmid, module)
    rng = random.Random(runs * 1000 + kills)
    try:
        pool.wait_ready(pool.start())  # the first worker creates the system database's tables
        for _ in range(workers - 1):
            pool.start()
        client = DBOSClient(system_database_url=url)
        try:
            keys = enqueue(client) if enqueue is not None else enqueue_graph_runs(client, runs)
            runs = len(keys)
            done = 0
            deadline = time.monotonic() + DEADLINE
            # Kill each time another 1/(kills + 2) of the runs has finished: spread over the whole batch
            # however fast or slow the machine is.
            while done < runs:
                assert time.monotonic() < deadline, f'{done}/{runs} runs finished\n{pool.logs()}'
                done = len(client.list_workflows(status='SUCCESS', load_input=False, load_output=False))
                failed = client.list_workflows(status=['ERROR', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED', 'CANCELLED'])
                assert not failed, [(w.workflow_id, w.status, w.error) for w in failed]
                if len(pool.killed) < kills and done >= (len(pool.killed) + 1) * runs // (kills + 2):
                    pool.kill_one(rng)
                    pool.start()
                time.sleep(0.2)
            results: dict[str, Any] = {
                key: client.retrieve_workflow(run_id).get_result() for key, run_id in keys.items()
            }
        finally:
            client.destroy()
    finally:
        pool.stop_all()
    assert len(pool.killed) == kills
    return keys, results, pool.killed


def check(keys: dict[str, str], results: dict[str, Any], rows: list[tuple[Any, ...]], killed: set[int]) -> None:
    # Every run finished once, with its own key, having recorded each of its five nodes once.
    recorded: dict[tuple[str, int], int] = {}
    for key, result in results.items():
        end = dbos_five_nodes._adapter.validate_json(result)
        assert isinstance(end, EndSnapshot)
        assert end.result.data == key
        nodes = [entry.split(':') for entry in end.state.trail]
        assert [int(node) for node, _ in nodes] == [1, 2, 3, 4, 5]
        recorded.update({(key, int(node)): int(pid) for node, pid in nodes})
    assert len(set(keys.values())) == len(keys)
    executions: dict[tuple[str, int], list[tuple[float, int]]] = defaultdict(list)
    for key, node, pid, started, _ended in rows:
        executions[(key, node)].append((started, pid))
    check_reruns(executions, recorded, killed)
    check_limits(rows)


def check_reruns(executions: dict[Any, list[tuple[float, int]]], recorded: dict[Any, int], killed: set[int]) -> None:
    """A step ran again only after the process running it was killed: every execution but the recorded one, which
    is the last, ran in a killed process."""
    assert set(executions) == set(recorded)
    for step, runs in executions.items():
        runs.sort()
        assert runs[-1][1] == recorded[step], (step, runs)
        assert all(pid in killed for _, pid in runs[:-1]), (step, runs, killed)


def check_limits(rows: list[tuple[Any, ...]]) -> None:
    """The queue's limits held: at no moment more steps ran than the limits allow runs (a run runs one step at a
    time)."""
    events = sorted(
        [(started, 1, pid) for _, _, pid, started, _ in rows] + [(ended, -1, pid) for *_, pid, _, ended in rows]
    )
    running: dict[int, int] = defaultdict(int)
    total = max_total = max_worker = 0
    for _, delta, pid in events:
        running[pid] += delta
        total += delta
        max_total = max(max_total, total)
        max_worker = max(max_worker, running[pid])
    assert QUEUE.global_concurrency is not None
    assert QUEUE.worker_concurrency is not None
    assert max_total <= QUEUE.global_concurrency
    assert max_worker <= QUEUE.worker_concurrency
    assert max_total > 1  # runs did overlap: the limits were put to the test


def test_three_postgres_workers_with_kills(postgres_url: str, tmp_path: Path) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(EFFECTS_TABLE)
    keys, results, killed = run_with_kills(
        postgres_url, postgres_url, tmp_path, workers=3, runs=200, kills=20, vmid=None
    )
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute('SELECT key, node, pid, started, ended FROM effects').fetchall()
    check(keys, results, rows, killed)


def test_one_sqlite_worker_with_kills(sqlite_url: str, tmp_path: Path) -> None:
    effects = str(tmp_path / 'effects.sqlite')
    with sqlite3.connect(effects) as conn:
        conn.execute(EFFECTS_TABLE)
    conn.close()
    keys, results, killed = run_with_kills(sqlite_url, effects, tmp_path, workers=1, runs=30, kills=3, vmid='solo')
    with sqlite3.connect(effects) as conn:
        rows = conn.execute('SELECT key, node, pid, started, ended FROM effects').fetchall()
    conn.close()
    check(keys, results, rows, killed)
