"""Scale-out on DBOS: several worker processes take graph runs from one queue; kill one, the others finish its runs.

    python -m examples.graph.scale_out                                  # 3 workers, 12 runs, SQLite file
    python -m examples.graph.scale_out --workers 2 --runs 30 --url postgresql://postgres@127.0.0.1/shop
    python -m examples.graph.scale_out worker URL                       # one worker, until Ctrl-C

The main process starts the workers (`... worker URL`, which is all a worker on another machine needs,
given a PostgreSQL URL), puts the runs on the queue through a `DBOSClient` (it runs no workflow itself),
and prints each run's result with the workers that ran its nodes. The runs stay in the system database:
`edgewise runs list --store dbos+URL` lists them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.dbos import DBOSGraph, DBOSQueue, DBOSWorker

ROOT = Path(__file__).parents[2]


@dataclass
class Order:
    order_id: int
    total_cents: int = 0
    workers: list[int] = field(default_factory=list)
    """The pid of the worker that ran each node."""


def _ran(ctx: GraphRunContext[Order]) -> None:
    ctx.state.workers.append(os.getpid())


@dataclass
class Receive(BaseNode[Order, None, str]):
    async def run(self, ctx: GraphRunContext[Order]) -> Price:
        _ran(ctx)
        await anyio.sleep(0.05)  # a call to another service, say
        return Price(items=1 + ctx.state.order_id % 3)


@dataclass
class Price(BaseNode[Order, None, str]):
    items: int

    async def run(self, ctx: GraphRunContext[Order]) -> Charge:
        _ran(ctx)
        ctx.state.total_cents = 1250 * self.items
        return Charge()


@dataclass
class Charge(BaseNode[Order, None, str]):
    async def run(self, ctx: GraphRunContext[Order]) -> Ship:
        _ran(ctx)
        await anyio.sleep(0.05)
        return Ship()


@dataclass
class Ship(BaseNode[Order, None, str]):
    async def run(self, ctx: GraphRunContext[Order]) -> End[str]:
        _ran(ctx)
        return End(f'order {ctx.state.order_id}: charged {ctx.state.total_cents / 100:.2f}, shipped')


order_graph = Graph(nodes=(Receive, Price, Charge, Ship), name='orders')
dbos_orders = DBOSGraph(order_graph)
QUEUE = DBOSQueue('orders', worker_concurrency=2, global_concurrency=5, polling_interval=0.1)
APP = 'edgewise-scale-out-example'


def work(url: str) -> None:
    """Be a worker until interrupted."""
    config = {'name': APP, 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[QUEUE], recovery_interval=0.5) as worker:  # type: ignore[arg-type]
        print(f'worker {os.getpid()} ready ({worker.executor_id})', flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            worker.wait()


def start_worker(url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, 'PYTHONPATH': str(ROOT)}
    # The workers share this process's working directory, where a relative SQLite URL points.
    return subprocess.Popen([sys.executable, '-m', 'examples.graph.scale_out', 'worker', url], env=env)


def main(url: str, workers: int, runs: int, kill_one: bool) -> None:
    from dbos import DBOSClient

    processes = [start_worker(url)]
    client = None
    try:
        # The first worker creates DBOS's tables; the client needs them.
        for _ in range(1200):
            try:
                client = DBOSClient(system_database_url=url)
                client.list_workflows(limit=1)
                break
            except Exception:
                if client is not None:
                    client.destroy()
                    client = None
                time.sleep(0.1)
        assert client is not None, 'the first worker did not create the system database'
        processes += [start_worker(url) for _ in range(workers - 1)]
        run_ids = [
            dbos_orders.enqueue_sync(QUEUE, Receive(), state=Order(order_id=i), client=client) for i in range(runs)
        ]
        print(f'{runs} runs queued on {QUEUE.name!r}, {workers} workers', flush=True)
        if kill_one and workers > 1:
            # Kill a worker once some runs are done: the others take over its runs.
            while len(client.list_workflows(status='SUCCESS', load_input=False, load_output=False)) < runs // 3:
                time.sleep(0.1)
            processes[0].send_signal(signal.SIGKILL)
            processes[0].wait()
            print(f'killed worker {processes[0].pid}', flush=True)
        for run_id in run_ids:
            result = dbos_orders.result_sync(run_id, client=client)
            print(f'{result.output} (nodes ran in workers {sorted(set(result.state.workers))})', flush=True)
    finally:
        if client is not None:
            client.destroy()
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for process in processes:
            process.wait()


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'worker':
        work(sys.argv[2])
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--url', default='sqlite:///scale_out.sqlite', help='the DBOS system database')
    parser.add_argument('--workers', type=int, default=3)
    parser.add_argument('--runs', type=int, default=12)
    parser.add_argument('--kill-one', action='store_true', help='SIGKILL a worker a third of the way through')
    args = parser.parse_args()
    main(args.url, args.workers, args.runs, args.kill_one)
