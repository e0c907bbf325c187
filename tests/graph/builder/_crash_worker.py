"""A process that runs (or resumes) a durable builder run: `python -m tests.graph.builder._crash_worker MODE KIND
LOCATION LOG`.

The graph maps over 0..ITEMS-1 and sums the squares in a join: a decision sends even items to the step `work`
and odd ones to the `BaseNode` `OddWork`, which hands its square to the join with `total.as_node(...)`. Each
item logs `start i` and `end i` to LOG (one `os.write` each, so a SIGKILL loses nothing written). In `start`
mode the items from HALF up never finish (they wait to be killed); in `resume` mode the run is resumed from
the store and every item finishes; the output and the state's count of finished items are printed.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Annotated, Any

import anyio

from edgewise.graph.builder import BaseNode, GraphBuilder, GraphRunContext, StepContext, reduce_sum
from edgewise.graph.builder.join import JoinNode
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import DurableStatePersistence

ITEMS = 50
HALF = 25
RUN_ID = 'builder-crash'


@dataclass
class Done:
    finished: int = 0


LOG = ''
BLOCK = False


async def effect(ctx_state: Done, n: int) -> int:
    """Log the start, wait to be killed (the second half, in `start` mode), count the step, log the end."""
    note(f'start {n}')
    if BLOCK and n >= HALF:
        await anyio.sleep_forever()
    ctx_state.finished += 1
    note(f'end {n}')
    return n * n


def note(text: str) -> None:
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f'{text}\n'.encode())
    finally:
        os.close(fd)


g = GraphBuilder(state_type=Done, input_type=list[int], output_type=int)


@g.step
async def work(ctx: StepContext[Done, None, int]) -> int:
    return await effect(ctx.state, ctx.inputs)


total = g.join(reduce_sum, initial=0, node_id='total')


@dataclass
class OddWork(BaseNode[Done, None, Any]):
    """Odd items go through a `BaseNode`, which hands its square to the join."""

    n: int

    async def run(self, ctx: GraphRunContext[Done, None]) -> Annotated[JoinNode[Done, None], total]:
        return total.as_node(await effect(ctx.state, self.n))


route = (
    g.decision(node_id='even_or_odd')
    .branch(g.match(int, matches=lambda n: n % 2 == 0).to(work))
    .branch(g.match(int).transform(lambda ctx: OddWork(ctx.inputs)).to(OddWork))
)
g.add(
    g.edge_from(g.start_node).map().to(route),
    g.node(OddWork),
    g.edge_from(work).to(total),
    g.edge_from(total).to(g.end_node),
)
graph = g.build()


def open_store(kind: str, location: str) -> DurableStatePersistence[Any, Any]:
    if kind == 'file':
        return FileStatePersistence(location)
    if kind == 'sqlite':
        return SqliteStatePersistence(location, RUN_ID)
    return PostgresStatePersistence(location, RUN_ID)


async def main(mode: str, kind: str, location: str, log: str) -> None:
    global LOG, BLOCK
    LOG, BLOCK = log, mode == 'start'
    persistence = open_store(kind, location)
    try:
        if mode == 'start':
            print(await graph.run(state=Done(), inputs=list(range(ITEMS)), persistence=persistence), flush=True)
        else:
            async with graph.iter_from_persistence(persistence) as run:
                async for _ in run:
                    pass
            print(run.output, run.state.finished, flush=True)
    finally:
        await persistence.aclose()


if __name__ == '__main__':
    mode, kind, location, log = sys.argv[1:5]
    anyio.run(main, mode, kind, location, log)
