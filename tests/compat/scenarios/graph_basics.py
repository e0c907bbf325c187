"""Nodes, state, edges from return hints, `run`, `run_sync`, `iter` and `GraphRun.next`, `mermaid_code`."""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext


@dataclass
class Tank:
    litres: int
    log: list[str]


@dataclass
class Fill(BaseNode[Tank]):
    amount: int

    async def run(self, ctx: GraphRunContext[Tank]) -> Measure:
        ctx.state.litres += self.amount
        ctx.state.log.append(f'filled {self.amount}')
        return Measure()


@dataclass
class Measure(BaseNode[Tank, None, str]):
    async def run(self, ctx: GraphRunContext[Tank]) -> Fill | End[str]:
        if ctx.state.litres < 10:
            return Fill(amount=3)
        return End(f'full at {ctx.state.litres}')


tank_graph = Graph(nodes=(Fill, Measure))


async def main() -> None:
    state = Tank(litres=2, log=[])
    result = await tank_graph.run(Fill(amount=1), state=state)
    print(result.output)
    print(result.state)
    print(state is result.state)

    state = Tank(litres=0, log=[])
    async with tank_graph.iter(Fill(amount=5), state=state) as run:
        seen = [(run.next_node, deepcopy(run.state))]
        async for node in run:
            seen.append((node, deepcopy(run.state)))
        print(seen)
        print(run.result)
        print(run.result.output if run.result else None)

    state = Tank(litres=8, log=[])
    async with tank_graph.iter(Fill(amount=1), state=state) as run:
        node = run.next_node
        while not isinstance(node, End):
            print('next:', node)
            node = await run.next(node)
        print('end:', node, run.result is not None and run.result.output)

    # `next` with a node of our choice, not the one the graph returned
    async with tank_graph.iter(Fill(amount=1), state=Tank(litres=0, log=[])) as run:
        after = await run.next()
        print('after first step:', after)
        after = await run.next(Fill(amount=100))
        print('after a chosen node:', after, run.state.litres)


anyio.run(main)

sync_result = tank_graph.run_sync(Measure(), state=Tank(litres=12, log=[]))
print(sync_result.output, sync_result.state)
print(tank_graph.name)
print(tank_graph.mermaid_code(start_node=Fill))
print(tank_graph.mermaid_code(start_node=[Fill, Measure], highlighted_nodes=Measure, direction='LR'))
print(tank_graph.inferred_types)
print(sorted(tank_graph.node_defs))
