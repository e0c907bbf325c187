"""The five-node graph of `bench_dbos`, and its worker process: `python -m benchmarks._dbos_graph URL`."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.builder import Graph as BuilderGraph
from edgewise.graph.builder import GraphBuilder, StepContext
from edgewise.graph.dbos import DBOSGraph, DBOSQueue, DBOSWorker


@dataclass
class Steps:
    done: int = 0


@dataclass
class S1(BaseNode[Steps, None, int]):
    async def run(self, ctx: GraphRunContext[Steps]) -> S2:
        ctx.state.done += 1
        return S2()


@dataclass
class S2(BaseNode[Steps, None, int]):
    async def run(self, ctx: GraphRunContext[Steps]) -> S3:
        ctx.state.done += 1
        return S3()


@dataclass
class S3(BaseNode[Steps, None, int]):
    async def run(self, ctx: GraphRunContext[Steps]) -> S4:
        ctx.state.done += 1
        return S4()


@dataclass
class S4(BaseNode[Steps, None, int]):
    async def run(self, ctx: GraphRunContext[Steps]) -> S5:
        ctx.state.done += 1
        return S5()


@dataclass
class S5(BaseNode[Steps, None, int]):
    async def run(self, ctx: GraphRunContext[Steps]) -> End[int]:
        ctx.state.done += 1
        return End(ctx.state.done)


five_steps = Graph(nodes=(S1, S2, S3, S4, S5), name='five_steps', auto_instrument=False)
dbos_five_steps = DBOSGraph(five_steps)


def _builder_five_steps() -> BuilderGraph[Steps, None, int, int]:
    """The same five steps as a builder graph: a chain of five `@g.step`s, each counting in the state."""
    g = GraphBuilder(state_type=Steps, input_type=int, output_type=int, auto_instrument=False)
    previous: Any = g.start_node
    for index in range(1, 6):

        async def count(ctx: StepContext[Steps, None, int]) -> int:
            ctx.state.done += 1
            return ctx.inputs + 1

        step = g.step(count, node_id=f'step{index}')
        g.add(g.edge_from(previous).to(step))
        previous = step
    g.add(g.edge_from(previous).to(g.end_node))
    return g.build()


builder_five_steps = _builder_five_steps()
dbos_builder_five_steps = DBOSGraph(builder_five_steps, name='builder_five_steps')
QUEUE = DBOSQueue('bench', worker_concurrency=8, polling_interval=0.05)


def config(url: str) -> dict[str, object]:
    return {'name': 'edgewise-bench', 'system_database_url': url, 'log_level': 'ERROR'}


if __name__ == '__main__':
    with DBOSWorker(config(sys.argv[1]), queues=[QUEUE]) as worker:  # type: ignore[arg-type]
        print('ready', flush=True)
        worker.wait()
