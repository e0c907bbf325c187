"""`edgewise ui`, server side: the runs list of a store of 100,000 runs, and the page of a run of 1,000 steps.

Two runs of 1,000 steps: `long` (a counter) and `grown` (a state list growing by one item of ~200 bytes a step, as
an agent's message history does), whose page and steps must not grow with the square of the step count.

Times the whole request through the ASGI app (httpx's ASGI transport, no network), SQLite. The 100,000 runs are
copies of one real run, written with SQL (writing them one by one through a graph would take minutes).
"""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx

from benchmarks._harness import Case, measure_async, report
from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.web import create_app

RUNS = 100_000
STEPS = 1_000


@dataclass
class Count:
    n: int = 0


@dataclass
class Tick(BaseNode[Count, None, int]):
    async def run(self, ctx: GraphRunContext[Count]) -> Tick | End[int]:
        ctx.state.n += 1
        return Tick() if ctx.state.n < STEPS - 1 else End(ctx.state.n)


graph = Graph[Count, None, int](nodes=[Tick], name='ticks', auto_instrument=False)


@dataclass
class Log:
    items: list[str]


@dataclass
class Grow(BaseNode[Log, None, int]):
    async def run(self, ctx: GraphRunContext[Log]) -> Grow | End[int]:
        ctx.state.items.append(f'{len(ctx.state.items):06d} ' + 'x' * 193)
        return Grow() if len(ctx.state.items) < STEPS - 1 else End(len(ctx.state.items))


growing = Graph[Log, None, int](nodes=[Grow], name='growing', auto_instrument=False)


async def _seed(path: Path) -> None:
    async with SqliteStatePersistence(path, 'long') as persistence:
        await graph.run(Tick(), state=Count(), persistence=persistence)
    async with SqliteStatePersistence(path, 'grown') as persistence:
        await growing.run(Grow(), state=Log(items=[]), persistence=persistence)
    async with SqliteStatePersistence(path, 'base') as persistence:
        await graph.run(Tick(), state=Count(n=STEPS - 3), persistence=persistence)
    with sqlite3.connect(path) as conn:
        conn.execute(
            'WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?) '
            'INSERT INTO edgewise_runs (run_id, graph_name, created, owner) '
            "SELECT printf('run-%06d', i), 'ticks', "
            "strftime('%Y-%m-%dT%H:%M:%f', '2026-01-01', '+' || i || ' seconds') || '+00:00', NULL FROM k",
            (RUNS - 2,),
        )
        conn.execute(
            'INSERT INTO edgewise_snapshots (run_id, seq, snapshot_id, kind, status, start_ts, duration, written, '
            'data, prev_duration) SELECT r.run_id, s.seq, s.snapshot_id, s.kind, s.status, s.start_ts, s.duration, '
            "s.written, s.data, s.prev_duration FROM edgewise_runs r, edgewise_snapshots s WHERE s.run_id = 'base' "
            "AND r.run_id LIKE 'run-%'"
        )


def main() -> None:
    import anyio

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / 'runs.db'
        anyio.run(_seed, path)
        app = create_app([f'sqlite:///{path}'])

        sizes: dict[str, int] = {}

        def request(url: str) -> Case:
            async def get() -> None:
                async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://127.0.0.1') as c:
                    response = await c.get(url)
                    assert response.status_code == 200, response.text[:200]
                    sizes[url] = len(response.content)

            return Case(url, get)

        result = measure_async(
            f'edgewise ui, server side (SQLite, {RUNS:,} runs)',
            'request',
            [
                request('/'),
                request('/?status=finished&name=ticks'),
                request('/?q=run-05'),
                request('/run?store=0&id=long'),
                request('/run?store=0&id=long&partial=1'),
                request('/run?store=0&id=grown'),
                request('/run?store=0&id=grown&partial=1'),
                request(f'/run?store=0&id=grown&partial=1&since={STEPS}'),
                request(f'/api/step?store=0&id=grown&step={STEPS}'),
            ],
            repeats=5,
        )
        result.notes.append(
            f"/run?id=long and /run?id=grown are runs of {STEPS:,} steps; grown's state is a list growing by one "
            'item of ~200 bytes a step. /api/step is the state tree and diff of one step, fetched when opened.'
        )
        result.notes += [f'{url}: {size:,} bytes' for url, size in sizes.items()]
        print(report(result))


if __name__ == '__main__':
    main()
