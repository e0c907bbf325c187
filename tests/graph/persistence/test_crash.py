"""Crash recovery with real processes: runs killed with SIGKILL mid-node, resumed by new processes.

Each node appends a line to an effects log before it changes the state, so the log counts every time a
node ran, and a node re-run after its step was committed would show.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from edgewise.graph import NodeSnapshot
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import DurableStatePersistence

from ._worker import open_run
from ._workflow import Start, Tally, cycle_graph, expected_trail
from .conftest import postgres_schema

ROOT = Path(__file__).parents[3]
KILLS = 8
RUN_ID = 'crash-run'
TARGET = 10


def start_worker(kind: str, location: str, run_id: str, go_file: Path | None = None) -> subprocess.Popen[str]:
    args = [sys.executable, '-m', 'tests.graph.persistence._worker', kind, location, run_id]
    if go_file is not None:
        args.append(str(go_file))
    env = {**os.environ, 'PYTHONPATH': str(ROOT), 'LOGFIRE_IGNORE_NO_CONFIG': '1'}
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_ready(worker: subprocess.Popen[str]) -> None:
    assert worker.stdout is not None
    line = worker.stdout.readline()
    assert line == 'ready\n', worker.stderr.read() if worker.stderr else line


def location_for(kind: str, tmp_path: Path, dsn: str) -> str:
    return {'file': str(tmp_path / 'crash-run.json'), 'sqlite': str(tmp_path / 'runs.db')}.get(kind, dsn)


async def _initialize(kind: str, location: str, state: Tally) -> None:
    persistence = open_run(kind, location, RUN_ID)
    await cycle_graph.initialize(Start(), persistence, state=state)
    await close(persistence)


def initialize(kind: str, location: str, state: Tally) -> str:
    anyio.run(_initialize, kind, location, state)
    return RUN_ID


async def _history(kind: str, location: str) -> list[Any]:
    persistence = open_run(kind, location, RUN_ID)
    persistence.set_graph_types(cycle_graph)
    try:
        return await persistence.load_all()
    finally:
        await close(persistence)


def history_of(kind: str, location: str) -> list[Any]:
    return anyio.run(_history, kind, location)


async def close(persistence: DurableStatePersistence[Any, Any]) -> None:
    await persistence.aclose()


@pytest.fixture(params=['file', 'sqlite', 'postgres'])
def crash_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == 'postgres':
        with postgres_schema() as dsn:
            yield request.param, location_for(request.param, tmp_path, dsn)
    else:
        yield request.param, location_for(request.param, tmp_path, '')


def test_a_run_killed_mid_node_again_and_again_resumes_to_the_right_end(
    crash_store: tuple[str, str], tmp_path: Path
) -> None:
    kind, location = crash_store
    log = tmp_path / 'effects.log'
    run_id = initialize(kind, location, Tally(target=TARGET, effects_log=str(log), node_delay=0.004))
    rng = random.Random(f'{kind}-crash')
    kills = 0
    for _ in range(KILLS + 20):
        worker = start_worker(kind, location, run_id)
        wait_ready(worker)
        if kills < KILLS:
            time.sleep(rng.uniform(0.0, 0.08))
            worker.send_signal(signal.SIGKILL)
            worker.communicate()  # reaps it and closes its pipes
            if worker.returncode == -signal.SIGKILL:
                kills += 1
                continue
        out, err = worker.communicate(timeout=60)
        assert worker.returncode == 0, (out, err)
        assert out.splitlines()[-1] == f'finished {TARGET}'
        break

    history = history_of(kind, location)
    assert [(s.kind, type(s.node).__name__) for s in history] == [
        *[('node', name) for name in expected_trail(TARGET)],
        ('end', 'End'),
    ]
    assert {s.status for s in history if isinstance(s, NodeSnapshot)} == {'success'}
    assert history[-1].state.trail == expected_trail(TARGET)
    assert history[-1].state.count == TARGET
    runs_per_snapshot = Counter(line.split()[1] for line in log.read_text().splitlines())
    assert set(runs_per_snapshot) == {s.id for s in history[:-1]}
    # A node runs again only when the process died while it ran: at most once per kill.
    assert sum(runs_per_snapshot.values()) - len(runs_per_snapshot) <= kills
    if kind == 'sqlite':
        with sqlite3.connect(location) as conn:
            assert conn.execute('PRAGMA integrity_check').fetchall() == [('ok',)]


def test_two_processes_resuming_one_run_at_once_one_advances_it(crash_store: tuple[str, str], tmp_path: Path) -> None:
    kind, location = crash_store
    log = tmp_path / 'effects.log'
    go = tmp_path / 'go'
    run_id = initialize(kind, location, Tally(target=3, effects_log=str(log), node_delay=0.03))
    workers = [start_worker(kind, location, run_id, go) for _ in range(2)]
    for worker in workers:
        wait_ready(worker)
    go.touch()
    outputs = [w.communicate(timeout=60)[0] for w in workers]
    results = [(w.returncode, out, w.pid) for out, w in zip(outputs, workers, strict=True)]

    assert sorted(code for code, _, _ in results) == [0, 4]
    [(_, refused_output, _)] = [r for r in results if r[0] == 4]
    # The loser may look before the winner has recorded who it is (the lock is taken first, the owner record
    # written right after): it then names no process, which is still the right refusal.
    holders = ['process', 'another process']
    assert any(f"Run '{run_id}' is in progress elsewhere: {h}" in refused_output for h in holders), refused_output
    [(_, _, winner)] = [r for r in results if r[0] == 0]
    assert {line.split()[2] for line in log.read_text().splitlines()} == {str(winner)}
    history = history_of(kind, location)
    assert history[-1].state.trail == expected_trail(3)


async def _info(kind: str, location: str) -> Any:
    persistence = open_run(kind, location, RUN_ID)
    try:
        assert isinstance(persistence, DurableStatePersistence)
        return await persistence.info()
    finally:
        await close(persistence)


def status_of(kind: str, location: str) -> tuple[str, str]:
    """The run's status, as its `info()` and as the store's listing give it."""
    info = anyio.run(_info, kind, location)
    [listed] = anyio.run(_list, kind, location)
    assert listed.run_id == info.run_id == RUN_ID
    return info.status, listed.status


async def _list(kind: str, location: str) -> list[Any]:
    if kind == 'file':
        return await FileStatePersistence.list_runs(location)
    if kind == 'sqlite':
        return await SqliteStatePersistence.list_runs(location)
    return await PostgresStatePersistence.list_runs(location)


def wait_for_status(kind: str, location: str, expected: str) -> tuple[str, str]:
    deadline = time.monotonic() + 20
    while (status := status_of(kind, location)) != (expected, expected) and time.monotonic() < deadline:
        time.sleep(0.02)
    return status


def test_a_run_is_running_while_its_process_lives_and_waiting_once_it_is_killed(
    crash_store: tuple[str, str], tmp_path: Path
) -> None:
    kind, location = crash_store
    initialize(kind, location, Tally(target=3, node_delay=60))
    assert status_of(kind, location) == ('waiting', 'waiting')
    worker = start_worker(kind, location, RUN_ID)
    try:
        wait_ready(worker)
        assert wait_for_status(kind, location, 'running') == ('running', 'running')
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.communicate()
    # The node it was running (or about to run) is left so in the store, but no process runs it any more.
    assert history_of(kind, location)[-1].status in ('pending', 'running')
    assert wait_for_status(kind, location, 'waiting') == ('waiting', 'waiting')
