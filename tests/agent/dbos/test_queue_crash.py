"""Agent and graph runs on one queue, three worker processes, twenty of them killed with SIGKILL mid-batch.

200 five-node graph runs and 50 agent runs (a scripted model asking for two tool calls) are put on the queue of
tests/graph/dbos through a `DBOSClient`; three workers take them, and each time another share of the runs has
finished one worker is killed and a new one started. The survivors hand the dead worker's runs back to the
queue. Then, from the results and the effects table: every run finished once with its own output, every model
request and tool call of every agent run is in its trail once, a model request or tool call ran again only when
the process running it was killed, and the queue's limits held across both kinds of run. The same on SQLite with one
worker, killed three times and restarted with the same executor id (it recovers its own runs).
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

from tests.graph.dbos._workload import EFFECTS_TABLE, N1, Trail, dbos_five_nodes
from tests.graph.dbos.test_crash import check, check_limits, check_reruns, run_with_kills

from ._queue_workload import QUEUE, TURNS, dbos_agent

GRAPH_RUNS = 200
AGENT_RUNS = 50


def enqueue(client: Any, graph_runs: int = GRAPH_RUNS, agent_runs: int = AGENT_RUNS) -> dict[str, str]:
    """The graph runs, with an agent run after every few: agent runs are in flight all through the batch."""
    keys: dict[str, str] = {}
    every = graph_runs // agent_runs
    for i in range(graph_runs):
        key = f'run-{i}'
        keys[key] = dbos_five_nodes.enqueue_sync(QUEUE, N1(), state=Trail(key=key), client=client)
        if i % every == every - 1:
            agent_key = f'agent-{i // every}'
            keys[agent_key] = dbos_agent.enqueue_sync(QUEUE, agent_key, client=client)
    return keys


def check_agent_runs(
    results: dict[str, Any], rows: list[tuple[Any, ...]], killed: set[int], *, taken_over: bool = True
) -> None:
    """Every agent run's output is its own, with each model request and tool call once in its trail; a step ran
    again only in a killed process; with `taken_over`, some runs were finished by another worker than the one
    that started them (20 kills of workers running four runs each, a fifth of them agent runs: all but certain)."""
    recorded: dict[tuple[str, int], int] = {}
    for key, output in results.items():
        answer = json.loads(dbos_agent._result(output).output)
        assert answer['key'] == key
        trail = [entry.split(':') for entry in answer['trail']]
        expected = [('model', '1'), ('tool', '1'), ('model', '2'), ('tool', '2'), ('model', str(TURNS))]
        assert [(kind, n) for kind, n, _ in trail] == expected, answer
        recorded.update({(key, (10 if kind == 'model' else 20) + int(n)): int(pid) for kind, n, pid in trail})
    executions: dict[tuple[str, int], list[tuple[float, int]]] = defaultdict(list)
    for key, step, pid, started, _ended in rows:
        executions[(key, step)].append((started, pid))
    check_reruns(executions, recorded, killed)
    if taken_over:
        assert {key for (key, _), pid in recorded.items() if pid in killed}, 'no agent run in flight on a killed worker'


def test_three_postgres_workers_with_kills_run_agent_and_graph_runs(postgres_url: str, tmp_path: Path) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(EFFECTS_TABLE)
    keys, results, killed = run_with_kills(
        postgres_url, postgres_url, tmp_path, workers=3, runs=GRAPH_RUNS + AGENT_RUNS, kills=20, vmid=None,
        enqueue=enqueue, module='tests.agent.dbos._queue_worker',
    )  # fmt: skip
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute('SELECT key, node, pid, started, ended FROM effects').fetchall()
    assert len(killed) == 20
    agent_keys = {key for key in keys if key.startswith('agent-')}
    assert len(agent_keys) == AGENT_RUNS
    check(
        {k: v for k, v in keys.items() if k not in agent_keys},
        {k: v for k, v in results.items() if k not in agent_keys},
        [row for row in rows if row[0] not in agent_keys],
        killed,
    )
    check_agent_runs(
        {k: v for k, v in results.items() if k in agent_keys}, [row for row in rows if row[0] in agent_keys], killed
    )
    check_limits(rows)  # across both kinds of run


def test_one_sqlite_worker_with_kills_recovers_its_own_agent_runs(sqlite_url: str, tmp_path: Path) -> None:
    effects = str(tmp_path / 'effects.sqlite')
    with sqlite3.connect(effects) as conn:
        conn.execute(EFFECTS_TABLE)
    conn.close()
    keys, results, killed = run_with_kills(
        sqlite_url, effects, tmp_path, workers=1, runs=40, kills=3, vmid='solo',
        enqueue=lambda client: enqueue(client, 30, 10), module='tests.agent.dbos._queue_worker',
    )  # fmt: skip
    with sqlite3.connect(effects) as conn:
        rows = conn.execute('SELECT key, node, pid, started, ended FROM effects').fetchall()
    conn.close()
    agent_keys = {key for key in keys if key.startswith('agent-')}
    assert len(agent_keys) == 10
    check(
        {k: v for k, v in keys.items() if k not in agent_keys},
        {k: v for k, v in results.items() if k not in agent_keys},
        [row for row in rows if row[0] not in agent_keys],
        killed,
    )
    check_agent_runs(
        {k: v for k, v in results.items() if k in agent_keys},
        [row for row in rows if row[0] in agent_keys],
        killed,
        taken_over=False,  # three kills: an agent run need not have been in flight at any of them
    )
