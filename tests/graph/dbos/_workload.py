"""The graph the DBOS tests run in worker processes: five nodes, each recording that it ran in an effects table.

Each node writes one row (run key, node, pid, start and end time) before it returns, so the table counts
every execution of a node: one that ran again after its step was recorded would show as a second row from
a process that was not killed. The run's state keeps `node:pid` of the executions DBOS recorded.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.dbos import DBOSGraph, DBOSQueue

NODE_SECONDS = 0.01
QUEUE = DBOSQueue('edgewise-test', worker_concurrency=4, global_concurrency=10, polling_interval=0.1)
EFFECTS_TABLE = (
    'CREATE TABLE IF NOT EXISTS effects '
    '(key TEXT, node INTEGER, pid INTEGER, started DOUBLE PRECISION, ended DOUBLE PRECISION)'
)


@dataclass
class Trail:
    key: str = ''
    trail: list[str] = field(default_factory=list)


class _Effects:
    """Where nodes record that they ran: a PostgreSQL DSN or a SQLite file, from `EDGEWISE_TEST_EFFECTS`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: Any = None

    def record(self, key: str, node: int, started: float) -> None:
        target = os.environ['EDGEWISE_TEST_EFFECTS']
        row = (key, node, os.getpid(), started, time.time())
        with self._lock:
            if target.startswith('postgresql'):
                import psycopg

                if self._conn is None:
                    self._conn = psycopg.connect(target, autocommit=True)
                self._conn.execute('INSERT INTO effects VALUES (%s, %s, %s, %s, %s)', row)
            else:
                with sqlite3.connect(target, timeout=60) as conn:
                    conn.execute('INSERT INTO effects VALUES (?, ?, ?, ?, ?)', row)
                conn.close()


EFFECTS = _Effects()


async def _step(ctx: GraphRunContext[Trail], node: int) -> None:
    started = time.time()
    await anyio.sleep(NODE_SECONDS)
    await anyio.to_thread.run_sync(EFFECTS.record, ctx.state.key, node, started)
    ctx.state.trail.append(f'{node}:{os.getpid()}')


@dataclass
class N1(BaseNode[Trail, None, str]):
    async def run(self, ctx: GraphRunContext[Trail]) -> N2:
        await _step(ctx, 1)
        return N2()


@dataclass
class N2(BaseNode[Trail, None, str]):
    async def run(self, ctx: GraphRunContext[Trail]) -> N3:
        await _step(ctx, 2)
        return N3()


@dataclass
class N3(BaseNode[Trail, None, str]):
    async def run(self, ctx: GraphRunContext[Trail]) -> N4:
        await _step(ctx, 3)
        return N4()


@dataclass
class N4(BaseNode[Trail, None, str]):
    async def run(self, ctx: GraphRunContext[Trail]) -> N5:
        await _step(ctx, 4)
        return N5()


@dataclass
class N5(BaseNode[Trail, None, str]):
    async def run(self, ctx: GraphRunContext[Trail]) -> End[str]:
        await _step(ctx, 5)
        return End(ctx.state.key)


five_nodes = Graph(nodes=(N1, N2, N3, N4, N5), name='five_nodes')
dbos_five_nodes = DBOSGraph(five_nodes)
