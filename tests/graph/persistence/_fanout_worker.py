"""A process that runs a fan-out or a subgraph in a durable store, to be killed with SIGKILL by the tests.

`python -m tests.graph.persistence._fanout_worker WORKFLOW KIND LOCATION RUN_ID DIRECTORY MODE`

WORKFLOW is `fanout`, `subgraph` or `part` (the subgraph run on a part of the run's state); MODE is `start`
(branches from `FAST` on, or the subgraph's second node, write `blocked-<name>` in DIRECTORY and wait forever)
or `resume` (resumes the run to its end, checks that its end snapshot holds the state it ended with, prints the
output). Every node run appends a line to DIRECTORY/effects.log first, so the log counts the node runs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.fork import Fork

from ._worker import open_run

BRANCHES = 6
FAST = 3
"""Branches 0..FAST-1 finish in the first process; the others block there."""


@dataclass
class Env:
    directory: Path
    block: bool

    def effect(self, line: str) -> None:
        with (self.directory / 'effects.log').open('a') as log:
            log.write(line + '\n')

    async def park(self, name: str) -> None:
        if self.block:
            (self.directory / f'blocked-{name}').touch()
            await anyio.sleep_forever()


@dataclass
class Done:
    items: list[int] = field(default_factory=list)


@dataclass
class Item(BaseNode[Done, Env, str]):
    index: int

    async def run(self, ctx: GraphRunContext[Done, Env]) -> Square:
        ctx.deps.effect(f'Item {self.index}')
        if self.index >= FAST:
            await ctx.deps.park(f'item-{self.index}')
        return Square(self.index)


@dataclass
class Square(BaseNode[Done, Env, Any]):
    index: int

    async def run(self, ctx: GraphRunContext[Done, Env]) -> End[int]:
        ctx.deps.effect(f'Square {self.index}')
        ctx.state.items.append(self.index)
        return End(self.index * self.index)


@dataclass
class Total(BaseNode[Done, Env, str]):
    results: list[int]

    async def run(self, ctx: GraphRunContext[Done, Env]) -> End[str]:
        ctx.deps.effect('Total')
        return End(f'{sum(self.results)} {sorted(ctx.state.items)}')


@dataclass
class Scatter(BaseNode[Done, Env, str]):
    async def run(self, ctx: GraphRunContext[Done, Env]) -> Fork[Item, Total]:
        ctx.deps.effect('Scatter')
        return Fork.map(Item, range(BRANCHES), join=Total)


def _merge(state: Done, branch: Done) -> None:
    state.items.extend(branch.items)


fanout = Graph(nodes=(Scatter, Item, Square, Total), state_reducer=_merge, name='fanout')


@dataclass
class Charge(BaseNode[Done, Env, str]):
    async def run(self, ctx: GraphRunContext[Done, Env]) -> Confirm:
        ctx.deps.effect('Charge')
        ctx.state.items.append(1)
        return Confirm()


@dataclass
class Confirm(BaseNode[Done, Env, str]):
    async def run(self, ctx: GraphRunContext[Done, Env]) -> End[str]:
        ctx.deps.effect('Confirm')
        await ctx.deps.park('confirm')
        return End(f'charged {ctx.state.items}')


payment = Graph(nodes=(Charge, Confirm), name='payment')


@dataclass
class Pay(BaseNode[Done, Env, str]):
    subgraphs = (payment,)

    async def run(self, ctx: GraphRunContext[Done, Env]) -> End[str]:
        ctx.deps.effect('Pay')
        return End(await ctx.run_subgraph(payment, Charge(), name='payment', state=Done()))


shop = Graph(nodes=(Pay,), name='shop')


@dataclass
class Basket:
    part: Done = field(default_factory=Done)
    paid: bool = False


@dataclass
class PayPart(BaseNode[Basket, Env, str]):
    """Runs `payment` on a part of the run's state: what its nodes change is the run's state."""

    subgraphs = (payment,)

    async def run(self, ctx: GraphRunContext[Basket, Env]) -> End[str]:
        ctx.deps.effect('Pay')
        output = await ctx.run_subgraph(payment, Charge(), name='payment', state=ctx.state.part)
        ctx.state.paid = True
        return End(f'{output}, state {ctx.state}')


basket_shop = Graph(nodes=(PayPart,), name='basket_shop')


async def main(workflow: str, kind: str, location: str, run_id: str, directory: str, mode: str) -> None:
    workflows: dict[str, tuple[Graph[Any, Env, str], BaseNode[Any, Env, str], Any]] = {
        'fanout': (fanout, Scatter(), Done()),
        'subgraph': (shop, Pay(), Done()),
        'part': (basket_shop, PayPart(), Basket()),
    }
    graph, start, state = workflows[workflow]
    env = Env(Path(directory), block=mode == 'start')
    async with open_run(kind, location, run_id) as persistence:
        if mode == 'start':
            await graph.run(start, state=state, deps=env, persistence=persistence)
        else:
            async with graph.iter_from_persistence(persistence, deps=env) as run:
                async for _ in run:
                    pass
            assert run.result is not None
            stored = (await persistence.load_all())[-1].state
            assert stored == run.state, (stored, run.state)  # the end snapshot holds the state the run ended with
            print(run.result.output, flush=True)


if __name__ == '__main__':
    workflow, kind, location, run_id, directory, mode = sys.argv[1:7]
    anyio.run(main, workflow, kind, location, run_id, directory, mode)
