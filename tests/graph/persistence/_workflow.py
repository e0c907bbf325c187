"""The 3-node cycle the persistence tests run, in the tests' processes and in crash-test subprocesses.

`Start -> Middle -> Finish -> Start ...` until `count` reaches `target`. Every node appends to the state,
so a node run twice (or a snapshot lost) shows in the final state, and can append a line to an
effects log first (a side effect outside the store, as a real node's would be).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext


@dataclass
class Tally:
    count: int = 0
    target: int = 3
    trail: list[str] = field(default_factory=list)
    effects_log: str | None = None
    """A file each node appends `<node> <snapshot id>` to before it does anything else."""
    node_delay: float = 0.0
    """Seconds each node sleeps (in two halves, around its change of the state)."""


async def _work(node: BaseNode[Tally, None, int], state: Tally) -> None:
    if state.effects_log is not None:
        # A tiny append, on purpose in the node itself: it stands for a real node's side effect.
        with open(state.effects_log, 'a') as log:  # noqa: ASYNC230
            log.write(f'{type(node).__name__} {node.get_snapshot_id()} {os.getpid()}\n')
    if state.node_delay:
        await anyio.sleep(state.node_delay / 2)
    state.trail.append(type(node).__name__)
    if state.node_delay:
        await anyio.sleep(state.node_delay / 2)


@dataclass
class Start(BaseNode[Tally, None, int]):
    async def run(self, ctx: GraphRunContext[Tally]) -> Middle:
        await _work(self, ctx.state)
        ctx.state.count += 1
        return Middle(step=ctx.state.count)


@dataclass
class Middle(BaseNode[Tally, None, int]):
    step: int

    async def run(self, ctx: GraphRunContext[Tally]) -> Finish:
        await _work(self, ctx.state)
        return Finish()


@dataclass
class Finish(BaseNode[Tally, None, int]):
    async def run(self, ctx: GraphRunContext[Tally]) -> Start | End[int]:
        await _work(self, ctx.state)
        if ctx.state.count >= ctx.state.target:
            return End(ctx.state.count)
        return Start()


@dataclass
class Fails(BaseNode[Tally, None, int]):
    async def run(self, ctx: GraphRunContext[Tally]) -> End[int]:
        raise ValueError('this node always fails')


cycle_graph = Graph(nodes=(Start, Middle, Finish, Fails), name='cycle_graph')


def expected_trail(target: int) -> list[str]:
    return ['Start', 'Middle', 'Finish'] * target
